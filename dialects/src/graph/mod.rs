//! The `graph` dialect: the compute graph with ONNX semantics.

pub mod activation;
pub mod bitwise;
pub mod col2im;
pub mod control;
pub mod deform_conv;
pub mod det;
pub mod elementwise;
pub mod func;
pub mod geometry;
pub mod grid_sample;
pub mod index;
pub mod kv_cache;
pub mod linalg;
pub mod max_unpool;
pub mod nn;
pub mod nn3d;
pub mod opkit;
pub mod qlinear;
pub mod quant;
pub mod random;
pub mod range;
pub mod reduce;
pub mod reverse_sequence;
pub mod rnn;
pub mod roi_align;
pub mod rotary;
pub mod scan;
pub mod sequence_mixing;
pub mod signal;
pub mod specialize;
pub mod swiglu;
pub mod tfidf;
pub mod tree_ensemble;
pub mod trig;

use ge_ir::opdef::Dialect;

pub static DIALECT: Dialect = Dialect {
    name: "graph",
    summary: "The compute graph: functions, calls, control flow and compute ops (ONNX semantics)",
    groups: &[
        func::OPS,
        elementwise::OPS,
        reduce::OPS,
        control::OPS,
        nn::OPS,
        nn3d::OPS,
        linalg::OPS,
        index::OPS,
        bitwise::OPS,
        trig::OPS,
        grid_sample::OPS,
        quant::OPS,
        qlinear::OPS,
        specialize::OPS,
        rnn::OPS,
        rotary::OPS,
        scan::OPS,
        signal::OPS,
        sequence_mixing::OPS,
        swiglu::OPS,
        kv_cache::OPS,
        geometry::OPS,
        col2im::OPS,
        max_unpool::OPS,
        det::OPS,
        reverse_sequence::OPS,
        tfidf::OPS,
        tree_ensemble::OPS,
        range::OPS,
        random::OPS,
        deform_conv::OPS,
        roi_align::OPS,
    ],
};
