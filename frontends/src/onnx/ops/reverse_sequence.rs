//! ReverseSequence maps to `graph.reverse_sequence`
//! (dialects/src/graph/reverse_sequence.rs); the lengths stay an operand.

use super::{invalid, one, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

pub fn reverse_sequence(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, lens) = (n.input(0)?, n.input(1)?);
    let (b, t) = (n.i("batch_axis", 1)?, n.i("time_axis", 0)?);
    if !matches!((b, t), (0, 1) | (1, 0)) {
        return Err(invalid(
            n,
            format!("batch_axis {b} and time_axis {t} must be 0 and 1 or 1 and 0"),
        ));
    }
    let attrs = vec![
        ("batch_axis", Attribute::i64(b)),
        ("time_axis", Attribute::i64(t)),
    ];
    one(cx.e.op("graph.reverse_sequence", &[x, lens], attrs)?)
}
