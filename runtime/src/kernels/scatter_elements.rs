//! `graph.scatter_elements` (ONNX ScatterElements): the output is the input
//! with, for each position `p` of `indices`, the element at `p` with its axis
//! coordinate replaced by `indices[p]` set to `updates[p]` (`none`; later
//! duplicates win, so it runs in order) or combined with it (`add`, `mul`,
//! `max`, `min`). `none` moves bytes (any dtype); the reductions compute on
//! f32 (f16/bf16 data) or i64 (integers, wrapping). Indices are i32 or i64,
//! negative ones count from the end, out of range is an error.

use super::{Kernel, Par, Slot};
use crate::buffer::{class_of, load_f32, load_i64, store_f32, store_i64, Class};
use ge_ir::DType;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reduction {
    None,
    Add,
    Mul,
    Max,
    Min,
}

impl Reduction {
    pub fn from_name(n: &str) -> Option<Reduction> {
        Some(match n {
            "none" => Reduction::None,
            "add" => Reduction::Add,
            "mul" => Reduction::Mul,
            "max" => Reduction::Max,
            "min" => Reduction::Min,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub struct ScatterElements {
    pub axis: i64,
    pub reduction: Reduction,
}

impl Kernel for ScatterElements {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[x, ind, upd], &[y]) = (ins, outs) else {
            return Err("scatter_elements takes 3 operands and gives 1 result".into());
        };
        let r = x.shape.len();
        let ax = super::norm::norm_axis(self.axis, r)?;
        if ind.shape.len() != r
            || upd.shape != ind.shape
            || y.shape != x.shape
            || y.dtype != x.dtype
            || upd.dtype != x.dtype
            || (0..r).any(|k| k != ax && ind.shape[k] > x.shape[k])
        {
            return Err(format!(
                "scatter_elements into {:?} at {:?} of {:?}",
                x.shape, ind.shape, upd.shape
            ));
        }
        if x.ptr != y.ptr {
            // SAFETY: both slots hold x.bytes() bytes (same shape and dtype);
            // the executor gives a non-elementwise step's output its own bytes.
            unsafe { std::ptr::copy_nonoverlapping(x.ptr, y.ptr, x.bytes()) };
        }
        if ind.numel() == 0 {
            return Ok(());
        }
        let targets = Targets {
            ax,
            xshape: &x.shape,
            ishape: &ind.shape,
        };
        let each = |f: &mut dyn FnMut(usize, usize) -> Result<(), String>| match ind.dtype {
            DType::I64 => targets.each::<i64>(ind.ptr as *const i64, f),
            DType::I32 => targets.each::<i32>(ind.ptr as *const i32, f),
            d => Err(format!("scatter_elements indices of type {d}")),
        };
        let (n_out, n_upd) = (y.numel(), upd.numel());
        match (self.reduction, class_of(x.dtype)) {
            (Reduction::None, _) => {
                let es = x.dtype.byte_size();
                each(&mut |p, t| {
                    // SAFETY: p < upd.numel(), t < y.numel() (`Targets::each`).
                    unsafe {
                        super::gather_elements::copy_elem(
                            es,
                            upd.ptr.add(p * es),
                            y.ptr.add(t * es),
                        )
                    };
                    Ok(())
                })
            }
            (red, Some(Class::F)) => {
                let (mut o, mut u) = (vec![0f32; n_out], vec![0f32; n_upd]);
                load_f32(y.dtype, y.ptr, 0, &mut o);
                load_f32(upd.dtype, upd.ptr, 0, &mut u);
                each(&mut |p, t| {
                    o[t] = combine_f(red, o[t], u[p]);
                    Ok(())
                })?;
                store_f32(y.dtype, y.ptr, 0, &o);
                Ok(())
            }
            (red, Some(Class::I)) => {
                let (mut o, mut u) = (vec![0i64; n_out], vec![0i64; n_upd]);
                load_i64(y.dtype, y.ptr, 0, &mut o);
                load_i64(upd.dtype, upd.ptr, 0, &mut u);
                each(&mut |p, t| {
                    o[t] = combine_i(red, o[t], u[p]);
                    Ok(())
                })?;
                store_i64(y.dtype, y.ptr, 0, &o);
                Ok(())
            }
            (_, None | Some(Class::D)) => Err(format!("scatter_elements on {}", x.dtype)),
        }
    }
}

fn combine_f(red: Reduction, o: f32, u: f32) -> f32 {
    match red {
        Reduction::None => u,
        Reduction::Add => o + u,
        Reduction::Mul => o * u,
        // As the reference: the update wins only when strictly better.
        Reduction::Max => {
            if u > o {
                u
            } else {
                o
            }
        }
        Reduction::Min => {
            if u < o {
                u
            } else {
                o
            }
        }
    }
}

fn combine_i(red: Reduction, o: i64, u: i64) -> i64 {
    match red {
        Reduction::None => u,
        Reduction::Add => o.wrapping_add(u),
        Reduction::Mul => o.wrapping_mul(u),
        Reduction::Max => o.max(u),
        Reduction::Min => o.min(u),
    }
}

/// The flat output position each index element targets.
struct Targets<'a> {
    ax: usize,
    xshape: &'a [usize],
    ishape: &'a [usize],
}

impl Targets<'_> {
    /// Call `f(p, t)` for every position `p` of the indices (in order) with
    /// its target `t` in the data (both in range: indices' dims do not exceed
    /// the data's except along the axis, whose index is checked here).
    fn each<I: Copy + Into<i64>>(
        &self,
        ip: *const I,
        f: &mut dyn FnMut(usize, usize) -> Result<(), String>,
    ) -> Result<(), String> {
        let r = self.xshape.len();
        let xst = ge_ir::tensor::strides(self.xshape);
        let w = self.ishape[r - 1];
        let rows: usize = self.ishape[..r - 1].iter().product();
        let n = self.xshape[self.ax] as i64;
        for row in 0..rows {
            let mut rest = row;
            let mut base = 0usize;
            for k in (0..r - 1).rev() {
                let c = rest % self.ishape[k];
                rest /= self.ishape[k];
                if k != self.ax {
                    base += c * xst[k];
                }
            }
            // SAFETY: row `row` of the indices (w elements) is inside its slot.
            let idx = unsafe { std::slice::from_raw_parts(ip.add(row * w), w) };
            for (j, &i) in idx.iter().enumerate() {
                let raw: i64 = i.into();
                let i = if raw < 0 { raw + n } else { raw };
                if !(0..n).contains(&i) {
                    return Err(format!(
                        "scatter_elements index {raw} out of range for a dim of {n}"
                    ));
                }
                let col = if self.ax == r - 1 { 0 } else { j };
                f(row * w + j, base + col + i as usize * xst[self.ax])?;
            }
        }
        Ok(())
    }
}
