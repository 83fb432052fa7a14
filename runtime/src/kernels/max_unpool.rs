//! `graph.max_pool2d_indices` / `graph.max_pool3d_indices` (ONNX MaxPool
//! with `Indices`) and `graph.max_unpool` (ONNX MaxUnpool): the ops' own
//! `max_pool_argmax` / `max_pool3d_argmax` and `max_unpool`
//! (dialects/src/graph/max_unpool.rs). The pool computes in f32
//! (exact for the i8/u8 it also takes; f64 in f64), one plane per task; the unpooling
//! moves element bytes (any float type, f64 too), in order, so that a
//! repeated index keeps the last value as the reference does.

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::max_unpool::{
    max_pool3d_argmax, max_pool_argmax, max_unpool, ArgmaxPool, UnpoolAttrs,
};
use ge_dialects::graph::nn::PoolAttrs;
use ge_dialects::graph::nn3d::{dims5, Window3};
use ge_dialects::graph::opkit::Real;
use ge_ir::DType;

#[derive(Clone, Debug)]
pub struct MaxPoolIndices {
    pub attrs: PoolAttrs,
    pub column_major: bool,
}

impl Kernel for MaxPoolIndices {
    /// f64 computes in f64; the rest in f32 (exact for i8/u8).
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y, i]) = (ins, outs) else {
            return Err("max_pool2d_indices takes 1 operand and gives 2 results".into());
        };
        let &[n, c, h, w] = &x.shape[..] else {
            return Err(format!(
                "max_pool2d_indices: input {:?} is not NCHW",
                x.shape
            ));
        };
        let g = ArgmaxPool::new(self.attrs.clone(), self.column_major, h, w)?;
        let want = [n, c, g.oh, g.ow];
        if y.shape != want || i.shape != want || i.dtype != DType::I64 {
            return Err(format!(
                "max_pool2d_indices of {:?} gives {want:?}, not {:?} and {:?} ({})",
                x.shape, y.shape, i.shape, i.dtype
            ));
        }
        let ip = i.ptr as *mut i64;
        if x.dtype == DType::F64 && y.dtype == DType::F64 {
            // SAFETY: the input slot holds `x.numel()` f64s (its dtype was
            // checked) and is not written while the kernel runs.
            let xs = unsafe { std::slice::from_raw_parts(x.ptr as *const f64, x.numel()) };
            return pool_planes(&g, xs, y.ptr as *mut f64, ip, n * c, par);
        }
        let xi = F32In::new(x);
        let mut yo = F32Out::new(y);
        pool_planes(&g, xi.slice(), yo.ptr(), ip, n * c, par)?;
        yo.finish();
        Ok(())
    }
}

/// Pool every plane of `xs` into `y` and `idx`, one plane per task.
fn pool_planes<T: Real>(
    g: &ArgmaxPool,
    xs: &[T],
    y: *mut T,
    idx: *mut i64,
    planes: usize,
    par: &Par,
) -> Result<(), String> {
    let plane = g.oh * g.ow;
    let (yp, ip) = (Shared(y), Shared(idx));
    par.run(planes, xs.len() > 1 << 14, &|p| {
        // SAFETY: plane `p` is the `plane` elements at `p * plane` of both
        // results, which hold `planes * plane` elements (their shapes and
        // the indices' dtype were checked by the caller); tasks own distinct
        // planes.
        let (out, idx) = unsafe {
            (
                std::slice::from_raw_parts_mut(yp.p().add(p * plane), plane),
                std::slice::from_raw_parts_mut(ip.p().add(p * plane), plane),
            )
        };
        max_pool_argmax(g, xs, p..p + 1, out, idx);
        Ok(())
    })
}

/// The 3-D pool with the argmax: one volume per task.
#[derive(Clone, Debug)]
pub struct MaxPool3dIndices {
    pub window: Window3,
    pub column_major: bool,
}

