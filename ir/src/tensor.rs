//! Reference tensors: the values the interpreter (and constant folding) works
//! on. Floats are held as f64 and rounded to their dtype after every op; ints
//! as i64 wrapped to their width — so results match numpy's for the same dtype
//! (exactly for + - * / sqrt, within an ulp or two for transcendental ops).

use crate::attributes::{DenseElements, Element};
use crate::types::{DType, Type};

#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// Floating-point dtypes.
    F(Vec<f64>),
    /// Integer, index and bool (0/1) dtypes.
    I(Vec<i64>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub data: Data,
}

/// Round a float to what `dtype` can hold.
pub fn round_f(dtype: DType, x: f64) -> f64 {
    match dtype {
        DType::F32 => x as f32 as f64,
        DType::F16 => half::f16::from_f64(x).to_f64(),
        DType::BF16 => half::bf16::from_f64(x).to_f64(),
        d => match crate::minifloat::MiniFloat::of(d) {
            Some(f) => f.round_value(x),
            None => x,
        },
    }
}

/// Wrap an integer to `dtype`'s width (two's complement, like numpy).
pub fn wrap_i(dtype: DType, x: i64) -> i64 {
    match dtype {
        DType::I1 => (x != 0) as i64,
        DType::I8 => x as i8 as i64,
        DType::I16 => x as i16 as i64,
        DType::I32 => x as i32 as i64,
        DType::U8 => x as u8 as i64,
        DType::U16 => x as u16 as i64,
        DType::U32 => x as u32 as i64,
        DType::I4 => (x << 60) >> 60,
        DType::U4 => x & 0xF,
        DType::I2 => (x << 62) >> 62,
        DType::U2 => x & 0x3,
        _ => x,
    }
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major strides.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

impl Tensor {
    /// A float tensor; values are rounded to `dtype`.
    pub fn from_f64(shape: Vec<usize>, dtype: DType, mut v: Vec<f64>) -> Tensor {
        debug_assert_eq!(numel(&shape), v.len());
        if dtype.is_float() {
            v.iter_mut().for_each(|x| *x = round_f(dtype, *x));
            Tensor {
                shape,
                dtype,
                data: Data::F(v),
            }
        } else {
            Tensor::from_i64(
                shape,
                dtype,
                v.into_iter().map(|x| float_to_int(dtype, x)).collect(),
            )
        }
    }

    /// An integer tensor; values are wrapped to `dtype`.
    pub fn from_i64(shape: Vec<usize>, dtype: DType, mut v: Vec<i64>) -> Tensor {
        debug_assert_eq!(numel(&shape), v.len());
        if dtype.is_float() {
            return Tensor::from_f64(shape, dtype, v.into_iter().map(|x| x as f64).collect());
        }
        v.iter_mut().for_each(|x| *x = wrap_i(dtype, *x));
        Tensor {
            shape,
            dtype,
            data: Data::I(v),
        }
    }

    pub fn from_bools(shape: Vec<usize>, v: Vec<bool>) -> Tensor {
        Tensor::from_i64(shape, DType::I1, v.into_iter().map(|b| b as i64).collect())
    }

    pub fn scalar(dtype: DType, x: f64) -> Tensor {
        Tensor::from_f64(vec![], dtype, vec![x])
    }

    pub fn zeros(shape: Vec<usize>, dtype: DType) -> Tensor {
        let n = numel(&shape);
        if dtype.is_float() {
            Tensor {
                shape,
                dtype,
                data: Data::F(vec![0.0; n]),
            }
        } else {
            Tensor {
                shape,
                dtype,
                data: Data::I(vec![0; n]),
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.data {
            Data::F(v) => v.len(),
            Data::I(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Element `i` as f64.
    pub fn get_f(&self, i: usize) -> f64 {
        match &self.data {
            Data::F(v) => v[i],
            Data::I(v) => v[i] as f64,
        }
    }

    /// Element `i` as i64 (floats truncate toward zero).
    pub fn get_i(&self, i: usize) -> i64 {
        match &self.data {
            Data::F(v) => v[i] as i64,
            Data::I(v) => v[i],
        }
    }

    /// All elements as f64.
    pub fn to_f64(&self) -> Vec<f64> {
        match &self.data {
            Data::F(v) => v.clone(),
            Data::I(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// All elements as i64.
    pub fn to_i64(&self) -> Vec<i64> {
        match &self.data {
            Data::F(v) => v.iter().map(|&x| x as i64).collect(),
            Data::I(v) => v.clone(),
        }
    }

    /// Same values in another dtype (numpy `astype` semantics: float→int truncates).
    pub fn cast(&self, dtype: DType) -> Tensor {
        match (&self.data, dtype.is_float()) {
            (Data::F(v), true) => Tensor::from_f64(self.shape.clone(), dtype, v.clone()),
            (Data::I(v), false) => Tensor::from_i64(self.shape.clone(), dtype, v.clone()),
            (Data::F(v), false) => Tensor::from_i64(
                self.shape.clone(),
                dtype,
                v.iter().map(|&x| float_to_int(dtype, x)).collect(),
            ),
            (Data::I(v), true) => Tensor::from_f64(
                self.shape.clone(),
                dtype,
                v.iter().map(|&x| x as f64).collect(),
            ),
        }
    }

    pub fn reshape(mut self, shape: Vec<usize>) -> Result<Tensor, String> {
        if numel(&shape) != self.len() {
            return Err(format!(
                "cannot reshape {} elements to {shape:?}",
                self.len()
            ));
        }
        self.shape = shape;
        Ok(self)
    }

    /// Elementwise map over floats (ints are mapped through f64).
    pub fn map_f(&self, f: impl Fn(f64) -> f64) -> Tensor {
        Tensor::from_f64(
            self.shape.clone(),
            self.dtype,
            self.to_f64().into_iter().map(f).collect(),
        )
    }

    /// Elementwise map with separate float and integer rules.
    pub fn map(&self, ff: impl Fn(f64) -> f64, fi: impl Fn(i64) -> i64) -> Tensor {
        match &self.data {
            Data::F(v) => Tensor::from_f64(
                self.shape.clone(),
                self.dtype,
                v.iter().map(|&x| ff(x)).collect(),
            ),
            Data::I(v) => Tensor::from_i64(
                self.shape.clone(),
                self.dtype,
                v.iter().map(|&x| fi(x)).collect(),
            ),
        }
    }

    /// The same tensor broadcast to `shape` (numpy rules), materialised.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor, String> {
        if self.shape == shape {
            return Ok(self.clone());
        }
        let idx = broadcast_index(&self.shape, shape)?;
        let data = match &self.data {
            Data::F(v) => Data::F(idx.iter().map(|&i| v[i]).collect()),
            Data::I(v) => Data::I(idx.iter().map(|&i| v[i]).collect()),
        };
        Ok(Tensor {
            shape: shape.to_vec(),
            dtype: self.dtype,
            data,
        })
    }

    /// Build from a dense attribute.
    pub fn from_dense(d: &DenseElements) -> Result<Tensor, String> {
        let t =
            d.ty.as_tensor()
                .ok_or("dense attribute without tensor type")?;
        let shape: Vec<usize> = t
            .static_shape()
            .ok_or("dense attribute without static shape")?
            .into_iter()
            .map(|x| x as usize)
            .collect();
        // A splat of any type is a few bytes in the attribute; expanded, it
        // takes 8 bytes per element: not beyond the memory budget.
        crate::budget::check(
            crate::budget::bytes_of(shape.iter().map(|&d| d as u64), 8),
            &format_args!("a dense constant of type '{}'", d.ty),
        )?;
        let n = numel(&shape);
        let dt = t.dtype;
        Ok(if dt.is_float() {
            Tensor {
                shape,
                dtype: dt,
                data: Data::F((0..n).map(|i| d.get(i).as_f64()).collect()),
            }
        } else {
            Tensor {
                shape,
                dtype: dt,
                data: Data::I((0..n).map(|i| d.get(i).as_i64()).collect()),
            }
        })
    }

    /// The tensor's static type.
    pub fn ty(&self) -> Type {
        let shape: Vec<i64> = self.shape.iter().map(|&d| d as i64).collect();
        Type::tensor_static(&shape, self.dtype)
    }

    /// As a dense attribute (splat when all elements are equal).
    pub fn to_dense(&self) -> DenseElements {
        let ty = self.ty();
        // Equal elements (compared as stored; a splat of NaNs stays one
        // element per value) become a splat without listing them first.
        let all_same = self.len() > 1
            && match &self.data {
                Data::F(v) => v.iter().all(|x| x.to_bits() == v[0].to_bits()),
                Data::I(v) => v.iter().all(|x| *x == v[0]),
            };
        let count = if all_same { 1 } else { self.len() };
        let elems: Vec<Element> = match &self.data {
            Data::F(v) => v[..count].iter().map(|&x| Element::Float(x)).collect(),
            Data::I(v) if self.dtype == DType::I1 => {
                v[..count].iter().map(|&x| Element::Bool(x != 0)).collect()
            }
            Data::I(v) => v[..count].iter().map(|&x| Element::Int(x)).collect(),
        };
        DenseElements::from_elements(ty, &elems)
    }

    /// numpy's `allclose` (NaNs equal to NaNs, infinities equal by sign).
    pub fn allclose(&self, other: &Tensor, rtol: f64, atol: f64) -> bool {
        if self.shape != other.shape {
            return false;
        }
        (0..self.len()).all(|i| {
            let (a, b) = (self.get_f(i), other.get_f(i));
            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs()
        })
    }

    /// How `self` (a result) differs from `want` (its reference), or `None` when
    /// it does not: the dtypes and shapes must be equal (no cast), integer and
    /// bool elements equal exactly (as i64, never through f64), float elements
    /// within `|got - want| <= atol + rtol * |want|` (NaN matches only NaN,
    /// infinities only themselves). The message names the first differing
    /// element — flat and multi-dimensional index — with both values.
    pub fn mismatch(&self, want: &Tensor, rtol: f64, atol: f64) -> Option<String> {
        if self.dtype != want.dtype {
            return Some(format!(
                "element type {} but expected {}",
                self.dtype, want.dtype
            ));
        }
        if self.shape != want.shape {
            return Some(format!(
                "shape {:?} but expected {:?}",
                self.shape, want.shape
            ));
        }
        let differs = |k: usize| match (&self.data, &want.data) {
            (Data::I(a), Data::I(b)) => a[k] != b[k],
            _ => {
                let (a, b) = (self.get_f(k), want.get_f(k));
                !((a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs())
            }
        };
        let k = (0..self.len()).find(|&k| differs(k))?;
        let tol = if self.dtype.is_float() {
            format!(" (rtol {rtol}, atol {atol})")
        } else {
            " (integers compare exactly)".to_string()
        };
        Some(format!(
            "element {k} {:?} is {} but expected {}{tol}",
            self.index_of(k),
            self.elem_string(k),
            want.elem_string(k)
        ))
    }

    /// The multi-dimensional index of flat element `k` (row-major).
    pub fn index_of(&self, k: usize) -> Vec<usize> {
        strides(&self.shape)
            .iter()
            .zip(&self.shape)
            .map(|(&s, &d)| (k / s.max(1)) % d.max(1))
            .collect()
    }

    /// Element `k` printed in its dtype (f32/f16/bf16 as their shortest f32
    /// spelling, u64 unsigned).
    pub fn elem_string(&self, k: usize) -> String {
        match (&self.data, self.dtype) {
            (Data::I(v), DType::U64) => (v[k] as u64).to_string(),
            (Data::I(v), _) => v[k].to_string(),
            (Data::F(v), DType::F64) => v[k].to_string(),
            (Data::F(v), _) => (v[k] as f32).to_string(),
        }
    }

    /// Tolerance suited to the dtype (for comparing reference results).
    pub fn default_tolerance(dtype: DType) -> (f64, f64) {
        match dtype {
            DType::F64 => (1e-9, 1e-12),
            DType::F32 => (1e-5, 1e-6),
            DType::F16 => (1e-2, 1e-3),
            DType::BF16 => (2e-2, 1e-2),
            _ => (0.0, 0.0),
        }
    }
}

/// A float converted to an integer type: truncated toward zero; for the
/// 4- and 2-bit types a value out of their range is 0 (`ml_dtypes`' rule,
/// which the ONNX reference follows), where the wider ones wrap.
pub fn float_to_int(dtype: DType, x: f64) -> i64 {
    if dtype == DType::I1 {
        (x != 0.0) as i64
    } else if x.is_nan() {
        0
    } else if let Some((lo, hi)) = crate::minifloat::small_int_range(dtype) {
        let t = x.trunc();
        if t < lo as f64 || t > hi as f64 {
            0
        } else {
            t as i64
        }
    } else {
        x as i64
    }
}

/// For each element of `out_shape`, the flat index into a tensor of `shape`
/// broadcast to it.
pub fn broadcast_index(shape: &[usize], out_shape: &[usize]) -> Result<Vec<usize>, String> {
    if shape.len() > out_shape.len() {
        return Err(format!("cannot broadcast {shape:?} to {out_shape:?}"));
    }
    let off = out_shape.len() - shape.len();
    for (i, &d) in shape.iter().enumerate() {
        if d != 1 && d != out_shape[off + i] {
            return Err(format!("cannot broadcast {shape:?} to {out_shape:?}"));
        }
    }
    let in_strides = strides(shape);
    let n = numel(out_shape);
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; out_shape.len()];
    for _ in 0..n {
        let mut flat = 0;
        for (k, &d) in shape.iter().enumerate() {
            if d != 1 {
                flat += idx[off + k] * in_strides[k];
            }
        }
        out.push(flat);
        for k in (0..out_shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < out_shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(out)
}

/// numpy broadcasting of concrete shapes.
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let y = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            match (x, y) {
                (1, d) | (d, 1) => Ok(d),
                (p, q) if p == q => Ok(p),
                (p, q) => Err(format!(
                    "cannot broadcast {a:?} with {b:?} (dimension {p} vs {q})"
                )),
            }
        })
        .collect()
}

/// A binary elementwise op with broadcasting: floats through `ff`, ints through `fi`.
pub fn binary(
    a: &Tensor,
    b: &Tensor,
    out: DType,
    ff: impl Fn(f64, f64) -> f64,
    fi: impl Fn(i64, i64) -> i64,
) -> Result<Tensor, String> {
    let shape = broadcast_shape(&a.shape, &b.shape)?;
    let ia = broadcast_index(&a.shape, &shape)?;
    let ib = broadcast_index(&b.shape, &shape)?;
    Ok(match (&a.data, &b.data) {
        (Data::I(x), Data::I(y)) if !out.is_float() || !a.dtype.is_float() => Tensor::from_i64(
            shape,
            out,
            ia.iter().zip(&ib).map(|(&i, &j)| fi(x[i], y[j])).collect(),
        ),
        _ => Tensor::from_f64(
            shape,
            out,
            ia.iter()
                .zip(&ib)
                .map(|(&i, &j)| ff(a.get_f(i), b.get_f(j)))
                .collect(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_broadcasts_like_numpy() {
        let a = Tensor::from_f64(vec![2, 1], DType::F32, vec![1.0, 2.0]);
        let b = Tensor::from_f64(vec![3], DType::F32, vec![10.0, 20.0, 30.0]);
        let c = binary(&a, &b, DType::F32, |x, y| x + y, |x, y| x + y).unwrap();
        assert_eq!(c.shape, vec![2, 3]);
        assert_eq!(c.to_f64(), vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
    }

    #[test]
    fn dtypes_round_and_wrap() {
        let t = Tensor::from_f64(vec![1], DType::F16, vec![0.1]);
        assert_eq!(t.get_f(0), half::f16::from_f64(0.1).to_f64());
        let i = Tensor::from_i64(vec![1], DType::I8, vec![200]);
        assert_eq!(i.get_i(0), -56);
    }

    #[test]
    fn mismatch_is_exact_for_integers_and_dtypes() {
        let big = Tensor::from_i64(vec![2], DType::I64, vec![1 << 60, 7]);
        // 2^60 and 2^60 + 1 are the same f64: compared as i64 they differ.
        let off = Tensor::from_i64(vec![2], DType::I64, vec![(1 << 60) + 1, 7]);
        assert!(big.allclose(&off, 0.0, 0.0), "f64 cannot tell them apart");
        let m = big.mismatch(&off, 0.0, 0.0).unwrap();
        assert!(
            m.starts_with("element 0 [0] is 1152921504606846976 but expected 1152921504606846977"),
            "{m}"
        );
        assert_eq!(big.mismatch(&big, 0.0, 0.0), None);
        // Same values, another dtype: a mismatch (no cast).
        let as_i32 = Tensor::from_i64(vec![2], DType::I32, vec![3, 7]);
        let as_i64 = Tensor::from_i64(vec![2], DType::I64, vec![3, 7]);
        assert_eq!(
            as_i32.mismatch(&as_i64, 0.0, 0.0).as_deref(),
            Some("element type i32 but expected i64")
        );
        let t = Tensor::from_i64(vec![2, 1], DType::I64, vec![3, 7]);
        assert_eq!(
            t.mismatch(&as_i64, 0.0, 0.0).as_deref(),
            Some("shape [2, 1] but expected [2]")
        );
    }

    #[test]
    fn mismatch_floats_within_tolerance_nan_only_nan() {
        let a = Tensor::from_f64(vec![2, 2], DType::F32, vec![1.0, 2.0, f64::NAN, 4.0]);
        let b = Tensor::from_f64(vec![2, 2], DType::F32, vec![1.0, 2.000001, f64::NAN, 4.0]);
        assert_eq!(a.mismatch(&b, 1e-5, 1e-6), None);
        let c = Tensor::from_f64(vec![2, 2], DType::F32, vec![1.0, 2.5, 0.0, 4.0]);
        let m = a.mismatch(&c, 1e-5, 1e-6).unwrap();
        assert!(
            m.starts_with("element 1 [0, 1] is 2 but expected 2.5 (rtol"),
            "{m}"
        );
        let m = c.mismatch(&a, 1e-5, 1e-6).unwrap();
        assert!(
            m.starts_with("element 1 [0, 1] is 2.5 but expected 2"),
            "{m}"
        );
        let m = a
            .mismatch(
                &Tensor::from_f64(vec![2, 2], DType::F32, vec![1.0, 2.0, 3.0, 4.0]),
                1.0,
                1.0,
            )
            .unwrap();
        assert!(
            m.starts_with("element 2 [1, 0] is NaN but expected 3"),
            "{m}"
        );
    }

    #[test]
    fn dense_round_trip() {
        let t = Tensor::from_i64(vec![2, 2], DType::I32, vec![1, 2, 3, 4]);
        assert_eq!(Tensor::from_dense(&t.to_dense()).unwrap(), t);
        let s = Tensor::from_f64(vec![3], DType::F32, vec![2.5; 3]);
        assert!(s.to_dense().splat);
        assert_eq!(Tensor::from_dense(&s.to_dense()).unwrap(), s);
    }
}
