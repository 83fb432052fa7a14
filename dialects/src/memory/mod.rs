//! The `memory` dialect: the IR after memory planning.
//!
//! ## Design: arenas are values, stores make new arenas
//!
//! An arena is a byte buffer of a fixed size (`memory.arena`). Its SSA value
//! (type `!memory.arena`) is the arena's *contents* at one point of the
//! program; `memory.store` and `memory.copy` do not mutate it but produce a
//! new arena value, so the planned program is still plain SSA dataflow that
//! passes, the verifier and the reference interpreter handle like any other:
//!
//! ```mlir
//! %a0 = memory.arena {size = 1024 : i64, alignment = 64 : i64} : !memory.arena
//! %a1 = memory.store %x into %a0[0] : tensor<4x4xf32>        // x occupies bytes [0, 64)
//! %x1 = memory.view %a1[0] : tensor<4x4xf32>                 // reads them back
//! %y = graph.relu %x1 : (tensor<4x4xf32>) -> tensor<4x4xf32>
//! %a2 = memory.store %y into %a1[64] : tensor<4x4xf32>
//! ```
//!
//! The interpreter holds an arena value as a `ui8` tensor of `size` bytes
//! (zeros when created) and a view decodes the bytes it covers. Because every
//! buffer really lives at its planned offset of the one arena, a wrong plan —
//! two buffers that are live at the same time overlapping — makes a later view
//! read clobbered bytes and the program computes a wrong answer, which tests
//! comparing against the unplanned graph catch.
//!
//! Inside a `stream.program` (the task program) the arena is the program's
//! block argument and stands for the buffer itself: views there are *places*
//! that kernel launches read and write in program order (see the `stream`
//! dialect).
//!
//! ## Verification
//!
//! Offsets must be multiples of the arena's `alignment` (default 32 bytes;
//! Ascend uses 32 or 512) and `offset + byte size` must lie inside the arena.
//! A view of a symbolic shape (`tensor<Bx64xf16>`) is sized at the symbols'
//! upper bounds, which the planner records on the arena as
//! `symbol_bounds = {B = 64}` (the function's `ge.symbol_bounds` is not visible
//! to op verifiers: functions are isolated bodies, so the planner copies the
//! bounds it planned with onto the arena). The checks follow the arena value
//! back through stores and copies to its `memory.arena`.

pub mod ops;

use crate::data::{tensor_from_bytes, tensor_to_bytes};
use ge_ir::body::{Body, ValueDef, ValueId};
use ge_ir::opdef::Dialect;
use ge_ir::tensor::{Data, Tensor};
use ge_ir::{DType, Dim, Ident, Type, TypeData};
use std::collections::HashMap;

pub static DIALECT: Dialect = Dialect {
    name: "memory",
    summary: "Planned memory: arenas, buffer views at byte offsets, stores, copies and weights \
              (arena values are immutable contents; stores and copies produce new ones)",
    groups: &[ops::OPS],
};

/// Operand `i` of `op`, if it has one (op verifiers also run on ops whose
/// arity the generic checks already rejected).
pub fn nth_operand(body: &Body, op: ge_ir::OpId, i: usize) -> Option<ValueId> {
    body.op(op).operands().get(i).copied()
}

/// Result `i` of `op`, if it has one.
pub fn nth_result(body: &Body, op: ge_ir::OpId, i: usize) -> Option<ValueId> {
    body.op(op).results().get(i).copied()
}

/// `!memory.arena`: the type of an arena value.
pub fn arena_type() -> Type {
    Type::new(TypeData::Opaque {
        dialect: Ident::new("memory"),
        name: Ident::new("arena"),
        body: "".into(),
    })
}

pub fn is_arena(t: Type) -> bool {
    t == arena_type()
}

/// What the verifier knows about the arena behind a value.
#[derive(Clone, Debug, PartialEq)]
pub struct ArenaInfo {
    pub size: i64,
    pub alignment: i64,
    /// `"device"` or `"host"`.
    pub space: &'static str,
    pub bounds: HashMap<Ident, i64>,
}

/// The size/alignment/bounds attributes of a `memory.arena` op.
pub fn arena_info_of_op(body: &Body, op: ge_ir::OpId) -> Option<ArenaInfo> {
    let d = body.op(op);
    if !ops::Arena::is(d) {
        return None;
    }
    let a = ops::Arena::attrs(d);
    let bounds = a
        .symbol_bounds()
        .map(|dict| {
            dict.entries()
                .iter()
                .filter_map(|(k, v)| v.as_int().map(|n| (*k, n)))
                .collect()
        })
        .unwrap_or_default();
    Some(ArenaInfo {
        size: a.size()?,
        alignment: a.alignment(),
        space: a.space(),
        bounds,
    })
}

