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
//! each op, as the reference does), f64 in f64 (the same loops, generic over
//! [`Real`]); integers and booleans in i64, wrapped to their width after
//! each op.

use super::{vmath, Par, Slot};
use crate::buffer::{
    f2i, f64_to_float, load_f32, load_f64, load_i64, round_to, store_f32, store_f64, store_i64,
    wrap_to, Class,
};
use crate::shared::Shared;
use ge_ir::DType;

pub const TILE: usize = 2048;

/// The work of one part of a pass the pool shares, in [`Code::cost`]'s
/// units: 16 000 elements of a `relu` (about 3 µs on the AVX-512 EPYC of
/// docs/benchmarks.md), 2 600 of a bias added before a `gelu`. A pool's
/// region costs about a microsecond there (its spinning workers' wake-up
/// and join); a pass splits from two parts on.
pub const PART_WORK: usize = 80_000;

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

impl Code {
    /// The time of one element of this instruction, in quarters of a plain
    /// pass's (one input loaded, one output stored: a `relu` group costs
    /// 4 + 1). From one-op groups of 64 Ki floats at 1 thread on the
    /// AVX-512 EPYC (µs): relu 12.9, sqrt 28.1, exp 36.1, sigmoid 39.8,
    /// tanh 55.2, gelu 68.1, erf 127.3 (a vector `relu` is at the pass's
    /// memory speed).
    fn cost(self) -> usize {
        use Code::*;
        match self {
            Sqrt | Rsqrt | Recip | Div => 7,
            Exp | Log | Sigmoid | Silu => 11,
            Tanh | GeluTanh => 17,
            Gelu => 22,
            Erf | Sin | Cos | Asin | Acos | Atan | Pow | Mod(_) => 45,
            _ => 1,
        }
    }
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
        let n_in: usize = inp.iter().product();
        // A contiguous or a one-element load needs no dims (`load` reads
        // neither): nothing is allocated for the common cases.
        if inp == out {
            return Ok(Bcast {
                dims: vec![],
                strides: vec![],
                same: true,
                scalar: false,
            });
        }
        if n_in == 1 {
            return Ok(Bcast {
                dims: vec![],
                strides: vec![],
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

    /// Load the input elements for output elements `start .. start +
    /// out.len()` with `load` (one of the buffer loaders of `T`).
    fn load<T: Copy + Default>(
        &self,
        load: fn(DType, *const u8, usize, &mut [T]),
        dt: DType,
        p: *const u8,
        start: usize,
        out: &mut [T],
    ) {
        if self.same {
            return load(dt, p, start, out);
        }
        if out.is_empty() {
            return;
        }
        if self.scalar {
            load(dt, p, 0, &mut out[..1]);
            let v = out[0];
            out.fill(v);
            return;
        }
        if let (&[_, inner], &[1, 0]) = (&self.dims[..], &self.strides[..]) {
            return Self::load_rows(load, dt, p, inner, start, out);
        }
        let mut pos = 0;
        self.runs(start, out.len(), &mut |off, run, stride| {
            let o = &mut out[pos..pos + run];
            if stride == 1 {
                load(dt, p, off, o);
            } else if stride == 0 {
                load(dt, p, off, &mut o[..1]);
                let v = o[0];
                o.fill(v);
            } else {
                for (i, x) in o.iter_mut().enumerate() {
                    load(dt, p, off + i * stride, std::slice::from_mut(x));
                }
            }
            pos += run;
        });
    }

    /// [`Bcast::load`] of an input holding one value per row of `inner`
    /// output elements (dims `[rows, inner]`, strides `[1, 0]`: a
    /// per-channel scale or bias `[N, C, 1, 1]` on `[N, C, H, W]`): the
    /// rows' values loaded a chunk at a time, each filled along its row.
    /// Run by run this was a load call and a fill per row, most of a
    /// squeeze-excite multiply's time on 2x2 to 4x4 maps.
    fn load_rows<T: Copy + Default>(
        load: fn(DType, *const u8, usize, &mut [T]),
        dt: DType,
        p: *const u8,
        inner: usize,
        start: usize,
        out: &mut [T],
    ) {
        const CHUNK: usize = 64;
        let mut values = [T::default(); CHUNK];
        let (mut at, end, mut pos) = (start, start + out.len(), 0);
        while at < end {
            let row0 = at / inner;
            let n = ((end - 1) / inner + 1 - row0).min(CHUNK);
            load(dt, p, row0, &mut values[..n]);
            for (i, &v) in values[..n].iter().enumerate() {
                let row_end = ((row0 + i + 1) * inner).min(end);
                out[pos..pos + row_end - at].fill(v);
                pos += row_end - at;
                at = row_end;
            }
        }
    }

    pub fn load_f(&self, dt: DType, p: *const u8, start: usize, out: &mut [f32]) {
        self.load(load_f32, dt, p, start, out)
    }

    pub fn load_i(&self, dt: DType, p: *const u8, start: usize, out: &mut [i64]) {
        self.load(load_i64, dt, p, start, out)
    }

    pub fn load_d(&self, dt: DType, p: *const u8, start: usize, out: &mut [f64]) {
        self.load(load_f64, dt, p, start, out)
    }
}

/// The destination register's tile of an instruction (the one of its class used).
struct Dst {
    f: Vec<f32>,
    i: Vec<i64>,
    d: Vec<f64>,
}

/// Register tiles of one worker.
#[derive(Default)]
struct Tiles {
    f: Vec<Vec<f32>>,
    i: Vec<Vec<i64>>,
    d: Vec<Vec<f64>>,
}

impl Tiles {
    /// At least a tile for each register of `g`, in the vector of its
    /// class (registers of another class may keep a stale tile there).
    fn fit(&mut self, g: &Group) {
        fn fit<T: Clone + Default>(v: &mut Vec<Vec<T>>, g: &Group, class: Class) {
            if v.len() < g.regs.len() {
                v.resize_with(g.regs.len(), Vec::new);
            }
            for (t, r) in v.iter_mut().zip(&g.regs) {
                if r.class == class && t.len() < TILE {
                    t.resize(TILE, T::default());
                }
            }
        }
        fit(&mut self.f, g, Class::F);
        fit(&mut self.i, g, Class::I);
        fit(&mut self.d, g, Class::D);
    }
}

/// A group's loads (broadcast plan, element type, buffer) and stores.
type Loads = Vec<(Bcast, DType, Shared<*const u8>)>;
type Stores = Vec<(DType, Shared<*mut u8>)>;

thread_local! {
    /// Each thread's register tiles, reused by every group it runs (issue
    /// 20: a zeroed tile per register per call was the largest allocation of
    /// a small model's run). Stale values are never read: a tile's first
    /// `len` elements are written (by its load or its instruction) before
    /// any instruction reads them — the group is in SSA order.
    static TILES: std::cell::RefCell<Tiles> = std::cell::RefCell::default();
    /// Each thread's load and store lists, reused by the next group it starts.
    static IO: std::cell::RefCell<(Loads, Stores)> = std::cell::RefCell::default();
}

/// A float the loops compute in: f32 (with [`vmath`]'s branch-free `exp`
/// and `erf`, which vectorise) or f64 (with the reference's own functions).
pub trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const NAN: Self;
    /// A constant (rounded to the type).
    fn c(v: f64) -> Self;
    fn exp(self) -> Self;
    fn erf(self) -> Self;
    fn sigmoid(self) -> Self;
    fn silu(self) -> Self;
    fn pow(self, q: Self) -> Self;
    /// `self²` as `pow` gives it (computed without a call).
    fn square_wide(self) -> Self;
    /// `self³` as `pow` gives it (computed without a call where exact).
    fn cube_wide(self) -> Self;
    fn is_nan(self) -> bool;
    fn max(self, q: Self) -> Self;
    fn min(self, q: Self) -> Self;
    fn abs(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn tanh(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round_ties_even(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
}

/// The [`Real`] methods that are the type's own.
macro_rules! real_forward {
    ($t:ident: $($m:ident($($a:ident),*)),* $(,)?) => {
        $(
            #[inline(always)]
            fn $m(self $(, $a: $t)*) -> $t {
                $t::$m(self $(, $a)*)
            }
        )*
        #[inline(always)]
        fn is_nan(self) -> bool {
            $t::is_nan(self)
        }
    };
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const NAN: f32 = f32::NAN;
    #[inline(always)]
    fn c(v: f64) -> f32 {
        v as f32
    }
    #[inline(always)]
    fn exp(self) -> f32 {
        vmath::exp(self)
    }
    #[inline(always)]
    fn erf(self) -> f32 {
        vmath::erf(self)
    }
    #[inline(always)]
    fn sigmoid(self) -> f32 {
        1.0 / (1.0 + vmath::exp(-self))
    }
    #[inline(always)]
    fn silu(self) -> f32 {
        self / (1.0 + vmath::exp(-self))
    }
    #[inline(always)]
    fn pow(self, q: f32) -> f32 {
        (self as f64).powf(q as f64) as f32
    }
    #[inline(always)]
    fn square_wide(self) -> f32 {
        let d = self as f64;
        (d * d) as f32
    }
    #[inline(always)]
    fn cube_wide(self) -> f32 {
        // `d * d` is exact in f64 (48 bits), `* d` rounds once to f64 as
        // `powf` does; then to f32 as `pow` above.
        let d = self as f64;
        (d * d * d) as f32
    }
    #[inline(always)]
    fn tanh(self) -> f32 {
        vmath::tanh(self)
    }
    real_forward!(f32: max(q), min(q), abs(), ln(), sqrt(), floor(), ceil(),
        round_ties_even(), sin(), cos(), asin(), acos(), atan());
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const NAN: f64 = f64::NAN;
    #[inline(always)]
    fn c(v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    #[inline(always)]
    fn erf(self) -> f64 {
        ge_dialects::graph::elementwise::erf(self)
    }
    #[inline(always)]
    fn sigmoid(self) -> f64 {
        ge_dialects::graph::elementwise::sigmoid(self)
    }
    #[inline(always)]
    fn silu(self) -> f64 {
        self * self.sigmoid()
    }
    #[inline(always)]
    fn pow(self, q: f64) -> f64 {
        self.powf(q)
    }
    #[inline(always)]
    fn square_wide(self) -> f64 {
        self * self
    }
    #[inline(always)]
    fn cube_wide(self) -> f64 {
        // Two roundings in f64: `powf`'s one rounding is kept.
        self.powf(3.0)
    }
    real_forward!(f64: max(q), min(q), abs(), ln(), sqrt(), tanh(), floor(), ceil(),
        round_ties_even(), sin(), cos(), asin(), acos(), atan());
}

/// `y = code(x)` for a float unary code (false: not one). The loops are
/// compiled again for AVX-512 and AVX2 and picked at run time: with
/// [`vmath`]'s branch-free `exp` and `erf` they vectorise.
fn unary_f(code: Code, x: &[f32], y: &mut [f32]) -> bool {
    if matches!(code, Code::Sigmoid | Code::Silu) && super::logistic::map(code == Code::Silu, x, y)
    {
        return true;
    }
    if code == Code::Gelu && super::gelu::map(x, y) {
        return true;
    }
    if code == Code::Exp && super::avx512_exp::map(x, y) {
        return true;
    }
    by_cpu_features!(unary_loops(code: Code, x: &[f32], y: &mut [f32]) -> bool)
}

/// [`unary_f`] in f64.
fn unary_d(code: Code, x: &[f64], y: &mut [f64]) -> bool {
    by_cpu_features!(unary_loops(code: Code, x: &[f64], y: &mut [f64]) -> bool)
}

/// graph.relu on one value: `max(v, 0)` with NaN kept (and -0 -> +0). The
/// fused relus (conv and gemm epilogues, the residual and batch-norm
/// fusions, the depthwise lanes) give the same values.
#[inline(always)]
pub(crate) fn relu<T: Real>(v: T) -> T {
    if v > T::ZERO || v.is_nan() {
        v
    } else {
        T::ZERO
    }
}

/// graph.hard_swish on one value: `v * min(max(v * (1/6) + 1/2, 0), 1)`,
/// `1/6` the type's nearest. The conv and gemm `hard_swish` epilogues
/// (`activation`, `conv::bias_activation`, the depthwise lanes) do the same
/// operations in the same order, so a fused epilogue equals the op.
#[inline(always)]
pub(crate) fn hard_swish<T: Real>(v: T) -> T {
    v * (v * T::c(1.0 / 6.0) + T::c(0.5)).max(T::ZERO).min(T::ONE)
}

/// [`hard_swish`] over `v` in place, at the CPU's vector width.
pub(crate) fn hard_swish_in_place(v: &mut [f32]) {
    by_cpu_features!(hard_swish_loop(v: &mut [f32]))
}

#[inline(always)]
fn hard_swish_loop(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = hard_swish(*x));
}

#[inline(always)]
fn unary_loops<T: Real>(code: Code, x: &[T], y: &mut [T]) -> bool {
    macro_rules! map {
        ($e:expr) => {{
            let g = $e;
            for (o, &v) in y.iter_mut().zip(x) {
                *o = g(v);
            }
        }};
    }
    let (zero, one, half) = (T::ZERO, T::ONE, T::c(0.5));
    match code {
        Code::Neg => map!(|v: T| -v),
        Code::Abs => map!(|v: T| v.abs()),
        Code::Exp => map!(T::exp),
        Code::Log => map!(|v: T| v.ln()),
        Code::Sqrt => map!(|v: T| v.sqrt()),
        Code::Rsqrt => map!(|v: T| one / v.sqrt()),
        Code::Recip => map!(|v: T| one / v),
        Code::Relu => map!(relu::<T>),
        Code::LeakyRelu(a) => {
            let a = T::c(a as f64);
            map!(|v: T| if v >= zero { v } else { a * v })
        }
        Code::Sigmoid => map!(T::sigmoid),
        Code::Tanh => map!(|v: T| v.tanh()),
        Code::Gelu => {
            let k = T::c(std::f64::consts::FRAC_1_SQRT_2);
            map!(|v: T| half * v * (one + (v * k).erf()))
        }
        Code::GeluTanh => {
            let (k, c) = (T::c((2.0f64 / std::f64::consts::PI).sqrt()), T::c(0.044715));
            map!(|v: T| half * v * (one + (k * (v + c * v * v * v)).tanh()))
        }
        Code::Silu => map!(T::silu),
        Code::Erf => map!(T::erf),
        Code::Floor => map!(|v: T| v.floor()),
        Code::Ceil => map!(|v: T| v.ceil()),
        Code::Round => map!(|v: T| v.round_ties_even()),
        Code::Sign => map!(|v: T| if v > zero {
            one
        } else if v < zero {
            -one
        } else {
            v
        }),
        Code::Sin => map!(|v: T| v.sin()),
        Code::Cos => map!(|v: T| v.cos()),
        Code::Asin => map!(|v: T| v.asin()),
        Code::Acos => map!(|v: T| v.acos()),
        Code::Atan => map!(|v: T| v.atan()),
        Code::Square => map!(|v: T| v * v),
        Code::HardSwish => map!(hard_swish::<T>),
        Code::Identity | Code::Cast => y.copy_from_slice(x),
        _ => return false,
    }
    true
}

/// `y = code(a, b)` for a float binary code (false: not one), compiled
/// again for AVX-512 and AVX2 as [`unary_f`]: the loops (max and min with
/// their NaN selects too) vectorise at the CPU's width, where the baseline
/// build runs them 4 floats at a time (HardSwish's min and max after a
/// convolution took longer than the convolution).
fn binary_f(code: Code, a: &[f32], b: &[f32], y: &mut [f32]) -> bool {
    by_cpu_features!(binary_f32(code: Code, a: &[f32], b: &[f32], y: &mut [f32]) -> bool)
}

/// [`binary_f`] in f64.
fn binary_d(code: Code, a: &[f64], b: &[f64], y: &mut [f64]) -> bool {
    by_cpu_features!(binary_f64(code: Code, a: &[f64], b: &[f64], y: &mut [f64]) -> bool)
}

#[inline(always)]
fn binary_f32(code: Code, a: &[f32], b: &[f32], y: &mut [f32]) -> bool {
    binary(code, a, b, y)
}

#[inline(always)]
fn binary_f64(code: Code, a: &[f64], b: &[f64], y: &mut [f64]) -> bool {
    binary(code, a, b, y)
}

/// Whether every exponent in `b` is `q` (a constant exponent's filled tile).
#[inline(always)]
fn small_power<T: Real>(b: &[T], q: f64) -> bool {
    let q = T::c(q);
    !b.is_empty() && b.iter().all(|&v| v == q)
}

#[inline(always)]
fn binary<T: Real>(code: Code, a: &[T], b: &[T], y: &mut [T]) -> bool {
    macro_rules! zip {
        ($e:expr) => {{
            let g = $e;
            for ((o, &p), &q) in y.iter_mut().zip(a).zip(b) {
                *o = g(p, q);
            }
        }};
    }
    let zero = T::ZERO;
    match code {
        Code::Add => zip!(|p: T, q: T| p + q),
        Code::Sub => zip!(|p: T, q: T| p - q),
        Code::Mul => zip!(|p: T, q: T| p * q),
        Code::Div => zip!(|p: T, q: T| p / q),
        // A constant square or cube (GELU's `pow(x, 3)`): products in the
        // wider type, which vectorise, where `pow` is a call per element.
        // `x * x` is exact in it, `x * x * x` rounded once: `pow`'s value.
        Code::Pow if small_power(b, 2.0) => zip!(|p: T, _: T| p.square_wide()),
        Code::Pow if small_power(b, 3.0) => zip!(|p: T, _: T| p.cube_wide()),
        Code::Pow => zip!(T::pow),
        Code::Max => zip!(|p: T, q: T| if p.is_nan() || q.is_nan() {
            T::NAN
        } else {
            p.max(q)
        }),
        Code::Min => zip!(|p: T, q: T| if p.is_nan() || q.is_nan() {
            T::NAN
        } else {
            p.min(q)
        }),
        Code::Mod(true) => zip!(|p: T, q: T| p % q),
        Code::Mod(false) => zip!(|p: T, q: T| {
            let r = p % q;
            if r != zero && ((r < zero) != (q < zero)) {
                r + q
            } else {
                r
            }
        }),
        _ => return false,
    }
    true
}

fn cmp<T: Real>(code: Code, a: &[T], b: &[T], y: &mut [i64]) -> bool {
    macro_rules! zip {
        ($e:expr) => {{
            let g = $e;
            for ((o, &p), &q) in y.iter_mut().zip(a).zip(b) {
                *o = g(p, q) as i64;
            }
        }};
    }
    match code {
        Code::Eq => zip!(|p: T, q: T| p == q),
        Code::Lt => zip!(|p: T, q: T| p < q),
        Code::Gt => zip!(|p: T, q: T| p > q),
        Code::Le => zip!(|p: T, q: T| p <= q),
        Code::Ge => zip!(|p: T, q: T| p >= q),
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

/// The integer unary ops over `x` into `y` (wrapping, as the integer
/// types do).
fn unary_i(code: Code, x: &[i64], y: &mut [i64]) -> Result<(), String> {
    let f: fn(i64) -> i64 = match code {
        Code::Neg => i64::wrapping_neg,
        Code::Abs => i64::wrapping_abs,
        Code::Relu => |v| v.max(0),
        Code::Sign => i64::signum,
        _ => return Err(format!("no integer kernel for {code:?}")),
    };
    for (o, &v) in y.iter_mut().zip(x) {
        *o = f(v);
    }
    Ok(())
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
                _ => dst != Class::I && c(ins.args[0]) == dst,
            };
            if !ok {
                return Err(format!("elementwise {:?} on these element types", ins.code));
            }
        }
        Ok(())
    }

    /// Register `r`'s tile as f32 (other registers converted).
    fn as_f32<'t>(&self, t: &'t Tiles, r: usize, len: usize) -> std::borrow::Cow<'t, [f32]> {
        use std::borrow::Cow::{Borrowed, Owned};
        match self.regs[r].class {
            Class::F => Borrowed(&t.f[r][..len]),
            Class::I => Owned(t.i[r][..len].iter().map(|&v| v as f32).collect()),
            Class::D => Owned(t.d[r][..len].iter().map(|&v| v as f32).collect()),
        }
    }

    /// Register `r`'s tile as f64 (other registers converted, exactly).
    fn as_f64<'t>(&self, t: &'t Tiles, r: usize, len: usize) -> std::borrow::Cow<'t, [f64]> {
        use std::borrow::Cow::{Borrowed, Owned};
        match self.regs[r].class {
            Class::D => Borrowed(&t.d[r][..len]),
            Class::I => Owned(t.i[r][..len].iter().map(|&v| v as f64).collect()),
            Class::F => Owned(t.f[r][..len].iter().map(|&v| v as f64).collect()),
        }
    }

