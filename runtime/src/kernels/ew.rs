//! Fused elementwise kernels: a chain of elementwise ops of one iteration
//! space runs in a single pass over memory. The output is walked in tiles of
//! [`TILE`] elements; for each tile every external input is loaded (with
//! numpy broadcasting) into a register tile, the ops run one after another on
//! the register tiles (tight loops the compiler vectorises), and only the
//! values that escape the group are stored. Intermediates never touch the
//! arena, so a fused `mul → add → relu` reads its inputs once and writes its
//! output once.
//!
//! Floats compute in f32 (f16/bf16 values are rounded to their type after
//! each op, as the reference does); integers and booleans in i64, wrapped to
//! their width after each op.

use super::{vmath, Par, Slot};
use crate::buffer::{load_f32, load_i64, round_to, store_f32, store_i64, wrap_to, Class};
use crate::shared::Shared;
use ge_ir::DType;

pub const TILE: usize = 2048;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Code {
    // float unary
    Neg,
    Abs,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Recip,
    Relu,
    LeakyRelu(f32),
    Sigmoid,
    Tanh,
    Gelu,
    GeluTanh,
    Silu,
    Erf,
    Floor,
    Ceil,
    Round,
    Sign,
    Sin,
    Cos,
    Asin,
    Acos,
    Atan,
    Square,
    HardSwish,
    Identity,
    // binary (both classes)
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Max,
    Min,
    /// fmod = 1 (C fmod) when true, Python mod otherwise.
    Mod(bool),
    // comparisons (-> i1)
    Eq,
    Lt,
    Gt,
    Le,
    Ge,
    // logic (i1)
    And,
    Or,
    Xor,
    Not,
    // bitwise (integers, on the two's-complement bits)
    BitAnd,
    BitOr,
    BitXor,
    BitNot,
    /// where(cond, x, y)
    Where,
    /// clip(x, lo?, hi?): which bounds are present
    Clip(bool, bool),
    /// conversion to the destination register's dtype
    Cast,
}

/// One instruction: `dst = code(args)`.
#[derive(Clone, Debug)]
pub struct Instr {
    pub code: Code,
    pub args: Vec<usize>,
    pub dst: usize,
}

/// A register: one value of the group.
#[derive(Clone, Debug)]
pub struct Reg {
    pub dtype: DType,
    pub class: Class,
}

/// A fused elementwise group.
#[derive(Clone, Debug)]
pub struct Group {
    pub regs: Vec<Reg>,
    /// (register, kernel value) pairs loaded before each tile.
    pub inputs: Vec<(usize, usize)>,
    pub instrs: Vec<Instr>,
    /// (register, kernel value) pairs stored after each tile.
    pub outputs: Vec<(usize, usize)>,
    /// (register, kernel value) of every instruction's result.
    pub defs: Vec<(usize, usize)>,
    /// Op names (for traces and reports).
    pub names: Vec<&'static str>,
}

/// Broadcast load plan of one input for an output shape.
#[derive(Clone, Debug)]
pub struct Bcast {
    /// Coalesced output dims and the input's strides along them (0 = broadcast).
    dims: Vec<usize>,
    strides: Vec<usize>,
    /// The input has exactly the output's shape (a contiguous load).
    pub same: bool,
    /// The input has one element.
    pub scalar: bool,
}