/// Follow an arena value back through `memory.store`, `memory.copy` and
/// `stream.program` results to the `memory.arena` that created it. `None` when
/// it comes from a block argument (e.g. inside a `stream.program`).
pub fn arena_root(body: &Body, mut v: ValueId) -> Option<ge_ir::OpId> {
    // Long store chains are walked iteratively; the bound guards against cycles
    // in graph regions.
    for _ in 0..body.value_capacity() + 1 {
        let ValueDef::Result { op, index } = body.value(v).def else {
            return None;
        };
        let d = body.op(op);
        v = match d.name.as_str() {
            "memory.arena" => return Some(op),
            "memory.store" | "memory.copy" => *d.operands().get(1)?,
            "stream.program" => *d.operands().get(index as usize)?,
            _ => return None,
        };
    }
    None
}

/// The arena info of the arena behind value `v`, if it can be found.
pub fn arena_info(body: &Body, v: ValueId) -> Option<ArenaInfo> {
    arena_root(body, v).and_then(|op| arena_info_of_op(body, op))
}

/// Byte size of a tensor type with symbols at their bounds (an upper bound
/// of the bytes a buffer of that type can occupy).
pub fn byte_size_bound(t: Type, bounds: &HashMap<Ident, i64>) -> Result<i64, String> {
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("expected a tensor type, but got '{t}'"))?;
    let dims = tt
        .dims
        .as_ref()
        .ok_or_else(|| format!("'{t}' is unranked: its size cannot be planned"))?;
    let mut n: i64 = tt.dtype.byte_size() as i64;
    for d in dims.iter() {
        let v = match d {
            Dim::Static(v) => *v,
            Dim::Unknown => {
                return Err(format!(
                    "'{t}' has a dynamic dim '?': its size cannot be planned"
                ))
            }
            Dim::Sym(s) => d.eval(bounds).ok_or_else(|| {
                let mut syms = vec![];
                s.expr().symbols(&mut syms);
                let missing: Vec<String> = syms
                    .iter()
                    .filter(|x| !bounds.contains_key(*x))
                    .map(|x| x.to_string())
                    .collect();
                format!(
                    "symbol {} of '{t}' has no upper bound (give the arena `symbol_bounds = {{{} = N}}`)",
                    missing.join(", "),
                    missing.first().map(|s| s.as_str()).unwrap_or("B")
                )
            })?,
        };
        n = n.saturating_mul(v.max(0));
    }
    Ok(n)
}

/// Check that a buffer of type `t` at byte `offset` fits the arena and is aligned.
pub fn check_place(what: &str, t: Type, offset: i64, info: &ArenaInfo) -> Result<(), String> {
    if offset < 0 {
        return Err(format!("{what} has negative offset {offset}"));
    }
    if info.alignment > 0 && offset % info.alignment != 0 {
        return Err(format!(
            "{what} offset {offset} is not a multiple of the arena's alignment {}",
            info.alignment
        ));
    }
    let bytes = byte_size_bound(t, &info.bounds)?;
    let end = offset.saturating_add(bytes);
    if end > info.size {
        return Err(format!(
            "{what} of '{t}' ({bytes} bytes) at offset {offset} ends at byte {end}, past the end of the {}-byte arena",
            info.size
        ));
    }
    Ok(())
}

/// The bytes of an arena value (a `ui8` tensor).
pub fn arena_bytes(t: &Tensor) -> Result<Vec<u8>, String> {
    if t.dtype != DType::U8 || t.rank() != 1 {
        return Err(format!(
            "expected an arena value (a ui8 byte buffer), got a {:?} {} tensor",
            t.shape, t.dtype
        ));
    }
    Ok(match &t.data {
        Data::I(v) => v.iter().map(|&b| b as u8).collect(),
        Data::F(v) => v.iter().map(|&b| b as u8).collect(),
    })
}

/// Largest arena the reference interpreter materialises (it holds one i64
/// per byte): 512 MiB.
pub const MAX_INTERP_ARENA: usize = 512 << 20;

fn arena_data(t: &Tensor) -> Result<&[i64], String> {
    match (&t.data, t.dtype, t.rank()) {
        (Data::I(v), DType::U8, 1) => Ok(v),
        _ => Err(format!(
            "expected an arena value (a ui8 byte buffer), got a {:?} {} tensor",
            t.shape, t.dtype
        )),
    }
}

/// The tensor of type `t` stored at `offset` of arena value `arena`
/// (decodes only the bytes it covers).
pub fn read_arena(
    arena: &Tensor,
    offset: usize,
    t: Type,
    symbols: &HashMap<Ident, i64>,
) -> Result<Tensor, String> {
    let data = arena_data(arena)?;
    let shape = concrete_shape(t, symbols)?;
    let dtype = t.dtype().ok_or("not a tensor")?;
    let n = shape.iter().product::<usize>() * dtype.byte_size();
    let Some(end) = offset.checked_add(n).filter(|&e| e <= data.len()) else {
        return Err(format!(
            "reading '{t}' ({n} bytes) at offset {offset} runs past the end of the {}-byte arena",
            data.len()
        ));
    };
    let bytes: Vec<u8> = data[offset..end].iter().map(|&b| b as u8).collect();
    tensor_from_bytes(&bytes, shape, dtype)
}