/// Pool every volume of `xs` (`dims` each) into `y` and `idx`, one per task.
fn pool_volumes<T: Real>(
    k: &MaxPool3dIndices,
    dims: [usize; 3],
    xs: &[T],
    (y, idx): (*mut T, *mut i64),
    (volumes, vout): (usize, usize),
    par: &Par,
) -> Result<(), String> {
    let (yp, ip) = (Shared(y), Shared(idx));
    par.run(volumes, xs.len() > 1 << 14, &|p| {
        // SAFETY: volume `p` is the `vout` elements at `p * vout` of both
        // results, which hold `volumes * vout` elements (their shapes and
        // the indices' dtype were checked by the caller); tasks own
        // distinct volumes.
        let (out, idx) = unsafe {
            (
                std::slice::from_raw_parts_mut(yp.p().add(p * vout), vout),
                std::slice::from_raw_parts_mut(ip.p().add(p * vout), vout),
            )
        };
        max_pool3d_argmax(&k.window, dims, k.column_major, xs, p..p + 1, out, idx);
        Ok(())
    })
}

impl Kernel for MaxPool3dIndices {
    /// f64 computes in f64; the rest in f32.
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y, i]) = (ins, outs) else {
            return Err("max_pool3d_indices takes 1 operand and gives 2 results".into());
        };
        let (n, c, dims) = dims5(&x.shape, "input")?;
        let od = self.window.out_sizes(dims)?;
        let want = [n, c, od[0], od[1], od[2]];
        if y.shape != want || i.shape != want || i.dtype != DType::I64 {
            return Err(format!(
                "max_pool3d_indices of {:?} gives {want:?}, not {:?} and {:?} ({})",
                x.shape, y.shape, i.shape, i.dtype
            ));
        }
        let counts = (n * c, od.iter().product::<usize>());
        let ip = i.ptr as *mut i64;
        if x.dtype == DType::F64 && y.dtype == DType::F64 {
            // SAFETY: the input slot holds `x.numel()` f64s (its dtype was
            // checked) and is not written while the kernel runs.
            let xs = unsafe { std::slice::from_raw_parts(x.ptr as *const f64, x.numel()) };
            return pool_volumes(self, dims, xs, (y.ptr as *mut f64, ip), counts, par);
        }
        let xi = F32In::new(x);
        let mut yo = F32Out::new(y);
        pool_volumes(self, dims, xi.slice(), (yo.ptr(), ip), counts, par)?;
        yo.finish();
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct MaxUnpool {
    pub attrs: UnpoolAttrs,
}

/// The unpooling with elements moved as `T`, an unsigned integer of the
/// dtype's size (zero bits are 0.0 in every float type).
fn run_as<T: Copy + Default>(
    x: &Slot,
    i: &[i64],
    (inferred, out): (&[usize], &[usize]),
    y: &Slot,
) -> Result<(), String> {
    // SAFETY: the slots hold `numel` elements of the dtype's size, which is
    // `size_of::<T>()` (chosen by the caller); the output is not an input.
    let (xs, ys) = unsafe {
        (
            std::slice::from_raw_parts(x.ptr as *const T, x.numel()),
            std::slice::from_raw_parts_mut(y.ptr as *mut T, y.numel()),
        )
    };
    max_unpool(xs, i, inferred, out, ys)
}

impl Kernel for MaxUnpool {
    fn float_only(&self) -> bool {
        true
    }

    /// Moves element bytes: f64 as well.
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[x, i], &[y]) = (ins, outs) else {
            return Err("max_unpool takes 2 operands and gives 1 result".into());
        };
        let (inferred, out) = self.attrs.shapes(&x.shape)?;
        if i.shape != x.shape || i.dtype != DType::I64 || y.shape != out || y.dtype != x.dtype {
            return Err(format!(
                "max_unpool of {:?} ({}) with indices {:?} ({}) cannot give {:?} ({}); expected {out:?}",
                x.shape, x.dtype, i.shape, i.dtype, y.shape, y.dtype
            ));
        }
        let shapes = (&inferred[..], &out[..]);
        // SAFETY: the indices slot holds `i.numel()` i64s (checked above).
        let idx = unsafe { std::slice::from_raw_parts(i.ptr as *const i64, i.numel()) };
        match x.dtype.byte_size() {
            2 => run_as::<u16>(x, idx, shapes, y),
            4 => run_as::<u32>(x, idx, shapes, y),
            8 => run_as::<u64>(x, idx, shapes, y),
            _ => Err(format!("max_unpool on {}", x.dtype)),
        }
    }
}
