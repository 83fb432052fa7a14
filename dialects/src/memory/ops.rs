//! The ops of the `memory` dialect.

use super::{
    arena_info, arena_type, byte_size_bound, check_place, is_arena, new_arena, nth_operand,
    nth_result, read_arena, write_arena,
};
use crate::data::constant::{elements_tensor, elements_type};
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{AttrKind, CustomSyntax, InferCtx, OpDef, OpError};
use ge_ir::parser::{OpParser, OperandRef, PResult};
use ge_ir::printer::OpPrinter;
use ge_ir::tensor::Tensor;
use ge_ir::Type;
use std::collections::HashMap;

fn arena_result() -> Result<Vec<Type>, String> {
    Ok(vec![arena_type()])
}

fn expect_arena(body: &Body, op: OpId, i: usize, name: &str) -> Result<(), OpError> {
    let Some(v) = nth_operand(body, op, i) else {
        return Ok(());
    };
    let t = body.value_type(v);
    if !is_arena(t) {
        return Err(format!("operand '{name}' must be !memory.arena, but got '{t}'").into());
    }
    Ok(())
}

/// An offset or size attribute's value as a `usize`.
fn to_usize(name: &str, v: Option<i64>) -> Result<usize, String> {
    v.and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| format!("attribute '{name}' must be a non-negative integer"))
}

/// `%arena[OFFSET]` in op syntax: the operand and the offset attribute.
fn parse_place<'s>(p: &mut OpParser<'_, '_, 's>, attr: &str) -> PResult<OperandRef<'s>> {
    let a = p.parse_operand()?;
    p.expect_punct("[")?;
    let span = p.here();
    let off = p.parse_attr_value(AttrKind::I64)?;
    p.add_attr(attr, off, span)?;
    p.expect_punct("]")?;
    Ok(a)
}

fn print_place(pr: &mut OpPrinter<'_, '_>, op: OpId, operand: usize, off: Option<i64>) {
    let off = off.unwrap_or(0);
    if let Some(v) = nth_operand(pr.body, op, operand) {
        pr.value(v);
    }
    pr.write("[");
    pr.write(&off.to_string());
    pr.write("]");
}

// ---- memory.arena ------------------------------------------------------------------

fn infer_arena(_: &InferCtx) -> Result<Vec<Type>, String> {
    arena_result()
}

fn verify_arena(body: &Body, op: OpId) -> Result<(), OpError> {
    let a = Arena::attrs(body.op(op));
    let Some(size) = a.size() else {
        return Ok(());
    };
    if size < 0 {
        return Err(format!("has negative size {size}").into());
    }
    let align = a.alignment();
    if align <= 0 || (align & (align - 1)) != 0 {
        return Err(format!("alignment must be a power of two, but is {align}").into());
    }
    if let Some(dict) = a.symbol_bounds() {
        for (k, v) in dict.entries() {
            if v.as_int().is_none_or(|n| n <= 0) {
                return Err(
                    format!("symbol bound '{k}' must be a positive integer, but is '{v}'").into(),
                );
            }
        }
    }
    Ok(())
}

fn sem_arena(cx: &SemCtx, _: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let size = to_usize("size", Arena::attrs(cx).size())?;
    Ok(vec![new_arena(size)?])
}

def_op! {
    /// A planned memory arena of a fixed size
    ///
    /// `%a = memory.arena {size = 1048576 : i64, alignment = 512 : i64} : !memory.arena`
    /// creates an arena of `size` bytes, all zero. Buffers placed in it (views, stores, copies)
    /// must start at multiples of `alignment` (a power of two; default 32). `space` is
    /// `"device"` (default) or `"host"`: copies between arenas of different spaces are
    /// host/device transfers. `symbol_bounds = {B = 64}` records the upper bounds of the
    /// symbolic dims the plan was made for; views of symbolic shapes are checked at those
    /// bounds.
    ///
    /// The value is the arena's contents: `memory.store` and `memory.copy` return a new arena
    /// value instead of mutating this one, so a planned program stays SSA dataflow, and a plan
    /// that overlaps two live buffers makes a later `memory.view` read clobbered bytes (the
    /// interpreter then computes a wrong answer, which tests catch).
    pub Arena = "memory.arena" {
        results { arena: Any },
        attrs {
            /// size in bytes
            size: I64,
            /// offset alignment in bytes (a power of two)
            alignment: I64 = 32,
            /// where the arena lives
            space: Enum(&["device", "host"]) = "device",
            /// upper bound of each symbolic dim, e.g. {B = 64}
            symbol_bounds: Option<Dict>,
        },
        traits [],
        format: "attr-dict `:` type(results)",
        verify: verify_arena,
        infer: infer_arena,
        semantics: sem_arena,
    }
}

