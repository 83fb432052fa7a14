//! ge-om: the `.om` offline model — what `ge-atc` writes and the runtime
//! loads. This crate is the contract between the two: the compiler
//! (`ge_lowering::om::from_module`) builds an [`OmModel`] and writes it with
//! [`format::write`]; the runtime reads it with [`parse`]. It knows nothing
//! about passes or kernels, so a deployment build of the runtime carries no
//! compiler.
//!
//! - [`format`]: the binary container (header, partition table, checksums),
//!   its writer (temp file + rename) and its reader;
//! - [`model`]: the contents as Rust values (JSON partitions);
//! - [`validate`]: the checks every model passes before [`parse`] returns it
//!   (and before [`format::to_bytes`] writes it);
//! - [`weights`]: the weights partition as the writer streams it (each
//!   weight from where it is, splats chunk by chunk), for [`model::OmStream`];
//! - [`plan`]: offset assignment for the workspace arena — the compiler's
//!   memory planner and, for models with unbounded dims
//!   ([`model::Replan`]), the runtime's per-shape planner ([`plan::replan`]).
//!
//! ## For a runtime
//!
//! Load with [`parse`] on the file bytes (an mmap works: the weights
//! partition is borrowed, 64-byte aligned). Allocate one buffer per
//! [`model::ArenaDef`] of the model def — input and output arenas are the
//! caller's tensors (zero copy: bind them, don't copy), the workspace arena is
//! `size` bytes. Run [`model::Task`]s: one worker per stream executing its
//! tasks in program order; `record` marks an event when the stream reaches
//! it, `wait` blocks the stream until the latest earlier `record` of that
//! event (in program order) has fired. A `launch` runs kernel function
//! `kernels[kernel].name` of the kernels partition (`.air` text) on the
//! tensors of its `ins` (buffers at `offset` of `arena`, or weights) and writes
//! its results into `outs` — an `out` may be the very bytes of an `in`
//! (in-place elementwise kernels): read inputs before writing. Buffer types
//! are `.air` tensor types; symbolic dims take the values bound from the
//! inputs (≤ `symbol_bounds`, the sizes the plan was made for). A model
//! with a [`model::Replan`] section has symbols without a bound: plan the
//! workspace for each concrete shape with [`plan::replan`] and move each
//! workspace buffer with its unit.

pub mod format;
pub mod model;
pub mod plan;
pub mod validate;
pub mod weights;

pub use format::{parse, read, to_bytes, OmError, OmFile};
pub use model::{OmModel, OmStream, ValidStream};
pub use weights::{WeightBytes, Weights};
