//! Bridge to upstream MLIR through melior (cargo feature `mlir`).
//!
//! - [`export`]: `graph`/`data` IR → an upstream module in `func` + `tosa`
//!   (+ `arith` where TOSA lacks an op), built with melior's
//!   `OperationBuilder` and checked by MLIR's verifier. One export function
//!   per op in [`export::TABLE`].
//! - [`import`]: `func` + `tosa` modules (as torch-mlir and TensorFlow's TOSA
//!   legalisation emit them) → the `graph` dialect; one import function per
//!   upstream op in [`import::TABLE`].
//! - [`crosscheck`]: lower an exported function with MLIR's own pipeline
//!   (TOSA → linalg → bufferize → LLVM), run it in MLIR's execution engine
//!   and compare with our interpreter.

pub mod crosscheck;
pub mod export;
pub mod import;
mod types;

use melior::dialect::DialectRegistry;
use melior::utility::{register_all_dialects, register_all_llvm_translations, register_all_passes};
use std::cell::RefCell;
use std::rc::Rc;

pub use types::{dtype_of_mlir, mlir_elem_name};

/// An MLIR context with every upstream dialect, pass and LLVM translation
/// registered (what `mlir-opt` knows).
pub fn mlir_context() -> melior::Context {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    let ctx = melior::Context::new();
    ctx.append_dialect_registry(&registry);
    ctx.load_all_available_dialects();
    register_all_passes();
    register_all_llvm_translations(&ctx);
    ctx
}

/// Collects MLIR's diagnostics (verifier and parser messages) instead of
/// letting them go to stderr.
pub struct DiagnosticSink {
    messages: Rc<RefCell<Vec<String>>>,
    id: Option<melior::diagnostic::DiagnosticHandlerId>,
}

impl DiagnosticSink {
    pub fn attach(ctx: &melior::Context) -> DiagnosticSink {
        let messages: Rc<RefCell<Vec<String>>> = Rc::default();
        let m = messages.clone();
        let id = ctx.attach_diagnostic_handler(move |d| {
            let mut text = format!("{}: {}", d.location(), d);
            for i in 0..d.note_count() {
                if let Ok(n) = d.note(i) {
                    text.push_str(&format!("\n  note: {n}"));
                }
            }
            m.borrow_mut().push(text);
            true
        });
        DiagnosticSink {
            messages,
            id: Some(id),
        }
    }

    /// The messages so far (and forget them).
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.messages.borrow_mut())
    }

    pub fn detach(mut self, ctx: &melior::Context) {
        if let Some(id) = self.id.take() {
            ctx.detach_diagnostic_handler(id);
        }
    }
}