// ---- memory.view -----------------------------------------------------------------------

fn parse_view(p: &mut OpParser<'_, '_, '_>) -> PResult<()> {
    let a = parse_place(p, "offset")?;
    p.parse_optional_attr_dict()?;
    p.expect_punct(":")?;
    let t = p.parse_type()?;
    p.operands = p.resolve_operands(&[a], &[arena_type()])?;
    p.result_types = Some(vec![t]);
    Ok(())
}

fn print_view(pr: &mut OpPrinter<'_, '_>, op: OpId) {
    pr.write(" ");
    print_place(pr, op, 0, View::attrs(pr.body.op(op)).offset());
    pr.attr_dict(op, &["offset"], false);
    pr.write(" : ");
    if let Some(r) = nth_result(pr.body, op, 0) {
        let t = pr.body.value_type(r);
        pr.ty(t);
    }
}

fn verify_view(body: &Body, op: OpId) -> Result<(), OpError> {
    expect_arena(body, op, 0, "arena")?;
    let Some(off) = View::attrs(body.op(op)).offset() else {
        return Ok(());
    };
    let (Some(r), Some(a)) = (nth_result(body, op, 0), nth_operand(body, op, 0)) else {
        return Ok(());
    };
    let t = body.value_type(r);
    if off < 0 {
        return Err(format!("has negative offset {off}").into());
    }
    if let Some(info) = arena_info(body, a) {
        check_place("view", t, off, &info)?;
    }
    Ok(())
}

fn sem_view(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let off = to_usize("offset", View::attrs(cx).offset())?;
    let r = nth_result(cx.body, cx.op, 0).ok_or("has no result")?;
    let t = cx.body.value_type(r);
    Ok(vec![read_arena(x[0], off, t, cx.symbols())?])
}

def_op! {
    /// A typed buffer at a byte offset of an arena
    ///
    /// `%b = memory.view %arena[401408] : tensor<1x64x56x56xf16>` is the buffer of that type
    /// starting `offset` bytes into the arena. As a value it is the tensor the bytes hold in
    /// that arena value (little-endian, `i1` as one byte). Inside a `stream.program` it is a
    /// place that task launches read and write. The verifier checks alignment and that `offset +
    /// byte size` fits the arena (symbolic dims at the arena's `symbol_bounds`).
    pub View = "memory.view" {
        operands { arena: Any },
        results { buffer: AnyTensor },
        attrs {
            /// byte offset into the arena
            offset: I64,
        },
        traits [Pure],
        syntax: CustomSyntax {
            parse: parse_view,
            print: print_view,
        },
        verify: verify_view,
        semantics: sem_view,
    }
}

// ---- memory.store ------------------------------------------------------------------------

fn parse_store(p: &mut OpParser<'_, '_, '_>) -> PResult<()> {
    let v = p.parse_operand()?;
    p.expect_keyword("into")?;
    let a = parse_place(p, "offset")?;
    p.parse_optional_attr_dict()?;
    p.expect_punct(":")?;
    let t = p.parse_type()?;
    p.operands = p.resolve_operands(&[v, a], &[t, arena_type()])?;
    p.result_types = Some(vec![arena_type()]);
    Ok(())
}

fn print_store(pr: &mut OpPrinter<'_, '_>, op: OpId) {
    let v = nth_operand(pr.body, op, 0);
    pr.write(" ");
    if let Some(v) = v {
        pr.value(v);
    }
    pr.write(" into ");
    print_place(pr, op, 1, Store::attrs(pr.body.op(op)).offset());
    pr.attr_dict(op, &["offset"], false);
    pr.write(" : ");
    if let Some(v) = v {
        let t = pr.body.value_type(v);
        pr.ty(t);
    }
}

