//! Native helper functions callable from `.rr` rules (conditions, attribute
//! arithmetic, constants). Each is documented here and listed in
//! docs/writing-rewrite-rules.md (`ge-opt --list-rule-helpers` prints them).

use ge_ir::attributes::{AttrData, Attribute, DenseElements, Element};
use ge_ir::{DType, Dim, Type};
use std::ops::RangeInclusive;

/// What helpers may ask about a matched value (backend-neutral: greedy
/// matching answers from the IR, equality saturation from e-class analysis).
pub trait Facts {
    fn ty(&self, v: u32) -> Option<Type>;
    fn constant(&self, v: u32) -> Option<Attribute>;
    /// Number of uses, when the backend knows it.
    fn num_uses(&self, v: u32) -> Option<usize>;
}

/// A value in rule expressions.
#[derive(Clone, Debug)]
pub enum Val {
    /// A matched SSA value (backend id).
    Value(u32),
    Attr(Attribute),
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    List(Vec<Val>),
    Type(Type),
}

impl Val {
    /// Attributes seen as plain values (ints, floats, lists, strings, bools).
    pub fn norm(&self) -> Val {
        match self {
            Val::Attr(a) => match a.data() {
                AttrData::Int { value, .. } => Val::Int(*value),
                AttrData::Float { bits, .. } => Val::Float(f64::from_bits(*bits)),
                AttrData::Bool(b) => Val::Bool(*b),
                AttrData::String(s) => Val::Str(s.to_string()),
                AttrData::Array(xs) => Val::List(xs.iter().map(|x| Val::Attr(*x).norm()).collect()),
                AttrData::DenseArray { .. } => match a.as_i64_array() {
                    Some(v) => Val::List(v.into_iter().map(Val::Int).collect()),
                    None => self.clone(),
                },
                AttrData::Type(t) => Val::Type(*t),
                _ => self.clone(),
            },
            Val::List(xs) => Val::List(xs.iter().map(|x| x.norm()).collect()),
            v => v.clone(),
        }
    }
    pub fn int(&self) -> Result<i64, String> {
        match self.norm() {
            Val::Int(i) => Ok(i),
            Val::Float(f) if f.fract() == 0.0 => Ok(f as i64),
            v => Err(format!("expected an integer, got {}", v.describe())),
        }
    }
    pub fn float(&self) -> Result<f64, String> {
        match self.norm() {
            Val::Int(i) => Ok(i as f64),
            Val::Float(f) => Ok(f),
            v => Err(format!("expected a number, got {}", v.describe())),
        }
    }
    pub fn bool(&self) -> Result<bool, String> {
        match self.norm() {
            Val::Bool(b) => Ok(b),
            v => Err(format!("expected true/false, got {}", v.describe())),
        }
    }
    pub fn list(&self) -> Result<Vec<Val>, String> {
        match self.norm() {
            Val::List(v) => Ok(v),
            v => Err(format!("expected a list, got {}", v.describe())),
        }
    }
    pub fn ints(&self) -> Result<Vec<i64>, String> {
        self.list()?.iter().map(|x| x.int()).collect()
    }
    pub fn value(&self) -> Result<u32, String> {
        match self {
            Val::Value(v) => Ok(*v),
            v => Err(format!("expected a matched value, got {}", v.describe())),
        }
    }
    pub fn describe(&self) -> String {
        match self {
            Val::Value(_) => "a value".into(),
            Val::Attr(a) => format!("attribute {a}"),
            Val::Int(i) => format!("{i}"),
            Val::Float(f) => format!("{f}"),
            Val::Bool(b) => format!("{b}"),
            Val::Str(s) => format!("\"{s}\""),
            Val::List(_) => "a list".into(),
            Val::Type(t) => format!("type {t}"),
        }
    }
    /// As an attribute for a built op (ints are i64, floats f64).
    pub fn to_attr(&self) -> Result<Attribute, String> {
        Ok(match self {
            Val::Attr(a) => *a,
            Val::Int(i) => Attribute::i64(*i),
            Val::Float(f) => Attribute::f64(*f),
            Val::Bool(b) => Attribute::bool(*b),
            Val::Str(s) => Attribute::string(s),
            Val::List(xs) => {
                Attribute::array(xs.iter().map(|x| x.to_attr()).collect::<Result<_, _>>()?)
            }
            Val::Type(t) => Attribute::ty(*t),
            Val::Value(_) => return Err("a value cannot be used as an attribute".into()),
        })
    }
    /// Structural equality after normalisation (numbers compare by value).
    pub fn equals(&self, other: &Val) -> bool {
        match (self.norm(), other.norm()) {
            (Val::Value(a), Val::Value(b)) => a == b,
            (Val::Int(a), Val::Int(b)) => a == b,
            (Val::Int(_) | Val::Float(_), Val::Int(_) | Val::Float(_)) => {
                self.float().ok() == other.float().ok()
            }
            (Val::Bool(a), Val::Bool(b)) => a == b,
            (Val::Str(a), Val::Str(b)) => a == b,
            (Val::Type(a), Val::Type(b)) => a == b,
            (Val::List(a), Val::List(b)) => {
                a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.equals(y))
            }
            (Val::Attr(a), Val::Attr(b)) => a == b,
            _ => false,
        }
    }
}