    /// Output elements `start..start + len` (one tile): load the operands
    /// (the scalar ones only when `scalars`: their tiles hold them from
    /// the chunk's first tile), run the instructions, store the results.
    fn run_tile(
        &self,
        t: &mut Tiles,
        loads: &[(Bcast, DType, Shared<*const u8>)],
        stores: &[(DType, Shared<*mut u8>)],
        start: usize,
        len: usize,
        scalars: bool,
    ) -> Result<(), String> {
        // Register r's tile lives in t.f[r], t.i[r] or t.d[r] by its class.
        for (k, (bc, dt, p)) in loads.iter().enumerate() {
            if bc.scalar && !scalars {
                continue;
            }
            let (r, p) = (self.inputs[k].0, p.p());
            match self.regs[r].class {
                Class::F => bc.load_f(*dt, p, start, &mut t.f[r][..len]),
                Class::I => bc.load_i(*dt, p, start, &mut t.i[r][..len]),
                Class::D => bc.load_d(*dt, p, start, &mut t.d[r][..len]),
            }
        }
        for ins in &self.instrs {
            let d = ins.dst;
            let dreg = &self.regs[d];
            // Take the destination out to borrow sources freely.
            let mut y = Dst {
                f: std::mem::take(&mut t.f[d]),
                i: std::mem::take(&mut t.i[d]),
                d: std::mem::take(&mut t.d[d]),
            };
            let r = self.instr(t, ins, &mut y, len);
            match dreg.class {
                Class::F => round_to(dreg.dtype, &mut y.f[..len]),
                Class::I => wrap_to(dreg.dtype, &mut y.i[..len]),
                Class::D => {}
            }
            t.f[d] = y.f;
            t.i[d] = y.i;
            t.d[d] = y.d;
            r?;
        }
        for (k, &(r, _)) in self.outputs.iter().enumerate() {
            let (dt, p) = (stores[k].0, stores[k].1.p());
            match self.regs[r].class {
                Class::F => store_f32(dt, p, start, &t.f[r][..len]),
                Class::I => store_i64(dt, p, start, &t.i[r][..len]),
                Class::D => store_f64(dt, p, start, &t.d[r][..len]),
            }
        }
        Ok(())
    }