impl Bcast {
    pub fn new(out: &[usize], inp: &[usize]) -> Result<Bcast, String> {
        let n_out: usize = out.iter().product();
        let n_in: usize = inp.iter().product();
        if inp == out {
            return Ok(Bcast {
                dims: vec![n_out],
                strides: vec![1],
                same: true,
                scalar: false,
            });
        }
        if n_in == 1 {
            return Ok(Bcast {
                dims: vec![n_out],
                strides: vec![0],
                same: false,
                scalar: true,
            });
        }
        if inp.len() > out.len() {
            return Err(format!("cannot broadcast {inp:?} to {out:?}"));
        }
        let pad = out.len() - inp.len();
        let mut full = vec![1usize; pad];
        full.extend_from_slice(inp);
        let st = ge_ir::tensor::strides(&full);
        let mut dims = vec![];
        let mut strides: Vec<usize> = vec![];
        for (k, (&o, &i)) in out.iter().zip(&full).enumerate() {
            let s = if i == o {
                st[k]
            } else if i == 1 {
                0
            } else {
                return Err(format!("cannot broadcast {inp:?} to {out:?}"));
            };
            if o == 1 {
                continue;
            }
            // Merge with the previous dim when contiguous in both.
            if let (Some(ld), Some(ls)) = (dims.last_mut(), strides.last()) {
                let prev_s: usize = *ls;
                if (s == 0 && prev_s == 0) || (s != 0 && prev_s == s * o) {
                    *ld *= o;
                    let last = strides.len() - 1;
                    strides[last] = s;
                    continue;
                }
            }
            dims.push(o);
            strides.push(s);
        }
        if dims.is_empty() {
            dims.push(1);
            strides.push(0);
        }
        Ok(Bcast {
            dims,
            strides,
            same: false,
            scalar: false,
        })
    }

    /// Input element offsets for output elements `start .. start + len`, as
    /// runs `(input offset, run length, input stride)`.
    fn runs(&self, start: usize, len: usize, f: &mut dyn FnMut(usize, usize, usize)) {
        let r = self.dims.len();
        let mut idx = vec![0usize; r];
        let mut rem = start;
        for k in (0..r).rev() {
            idx[k] = rem % self.dims[k];
            rem /= self.dims[k];
        }
        let mut done = 0;
        while done < len {
            let last = r - 1;
            let run = (self.dims[last] - idx[last]).min(len - done);
            let off: usize = idx.iter().zip(&self.strides).map(|(a, b)| a * b).sum();
            f(off, run, self.strides[last]);
            done += run;
            idx[last] += run;
            let mut k = last;
            while idx[k] >= self.dims[k] && k > 0 {
                idx[k] = 0;
                idx[k - 1] += 1;
                k -= 1;
            }
        }
    }

    pub fn load_f(&self, dt: DType, p: *const u8, start: usize, out: &mut [f32]) {
        if self.same {
            return load_f32(dt, p, start, out);
        }
        if self.scalar {
            let mut v = [0f32];
            load_f32(dt, p, 0, &mut v);
            out.fill(v[0]);
            return;
        }
        let mut pos = 0;
        self.runs(start, out.len(), &mut |off, run, stride| {
            let o = &mut out[pos..pos + run];
            if stride == 1 {
                load_f32(dt, p, off, o);
            } else if stride == 0 {
                let mut v = [0f32];
                load_f32(dt, p, off, &mut v);
                o.fill(v[0]);
            } else {
                for (i, x) in o.iter_mut().enumerate() {
                    let mut v = [0f32];
                    load_f32(dt, p, off + i * stride, &mut v);
                    *x = v[0];
                }
            }
            pos += run;
        });
    }

    pub fn load_i(&self, dt: DType, p: *const u8, start: usize, out: &mut [i64]) {
        if self.same {
            return load_i64(dt, p, start, out);
        }
        if self.scalar {
            let mut v = [0i64];
            load_i64(dt, p, 0, &mut v);
            out.fill(v[0]);
            return;
        }
        let mut pos = 0;
        self.runs(start, out.len(), &mut |off, run, stride| {
            let o = &mut out[pos..pos + run];
            if stride == 1 {
                load_i64(dt, p, off, o);
            } else {
                for (i, x) in o.iter_mut().enumerate() {
                    let mut v = [0i64];
                    load_i64(dt, p, off + i * stride, &mut v);
                    *x = v[0];
                }
            }
            pos += run;
        });
    }
}