pub type HelperFn = fn(&dyn Facts, &[Val]) -> Result<Val, String>;

pub struct Helper {
    pub name: &'static str,
    pub arity: RangeInclusive<usize>,
    pub signature: &'static str,
    pub doc: &'static str,
    pub f: HelperFn,
}

impl Helper {
    pub fn arity_text(&self) -> String {
        if self.arity.start() == self.arity.end() {
            self.arity.start().to_string()
        } else {
            format!("{} to {}", self.arity.start(), self.arity.end())
        }
    }
}

fn ty(f: &dyn Facts, v: &Val) -> Result<Type, String> {
    match v {
        Val::Type(t) => Ok(*t),
        _ => f
            .ty(v.value()?)
            .ok_or_else(|| "value has no type".to_string()),
    }
}

fn dims(f: &dyn Facts, v: &Val) -> Result<Vec<Dim>, String> {
    let t = ty(f, v)?;
    t.as_tensor()
        .and_then(|t| t.dims.as_ref().map(|d| d.to_vec()))
        .ok_or_else(|| format!("'{t}' is not a ranked tensor"))
}

fn static_dims(f: &dyn Facts, v: &Val) -> Result<Vec<i64>, String> {
    dims(f, v)?
        .iter()
        .map(|d| {
            d.as_static()
                .ok_or_else(|| "shape is not static".to_string())
        })
        .collect()
}

fn dense(f: &dyn Facts, v: &Val) -> Option<&'static DenseElements> {
    f.constant(v.value().ok()?).and_then(|a| a.as_dense())
}

fn splat_of(f: &dyn Facts, v: &Val) -> Option<f64> {
    let d = dense(f, v)?;
    // An empty constant has no value to report (and no element 0 to read).
    if d.is_empty() {
        return None;
    }
    let first = d.get(0).as_f64();
    (d.splat || d.elements().all(|e| e.as_f64() == first)).then_some(first)
}

fn perm_ok(p: &[i64]) -> bool {
    let mut seen = vec![false; p.len()];
    p.iter().all(|&x| {
        usize::try_from(x)
            .ok()
            .and_then(|i| seen.get_mut(i))
            .is_some_and(|s| !std::mem::replace(s, true))
    })
}

/// A 2-D convolution's window as a rule sees it: its `pads` attribute
/// (`[top, left, bottom, right]`) and its filter's `[O, I, kh, kw]` shape,
/// checked (pads non-negative, the filter static and of rank 4) and kept
/// small enough that the window arithmetic below cannot overflow.
struct Window {
    pads: [i64; 4],
    kernel: [i64; 2],
}

/// Largest pad or kernel extent the window helpers take (a mutated model's
/// 2^62 pad must not overflow their sums).
const WINDOW_MAX: i64 = 1 << 31;

