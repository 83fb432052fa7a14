//! `graph.reverse_sequence` (ONNX ReverseSequence): each output element is
//! the input element the op's own `reverse_map` names, moved as bytes (any
//! dtype).

use super::{Kernel, Par, Slot};
use ge_dialects::graph::reverse_sequence::{reverse_axes, reverse_map};

#[derive(Clone, Debug)]
pub struct ReverseSequence {
    pub batch_axis: i64,
    pub time_axis: i64,
}

impl Kernel for ReverseSequence {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[x, l], &[y]) = (ins, outs) else {
            return Err("reverse_sequence takes 2 operands and gives 1 result".into());
        };
        if x.shape != y.shape || x.dtype != y.dtype || l.dtype != ge_ir::DType::I64 {
            return Err(format!(
                "reverse_sequence of {:?} cannot give {:?}",
                x.shape, y.shape
            ));
        }
        let (b, t) = reverse_axes(self.batch_axis, self.time_axis, x.shape.len())?;
        // SAFETY: `l` holds numel() i64 elements (its slot's dtype, checked
        // above); slots are aligned for their dtype.
        let lens = unsafe { std::slice::from_raw_parts(l.ptr as *const i64, l.numel()) };
        let map = reverse_map(&x.shape, b, t, lens)?;
        let es = x.dtype.byte_size();
        for (o, &i) in map.iter().enumerate() {
            // SAFETY: `o` and `i` (< numel, from reverse_map over x's shape,
            // which is y's) index elements of `es` bytes inside both slots;
            // the slots are different values.
            unsafe { std::ptr::copy_nonoverlapping(x.ptr.add(i * es), y.ptr.add(o * es), es) };
        }
        Ok(())
    }
}
