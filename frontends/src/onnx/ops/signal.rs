//! Signal ops: DFT, STFT, HannWindow, HammingWindow, BlackmanWindow and
//! MelWeightMatrix map to their graph ops (dialects/src/graph/signal.rs).
//! ONNX gives their sizes as scalar inputs; the graph ops take them as
//! attributes: a constant input becomes the attribute, an input known only
//! at run time makes the op a `graph.specialize` that fills the attribute
//! from the value (hybrid execution, [`Cx::specialize`]).

use super::{invalid, one, Cx, Node, Res};
use crate::onnx::tensor::dtype_from_onnx;
use ge_dialects::graph::specialize::ValueKind::{self, Float, Int};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::Type;

/// The graph op `name` with operands `data` and attributes `attrs`, plus
/// the attributes still to be read from run-time values (`later`).
struct Build<'a> {
    name: &'static str,
    data: Vec<ValueId>,
    attrs: Vec<(&'a str, Attribute)>,
    later: Vec<(ValueId, &'a str, ValueKind)>,
}

impl<'a> Build<'a> {
    fn new(name: &'static str, data: Vec<ValueId>) -> Build<'a> {
        Build {
            name,
            data,
            attrs: vec![],
            later: vec![],
        }
    }

    /// ONNX input `i` as attribute `attr` (of `kind`): its constant value,
    /// or read at run time. Absent: nothing (the attribute's default).
    fn input(&mut self, cx: &Cx, n: &Node, i: usize, attr: &'a str, kind: ValueKind) -> Res<()> {
        let Some(v) = n.opt_input(i) else {
            return Ok(());
        };
        if super::run_time(cx, n, i).is_some() {
            self.later.push((v, attr, kind));
            return Ok(());
        }
        let a = match kind {
            Float => {
                let x = cx.const_f64s(v, attr)?;
                let [x] = x[..] else {
                    return Err(invalid(
                        n,
                        format!("'{attr}' must be a scalar, got {} values", x.len()),
                    ));
                };
                Attribute::f64(x)
            }
            _ => {
                let x = cx.const_i64s(v, attr)?;
                let [x] = x[..] else {
                    return Err(invalid(
                        n,
                        format!("'{attr}' must be a scalar, got {} values", x.len()),
                    ));
                };
                Attribute::i64(x)
            }
        };
        self.attrs.push((attr, a));
        Ok(())
    }

    fn attr(&mut self, name: &'a str, a: Attribute) {
        self.attrs.push((name, a));
    }

    fn emit(self, cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
        if self.later.is_empty() {
            return one(cx.e.op(self.name, &self.data, self.attrs)?);
        }
        cx.specialize(n, self.name, &self.data, self.attrs, &self.later, 1)
    }
}

/// ONNX's `output_datatype` (default float) as a `dtype` attribute.
fn output_dtype(n: &Node) -> Res<Attribute> {
    let code = n.i("output_datatype", 1)?;
    let code = i32::try_from(code)
        .map_err(|_| invalid(n, format!("output_datatype {code} is not a data type")))?;
    Ok(Attribute::ty(Type::scalar(dtype_from_onnx(code)?)))
}

pub fn dft(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let mut b = Build::new("graph.dft", vec![n.input(0)?]);
    b.input(cx, n, 1, "dft_length", Int)?;
    if n.opset >= 20 {
        // The axis is input 2 (default -2).
        b.input(cx, n, 2, "axis", Int)?;
    } else {
        b.attr("axis", Attribute::i64(n.i("axis", 1)?));
    }
    b.attr("inverse", Attribute::i64(n.i("inverse", 0)?));
    b.attr("onesided", Attribute::i64(n.i("onesided", 0)?));
    b.emit(cx, n)
}

pub fn stft(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let mut data = vec![n.input(0)?];
    data.extend(n.opt_input(2));
    let mut b = Build::new("graph.stft", data);
    b.input(cx, n, 1, "frame_step", Int)?;
    b.input(cx, n, 3, "frame_length", Int)?;
    b.attr("onesided", Attribute::i64(n.i("onesided", 1)?));
    b.emit(cx, n)
}

fn window(cx: &mut Cx, n: &Node, name: &'static str) -> Res<Vec<ValueId>> {
    let mut b = Build::new(name, vec![]);
    b.input(cx, n, 0, "size", Int)?;
    b.attr("periodic", Attribute::i64(n.i("periodic", 1)?));
    b.attr("dtype", output_dtype(n)?);
    b.emit(cx, n)
}

pub fn hann_window(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    window(cx, n, "graph.hann_window")
}

pub fn hamming_window(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    window(cx, n, "graph.hamming_window")
}

pub fn blackman_window(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    window(cx, n, "graph.blackman_window")
}

pub fn mel_weight_matrix(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let mut b = Build::new("graph.mel_weight_matrix", vec![]);
    b.input(cx, n, 0, "num_mel_bins", Int)?;
    b.input(cx, n, 1, "dft_length", Int)?;
    b.input(cx, n, 2, "sample_rate", Int)?;
    b.input(cx, n, 3, "lower_edge_hertz", Float)?;
    b.input(cx, n, 4, "upper_edge_hertz", Float)?;
    b.attr("dtype", output_dtype(n)?);
    b.emit(cx, n)
}