impl Window {
    fn of(f: &dyn Facts, pads: &Val, filter: &Val) -> Result<Window, String> {
        let p = pads.ints()?;
        let d = static_dims(f, filter)?;
        let (Ok(pads), [_, _, kh, kw]) = (<[i64; 4]>::try_from(p), d.as_slice()) else {
            return Err("a 2-D convolution's window needs 4 pads and a rank-4 filter".into());
        };
        let ok = |v: i64, lo: i64| (lo..=WINDOW_MAX).contains(&v);
        if !pads.iter().all(|&v| ok(v, 0)) || !ok(*kh, 1) || !ok(*kw, 1) {
            return Err(format!(
                "convolution window out of range: pads {pads:?}, kernel {kh}x{kw}"
            ));
        }
        Ok(Window {
            pads,
            kernel: [*kh, *kw],
        })
    }

    /// The window two convolutions of one input and stride share, per
    /// spatial axis, as this filter sits in it.
    fn common(&self, other: &Window) -> [Span; 2] {
        std::array::from_fn(|a| {
            let lead = self.pads[a].max(other.pads[a]);
            let extent =
                (lead - self.pads[a] + self.kernel[a]).max(lead - other.pads[a] + other.kernel[a]);
            Span {
                lead,
                extent,
                offset: lead - self.pads[a],
            }
        })
    }
}

/// One spatial axis of a shared window ([`Window::common`]).
struct Span {
    /// The window's leading pad: the larger of the two convolutions'.
    lead: i64,
    /// Its extent: up to the further of the two kernels' ends.
    extent: i64,
    /// Where the filter starts in it.
    offset: i64,
}

/// `window_pads` / `window_conv_pads`: the common window of convolution
/// (`a[0]` pads, `a[1]` filter) and (`a[2]`, `a[3]`), with the first one's
/// offset in it and its own far pads.
fn window_parts(f: &dyn Facts, a: &[Val]) -> Result<([Span; 2], Window), String> {
    let (w, v) = (Window::of(f, &a[0], &a[1])?, Window::of(f, &a[2], &a[3])?);
    Ok((w.common(&v), w))
}

/// A filter of `w`'s type (`[O, I, kh, kw]`) that copies its input: 1 at
/// window position `(row, col)` where output channel `o` reads input
/// channel `o mod I` — itself, in a convolution of `O / I` groups of `I`
/// channels whose input has `O` channels — and 0 elsewhere.
fn identity_filter(f: &dyn Facts, w: &Val, row: i64, col: i64) -> Result<Val, String> {
    let t = ty(f, w)?;
    let d = static_dims(f, w)?;
    let [o, i, kh, kw] =
        <[i64; 4]>::try_from(d).map_err(|_| "identity_filter needs a rank-4 filter")?;
    if !(0..kh).contains(&row) || !(0..kw).contains(&col) || i < 1 {
        return Err(format!(
            "identity_filter: position ({row}, {col}) is outside a {kh}x{kw} window"
        ));
    }
    let dt = t.dtype().unwrap_or(DType::F32);
    let n = [o, i, kh, kw]
        .iter()
        .try_fold(1u64, |n, &x| n.checked_mul(u64::try_from(x).ok()?));
    // The elements' list, then their bytes: both against the budget.
    let per = (dt.byte_size() + std::mem::size_of::<Element>()) as u64;
    check_budget(n.and_then(|n| n.checked_mul(per)), &t)?;
    let (zero, one) = match dt.is_float() {
        true => (Element::Float(0.0), Element::Float(1.0)),
        false => (Element::Int(0), Element::Int(1)),
    };
    let plane = (kh * kw) as usize;
    let mut elems = vec![zero; n.unwrap_or(0) as usize];
    for oc in 0..o as usize {
        let ic = oc % i as usize;
        elems[(oc * i as usize + ic) * plane + (row * kw + col) as usize] = one;
    }
    Ok(Val::Attr(Attribute::dense(DenseElements::from_elements(
        t, &elems,
    ))))
}

/// The memory budget's check of a constant a helper builds.
fn check_budget(bytes: Option<u64>, t: &Type) -> Result<(), String> {
    ge_ir::budget::check(bytes, &format_args!("a constant of type '{t}'"))
}

