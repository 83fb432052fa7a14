//! ge-runtime: loads `.om` offline models and runs them on the CPU "device".
//!
//! - [`Model::load`] maps the file, validates it with the lowering crate's
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
//! ```no_run
//! use ge_runtime::{HostTensor, Model};
//! let model = Model::load("model.om")?;
//! let x = HostTensor::from_f32(&[1, 64], &[0.5; 64])?;
//! let outputs = model.session().run(&[x])?;
//! println!("{:?}", outputs[0].to_f32_vec());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod buffer;
pub mod compile;
pub mod exec;
pub mod kernels;
pub mod model;
pub mod trace;

pub use buffer::HostTensor;
pub use exec::{RunOptions, RunResult, Session};
pub use model::{supported_socs, LoadOptions, Model};
pub use trace::Trace;

/// A runtime error: one line saying what went wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(s: String) -> Error {
        Error(s)
    }
}
