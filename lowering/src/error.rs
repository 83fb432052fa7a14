//! Lowering errors: a message and the location of the op it is about.
//!
//! The helpers of a pass know which op an error concerns; the pass's `run`
//! only knows the function it lowers. A [`LowerError`] carries the op's
//! [`Location`] up to the pass, which turns it into a [`Diagnostic`]
//! ([`LowerError::diagnostic`]) that `ge-opt` renders at the op's
//! file:line:col. An error made from a plain `String` (`?` on a helper that
//! returns one, such as the dialects' `byte_size_bound` or the builder) has
//! no location yet: the first caller holding the op attaches it
//! ([`AtOp::at_op`]); one without any falls back to the function's location.
//!
//! `String` stays where there is no op to point at: pass options (the
//! registry's `make` signature), algorithms on plain data (the offset
//! strategies, chain cover, happens-before schedules — their callers attach a
//! location), the engines' reasons (phrases the caller puts into a message
//! about the op), and reading an `.om` (a binary file: one-line reasons).

use ge_ir::diagnostics::{Diagnostic, Pos};
use ge_ir::Location;
use std::fmt;

/// An error of a lowering stage, at an op when one is known.
#[derive(Clone, Debug, PartialEq)]
pub struct LowerError {
    pub message: String,
    /// The op (or value) the error is about; `None` until a caller knows it.
    pub loc: Option<Location>,
}

/// The result of a lowering helper.
pub type LowerResult<T> = Result<T, LowerError>;

impl LowerError {
    /// An error about the op at `loc`.
    pub fn at(loc: Location, message: impl Into<String>) -> LowerError {
        LowerError {
            message: message.into(),
            loc: (!loc.is_unknown()).then_some(loc),
        }
    }

    /// The error at `loc` unless it already points somewhere (an inner op's
    /// location is the more precise one).
    pub fn or_at(mut self, loc: Location) -> LowerError {
        if self.loc.is_none() && !loc.is_unknown() {
            self.loc = Some(loc);
        }
        self
    }

    /// The diagnostic of pass `pass`: "`pass`: message" at the error's
    /// location, else at `fallback` (the function being lowered).
    pub fn diagnostic(self, pass: &str, fallback: Location) -> Diagnostic {
        let loc = self.loc.unwrap_or(fallback);
        Diagnostic::error(format!("{pass}: {}", self.message), Pos::Loc(loc))
    }
}

impl From<String> for LowerError {
    fn from(message: String) -> LowerError {
        LowerError { message, loc: None }
    }
}

impl From<&str> for LowerError {
    fn from(message: &str) -> LowerError {
        LowerError::from(message.to_string())
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LowerError {}

/// One line for callers that report errors as text (the tools' `.om`
/// writers): the message, after the op's `file:line:col` when known.
impl From<LowerError> for String {
    fn from(e: LowerError) -> String {
        match e.loc.and_then(|l| l.file_line_col()) {
            Some((file, line, col)) => format!("{file}:{line}:{col}: {}", e.message),
            None => e.message,
        }
    }
}

/// Attach an op's location to the error of a result.
pub trait AtOp<T> {
    /// The error at `loc` unless it already has a location ([`LowerError::or_at`]).
    fn at_op(self, loc: Location) -> LowerResult<T>;
}

impl<T, E: Into<LowerError>> AtOp<T> for Result<T, E> {
    fn at_op(self, loc: Location) -> LowerResult<T> {
        self.map_err(|e| e.into().or_at(loc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_location_wins_and_the_function_is_the_fallback() {
        let (op, func) = (Location::file("m.air", 3, 5), Location::file("m.air", 1, 1));
        let e: Result<(), String> = Err("bad".to_string());
        let e = e.at_op(op).at_op(func).unwrap_err();
        assert_eq!(e.loc, Some(op));
        let d = e.diagnostic("plan-memory", func);
        assert_eq!(d.message, "plan-memory: bad");
        assert_eq!(d.pos, Pos::Loc(op));
        let d = LowerError::from("no op").diagnostic("p", func);
        assert_eq!(d.pos, Pos::Loc(func));
        assert_eq!(
            LowerError::at(Location::unknown(), "x").or_at(op).loc,
            Some(op)
        );
    }
}
