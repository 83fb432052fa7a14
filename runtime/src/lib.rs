//! ge-runtime: loads `.om` offline models and runs them on the CPU "device".
//!
//! - [`Model::load`] maps the file, validates it with ge-om's
//!   reader, checks the SoC, binds the weights in place, compiles every
//!   kernel function to native steps ([`kernels`]) and prepares the task
//!   program (one task list per stream, event pairings).
//! - [`Session::run`] binds the symbolic dims from the inputs' shapes, looks
//!   up (or builds) the plan of that concrete shape, takes an execution
//!   context from the model's pool (its own workspace arena, scratch and
//!   stream workers), runs one worker per stream with events between them,
//!   every intermediate at its planned offset of the arena, and returns the
//!   outputs (written in place when the plan binds them zero-copy).
//!
//! The example of the README ("Rust API"), run as a doctest:
//!
//! ```
//! # // Compile a small model to model.om in a scratch directory first.
//! # let dir = std::env::temp_dir().join(format!("ge-runtime-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # std::env::set_current_dir(&dir)?;
//! # let air = r#"module attributes {ge.symbol_bounds = {B = 8 : i64}} {
//! #   graph.func @main(%x: tensor<Bx4xf32> {ge.name = "x"}, %s: tensor<4xf32> {ge.name = "scale"})
//! #       -> (tensor<Bx4xf32> {ge.name = "y"}) {
//! #     %0 = graph.mul %x, %s : (tensor<Bx4xf32>, tensor<4xf32>) -> tensor<Bx4xf32>
//! #     %1 = graph.sigmoid %0 : (tensor<Bx4xf32>) -> tensor<Bx4xf32>
//! #     graph.return %1 : tensor<Bx4xf32>
//! #   }
//! # }"#;
//! # let om = ge_compile::compile_text("m", air, &Default::default())?;
//! # std::fs::write("model.om", ge_compile::to_bytes(&om)?)?;
//! use ge_runtime::{HostTensor, LoadOptions, Model};
//!
//! // Load a compiled model: the file is memory-mapped, weights are used in place.
//! let model = Model::load_with("model.om", &LoadOptions { threads: 2, ..Default::default() })?;
//! for (name, ty) in model.inputs() {
//!     println!("input {name}: {ty}"); // input x: tensor<Bx4xf32>, input scale: tensor<4xf32>
//! }
//! // Sessions are cheap; `run` may be called from many threads at once.
//! let session = model.session();
//! let x = HostTensor::from_f32(&[2, 4], &[0.5, -1.0, 2.0, 0.0, 1.0, 1.0, 1.0, 1.0])?;
//! let scale = HostTensor::from_f32(&[4], &[1.0, 2.0, 3.0, 4.0])?;
//! let outputs = session.run(&[x.clone(), scale.clone()])?; // by position; B = 2, from x's shape
//! assert_eq!(outputs[0].shape, vec![2, 4]);
//! println!("{:?}", outputs[0].to_f32_vec());
//! // Or by name, in any order (as onnxruntime takes them); the outputs come back named.
//! let named = session.run_named([("scale", scale), ("x", x)])?;
//! assert_eq!(named[0].0, "y");
//! # std::env::set_current_dir(std::env::temp_dir())?;
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod blocked_reads;
pub mod buffer;
mod error;
pub mod exec;
pub mod kernels;
mod layouts;
pub mod model;
mod pool;
mod proof;
mod serial;
pub mod shared;
mod size_syms;
mod split;
pub mod trace;
mod value_syms;

pub use buffer::HostTensor;
pub use error::{describe as describe_location, Error, Site};
pub use exec::{RunOptions, RunResult, Session};
pub use kernels::blocks_probe::{Timing as BlocksTiming, Verdict as BlocksVerdict};
pub use model::{supported_socs, BlockedReads, LoadOptions, Model, DEFAULT_MAX_STEPS};
pub use serial::StreamExecution;
pub use trace::Trace;
