//! ge-frontends: model importers that build `graph`/`data` dialect IR.
//!
//! - [`onnx`]: ONNX models (opsets 7–21 and newer where the semantics did not
//!   change): initializers (external data too), symbolic dims, If/Loop,
//!   model-local functions; one mapping function per ONNX op in
//!   [`onnx::ops::TABLE`].
//! - [`tf`]: frozen TensorFlow GraphDefs (the common inference ops), NHWC kept
//!   as the origin format.
//!
//! The protobuf messages come from minimal `.proto` subsets in `proto/`,
//! compiled at build time by protox (pure Rust, no system `protoc`) and prost.

pub mod emit;
pub mod error;
#[cfg(feature = "mlir")]
pub mod mlir;
pub mod onnx;
pub mod tf;

pub use error::{ImportError, ImportErrorKind};

/// Generated protobuf messages.
pub mod proto {
    /// ONNX (`proto/onnx.proto`).
    #[allow(clippy::all, missing_docs)]
    pub mod onnx {
        include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
    }
    /// TensorFlow GraphDef (`proto/tensorflow/*.proto`).
    #[allow(clippy::all, missing_docs)]
    pub mod tensorflow {
        include!(concat!(env!("OUT_DIR"), "/tensorflow.rs"));
    }
}
