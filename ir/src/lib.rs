//! ge-ir: the IR core of ge.
//!
//! - [`body`]: arenas of ops, values, blocks and regions with `Copy` ids
//! - [`types`], [`attributes`], [`location`], [`dim`]: interned IR data
//! - [`opdef`], [`format`]: declarative op definitions and assembly formats
//! - [`interfaces`]: op interfaces (cost, fusion, engines, precision, layout, kernel)
//! - [`parser`], [`printer`]: the `.air` text format (MLIR syntax); [`mlir_float`]: MLIR's float spelling
//! - [`verifier`], [`diagnostics`]: checking and reporting
//! - [`pass`], [`passes`]: the pass manager and the core passes
//! - [`output`]: writing a user-named output path (never replacing a device, FIFO or link)
//! - [`external`], [`budget`]: confined file access and the memory budget for untrusted models

// The declaration macros name this crate `::ge_ir`, here as everywhere else.
extern crate self as ge_ir;

pub use ge_macros::{def_op, PassOptions};

pub mod affine_alias;
pub mod attributes;
pub mod body;
pub mod budget;
pub mod builder;
pub mod builtin;
pub mod context;
pub mod diagnostics;
pub mod dim;
pub mod external;
pub mod float_formats;
pub mod format;
pub mod ident;
pub mod interfaces;
pub mod interp;
pub mod location;
pub mod minifloat;
pub mod mlir_float;
pub mod module;
pub mod opdef;
pub mod output;
pub mod parser;
pub mod pass;
pub mod passes;
pub mod printer;
pub mod split;
pub mod tensor;
pub mod types;
pub mod verifier;

pub use attributes::{AttrData, AttrDict, Attribute};
pub use body::{BlockId, Body, OpData, OpId, OpState, RegionId, ValueId, WalkOrder};
pub use context::Context;
pub use diagnostics::{Diagnostic, Severity, SourceMap};
pub use dim::Dim;
pub use ident::Ident;
pub use location::Location;
pub use module::Module;
pub use types::{DType, Type, TypeData};
