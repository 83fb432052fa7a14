//! The ops of the `memory` dialect.

use super::{
    arena_info, arena_type, byte_size_bound, check_place, is_arena, new_arena, nth_operand,
    nth_result, read_arena, write_arena,
};
use crate::data::constant::{elements_tensor, elements_type};
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId};
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{
    AttrDef, AttrKind, CustomSyntax, InferCtx, OpDef, OpError, OperandDef, Trait,
    TypeConstraint as C,
};
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

/// An integer attribute; `None` when missing or mistyped (the generic
/// attribute check reports that, so op verifiers just skip their checks).
fn int_of(body: &Body, op: OpId, name: &str) -> Option<i64> {
    body.op(op).attr(name).and_then(|a| a.as_int())
}

fn usize_attr(cx: &SemCtx, name: &str) -> Result<usize, String> {
    cx.i64_attr(name)
        .and_then(|v| usize::try_from(v).ok())
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

fn print_place(pr: &mut OpPrinter<'_, '_>, op: OpId, operand: usize, attr: &str) {
    let d = pr.body.op(op);
    let off = d.attr(attr).and_then(|a| a.as_int()).unwrap_or(0);
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
    let d = body.op(op);
    let Some(size) = int_of(body, op, "size") else {
        return Ok(());
    };
    if size < 0 {
        return Err(format!("has negative size {size}").into());
    }
    let align = d.attr("alignment").and_then(|a| a.as_int()).unwrap_or(32);
    if align <= 0 || (align & (align - 1)) != 0 {
        return Err(format!("alignment must be a power of two, but is {align}").into());
    }
    if let Some(b) = d.attr("symbol_bounds") {
        let dict = b
            .as_dict()
            .ok_or("attribute 'symbol_bounds' must be a dictionary")?;
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
    let size = usize_attr(cx, "size")?;
    Ok(vec![new_arena(size)?])
}

pub static ARENA: OpDef = OpDef {
    name: "memory.arena",
    summary: "A planned memory arena of a fixed size",
    description:
        "`%a = memory.arena {size = 1048576 : i64, alignment = 512 : i64} : !memory.arena` \
                  creates an arena of `size` bytes, all zero. Buffers placed in it (views, \
                  stores, copies) must start at multiples of `alignment` (a power of two; \
                  default 32). `space` is `\"device\"` (default) or `\"host\"`: copies between \
                  arenas of different spaces are host/device transfers. `symbol_bounds = {B = 64}` \
                  records the upper bounds of the symbolic dims the plan was made for; views of \
                  symbolic shapes are checked at those bounds.\n\n\
                  The value is the arena's contents: `memory.store` and `memory.copy` return a new \
                  arena value instead of mutating this one, so a planned program stays SSA \
                  dataflow, and a plan that overlaps two live buffers makes a later \
                  `memory.view` read clobbered bytes (the interpreter then computes a wrong \
                  answer, which tests catch).",
    results: &[OperandDef::one("arena", C::Any)],
    attrs: &[
        AttrDef::required("size", AttrKind::I64, "size in bytes"),
        AttrDef::with_default(
            "alignment",
            AttrKind::I64,
            "32",
            "offset alignment in bytes (a power of two)",
        ),
        AttrDef::with_default(
            "space",
            AttrKind::Enum(&["device", "host"]),
            "\"device\"",
            "where the arena lives",
        ),
        AttrDef::optional(
            "symbol_bounds",
            AttrKind::Dict,
            "upper bound of each symbolic dim, e.g. {B = 64}",
        ),
    ],
    format: Some("attr-dict `:` type(results)"),
    infer: Some(infer_arena),
    verify: Some(verify_arena),
    semantics: Some(sem_arena),
    ..OpDef::DEFAULT
};

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
    print_place(pr, op, 0, "offset");
    pr.attr_dict(op, &["offset"], false);
    pr.write(" : ");
    if let Some(r) = nth_result(pr.body, op, 0) {
        let t = pr.body.value_type(r);
        pr.ty(t);
    }
}

fn verify_view(body: &Body, op: OpId) -> Result<(), OpError> {
    expect_arena(body, op, 0, "arena")?;
    let Some(off) = int_of(body, op, "offset") else {
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
    let off = usize_attr(cx, "offset")?;
    let r = nth_result(cx.body, cx.op, 0).ok_or("has no result")?;
    let t = cx.body.value_type(r);
    Ok(vec![read_arena(x[0], off, t, cx.symbols())?])
}

pub static VIEW: OpDef = OpDef {
    name: "memory.view",
    summary: "A typed buffer at a byte offset of an arena",
    description:
        "`%b = memory.view %arena[401408] : tensor<1x64x56x56xf16>` is the buffer of that \
                  type starting `offset` bytes into the arena. As a value it is the tensor the \
                  bytes hold in that arena value (little-endian, `i1` as one byte). Inside a \
                  `stream.program` it is a place that task launches read and write. The verifier \
                  checks alignment and that `offset + byte size` fits the arena (symbolic dims at \
                  the arena's `symbol_bounds`).",
    operands: &[OperandDef::one("arena", C::Any)],
    results: &[OperandDef::one("buffer", C::AnyTensor)],
    attrs: &[AttrDef::required(
        "offset",
        AttrKind::I64,
        "byte offset into the arena",
    )],
    traits: &[Trait::Pure],
    syntax: Some(CustomSyntax {
        parse: parse_view,
        print: print_view,
    }),
    verify: Some(verify_view),
    semantics: Some(sem_view),
    ..OpDef::DEFAULT
};

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
    print_place(pr, op, 1, "offset");
    pr.attr_dict(op, &["offset"], false);
    pr.write(" : ");
    if let Some(v) = v {
        let t = pr.body.value_type(v);
        pr.ty(t);
    }
}

fn verify_store(body: &Body, op: OpId) -> Result<(), OpError> {
    expect_arena(body, op, 1, "arena")?;
    let Some(off) = int_of(body, op, "offset") else {
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
    let off = usize_attr(cx, "offset")?;
    Ok(vec![write_arena(x[1], off, x[0])?])
}

pub static STORE: OpDef = OpDef {
    name: "memory.store",
    summary: "Write a tensor into an arena at a byte offset (returns the new arena)",
    description: "`%a2 = memory.store %x into %a1[128] : tensor<4x4xf32>` is arena `%a1` with the \
                  bytes of `%x` written at offset 128. `%a1` itself is unchanged (arena values are \
                  contents, see `memory.arena`); thread the result on to later views and stores.",
    operands: &[
        OperandDef::one("value", C::AnyTensor),
        OperandDef::one("arena", C::Any),
    ],
    results: &[OperandDef::one("result", C::Any)],
    attrs: &[AttrDef::required(
        "offset",
        AttrKind::I64,
        "byte offset into the arena",
    )],
    traits: &[Trait::Pure],
    syntax: Some(CustomSyntax {
        parse: parse_store,
        print: print_store,
    }),
    infer: Some(infer_arena),
    verify: Some(verify_store),
    semantics: Some(sem_store),
    ..OpDef::DEFAULT
};

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
    pr.write(" ");
    print_place(pr, op, 0, "src_offset");
    pr.write(" to ");
    print_place(pr, op, 1, "dst_offset");
    pr.attr_dict(op, &["src_offset", "dst_offset", "type"], false);
    pr.write(" : ");
    if let Some(t) = pr.body.op(op).attr("type").and_then(|a| a.as_type()) {
        pr.ty(t);
    }
}

fn copy_type(body: &Body, op: OpId) -> Result<Type, OpError> {
    body.op(op)
        .attr("type")
        .and_then(|a| a.as_type())
        .filter(|t| t.as_tensor().is_some())
        .ok_or_else(|| "attribute 'type' must be a tensor type".into())
}

fn verify_copy(body: &Body, op: OpId) -> Result<(), OpError> {
    expect_arena(body, op, 0, "source")?;
    expect_arena(body, op, 1, "dest")?;
    let t = copy_type(body, op)?;
    for (i, name, what) in [
        (0, "src_offset", "copy source"),
        (1, "dst_offset", "copy destination"),
    ] {
        let Some(off) = int_of(body, op, name) else {
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
    let t = cx
        .attr("type")
        .and_then(|a| a.as_type())
        .ok_or("attribute 'type' must be a tensor type")?;
    let v = read_arena(x[0], usize_attr(cx, "src_offset")?, t, cx.symbols())?;
    Ok(vec![write_arena(x[1], usize_attr(cx, "dst_offset")?, &v)?])
}

pub static COPY: OpDef = OpDef {
    name: "memory.copy",
    summary: "Copy a buffer between (or within) arenas (returns the new destination arena)",
    description:
        "`%d2 = memory.copy %h[0] to %d1[512] : tensor<1x3x224x224xf16>` copies the bytes \
                  of a buffer of that type from the source arena at `src_offset` to the \
                  destination arena at `dst_offset` and returns the new destination contents. \
                  Between a `space = \"host\"` and a device arena it is a host/device transfer; \
                  within one arena (pass the same value twice) a buffer-to-buffer copy.",
    operands: &[
        OperandDef::one("source", C::Any),
        OperandDef::one("dest", C::Any),
    ],
    results: &[OperandDef::one("result", C::Any)],
    attrs: &[
        AttrDef::required(
            "src_offset",
            AttrKind::I64,
            "byte offset in the source arena",
        ),
        AttrDef::required(
            "dst_offset",
            AttrKind::I64,
            "byte offset in the destination arena",
        ),
        AttrDef::required(
            "type",
            AttrKind::Type,
            "the buffer type (gives the byte count)",
        ),
    ],
    traits: &[Trait::Pure],
    syntax: Some(CustomSyntax {
        parse: parse_copy,
        print: print_copy,
    }),
    infer: Some(infer_arena),
    verify: Some(verify_copy),
    semantics: Some(sem_copy),
    ..OpDef::DEFAULT
};

// ---- memory.weight ------------------------------------------------------------------------------

fn infer_weight(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let v = cx
        .attr("value")
        .ok_or("requires attribute 'value' (elements)")?;
    Ok(vec![elements_type(v)?])
}

fn weight_range(body: &Body, op: OpId) -> Option<(i64, i64)> {
    let off = int_of(body, op, "offset")?;
    let t = body.value_type(nth_result(body, op, 0)?);
    let bytes = byte_size_bound(t, &HashMap::new()).ok()?;
    Some((off, off.saturating_add(bytes)))
}

fn verify_weight(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let Some((off, end)) = weight_range(body, op) else {
        return Ok(());
    };
    let align = d.attr("alignment").and_then(|a| a.as_int()).unwrap_or(32);
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
        if body.op(p).name.as_str() == "memory.weight" {
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
    let v = cx.attr("value").ok_or("has no 'value' attribute")?;
    Ok(vec![elements_tensor(v, Some(cx.module()))?])
}

pub static WEIGHT: OpDef = OpDef {
    name: "memory.weight",
    summary: "A constant placed in the weights blob at a byte offset",
    description: "`%w = memory.weight [1024] dense<…> : tensor<64x3x3x3xf16>` is the constant \
                  `value` (dense, dense_resource or external elements) stored `offset` bytes \
                  into the model's weights blob, which the `.om` writer lays out from these \
                  offsets. Its value is the constant. Offsets must be multiples of `alignment` \
                  (default 32) and weights of one block may not overlap (all weights live for \
                  the whole program).",
    results: &[OperandDef::one("output", C::AnyTensor)],
    attrs: &[
        AttrDef::required("offset", AttrKind::I64, "byte offset in the weights blob"),
        AttrDef::required("value", AttrKind::Elements, "the weights"),
        AttrDef::with_default(
            "alignment",
            AttrKind::I64,
            "32",
            "offset alignment in bytes",
        ),
    ],
    traits: &[Trait::Pure, Trait::ConstantLike],
    format: Some("`[` $offset `]` $value attr-dict"),
    infer: Some(infer_weight),
    verify: Some(verify_weight),
    semantics: Some(sem_weight),
    ..OpDef::DEFAULT
};

pub static OPS: &[&OpDef] = &[&ARENA, &VIEW, &STORE, &COPY, &WEIGHT];