/// Register tiles of one worker.
struct Tiles {
    f: Vec<Vec<f32>>,
    i: Vec<Vec<i64>>,
}

/// `y = code(x)` for a float unary code (false: not one). The loops are
/// compiled again for AVX-512 and AVX2 and picked at run time: with
/// [`vmath`]'s branch-free `exp` and `erf` they vectorise.
fn unary_f(code: Code, x: &[f32], y: &mut [f32]) -> bool {
    by_cpu_features!(unary_f_loops(code: Code, x: &[f32], y: &mut [f32]) -> bool)
}

#[inline(always)]
fn unary_f_loops(code: Code, x: &[f32], y: &mut [f32]) -> bool {
    macro_rules! map {
        ($e:expr) => {{
            let g = $e;
            for (o, &v) in y.iter_mut().zip(x) {
                *o = g(v);
            }
        }};
    }
    match code {
        Code::Neg => map!(|v: f32| -v),
        Code::Abs => map!(|v: f32| v.abs()),
        Code::Exp => map!(vmath::exp),
        Code::Log => map!(|v: f32| v.ln()),
        Code::Sqrt => map!(|v: f32| v.sqrt()),
        Code::Rsqrt => map!(|v: f32| 1.0 / v.sqrt()),
        Code::Recip => map!(|v: f32| 1.0 / v),
        Code::Relu => map!(|v: f32| if v > 0.0 || v.is_nan() { v } else { 0.0 }),
        Code::LeakyRelu(a) => map!(|v: f32| if v >= 0.0 { v } else { a * v }),
        Code::Sigmoid => map!(|v: f32| 1.0 / (1.0 + vmath::exp(-v))),
        Code::Tanh => map!(|v: f32| v.tanh()),
        Code::Gelu => {
            map!(|v: f32| 0.5 * v * (1.0 + vmath::erf(v * std::f32::consts::FRAC_1_SQRT_2)))
        }
        Code::GeluTanh => map!(|v: f32| {
            let k = (2.0f32 / std::f32::consts::PI).sqrt();
            0.5 * v * (1.0 + (k * (v + 0.044715 * v * v * v)).tanh())
        }),
        Code::Silu => map!(|v: f32| v / (1.0 + vmath::exp(-v))),
        Code::Erf => map!(vmath::erf),
        Code::Floor => map!(|v: f32| v.floor()),
        Code::Ceil => map!(|v: f32| v.ceil()),
        Code::Round => map!(|v: f32| v.round_ties_even()),
        Code::Sign => map!(|v: f32| if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            v
        }),
        Code::Sin => map!(|v: f32| v.sin()),
        Code::Cos => map!(|v: f32| v.cos()),
        Code::Asin => map!(|v: f32| v.asin()),
        Code::Acos => map!(|v: f32| v.acos()),
        Code::Atan => map!(|v: f32| v.atan()),
        Code::Square => map!(|v: f32| v * v),
        Code::HardSwish => map!(|v: f32| v * (v / 6.0 + 0.5).clamp(0.0, 1.0)),
        Code::Identity | Code::Cast => y.copy_from_slice(x),
        _ => return false,
    }
    true
}

fn binary_f(code: Code, a: &[f32], b: &[f32], y: &mut [f32]) -> bool {
    macro_rules! zip {
        ($e:expr) => {{
            let g = $e;
            for ((o, &p), &q) in y.iter_mut().zip(a).zip(b) {
                *o = g(p, q);
            }
        }};
    }
    match code {
        Code::Add => zip!(|p: f32, q: f32| p + q),
        Code::Sub => zip!(|p: f32, q: f32| p - q),
        Code::Mul => zip!(|p: f32, q: f32| p * q),
        Code::Div => zip!(|p: f32, q: f32| p / q),
        Code::Pow => zip!(|p: f32, q: f32| (p as f64).powf(q as f64) as f32),
        Code::Max => zip!(|p: f32, q: f32| if p.is_nan() || q.is_nan() {
            f32::NAN
        } else {
            p.max(q)
        }),
        Code::Min => zip!(|p: f32, q: f32| if p.is_nan() || q.is_nan() {
            f32::NAN
        } else {
            p.min(q)
        }),
        Code::Mod(true) => zip!(|p: f32, q: f32| p % q),
        Code::Mod(false) => zip!(|p: f32, q: f32| {
            let r = p % q;
            if r != 0.0 && ((r < 0.0) != (q < 0.0)) {
                r + q
            } else {
                r
            }
        }),
        _ => return false,
    }
    true
}

