//! `data.unique` (ONNX Unique): the distinct elements or slices along
//! `axis`, a size op (docs/architecture.md "Execution modes", size
//! symbols). Its results `Y`, `indices` and `counts` are planned at the
//! size symbol's bound; the kernel writes them at the count, row-major at
//! the start of each buffer, and the count as the last result, which the
//! executor reads after the launch to bind the symbol. The algorithm is the
//! op's own (`ge_dialects::data::unique::unique_plan`).

use super::{Kernel, Par, Slot};
use crate::buffer::{class_of, load_f64, load_i64, store_f64, store_i64, Class};
use ge_dialects::data::unique::{float_key, int_key, split_at, unique_axis, unique_plan};

#[derive(Clone, Debug)]
pub struct Unique {
    pub axis: Option<i64>,
    pub sorted: bool,
}

/// The elements of `s`, as floats or integers (exact for every dtype).
enum Vals {
    F(Vec<f64>),
    I(Vec<i64>),
}

fn load(s: &Slot) -> Vals {
    let n = s.numel();
    if matches!(class_of(s.dtype), Some(Class::I)) {
        let mut v = vec![0i64; n];
        load_i64(s.dtype, s.ptr, 0, &mut v);
        Vals::I(v)
    } else {
        let mut v = vec![0f64; n];
        load_f64(s.dtype, s.ptr, 0, &mut v);
        Vals::F(v)
    }
}

impl Kernel for Unique {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[x], &[y, first, inverse, counts, size]) = (ins, outs) else {
            return Err("unique takes 1 operand and gives 5 results".into());
        };
        let axis = unique_axis(self.axis, x.shape.len())?;
        let (outer, n, inner) = split_at(&x.shape, axis);
        let vals = load(x);
        let keys: Vec<i64> = match &vals {
            Vals::F(v) => v.iter().map(|&f| float_key(f)).collect(),
            Vals::I(v) => v.iter().map(|&i| int_key(x.dtype, i)).collect(),
        };
        let p = unique_plan(&keys, outer, n, inner, self.sorted);
        let k = p.first.len();
        // Each buffer holds its type at the bound (`planned` slices); the
        // results are the first `k` of them, row-major at the count.
        let planned = match axis {
            None => y.shape.first().copied(),
            Some(a) => y.shape.get(a).copied(),
        };
        let mut want_y = x.shape.clone();
        match axis {
            None => want_y = vec![planned.unwrap_or(0)],
            Some(a) => want_y[a] = planned.unwrap_or(0),
        }
        let ints = [first, inverse, counts, size];
        if y.shape != want_y
            || y.dtype != x.dtype
            || first.shape != [planned.unwrap_or(0)]
            || counts.shape != first.shape
            || inverse.shape != [n]
            || size.numel() != 1
            || ints.iter().any(|s| !s.dtype.is_int())
        {
            return Err(format!(
                "unique of {:?} {} cannot fill {:?} {}, {:?}, {:?}, {:?} and {:?}",
                x.shape,
                x.dtype,
                y.shape,
                y.dtype,
                first.shape,
                inverse.shape,
                counts.shape,
                size.shape
            ));
        }
        let planned = planned.unwrap_or(0);
        if k > planned {
            return Err(format!(
                "unique found {k} distinct values, more than the {planned} planned"
            ));
        }
        let src = (0..outer).flat_map(|o| {
            let p = &p;
            p.first
                .iter()
                .flat_map(move |&j| (0..inner).map(move |i| (o * n + j) * inner + i))
        });
        match &vals {
            Vals::F(v) => store_f64(y.dtype, y.ptr, 0, &src.map(|s| v[s]).collect::<Vec<_>>()),
            Vals::I(v) => store_i64(y.dtype, y.ptr, 0, &src.map(|s| v[s]).collect::<Vec<_>>()),
        }
        let as_i64 = |v: &[usize]| v.iter().map(|&u| u as i64).collect::<Vec<_>>();
        store_i64(first.dtype, first.ptr, 0, &as_i64(&p.first));
        store_i64(inverse.dtype, inverse.ptr, 0, &as_i64(&p.inverse));
        store_i64(counts.dtype, counts.ptr, 0, &as_i64(&p.counts));
        store_i64(size.dtype, size.ptr, 0, &[k as i64]);
        Ok(())
    }
}