    /// Instruction `ins` over the first `len` elements of the tiles, into
    /// `y` (the destination register's tile, taken out of `t`), by the
    /// destination's register class.
    fn instr(&self, t: &Tiles, ins: &Instr, y: &mut Dst, len: usize) -> Result<(), String> {
        match self.regs[ins.dst].class {
            Class::F => self.instr_f(t, ins, &mut y.f[..len]),
            Class::I => self.instr_i(t, ins, &mut y.i[..len]),
            Class::D => self.instr_d(t, ins, &mut y.d[..len]),
        }
    }

    /// [`Group::instr`] into an f32 register's tile `y`.
    fn instr_f(&self, t: &Tiles, ins: &Instr, y: &mut [f32]) -> Result<(), String> {
        let len = y.len();
        let a0 = ins.args.first().copied().unwrap_or(0);
        match ins.code {
            Code::Cast | Code::Identity => match self.regs[a0].class {
                Class::F => y.copy_from_slice(&t.f[a0][..len]),
                Class::I => {
                    for (o, &v) in y.iter_mut().zip(&t.i[a0][..len]) {
                        *o = v as f32;
                    }
                }
                // Rounded once, straight from f64 to the destination type.
                Class::D => {
                    let dt = self.regs[ins.dst].dtype;
                    for (o, &v) in y.iter_mut().zip(&t.d[a0][..len]) {
                        *o = f64_to_float(dt, v);
                    }
                }
            },
            Code::Where => select(&t.i[a0], &t.f, &ins.args, y),
            Code::Clip(lo, hi) => clip(&t.f, &ins.args, lo, hi, y),
            code if ins.args.len() == 1 => {
                let x = self.as_f32(t, a0, len);
                if !unary_f(code, &x, y) {
                    return Err(format!("no f32 kernel for {code:?}"));
                }
            }
            code => {
                // Mixed operands (pow of f32 by an integer exponent) compute in f32.
                let (x, x1) = (self.as_f32(t, a0, len), self.as_f32(t, ins.args[1], len));
                if !binary_f(code, &x, &x1, y) {
                    return Err(format!("no f32 kernel for {code:?}"));
                }
            }
        }
        Ok(())
    }

