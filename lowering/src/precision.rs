//! `convert-precision`: choose each op's compute precision the way ATC's
//! `--precision_mode` does, by running ops in f16 (or bf16) between casts.
//!
//! | mode | ops run in the low type |
//! |---|---|
//! | `must_keep_origin_dtype` | none |
//! | `force_fp16` | every float op |
//! | `allow_fp32_to_fp16` | ops whose unit (Cube or Vector, [`crate::cost`]) has no f32 peak in the SoC profile |
//! | `allow_mix_precision` | Cube ops (the white list); ops outside the black list that read a low-precision value (the gray list); the black list (reductions, softmax, norms, exp/log/pow…) keeps f32 |
//!
//! A converted op reads casts of its f32 operands and its f32 results are
//! cast back, so function signatures and every unconverted op are
//! unchanged; a cast of a value that is itself a cast back from the low type
//! reads the low value directly, so chains of converted ops carry no cast
//! pairs. Constants are left to folding (canonicalize, or the runtime's
//! load-time constant propagation for large weights).

use crate::cost::Unit;
use crate::error::{AtOp, LowerResult};
use crate::funcs::func_block;
use ge_ir::attributes::{AttrDict, Attribute};
use ge_ir::body::{Body, OpId, OpState};
use ge_ir::opdef::OpDef;
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{DType, Ident, OpData, Type, ValueId};
use ge_soc::Soc;
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "convert-precision",
    summary: "Run float ops in f16/bf16 by precision mode (ATC's --precision_mode)",
    description: "force_fp16 converts every f32 graph/data op; allow_fp32_to_fp16 converts ops \
                  whose unit has no f32 support on the SoC; allow_mix_precision converts Cube ops \
                  and gray-list ops fed by low-precision values, keeping black-list ops \
                  (reductions, softmax, norms, exp/log/pow) in f32; must_keep_origin_dtype changes \
                  nothing. Converted ops read casts of their operands and are cast back, so the \
                  function signature is unchanged.",
    anchor: None,
    options: &[
        OptionDef {
            name: "mode",
            kind: OptKind::Enum(&[
                "must_keep_origin_dtype",
                "force_fp16",
                "allow_fp32_to_fp16",
                "allow_mix_precision",
            ]),
            default: "must_keep_origin_dtype",
            doc: "which ops run in the low-precision type",
        },
        OptionDef {
            name: "type",
            kind: OptKind::Enum(&["f16", "bf16"]),
            default: "f16",
            doc: "the low-precision type",
        },
        OptionDef {
            name: "soc",
            kind: OptKind::Str,
            default: "Ascend910B",
            doc: "SoC profile (name or .json path) for allow_fp32_to_fp16",
        },
    ],
};

/// Ops that keep f32 under `allow_mix_precision` (numerically sensitive).
const BLACK_LIST: &[&str] = &[
    "graph.softmax",
    "graph.log_softmax",
    "graph.exp",
    "graph.log",
    "graph.pow",
    "graph.sqrt",
    "graph.reciprocal",
    "graph.erf",
    "graph.reduce_sum",
    "graph.reduce_mean",
    "graph.reduce_prod",
    "graph.reduce_l2",
    "graph.reduce_sum_square",
    "graph.reduce_log_sum_exp",
    "graph.batch_norm",
    "graph.layer_norm",
    "graph.instance_norm",
    "graph.div",
];

/// Ops never converted: structure, casts, calls and ops with regions.
fn never(name: &str) -> bool {
    matches!(
        name,
        "graph.func"
            | "graph.return"
            | "graph.cast"
            | "graph.call"
            | "graph.fused"
            | "graph.if"
            | "graph.while"
            | "graph.case"
            | "graph.yield"
            | "graph.condition"
            | "data.constant"
    ) || !(name.starts_with("graph.") || name.starts_with("data."))
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Keep,
    Force,
    Fp32ToFp16 { cube_f32: bool, vector_f32: bool },
    Mix,
}

struct ConvertPrecision {
    mode: Mode,
    low: DType,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let low = match o.str("type") {
        "bf16" => DType::BF16,
        _ => DType::F16,
    };
    let mode = match o.str("mode") {
        "force_fp16" => Mode::Force,
        "allow_mix_precision" => Mode::Mix,
        "allow_fp32_to_fp16" => {
            let soc = Soc::load(o.str("soc"))?;
            Mode::Fp32ToFp16 {
                cube_f32: soc.cube_tflops.contains_key("f32"),
                vector_f32: soc.vector_tflops.contains_key("f32"),
            }
        }
        _ => Mode::Keep,
    };
    Ok(Box::new(ConvertPrecision { mode, low }))
}

impl Pass for ConvertPrecision {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        if self.mode == Mode::Keep {
            return Ok(());
        }
        let cast_def = cx.ctx.op_def("graph.cast");
        // Every function with a body, private ones too (callees compute as well).
        if op.name.as_str() == "graph.func" {
            return self.convert_function(op, cast_def);
        }
        let Some(inner) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        let funcs: Vec<OpId> = inner
            .all_ops(ge_ir::body::WalkOrder::Pre)
            .into_iter()
            .filter(|&o| inner.op(o).name.as_str() == "graph.func")
            .collect();
        for f in funcs {
            self.convert_function(inner.op_mut(f), cast_def)?;
        }
        Ok(())
    }
}