fn cmp_f(code: Code, a: &[f32], b: &[f32], y: &mut [i64]) -> bool {
    macro_rules! zip {
        ($e:expr) => {{
            let g = $e;
            for ((o, &p), &q) in y.iter_mut().zip(a).zip(b) {
                *o = g(p, q) as i64;
            }
        }};
    }
    match code {
        Code::Eq => zip!(|p: f32, q: f32| p == q),
        Code::Lt => zip!(|p: f32, q: f32| p < q),
        Code::Gt => zip!(|p: f32, q: f32| p > q),
        Code::Le => zip!(|p: f32, q: f32| p <= q),
        Code::Ge => zip!(|p: f32, q: f32| p >= q),
        _ => return false,
    }
    true
}

fn binary_i(code: Code, a: &[i64], b: &[i64], y: &mut [i64]) -> Result<bool, String> {
    macro_rules! zip {
        ($e:expr) => {{
            let g = $e;
            for ((o, &p), &q) in y.iter_mut().zip(a).zip(b) {
                *o = g(p, q);
            }
        }};
    }
    match code {
        Code::Add => zip!(|p: i64, q: i64| p.wrapping_add(q)),
        Code::Sub => zip!(|p: i64, q: i64| p.wrapping_sub(q)),
        Code::Mul => zip!(|p: i64, q: i64| p.wrapping_mul(q)),
        Code::Div | Code::Mod(_) => {
            if b.contains(&0) {
                return Err("integer division by zero".into());
            }
            match code {
                Code::Div => zip!(|p: i64, q: i64| p.wrapping_div(q)),
                Code::Mod(true) => zip!(|p: i64, q: i64| p.wrapping_rem(q)),
                _ => zip!(|p: i64, q: i64| {
                    let r = p.wrapping_rem(q);
                    if r != 0 && ((r < 0) != (q < 0)) {
                        r + q
                    } else {
                        r
                    }
                }),
            }
        }
        Code::Pow => zip!(|p: i64, q: i64| if q < 0 {
            0
        } else {
            p.wrapping_pow(q.min(u32::MAX as i64) as u32)
        }),
        Code::Max => zip!(|p: i64, q: i64| p.max(q)),
        Code::Min => zip!(|p: i64, q: i64| p.min(q)),
        Code::Eq => zip!(|p: i64, q: i64| (p == q) as i64),
        Code::Lt => zip!(|p: i64, q: i64| (p < q) as i64),
        Code::Gt => zip!(|p: i64, q: i64| (p > q) as i64),
        Code::Le => zip!(|p: i64, q: i64| (p <= q) as i64),
        Code::Ge => zip!(|p: i64, q: i64| (p >= q) as i64),
        Code::And => zip!(|p: i64, q: i64| ((p != 0) && (q != 0)) as i64),
        Code::Or => zip!(|p: i64, q: i64| ((p != 0) || (q != 0)) as i64),
        Code::Xor => zip!(|p: i64, q: i64| ((p != 0) != (q != 0)) as i64),
        Code::BitAnd => zip!(|p: i64, q: i64| p & q),
        Code::BitOr => zip!(|p: i64, q: i64| p | q),
        Code::BitXor => zip!(|p: i64, q: i64| p ^ q),
        _ => return Ok(false),
    }
    Ok(true)
}