    /// [`Group::instr`] into an f64 register's tile `y`.
    fn instr_d(&self, t: &Tiles, ins: &Instr, y: &mut [f64]) -> Result<(), String> {
        let len = y.len();
        let a0 = ins.args.first().copied().unwrap_or(0);
        match ins.code {
            Code::Cast | Code::Identity => y.copy_from_slice(&self.as_f64(t, a0, len)),
            Code::Where => select(&t.i[a0], &t.d, &ins.args, y),
            Code::Clip(lo, hi) => clip(&t.d, &ins.args, lo, hi, y),
            code if ins.args.len() == 1 => {
                let x = self.as_f64(t, a0, len);
                if !unary_d(code, &x, y) {
                    return Err(format!("no f64 kernel for {code:?}"));
                }
            }
            code => {
                let (x, x1) = (self.as_f64(t, a0, len), self.as_f64(t, ins.args[1], len));
                if !binary_d(code, &x, &x1, y) {
                    return Err(format!("no f64 kernel for {code:?}"));
                }
            }
        }
        Ok(())
    }

    /// [`Group::instr`] into an integer (or bool) register's tile `y`:
    /// integer ops, and comparisons of floats.
    fn instr_i(&self, t: &Tiles, ins: &Instr, y: &mut [i64]) -> Result<(), String> {
        let len = y.len();
        let a0 = ins.args.first().copied().unwrap_or(0);
        let class = |k: usize| self.regs[ins.args[k]].class;
        match ins.code {
            Code::Cast | Code::Identity => match self.regs[a0].class {
                Class::I => y.copy_from_slice(&t.i[a0][..len]),
                Class::F => {
                    let dt = self.regs[ins.dst].dtype;
                    for (o, &v) in y.iter_mut().zip(&t.f[a0][..len]) {
                        *o = f2i(dt, v as f64);
                    }
                }
                Class::D => {
                    let dt = self.regs[ins.dst].dtype;
                    for (o, &v) in y.iter_mut().zip(&t.d[a0][..len]) {
                        *o = f2i(dt, v);
                    }
                }
            },
            Code::Where => select(&t.i[a0], &t.i, &ins.args, y),
            Code::Clip(lo, hi) => clip(&t.i, &ins.args, lo, hi, y),
            Code::Not => {
                for (o, &v) in y.iter_mut().zip(&t.i[a0][..len]) {
                    *o = (v == 0) as i64;
                }
            }
            Code::BitNot => {
                // Stored wrapped to the dtype: unsigned types keep their width.
                for (o, &v) in y.iter_mut().zip(&t.i[a0][..len]) {
                    *o = !v;
                }
            }
            code if ins.args.len() == 2 && (class(0) == Class::D || class(1) == Class::D) => {
                // Comparisons of f64 values, in f64.
                let (x, x1) = (self.as_f64(t, a0, len), self.as_f64(t, ins.args[1], len));
                if !cmp(code, &x, &x1, y) {
                    return Err(format!("no f64 kernel for {code:?} with an integer result"));
                }
            }
            code if ins.args.len() == 2 && (class(0) == Class::F || class(1) == Class::F) => {
                let (x, x1) = (self.as_f32(t, a0, len), self.as_f32(t, ins.args[1], len));
                if !cmp(code, &x, &x1, y) {
                    // Integer result of a float computation (pow of an integer
                    // base by a float exponent): truncate, as numpy's astype does.
                    let mut tmp = vec![0f32; len];
                    if !binary_f(code, &x, &x1, &mut tmp) {
                        return Err(format!("no kernel for {code:?}"));
                    }
                    for (o, &v) in y.iter_mut().zip(&tmp) {
                        *o = v as i64;
                    }
                }
            }
            code if ins.args.len() == 2 => {
                let b = ins.args[1];
                if !binary_i(code, &t.i[a0][..len], &t.i[b][..len], y)? {
                    return Err(format!("no integer kernel for {code:?}"));
                }
            }
            code => unary_i(code, &t.i[a0][..len], y)?,
        }
        Ok(())
    }