/// Arena value `arena` with tensor `x` written at `offset` (a new value).
pub fn write_arena(arena: &Tensor, offset: usize, x: &Tensor) -> Result<Tensor, String> {
    let data = arena_data(arena)?;
    let b = tensor_to_bytes(x);
    let Some(end) = offset.checked_add(b.len()).filter(|&e| e <= data.len()) else {
        return Err(format!(
            "writing {} bytes at offset {offset} runs past the end of the {}-byte arena",
            b.len(),
            data.len()
        ));
    };
    let mut out = data.to_vec();
    for (d, &v) in out[offset..end].iter_mut().zip(&b) {
        *d = i64::from(v);
    }
    Ok(Tensor {
        shape: arena.shape.clone(),
        dtype: DType::U8,
        data: Data::I(out),
    })
}

/// A fresh arena value of `size` zero bytes.
pub fn new_arena(size: usize) -> Result<Tensor, String> {
    if size > MAX_INTERP_ARENA {
        return Err(format!(
            "an arena of {size} bytes is larger than the reference interpreter's limit of {MAX_INTERP_ARENA} bytes"
        ));
    }
    Ok(arena_value(vec![0; size]))
}

/// An arena value holding `bytes`.
pub fn arena_value(bytes: Vec<u8>) -> Tensor {
    Tensor {
        shape: vec![bytes.len()],
        dtype: DType::U8,
        data: Data::I(bytes.into_iter().map(i64::from).collect()),
    }
}

/// Concrete shape of a tensor type under symbol bindings.
pub fn concrete_shape(t: Type, symbols: &HashMap<Ident, i64>) -> Result<Vec<usize>, String> {
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("expected a tensor type, but got '{t}'"))?;
    tt.dims
        .as_ref()
        .ok_or_else(|| format!("'{t}' is unranked"))?
        .iter()
        .map(|d| {
            d.eval(symbols)
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| format!("the shape of '{t}' is not known at run time"))
        })
        .collect()
}

/// Read a tensor of type `t` at `offset` of `bytes`.
pub fn read_place(
    bytes: &[u8],
    offset: usize,
    t: Type,
    symbols: &HashMap<Ident, i64>,
) -> Result<Tensor, String> {
    let shape = concrete_shape(t, symbols)?;
    let dtype = t.dtype().ok_or("not a tensor")?;
    let n: usize = shape.iter().product::<usize>() * dtype.byte_size();
    let end = offset.checked_add(n).filter(|&e| e <= bytes.len());
    let Some(end) = end else {
        return Err(format!(
            "reading '{t}' ({n} bytes) at offset {offset} runs past the end of the {}-byte arena",
            bytes.len()
        ));
    };
    tensor_from_bytes(&bytes[offset..end], shape, dtype)
}

/// Write tensor `x` at `offset` of `bytes`.
pub fn write_place(bytes: &mut [u8], offset: usize, x: &Tensor) -> Result<(), String> {
    let b = tensor_to_bytes(x);
    let end = offset.checked_add(b.len()).filter(|&e| e <= bytes.len());
    let Some(end) = end else {
        return Err(format!(
            "writing {} bytes at offset {offset} runs past the end of the {}-byte arena",
            b.len(),
            bytes.len()
        ));
    };
    bytes[offset..end].copy_from_slice(&b);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_make_new_arenas_and_reads_decode_bytes() {
        let a0 = new_arena(16).unwrap();
        let x = Tensor::from_i64(vec![2], DType::I32, vec![258, -1]);
        let a1 = write_arena(&a0, 4, &x).unwrap();
        assert_eq!(arena_bytes(&a0).unwrap(), vec![0; 16]);
        assert_eq!(
            &arena_bytes(&a1).unwrap()[4..12],
            &[2, 1, 0, 0, 255, 255, 255, 255]
        );
        let t = Type::tensor_static(&[2], DType::I32);
        assert_eq!(read_arena(&a1, 4, t, &HashMap::new()).unwrap(), x);
        assert!(read_arena(&a1, 12, t, &HashMap::new()).is_err());
        assert!(write_arena(&a1, 12, &x).is_err());
        assert!(new_arena(MAX_INTERP_ARENA + 1).is_err());
    }

    #[test]
    fn symbolic_sizes_use_bounds() {
        let t = Type::tensor(&[Dim::sym("B").mul_const(2), Dim::Static(4)], DType::F16);
        let bounds: HashMap<Ident, i64> = [(Ident::new("B"), 8)].into_iter().collect();
        assert_eq!(byte_size_bound(t, &bounds).unwrap(), 2 * 8 * 4 * 2);
        let err = byte_size_bound(t, &HashMap::new()).unwrap_err();
        assert!(err.contains("symbol B"), "{err}");
        let info = ArenaInfo {
            size: 128,
            alignment: 32,
            space: "device",
            bounds,
        };
        assert!(check_place("view", t, 0, &info).is_ok());
        assert!(check_place("view", t, 32, &info).is_err());
        assert!(check_place("view", t, 16, &info).is_err());
    }
}