impl Group {
    /// Check that every instruction has an implementation for its classes.
    pub fn supported(&self) -> Result<(), String> {
        for ins in &self.instrs {
            let c = |r: usize| self.regs[r].class;
            let dst = c(ins.dst);
            let ok = match ins.code {
                Code::Cast | Code::Identity => true,
                Code::Where => {
                    ins.args.len() == 3 && c(ins.args[1]) == dst && c(ins.args[2]) == dst
                }
                Code::Clip(..) => ins.args.iter().all(|&a| c(a) == dst),
                Code::Eq | Code::Lt | Code::Gt | Code::Le | Code::Ge => {
                    ins.args.len() == 2 && c(ins.args[0]) == c(ins.args[1]) && dst == Class::I
                }
                Code::And
                | Code::Or
                | Code::Xor
                | Code::Not
                | Code::BitAnd
                | Code::BitOr
                | Code::BitXor
                | Code::BitNot => ins.args.iter().all(|&a| c(a) == Class::I) && dst == Class::I,
                Code::Add
                | Code::Sub
                | Code::Mul
                | Code::Div
                | Code::Pow
                | Code::Max
                | Code::Min
                | Code::Mod(_) => ins.args.len() == 2 && ins.args.iter().all(|&a| c(a) == dst),
                Code::Neg | Code::Abs | Code::Relu | Code::Sign => c(ins.args[0]) == dst,
                _ => dst == Class::F && c(ins.args[0]) == Class::F,
            };
            if !ok {
                return Err(format!("elementwise {:?} on these element types", ins.code));
            }
        }
        Ok(())
    }