fn verify_store(body: &Body, op: OpId) -> Result<(), OpError> {
    expect_arena(body, op, 1, "arena")?;
    let Some(off) = Store::attrs(body.op(op)).offset() else {
        return Ok(());
    };
    let (Some(v), Some(a)) = (nth_operand(body, op, 0), nth_operand(body, op, 1)) else {
        return Ok(());
    };
    let t = body.value_type(v);
    if off < 0 {
        return Err(format!("has negative {name} {off}", name = "offset").into());
    }
    if let Some(info) = arena_info(body, a) {
        check_place("store", t, off, &info)?;
    }
    Ok(())
}

fn sem_store(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let off = to_usize("offset", Store::attrs(cx).offset())?;
    Ok(vec![write_arena(x[1], off, x[0])?])
}

def_op! {
    /// Write a tensor into an arena at a byte offset (returns the new arena)
    ///
    /// `%a2 = memory.store %x into %a1[128] : tensor<4x4xf32>` is arena `%a1` with the bytes of
    /// `%x` written at offset 128. `%a1` itself is unchanged (arena values are contents, see
    /// `memory.arena`); thread the result on to later views and stores.
    pub Store = "memory.store" {
        operands { value: AnyTensor, arena: Any },
        results { result: Any },
        attrs {
            /// byte offset into the arena
            offset: I64,
        },
        traits [Pure],
        syntax: CustomSyntax {
            parse: parse_store,
            print: print_store,
        },
        verify: verify_store,
        infer: infer_arena,
        semantics: sem_store,
    }
}

// ---- memory.copy ------------------------------------------------------------------------------

fn parse_copy(p: &mut OpParser<'_, '_, '_>) -> PResult<()> {
    let s = parse_place(p, "src_offset")?;
    p.expect_keyword("to")?;
    let d = parse_place(p, "dst_offset")?;
    p.parse_optional_attr_dict()?;
    p.expect_punct(":")?;
    let span = p.here();
    let t = p.parse_type()?;
    p.add_attr("type", Attribute::ty(t), span)?;
    p.operands = p.resolve_operands(&[s, d], &[arena_type(), arena_type()])?;
    p.result_types = Some(vec![arena_type()]);
    Ok(())
}

fn print_copy(pr: &mut OpPrinter<'_, '_>, op: OpId) {
    let a = MemoryCopy::attrs(pr.body.op(op));
    pr.write(" ");
    print_place(pr, op, 0, a.src_offset());
    pr.write(" to ");
    print_place(pr, op, 1, a.dst_offset());
    pr.attr_dict(op, &["src_offset", "dst_offset", "type"], false);
    pr.write(" : ");
    if let Some(t) = a.r#type() {
        pr.ty(t);
    }
}

fn copy_type(body: &Body, op: OpId) -> Result<Type, OpError> {
    MemoryCopy::attrs(body.op(op))
        .r#type()
        .filter(|t| t.as_tensor().is_some())
        .ok_or_else(|| "attribute 'type' must be a tensor type".into())
}

fn verify_copy(body: &Body, op: OpId) -> Result<(), OpError> {
    expect_arena(body, op, 0, "source")?;
    expect_arena(body, op, 1, "dest")?;
    let t = copy_type(body, op)?;
    let a = MemoryCopy::attrs(body.op(op));
    for (i, name, off, what) in [
        (0, "src_offset", a.src_offset(), "copy source"),
        (1, "dst_offset", a.dst_offset(), "copy destination"),
    ] {
        let Some(off) = off else {
            return Ok(());
        };
        if off < 0 {
            return Err(format!("has negative {name} {off}").into());
        }
        if let Some(info) = nth_operand(body, op, i).and_then(|a| arena_info(body, a)) {
            check_place(what, t, off, &info)?;
        }
    }
    Ok(())
}

fn sem_copy(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let a = MemoryCopy::attrs(cx);
    let t = a.r#type().ok_or("attribute 'type' must be a tensor type")?;
    let v = read_arena(
        x[0],
        to_usize("src_offset", a.src_offset())?,
        t,
        cx.symbols(),
    )?;
    Ok(vec![write_arena(
        x[1],
        to_usize("dst_offset", a.dst_offset())?,
        &v,
    )?])
}

