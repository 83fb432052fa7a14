//! Recurrent ONNX ops: RNN, GRU and LSTM map one to one to `graph.rnn`,
//! `graph.gru` and `graph.lstm` (optional inputs recorded in
//! `operand_segment_sizes`, attributes as ONNX names them).

use super::{invalid, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

/// Map a recurrent node with `optional` optional inputs after X, W, R to
/// `name`, with the cell's own attributes `extra`.
fn recurrent(
    cx: &mut Cx,
    n: &Node,
    name: &str,
    optional: usize,
    extra: Vec<(&'static str, Attribute)>,
) -> Res<Vec<ValueId>> {
    let (x, w, r) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let mut operands = vec![x, w, r];
    let mut seg = vec![1i64; 3];
    for i in 3..3 + optional {
        let v = n.opt_input(i);
        operands.extend(v);
        seg.push(v.is_some() as i64);
    }
    if (3 + optional..n.num_inputs()).any(|i| n.opt_input(i).is_some()) {
        return Err(invalid(n, format!("takes at most {} inputs", 3 + optional)));
    }
    let hidden = match n.opt_i("hidden_size")? {
        Some(h) => h,
        // The last dim of R.
        None => {
            cx.e.dims(r)?
                .last()
                .and_then(|d| d.as_static())
                .ok_or_else(|| invalid(n, "needs 'hidden_size' or a static R"))?
        }
    };
    let mut attrs = vec![
        ("hidden_size", Attribute::i64(hidden)),
        (
            "direction",
            Attribute::string(&n.s("direction", "forward")?),
        ),
        ("layout", Attribute::i64(n.i("layout", 0)?)),
        ("operand_segment_sizes", Attribute::i64_array(&seg)),
    ];
    if let Some(a) = n.attr("activations") {
        let names = a
            .strings
            .iter()
            .map(|s| Attribute::string(&String::from_utf8_lossy(s)))
            .collect();
        attrs.push(("activations", Attribute::array(names)));
    }
    for key in ["activation_alpha", "activation_beta"] {
        if let Some(v) = n.floats(key) {
            let v = v.into_iter().map(|x| Attribute::f64(x as f64)).collect();
            attrs.push((key, Attribute::array(v)));
        }
    }
    if let Some(c) = n.opt_f("clip")? {
        attrs.push(("clip", Attribute::f64(c as f64)));
    }
    attrs.extend(extra);
    Ok(cx.e.op_multi(name, &operands, attrs, None)?)
}

pub fn rnn(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    recurrent(cx, n, "graph.rnn", 3, vec![])
}

pub fn gru(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let lbr = n.i("linear_before_reset", 0)?;
    recurrent(
        cx,
        n,
        "graph.gru",
        3,
        vec![("linear_before_reset", Attribute::i64(lbr))],
    )
}

pub fn lstm(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let input_forget = n.i("input_forget", 0)?;
    recurrent(
        cx,
        n,
        "graph.lstm",
        5,
        vec![("input_forget", Attribute::i64(input_forget))],
    )
}