    /// Run over `n` output elements. `slots` are the kernel's value slots;
    /// `in_shapes` the concrete shapes of the inputs, `out_shape` the
    /// iteration space.
    pub fn run(&self, slots: &[Slot], out_shape: &[usize], par: &Par) -> Result<(), String> {
        // Taken out of this thread's cell (and put back below), so a nested
        // use would only find it empty.
        let (mut loads, mut stores) = IO.with(|c| c.take());
        let r = self.run_with(slots, out_shape, par, &mut loads, &mut stores);
        loads.clear();
        stores.clear();
        IO.with(|c| c.replace((loads, stores)));
        r
    }

    /// How the pool shares a pass over `n` elements: parts of about
    /// [`PART_WORK`] each, as many as the work holds, in a multiple of
    /// the threads (none left over for one thread to run alone), or one
    /// part of all `n` when there are fewer than two. Returns the
    /// elements of a part and the number of parts.
    fn parts(&self, n: usize, threads: usize) -> (usize, usize) {
        let cost = self.cost();
        let parts = n.saturating_mul(cost) / PART_WORK;
        if threads < 2 || parts < 2 {
            return (n.max(1), 1);
        }
        let per = n
            .div_ceil(parts.next_multiple_of(threads))
            .next_multiple_of(16);
        (per, n.div_ceil(per))
    }