def_op! {
    /// Copy a buffer between (or within) arenas (returns the new destination arena)
    ///
    /// `%d2 = memory.copy %h[0] to %d1[512] : tensor<1x3x224x224xf16>` copies the bytes of a
    /// buffer of that type from the source arena at `src_offset` to the destination arena at
    /// `dst_offset` and returns the new destination contents. Between a `space = "host"` and a
    /// device arena it is a host/device transfer; within one arena (pass the same value twice)
    /// a buffer-to-buffer copy.
    pub MemoryCopy = "memory.copy" {
        operands { source: Any, dest: Any },
        results { result: Any },
        attrs {
            /// byte offset in the source arena
            src_offset: I64,
            /// byte offset in the destination arena
            dst_offset: I64,
            /// the buffer type (gives the byte count)
            r#type: Type,
        },
        traits [Pure],
        syntax: CustomSyntax {
            parse: parse_copy,
            print: print_copy,
        },
        verify: verify_copy,
        infer: infer_arena,
        semantics: sem_copy,
    }
}

// ---- memory.weight ------------------------------------------------------------------------------

fn infer_weight(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let v = Weight::attrs(cx)
        .value()
        .ok_or("requires attribute 'value' (elements)")?;
    Ok(vec![elements_type(v)?])
}

fn weight_range(body: &Body, op: OpId) -> Option<(i64, i64)> {
    let off = Weight::attrs(body.op(op)).offset()?;
    let t = body.value_type(nth_result(body, op, 0)?);
    let bytes = byte_size_bound(t, &HashMap::new()).ok()?;
    Some((off, off.saturating_add(bytes)))
}

fn verify_weight(body: &Body, op: OpId) -> Result<(), OpError> {
    let Some((off, end)) = weight_range(body, op) else {
        return Ok(());
    };
    let align = Weight::attrs(body.op(op)).alignment();
    if align <= 0 || (align & (align - 1)) != 0 {
        return Err(format!("alignment must be a power of two, but is {align}").into());
    }
    if off < 0 {
        return Err(format!("has negative offset {off}").into());
    }
    if off % align != 0 {
        return Err(format!("offset {off} is not a multiple of the alignment {align}").into());
    }
    // Weights are live for the whole program: no two may share bytes.
    let mut prev = body.prev_op(op);
    while let Some(p) = prev {
        if Weight::is(body.op(p)) {
            if let Some((po, pe)) = weight_range(body, p) {
                if off < pe && po < end && end > off && pe > po {
                    return Err(format!(
                        "bytes [{off}, {end}) overlap the weight at bytes [{po}, {pe}) defined at {}",
                        body.op(p).loc
                    )
                    .into());
                }
            }
        }
        prev = body.prev_op(p);
    }
    Ok(())
}

fn sem_weight(cx: &SemCtx, _: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let v = Weight::attrs(cx)
        .value()
        .ok_or("has no 'value' attribute")?;
    Ok(vec![elements_tensor(v, Some(cx.module()))?])
}

def_op! {
    /// A constant placed in the weights blob at a byte offset
    ///
    /// `%w = memory.weight [1024] dense<…> : tensor<64x3x3x3xf16>` is the constant `value`
    /// (dense, dense_resource or external elements) stored `offset` bytes into the model's
    /// weights blob, which the `.om` writer lays out from these offsets. Its value is the
    /// constant. Offsets must be multiples of `alignment` (default 32) and weights of one block
    /// may not overlap (all weights live for the whole program).
    pub Weight = "memory.weight" {
        results { output: AnyTensor },
        attrs {
            /// byte offset in the weights blob
            offset: I64,
            /// the weights
            value: Elements,
            /// offset alignment in bytes
            alignment: I64 = 32,
        },
        traits [Pure, ConstantLike],
        format: "`[` $offset `]` $value attr-dict",
        verify: verify_weight,
        infer: infer_weight,
        semantics: sem_weight,
    }
}

pub static OPS: &[&OpDef] = &[&ARENA, &VIEW, &STORE, &MEMORY_COPY, &WEIGHT];