    /// Register `r`'s tile as f32 (integer registers converted).
    fn as_f32<'t>(&self, t: &'t Tiles, r: usize, len: usize) -> std::borrow::Cow<'t, [f32]> {
        match self.regs[r].class {
            Class::F => std::borrow::Cow::Borrowed(&t.f[r][..len]),
            Class::I => std::borrow::Cow::Owned(t.i[r][..len].iter().map(|&v| v as f32).collect()),
        }
    }

    fn run_tile(
        &self,
        t: &mut Tiles,
        loads: &[(Bcast, DType, *const u8)],
        stores: &[(DType, *mut u8)],
        start: usize,
        len: usize,
    ) -> Result<(), String> {
        // Register r's tile lives in t.f[r] or t.i[r] according to its class.
        for (k, (bc, dt, p)) in loads.iter().enumerate() {
            let r = self.inputs[k].0;
            match self.regs[r].class {
                Class::F => bc.load_f(*dt, *p, start, &mut t.f[r][..len]),
                Class::I => bc.load_i(*dt, *p, start, &mut t.i[r][..len]),
            }
        }
        for ins in &self.instrs {
            let d = ins.dst;
            let dreg = &self.regs[d];
            // Take the destination out to borrow sources freely.
            let mut yf = std::mem::take(&mut t.f[d]);
            let mut yi = std::mem::take(&mut t.i[d]);
            let r = self.instr(t, ins, &mut yf[..], &mut yi[..], len);
            match dreg.class {
                Class::F => round_to(dreg.dtype, &mut yf[..len]),
                Class::I => wrap_to(dreg.dtype, &mut yi[..len]),
            }
            t.f[d] = yf;
            t.i[d] = yi;
            r?;
        }
        for (k, &(r, _)) in self.outputs.iter().enumerate() {
            let (dt, p) = stores[k];
            match self.regs[r].class {
                Class::F => store_f32(dt, p, start, &t.f[r][..len]),
                Class::I => store_i64(dt, p, start, &t.i[r][..len]),
            }
        }
        Ok(())
    }

    /// Instruction `ins` over the first `len` elements of the tiles, into
    /// `yf` / `yi` (the destination register's tile, taken out of `t`).
    fn instr(
        &self,
        t: &Tiles,
        ins: &Instr,
        yf: &mut [f32],
        yi: &mut [i64],
        len: usize,
    ) -> Result<(), String> {
        let dreg = &self.regs[ins.dst];
        let a0 = ins.args.first().copied().unwrap_or(0);
        let ca = self.regs[a0].class;
        match (ins.code, dreg.class) {
            (Code::Cast | Code::Identity, Class::F) => match ca {
                Class::F => yf[..len].copy_from_slice(&t.f[a0][..len]),
                Class::I => {
                    for (o, &v) in yf[..len].iter_mut().zip(&t.i[a0][..len]) {
                        *o = v as f32;
                    }
                }
            },
            (Code::Cast | Code::Identity, Class::I) => match ca {
                Class::I => yi[..len].copy_from_slice(&t.i[a0][..len]),
                Class::F => {
                    for (o, &v) in yi[..len].iter_mut().zip(&t.f[a0][..len]) {
                        *o = crate::buffer::f2i(dreg.dtype, v as f64);
                    }
                }
            },
            (Code::Where, Class::F) => {
                let (c, x, y) = (&t.i[a0], &t.f[ins.args[1]], &t.f[ins.args[2]]);
                for k in 0..len {
                    yf[k] = if c[k] != 0 { x[k] } else { y[k] };
                }
            }
            (Code::Where, Class::I) => {
                let (c, x, y) = (&t.i[a0], &t.i[ins.args[1]], &t.i[ins.args[2]]);
                for k in 0..len {
                    yi[k] = if c[k] != 0 { x[k] } else { y[k] };
                }
            }
            (Code::Clip(lo, hi), Class::F) => clip(&t.f, &ins.args, lo, hi, &mut yf[..len]),
            (Code::Clip(lo, hi), Class::I) => clip(&t.i, &ins.args, lo, hi, &mut yi[..len]),
            (Code::Not, _) => {
                for (o, &v) in yi[..len].iter_mut().zip(&t.i[a0][..len]) {
                    *o = (v == 0) as i64;
                }
            }
            (Code::BitNot, _) => {
                // Stored wrapped to the dtype: unsigned types keep their width.
                for (o, &v) in yi[..len].iter_mut().zip(&t.i[a0][..len]) {
                    *o = !v;
                }
            }
            (code, Class::F) if ins.args.len() == 1 => {
                let x = self.as_f32(t, a0, len);
                if !unary_f(code, &x, &mut yf[..len]) {
                    return Err(format!("no f32 kernel for {code:?}"));
                }
            }
            (code, Class::F) => {
                // Mixed operands (pow of f32 by an integer exponent) compute in f32.
                let (x, y) = (self.as_f32(t, a0, len), self.as_f32(t, ins.args[1], len));
                if !binary_f(code, &x, &y, &mut yf[..len]) {
                    return Err(format!("no f32 kernel for {code:?}"));
                }
            }
            (code, Class::I)
                if ins.args.len() == 2
                    && (ca == Class::F || self.regs[ins.args[1]].class == Class::F) =>
            {
                let (x, y) = (self.as_f32(t, a0, len), self.as_f32(t, ins.args[1], len));
                if !cmp_f(code, &x, &y, &mut yi[..len]) {
                    // Integer result of a float computation (pow of an integer
                    // base by a float exponent): truncate, as numpy's astype does.
                    let mut tmp = vec![0f32; len];
                    if !binary_f(code, &x, &y, &mut tmp) {
                        return Err(format!("no kernel for {code:?}"));
                    }
                    for (o, &v) in yi[..len].iter_mut().zip(&tmp) {
                        *o = v as i64;
                    }
                }
            }
            (code, Class::I) if ins.args.len() == 2 => {
                let b = ins.args[1];
                if !binary_i(code, &t.i[a0][..len], &t.i[b][..len], &mut yi[..len])? {
                    return Err(format!("no integer kernel for {code:?}"));
                }
            }
            (code, Class::I) => {
                let x = &t.i[a0][..len];
                let y = &mut yi[..len];
                match code {
                    Code::Neg => y
                        .iter_mut()
                        .zip(x)
                        .for_each(|(o, &v)| *o = v.wrapping_neg()),
                    Code::Abs => y
                        .iter_mut()
                        .zip(x)
                        .for_each(|(o, &v)| *o = v.wrapping_abs()),
                    Code::Relu => y.iter_mut().zip(x).for_each(|(o, &v)| *o = v.max(0)),
                    Code::Sign => y.iter_mut().zip(x).for_each(|(o, &v)| *o = v.signum()),
                    _ => return Err(format!("no integer kernel for {code:?}")),
                }
            }
        }
        Ok(())
    }

    /// Run over `n` output elements. `slots` are the kernel's value slots;
    /// `in_shapes` the concrete shapes of the inputs, `out_shape` the
    /// iteration space.
    pub fn run(&self, slots: &[Slot], out_shape: &[usize], par: &Par) -> Result<(), String> {
        let n: usize = out_shape.iter().product();
        let mut loads = Vec::with_capacity(self.inputs.len());
        for &(_, v) in &self.inputs {
            let s = &slots[v];
            loads.push((
                Bcast::new(out_shape, &s.shape)?,
                s.dtype,
                s.ptr as *const u8,
            ));
        }
        let stores: Vec<(DType, Shared<*mut u8>)> = self
            .outputs
            .iter()
            .map(|&(_, v)| (slots[v].dtype, Shared(slots[v].ptr)))
            .collect();
        let loads: Vec<(Bcast, DType, Shared<*const u8>)> = loads
            .into_iter()
            .map(|(b, d, p)| (b, d, Shared(p)))
            .collect();
        let nreg = self.regs.len();
        let chunk = TILE * 16;
        let nchunks = n.div_ceil(chunk).max(1);
        par.run(nchunks, n >= 4 * chunk, &|c| {
            let mut t = Tiles {
                f: (0..nreg)
                    .map(|r| {
                        if self.regs[r].class == Class::F {
                            vec![0f32; TILE]
                        } else {
                            vec![]
                        }
                    })
                    .collect(),
                i: (0..nreg)
                    .map(|r| {
                        if self.regs[r].class == Class::I {
                            vec![0i64; TILE]
                        } else {
                            vec![]
                        }
                    })
                    .collect(),
            };
            let l: Vec<(Bcast, DType, *const u8)> = loads
                .iter()
                .map(|(b, d, p)| (b.clone(), *d, p.p()))
                .collect();
            let s: Vec<(DType, *mut u8)> = stores.iter().map(|(d, p)| (*d, p.p())).collect();
            let end = ((c + 1) * chunk).min(n);
            let mut start = c * chunk;
            while start < end {
                let len = TILE.min(end - start);
                self.run_tile(&mut t, &l, &s, start, len)?;
                start += len;
            }
            Ok(())
        })
    }
}

/// A float unary op over a slice (activation epilogues).
pub fn apply_unary(code: Code, x: &[f32], y: &mut [f32]) {
    unary_f(code, x, y);
}

/// `y = clip(x, lo, hi)` over registers `args` = [x, lo if `lo`, hi if `hi`]
/// (`y` already sized to the tile). A bound wins over NaN in neither
/// direction: `x < lo` and `x > hi` are false for NaN, which passes through.
fn clip<T: PartialOrd + Copy>(regs: &[Vec<T>], args: &[usize], lo: bool, hi: bool, y: &mut [T]) {
    let len = y.len();
    y.copy_from_slice(&regs[args[0]][..len]);
    let mut k = 1;
    if lo {
        for (o, &b) in y.iter_mut().zip(&regs[args[k]][..len]) {
            *o = if *o < b { b } else { *o };
        }
        k += 1;
    }
    if hi {
        for (o, &b) in y.iter_mut().zip(&regs[args[k]][..len]) {
            *o = if *o > b { b } else { *o };
        }
    }
}
