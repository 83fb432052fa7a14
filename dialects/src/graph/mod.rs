//! The `graph` dialect: the compute graph with ONNX semantics.

pub mod elementwise;
pub mod func;

use ge_ir::opdef::Dialect;

pub static DIALECT: Dialect = Dialect {
    name: "graph",
    summary: "The compute graph: functions, calls, control flow and compute ops (ONNX semantics)",
    groups: &[func::OPS, elementwise::OPS],
};