macro_rules! helper {
    ($name:literal, $arity:expr, $sig:literal, $doc:literal, $f:expr) => {
        Helper {
            name: $name,
            arity: $arity,
            signature: $sig,
            doc: $doc,
            f: $f,
        }
    };
}

/// Every helper, alphabetically.
pub static HELPERS: &[Helper] = &[
    helper!("all_eq", 2..=2, "all_eq(list, x) -> bool", "every element of the list equals x", |_, a| {
        Ok(Val::Bool(a[0].list()?.iter().all(|x| x.equals(&a[1]))))
    }),
    helper!("bits", 1..=1, "bits(v) -> int", "bit width of v's element type (i1 is 1)", |f, a| {
        Ok(Val::Int(ty(f, &a[0])?.dtype().map(|d| d.bit_width() as i64).unwrap_or(0)))
    }),
    helper!("compose", 2..=2, "compose(p, q) -> list", "permutation of transposing by p then by q: r[i] = p[q[i]]", |_, a| {
        let (p, q) = (a[0].ints()?, a[1].ints()?);
        if p.len() != q.len() || !perm_ok(&p) || !perm_ok(&q) {
            return Err("compose needs two permutations of the same rank".into());
        }
        Ok(Val::List(q.iter().map(|&i| Val::Int(p[i as usize])).collect()))
    }),
    helper!("concat", 2..=2, "concat(l1, l2) -> list", "the two lists one after the other", |_, a| {
        let mut l = a[0].list()?;
        l.extend(a[1].list()?);
        Ok(Val::List(l))
    }),
    helper!("contains", 2..=2, "contains(list, x) -> bool", "some element of the list equals x", |_, a| {
        Ok(Val::Bool(a[0].list()?.iter().any(|x| x.equals(&a[1]))))
    }),
    helper!("dim", 2..=2, "dim(v, i) -> int", "size of dimension i (negative counts from the end); fails unless static", |f, a| {
        let ds = dims(f, &a[0])?;
        let i = a[1].int()?;
        let k = if i < 0 { ds.len() as i64 + i } else { i };
        ds.get(k as usize).and_then(|d| d.as_static()).map(Val::Int).ok_or_else(|| format!("dimension {i} is not static"))
    }),
    helper!("dtype", 1..=1, "dtype(v) -> string", "element type name (\"f32\", \"i64\", …)", |f, a| {
        Ok(Val::Str(ty(f, &a[0])?.dtype().map(|d| d.name().to_string()).unwrap_or_default()))
    }),
    helper!("get", 2..=2, "get(list, i) -> x", "element i of a list (negative counts from the end)", |_, a| {
        let l = a[0].list()?;
        let i = a[1].int()?;
        let k = if i < 0 { l.len() as i64 + i } else { i };
        l.get(k as usize).cloned().ok_or_else(|| format!("index {i} out of range"))
    }),
    helper!("identity_filter", 2..=2, "identity_filter(w, pads) -> attribute", "a filter of w's type [O, I, kh, kw] that copies its input when applied with these convolution pads: 1 at window position (pads[0], pads[1]) where output channel o reads input channel o mod I, else 0", |f, a| {
        let p = a[1].ints()?;
        match p.as_slice() {
            [t, l, ..] => identity_filter(f, &a[0], *t, *l),
            _ => Err("identity_filter needs the convolution's pads".into()),
        }
    }),
    helper!("identity_perm", 1..=1, "identity_perm(n) -> list", "[0, 1, …, n-1]", |_, a| {
        Ok(Val::List((0..a[0].int()?).map(Val::Int).collect()))
    }),
    helper!("inverse_perm", 1..=1, "inverse_perm(p) -> list", "the permutation undoing p", |_, a| {
        let p = a[0].ints()?;
        if !perm_ok(&p) {
            return Err("not a permutation".into());
        }
        let mut inv = vec![0; p.len()];
        for (i, &x) in p.iter().enumerate() {
            inv[x as usize] = i as i64;
        }
        Ok(Val::List(inv.into_iter().map(Val::Int).collect()))
    }),
    helper!("is_const", 1..=1, "is_const(v) -> bool", "v is produced by a constant op", |f, a| {
        Ok(Val::Bool(a[0].value().ok().and_then(|v| f.constant(v)).is_some()))
    }),
    helper!("is_float", 1..=1, "is_float(v) -> bool", "v has a floating-point element type", |f, a| {
        Ok(Val::Bool(ty(f, &a[0])?.dtype().is_some_and(|d| d.is_float())))
    }),
    helper!("is_identity_perm", 1..=1, "is_identity_perm(p) -> bool", "p is [0, 1, …, n-1]", |_, a| {
        Ok(Val::Bool(a[0].ints()?.iter().enumerate().all(|(i, &x)| x == i as i64)))
    }),
    helper!("is_splat", 2..=2, "is_splat(v, x) -> bool", "v is a constant whose every element equals x", |f, a| {
        Ok(Val::Bool(splat_of(f, &a[0]) == Some(a[1].float()?)))
    }),
    helper!("is_splat_near", 3..=3, "is_splat_near(v, x, tol) -> bool", "v is a constant whose every element is within tol of x, or of x rounded to v's element type (for recognising decomposed gelu/layer norm constants, also in f16/bf16)", |f, a| {
        let (x, tol) = (a[1].float()?, a[2].float()?);
        // An f16 sqrt(2) is 1.4140625: compare with x as v's element type holds it too.
        let rounded = ty(f, &a[0]).ok().and_then(|t| t.dtype()).filter(|d| d.is_float()).map(|d| {
            DenseElements::from_elements(Type::tensor(&[], d), &[Element::Float(x)]).get(0).as_f64()
        });
        Ok(Val::Bool(splat_of(f, &a[0]).is_some_and(|s| {
            (s - x).abs() <= tol || rounded.is_some_and(|r| (s - r).abs() <= tol)
        })))
    }),
    helper!("len", 1..=1, "len(list) -> int", "number of elements", |_, a| Ok(Val::Int(a[0].list()?.len() as i64))),
    helper!("lossless_cast", 2..=2, "lossless_cast(a, b) -> bool", "converting a's element type to b's keeps every value exactly (f16 -> f32, i8 -> i16, u8 -> i16; not f16 <-> bf16, i8 -> u8, or int <-> float)", |f, a| {
        let (x, y) = (ty(f, &a[0])?.dtype(), ty(f, &a[1])?.dtype());
        let (Some(x), Some(y)) = (x, y) else { return Ok(Val::Bool(false)) };
        let (bx, by) = (x.bit_width(), y.bit_width());
        Ok(Val::Bool(
            x == y
                || x == DType::I1
                || (x.is_float() && y.is_float() && by > bx)
                || (x.is_signed_int() && y.is_signed_int() && by >= bx)
                || (x.is_unsigned_int() && y.is_unsigned_int() && by >= bx)
                || (x.is_unsigned_int() && y.is_signed_int() && by > bx),
        ))
    }),
    helper!("normalize_axis", 2..=2, "normalize_axis(axis, rank) -> int", "axis in [0, rank) (negative axes count from the end)", |_, a| {
        let (ax, r) = (a[0].int()?, a[1].int()?);
        let k = if ax < 0 { ax + r } else { ax };
        if k < 0 || k >= r.max(1) {
            return Err(format!("axis {ax} out of range for rank {r}"));
        }
        Ok(Val::Int(k))
    }),
    helper!("numel", 1..=1, "numel(v) -> int", "number of elements (static shapes only)", |f, a| {
        Ok(Val::Int(static_dims(f, &a[0])?.iter().product()))
    }),
    helper!("one_use", 1..=1, "one_use(v) -> bool", "v has exactly one use", |f, a| {
        Ok(Val::Bool(f.num_uses(a[0].value()?) == Some(1)))
    }),
    helper!("product", 1..=1, "product(list) -> int", "product of a list of integers", |_, a| {
        Ok(Val::Int(a[0].ints()?.iter().product()))
    }),
    helper!("range", 2..=2, "range(a, b) -> list", "[a, a+1, …, b-1]", |_, a| {
        Ok(Val::List((a[0].int()?..a[1].int()?).map(Val::Int).collect()))
    }),
    helper!("rank", 1..=1, "rank(v) -> int", "number of dimensions", |f, a| Ok(Val::Int(dims(f, &a[0])?.len() as i64))),
    helper!("same_shape", 2..=2, "same_shape(a, b) -> bool", "a and b have equal shapes (symbolic dims compare symbolically)", |f, a| {
        Ok(Val::Bool(dims(f, &a[0])? == dims(f, &a[1])?))
    }),
    helper!("same_type", 2..=2, "same_type(a, b) -> bool", "a and b have exactly the same type", |f, a| {
        Ok(Val::Bool(ty(f, &a[0])? == ty(f, &a[1])?))
    }),
    helper!("scalar", 2..=2, "scalar(x, v) -> attribute", "a rank-0 constant holding x with v's element type", |f, a| {
        let dt = ty(f, &a[1])?.dtype().unwrap_or(DType::F32);
        let t = Type::tensor(&[], dt);
        let e = if dt.is_float() { Element::Float(a[0].float()?) } else { Element::Int(a[0].int()?) };
        Ok(Val::Attr(Attribute::dense(DenseElements::from_elements(t, &[e]))))
    }),
    helper!("shape", 1..=1, "shape(v) -> list", "the static shape as a list of ints", |f, a| {
        Ok(Val::List(static_dims(f, &a[0])?.into_iter().map(Val::Int).collect()))
    }),
    helper!("splat", 2..=2, "splat(v, x) -> attribute", "a dense constant of v's (static) type with every element x", |f, a| {
        let t = ty(f, &a[0])?;
        let tt = t.as_tensor().ok_or("splat needs a tensor")?;
        tt.static_shape().ok_or("splat needs a static shape")?;
        let e = if tt.dtype.is_float() { Element::Float(a[1].float()?) } else { Element::Int(a[1].int()?) };
        Ok(Val::Attr(Attribute::dense(DenseElements::from_elements(t, &[e]))))
    }),
    helper!("splat_value", 1..=1, "splat_value(v) -> float", "the value of a splat constant", |f, a| {
        splat_of(f, &a[0]).map(Val::Float).ok_or_else(|| "not a splat constant".to_string())
    }),
    helper!("type_of", 1..=1, "type_of(v) -> type", "v's type (e.g. for a cast's `to` attribute)", |f, a| Ok(Val::Type(ty(f, &a[0])?))),
    helper!("window_area", 4..=4, "window_area(p, w, q, v) -> int", "kh * kw of the window that the filters w (applied with pads p) and v (with q) share", |f, a| {
        let (axes, _) = window_parts(f, a)?;
        // Extents up to 2^32 each (`WINDOW_MAX`): their product may not fit.
        axes[0].extent.checked_mul(axes[1].extent).map(Val::Int).ok_or_else(|| "window area out of range".to_string())
    }),
    helper!("window_conv_pads", 4..=4, "window_conv_pads(p, w, q, v) -> list", "the pads [top, left, bottom, right] of a convolution over the window that the filters w (applied with pads p) and v (with q) share, as w's far side sets them", |f, a| {
        let (axes, w) = window_parts(f, a)?;
        let far = |ax: usize| w.pads[ax + 2] + axes[ax].extent - axes[ax].offset - w.kernel[ax];
        Ok(Val::List([axes[0].lead, axes[1].lead, far(0), far(1)].into_iter().map(Val::Int).collect()))
    }),
    helper!("window_pads", 4..=4, "window_pads(p, w, q, v) -> list", "the graph.pad pads that put filter w (applied with pads p) in the window it shares with filter v (applied with q), zeros around it", |f, a| {
        let (axes, w) = window_parts(f, a)?;
        let after = |ax: usize| axes[ax].extent - axes[ax].offset - w.kernel[ax];
        Ok(Val::List([0, 0, axes[0].offset, axes[1].offset, 0, 0, after(0), after(1)].into_iter().map(Val::Int).collect()))
    }),
];