impl ConvertPrecision {
    fn convert_function(&self, f: &mut OpData, cast_def: Option<&'static OpDef>) -> PassResult {
        let loc = f.loc;
        let Some(block) = func_block(f) else {
            return Ok(());
        };
        let Some(body) = f.inner.as_deref_mut() else {
            return Ok(());
        };
        let ops: Vec<OpId> = body.block_ops(block).collect();
        let mut conv = Converter {
            low: self.low,
            cast_def,
            casts: HashMap::new(),
        };
        for o in ops {
            if self.wants(body, o, &conv) {
                conv.convert(body, o)
                    .map_err(|e| vec![e.diagnostic("convert-precision", loc)])?;
            }
        }
        Ok(())
    }
}

fn is_f32(t: Type) -> bool {
    t.dtype() == Some(DType::F32)
}

impl ConvertPrecision {
    /// Whether `op` should run in the low type.
    fn wants(&self, body: &Body, op: OpId, conv: &Converter) -> bool {
        let d = body.op(op);
        let name = d.name.as_str();
        if never(name) || !d.regions().is_empty() || d.inner.is_some() {
            return false;
        }
        // Only ops computing in f32 (and nothing else floating).
        let types = body
            .operand_types(op)
            .into_iter()
            .chain(body.result_types(op));
        let mut any_f32 = false;
        for t in types {
            match t.dtype() {
                Some(DType::F32) => any_f32 = true,
                Some(dt) if dt.is_float() => return false,
                _ => {}
            }
        }
        if !any_f32 || !body.result_types(op).into_iter().any(is_f32) {
            return false;
        }
        let unit = unit_of(name);
        match self.mode {
            Mode::Keep => false,
            Mode::Force => true,
            Mode::Fp32ToFp16 {
                cube_f32,
                vector_f32,
            } => match unit {
                Unit::Cube => !cube_f32,
                Unit::Vector => !vector_f32,
            },
            Mode::Mix => {
                if unit == Unit::Cube {
                    return true;
                }
                if BLACK_LIST.contains(&name) {
                    return false;
                }
                d.operands()
                    .iter()
                    .any(|&v| conv.low_source(body, v).is_some())
            }
        }
    }
}

/// Which unit an op runs on (the cost model's classification).
fn unit_of(name: &str) -> Unit {
    match name {
        "graph.conv2d"
        | "graph.conv_transpose2d"
        | "graph.matmul"
        | "graph.batch_matmul"
        | "graph.gemm"
        | "graph.scaled_dot_product_attention" => Unit::Cube,
        _ => Unit::Vector,
    }
}

struct Converter {
    low: DType,
    cast_def: Option<&'static OpDef>,
    /// f32 value -> its cast to the low type (one cast per value).
    casts: HashMap<ValueId, ValueId>,
}

impl Converter {
    /// If `v` is a cast back to f32 of a low-precision value, that value.
    fn low_source(&self, body: &Body, v: ValueId) -> Option<ValueId> {
        let def = body.defining_op(v)?;
        let d = body.op(def);
        if d.name.as_str() != "graph.cast" || !is_f32(body.value_type(v)) {
            return None;
        }
        let src = *d.operands().first()?;
        (body.value_type(src).dtype() == Some(self.low)).then_some(src)
    }

    fn cast(
        &self,
        body: &mut Body,
        v: ValueId,
        to: DType,
        loc: ge_ir::Location,
    ) -> Result<OpId, String> {
        let mut st = OpState::new("graph.cast", loc);
        st.def = Some(self.cast_def.ok_or("the graph dialect is not registered")?);
        st.operands = vec![v];
        st.result_types = vec![body.value_type(v).with_dtype(to)];
        st.attrs = AttrDict::new(vec![(Ident::new("to"), Attribute::ty(Type::scalar(to)))]);
        Ok(body.create_op(st))
    }

    /// Run `op` in the low type (errors are at `op`).
    fn convert(&mut self, body: &mut Body, op: OpId) -> LowerResult<()> {
        let loc = body.op(op).loc;
        let operands: Vec<ValueId> = body.op(op).operands().to_vec();
        for (i, v) in operands.into_iter().enumerate() {
            if !is_f32(body.value_type(v)) {
                continue;
            }
            let low = match (self.low_source(body, v), self.casts.get(&v)) {
                (Some(src), _) => src,
                (None, Some(&c)) => c,
                (None, None) => {
                    let c = self.cast(body, v, self.low, loc).at_op(loc)?;
                    body.insert_op_before(op, c);
                    let r = body.result(c, 0);
                    self.casts.insert(v, r);
                    r
                }
            };
            body.set_operand(op, i, low);
        }
        let results: Vec<ValueId> = body.op(op).results().to_vec();
        let mut after = op;
        for r in results {
            let t = body.value_type(r);
            if !is_f32(t) {
                continue;
            }
            body.set_value_type(r, t.with_dtype(self.low));
            let back = self.cast(body, r, DType::F32, loc).at_op(loc)?;
            body.insert_op_after(after, back);
            after = back;
            let y = body.result(back, 0);
            body.replace_uses_if(r, y, |_, u| u.op != back);
        }
        Ok(())
    }
}