    /// The time of one element of the group, in [`Code::cost`]'s units:
    /// the pass (its output stored, its first input loaded), each further
    /// input, each instruction.
    fn cost(&self) -> usize {
        let loads = self.inputs.len().saturating_sub(1) * 4;
        4 + loads + self.instrs.iter().map(|i| i.code.cost()).sum::<usize>()
    }

    fn run_with(
        &self,
        slots: &[Slot],
        out_shape: &[usize],
        par: &Par,
        loads: &mut Loads,
        stores: &mut Stores,
    ) -> Result<(), String> {
        let n: usize = out_shape.iter().product();
        for &(_, v) in &self.inputs {
            let s = &slots[v];
            loads.push((
                Bcast::new(out_shape, &s.shape)?,
                s.dtype,
                Shared(s.ptr as *const u8),
            ));
        }
        stores.extend(
            self.outputs
                .iter()
                .map(|&(_, v)| (slots[v].dtype, Shared(slots[v].ptr))),
        );
        let (loads, stores) = (&*loads, &*stores);
        let (chunk, nchunks) = self.parts(n, par.threads());
        let direct = self.direct(loads, stores, n);
        par.run(nchunks, nchunks > 1, &|c| {
            let end = ((c + 1) * chunk).min(n);
            if let Some(d) = &direct {
                return d.run(c * chunk..end);
            }
            let mut t = TILES.with(|c| c.take());
            t.fit(self);
            let mut start = c * chunk;
            let mut r = Ok(());
            // A scalar operand's tile is filled by the chunk's first (and
            // longest) tile and read again by the others: instructions never
            // write an input's register.
            let mut scalars = true;
            while start < end && r.is_ok() {
                let len = TILE.min(end - start);
                r = self.run_tile(&mut t, loads, stores, start, len, scalars);
                scalars = false;
                start += len;
            }
            TILES.with(|c| c.replace(t));
            r
        })
    }
}