pub fn lookup(name: &str) -> Option<&'static Helper> {
    HELPERS.iter().find(|h| h.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &[Val]) -> Val {
        (lookup(name).expect("helper").f)(&Typed(vec![]), args).expect("ok")
    }

    fn ints(v: &[i64]) -> Val {
        Val::List(v.iter().map(|&i| Val::Int(i)).collect())
    }

    #[test]
    fn permutation_helpers_compose_and_invert() {
        let p = ints(&[1, 2, 0]);
        let inv = call("inverse_perm", std::slice::from_ref(&p));
        assert!(
            call("is_identity_perm", &[call("compose", &[p.clone(), inv])])
                .bool()
                .unwrap()
        );
        assert!(
            !call("is_identity_perm", &[call("compose", &[p.clone(), p])])
                .bool()
                .unwrap()
        );
    }

    /// Values 0.. of the given types (filters for the window helpers).
    struct Typed(Vec<Type>);
    impl Facts for Typed {
        fn ty(&self, v: u32) -> Option<Type> {
            self.0.get(v as usize).copied()
        }
        fn constant(&self, _: u32) -> Option<Attribute> {
            None
        }
        fn num_uses(&self, _: u32) -> Option<usize> {
            None
        }
    }

    fn typed_call(f: &Typed, name: &str, args: &[Val]) -> Result<Val, String> {
        (lookup(name).expect("helper").f)(f, args)
    }

    fn filters(shapes: &[&[i64]]) -> Typed {
        Typed(
            shapes
                .iter()
                .map(|s| Type::tensor_static(s, DType::F32))
                .collect(),
        )
    }

    fn list(v: Val) -> Vec<i64> {
        v.ints().expect("a list of ints")
    }

    #[test]
    fn window_helpers_place_two_filters_in_the_window_they_share() {
        // A 3x3 filter padded 1 and a 1x1 unpadded: the 1x1 sits at the centre.
        let f = filters(&[&[4, 2, 3, 3], &[4, 2, 1, 1]]);
        let (p33, w33, p11, w11) = (
            ints(&[1, 1, 1, 1]),
            Val::Value(0),
            ints(&[0, 0, 0, 0]),
            Val::Value(1),
        );
        let a = [p11.clone(), w11.clone(), p33.clone(), w33.clone()];
        let b = [p33, w33, p11, w11];
        assert_eq!(
            list(typed_call(&f, "window_pads", &a).unwrap()),
            [0, 0, 1, 1, 0, 0, 1, 1]
        );
        assert_eq!(list(typed_call(&f, "window_pads", &b).unwrap()), [0; 8]);
        for args in [&a, &b] {
            assert_eq!(
                list(typed_call(&f, "window_conv_pads", args).unwrap()),
                [1, 1, 1, 1]
            );
            assert_eq!(
                typed_call(&f, "window_area", args).unwrap().int().unwrap(),
                9
            );
        }
        // A 2x2 padded above and left, a 1x1 at its bottom-right tap; a 1x3
        // and a 3x1 meet in a 3x3: (pads, filter, other pads, other filter),
        // the graph.pad pads, the window's conv pads.
        let f = filters(&[&[1, 1, 2, 2], &[1, 1, 1, 1], &[1, 1, 1, 3], &[1, 1, 3, 1]]);
        type Case = ([i64; 4], u32, [i64; 4], u32, [i64; 8], [i64; 4]);
        let cases: [Case; 2] = [
            (
                [0; 4],
                1,
                [1, 1, 0, 0],
                0,
                [0, 0, 1, 1, 0, 0, 0, 0],
                [1, 1, 0, 0],
            ),
            (
                [0, 1, 0, 1],
                2,
                [1, 0, 1, 0],
                3,
                [0, 0, 1, 0, 0, 0, 1, 0],
                [1, 1, 1, 1],
            ),
        ];
        for (p, w, q, v, pads, conv_pads) in cases {
            let a = [ints(&p), Val::Value(w), ints(&q), Val::Value(v)];
            assert_eq!(list(typed_call(&f, "window_pads", &a).unwrap()), pads);
            assert_eq!(
                list(typed_call(&f, "window_conv_pads", &a).unwrap()),
                conv_pads
            );
        }
        // Far sides that disagree give different conv pads from each side.
        let f = filters(&[&[1, 1, 3, 3], &[1, 1, 2, 2]]);
        let a = [
            ints(&[1, 1, 1, 1]),
            Val::Value(0),
            ints(&[0, 0, 0, 0]),
            Val::Value(1),
        ];
        let b = [
            ints(&[0, 0, 0, 0]),
            Val::Value(1),
            ints(&[1, 1, 1, 1]),
            Val::Value(0),
        ];
        assert_ne!(
            list(typed_call(&f, "window_conv_pads", &a).unwrap()),
            list(typed_call(&f, "window_conv_pads", &b).unwrap())
        );
    }

    #[test]
    fn window_area_of_huge_windows_is_an_error() {
        // A 1x1 filter padded 2^31 beside a 2^31-wide one unpadded: a window
        // 2^32 on a side, whose area does not fit an i64.
        let f = filters(&[&[1, 1, 1, 1], &[1, 1, WINDOW_MAX, WINDOW_MAX]]);
        let args = [
            ints(&[WINDOW_MAX, WINDOW_MAX, 0, 0]),
            Val::Value(0),
            ints(&[0; 4]),
            Val::Value(1),
        ];
        assert!(typed_call(&f, "window_area", &args).is_err());
        assert!(typed_call(&f, "window_pads", &args).is_ok());
    }

    #[test]
    fn window_helpers_refuse_bad_windows() {
        let f = filters(&[&[1, 1, 3, 3], &[1, 1, 3]]);
        let ok = ints(&[1, 1, 1, 1]);
        for (p, w) in [
            (ints(&[-1, 0, 0, 0]), Val::Value(0)),
            (ints(&[1 << 40, 0, 0, 0]), Val::Value(0)),
            (ints(&[1, 1]), Val::Value(0)),
            (ok.clone(), Val::Value(1)),
            (ok.clone(), Val::Value(7)),
        ] {
            let args = [p, w, ok.clone(), Val::Value(0)];
            assert!(typed_call(&f, "window_pads", &args).is_err());
            assert!(typed_call(&f, "window_conv_pads", &args).is_err());
        }
    }

    #[test]
    fn identity_filter_copies_each_channel_at_the_tap() {
        let dense = |v: Val| match v {
            Val::Attr(a) => a
                .as_dense()
                .expect("dense")
                .elements()
                .map(|e| e.as_f64())
                .collect::<Vec<_>>(),
            v => panic!("not an attribute: {}", v.describe()),
        };
        // One group of 2 channels, 3x3 window padded 1: the centre of the diagonal.
        let f = filters(&[&[2, 2, 3, 3], &[4, 1, 1, 1], &[2, 2, 2, 2]]);
        let got = dense(
            typed_call(&f, "identity_filter", &[Val::Value(0), ints(&[1, 1, 1, 1])]).unwrap(),
        );
        let mut want = vec![0.0; 36];
        want[4] = 1.0; // out 0, in 0, (1, 1)
        want[27 + 4] = 1.0; // out 1, in 1
        assert_eq!(got, want);
        // Depthwise (4 groups of 1) at a 1x1 window: all ones.
        let got = dense(
            typed_call(&f, "identity_filter", &[Val::Value(1), ints(&[0, 0, 0, 0])]).unwrap(),
        );
        assert_eq!(got, [1.0; 4]);
        // A tap outside the window is an error, not a panic.
        assert!(typed_call(&f, "identity_filter", &[Val::Value(2), ints(&[2, 0, 0, 0])]).is_err());
        assert!(typed_call(
            &f,
            "identity_filter",
            &[Val::Value(2), ints(&[-1, 0, 0, 0])]
        )
        .is_err());
    }

    #[test]
    fn helpers_are_sorted_and_unique() {
        let names: Vec<&str> = HELPERS.iter().map(|h| h.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(names, sorted);
    }
}
