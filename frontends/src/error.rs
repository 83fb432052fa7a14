//! Import errors: one clear message (possibly several lines, e.g. the list of
//! every unsupported op), and a kind callers can act on.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportErrorKind {
    /// Not a model file, truncated, or not decodable.
    Malformed,
    /// Ops, dtypes, attributes or features the importer does not support.
    Unsupported,
    /// The model is inconsistent: missing initializers, wrong shapes, bad attributes.
    Invalid,
    /// An op needs this (ONNX) value to be a compile-time constant, but it is
    /// computed at run time (usually a graph input). Callers that know the
    /// value may bind it as a constant and import again.
    NotConstant(String),
    /// Reading the model or its external data failed.
    Io,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    pub kind: ImportErrorKind,
    pub message: String,
}

impl ImportError {
    pub fn new(kind: ImportErrorKind, message: impl Into<String>) -> ImportError {
        ImportError {
            kind,
            message: message.into(),
        }
    }
    pub fn malformed(m: impl Into<String>) -> ImportError {
        ImportError::new(ImportErrorKind::Malformed, m)
    }
    pub fn unsupported(m: impl Into<String>) -> ImportError {
        ImportError::new(ImportErrorKind::Unsupported, m)
    }
    pub fn invalid(m: impl Into<String>) -> ImportError {
        ImportError::new(ImportErrorKind::Invalid, m)
    }
    pub fn io(m: impl Into<String>) -> ImportError {
        ImportError::new(ImportErrorKind::Io, m)
    }
    /// Prefix the message (e.g. with the node it happened at).
    pub fn context(mut self, prefix: impl fmt::Display) -> ImportError {
        self.message = format!("{prefix}: {}", self.message);
        self
    }
}

/// Every importer's last step: the module it built, if it verifies.
pub fn verified(m: ge_ir::Module) -> Result<ge_ir::Module, ImportError> {
    let diags = ge_ir::verifier::verify_module(&m);
    match diags.iter().find(|d| d.is_error()) {
        Some(d) => Err(ImportError::invalid(format!(
            "the imported IR does not verify: {}",
            d.message
        ))),
        None => Ok(m),
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ImportError {}