/// A group of one float instruction on f32 values in memory: its operands
/// of the result's shape, the result in a buffer of its own — an
/// activation or a residual add not fused into a kernel before it. It runs
/// on the memory itself ([`Direct::run`]): through the register tiles a
/// `relu` moved each value three times (196 Ki values 41 -> 26 µs;
/// onnxruntime 24-26 µs timed from Python).
struct Direct {
    code: Code,
    /// Its operands, the first `arity` of them (found every run: in an
    /// array, no allocation).
    args: [Shared<*const f32>; 2],
    arity: usize,
    out: Shared<*mut f32>,
}

impl Direct {
    /// Elements `range` of the result.
    fn run(&self, range: std::ops::Range<usize>) -> Result<(), String> {
        let len = range.len();
        // SAFETY: `Group::direct` checked that every operand holds the
        // result's `n` f32 values (`range` lies below `n`) and that the
        // result's buffer overlaps none of them.
        let (arg, y) = unsafe {
            (
                |k: usize| std::slice::from_raw_parts(self.args[k].p().add(range.start), len),
                std::slice::from_raw_parts_mut(self.out.p().add(range.start), len),
            )
        };
        let done = match self.arity {
            1 => unary_f(self.code, arg(0), y),
            _ => binary_f(self.code, arg(0), arg(1), y),
        };
        match done {
            true => Ok(()),
            false => Err(format!("no f32 kernel for {:?}", self.code)),
        }
    }
}

impl Group {
    /// The group as a [`Direct`] instruction over `n` values, if it is
    /// one: a single instruction of one or two f32 operands (no cast,
    /// select or clip) loaded whole, its f32 result the group's one
    /// output, stored as f32 apart from them.
    fn direct(&self, loads: &Loads, stores: &Stores, n: usize) -> Option<Direct> {
        let ([ins], [(out, _)], [(out_dt, out_p)]) =
            (&self.instrs[..], &self.outputs[..], &stores[..])
        else {
            return None;
        };
        let plain = !matches!(
            ins.code,
            Code::Cast | Code::Identity | Code::Where | Code::Clip(..)
        );
        let f32_reg = |r: usize| self.regs[r].dtype == DType::F32;
        if !plain || ins.dst != *out || !f32_reg(*out) || *out_dt != DType::F32 {
            return None;
        }
        // No values, no pointers to read (an empty tensor's may be null).
        if !(1..=2).contains(&ins.args.len()) || n == 0 {
            return None;
        }
        let bytes = n * 4;
        let mut args = [Shared(std::ptr::null::<f32>()); 2];
        for (arg, &a) in args.iter_mut().zip(&ins.args) {
            let k = self.inputs.iter().position(|&(r, _)| r == a)?;
            let (bc, dt, p) = &loads[k];
            let apart = super::movement::disjoint(p.p(), out_p.p(), bytes);
            if !bc.same || *dt != DType::F32 || !f32_reg(a) || !apart {
                return None;
            }
            *arg = Shared(p.p() as *const f32);
        }
        Some(Direct {
            code: ins.code,
            args,
            arity: ins.args.len(),
            out: Shared(out_p.p() as *mut f32),
        })
    }
}

/// A float unary op over a slice (activation epilogues).
pub fn apply_unary(code: Code, x: &[f32], y: &mut [f32]) {
    unary_f(code, x, y);
}

/// `y = where(c, x, y)` over registers `args` = [c, x, y] (`y` sized to the tile).
fn select<T: Copy>(c: &[i64], regs: &[Vec<T>], args: &[usize], y: &mut [T]) {
    let (x, z) = (&regs[args[1]], &regs[args[2]]);
    for (k, o) in y.iter_mut().enumerate() {
        *o = if c[k] != 0 { x[k] } else { z[k] };
    }
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
