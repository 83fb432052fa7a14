//! The cost of an e-node on a SoC: a per-engine roofline plus launch overhead
//! (time in µs). Cube ops (conv, matmul) run at cube throughput, everything
//! else at vector throughput; memory traffic at the SoC's bandwidth; pure data
//! reinterpretations (reshape, squeeze) are free; ops computing only on
//! constants are free (they fold at compile time).

use super::analysis::Graph;
use super::lang::Node;
use egg::Id;
use ge_dialects::data::movement::{Concat, Slice, Split};
use ge_ir::interfaces::{Cost, CostCtx, Unit};
use ge_ir::opdef::OpDef;
use ge_ir::{AttrDict, DType, Dim, Ident, Type};
use ge_soc::Soc;
use std::collections::HashMap;

pub struct CostModel {
    pub soc: Soc,
    /// Values for symbolic dims (their upper bounds).
    pub symbols: HashMap<Ident, i64>,
}

impl CostModel {
    pub fn new(soc: Soc, symbols: HashMap<Ident, i64>) -> CostModel {
        CostModel { soc, symbols }
    }

    fn dims(&self, t: Type) -> Vec<i64> {
        t.as_tensor()
            .map(|tt| {
                tt.shape()
                    .iter()
                    .map(|d| match d {
                        Dim::Static(n) => *n,
                        d => d.eval(&self.symbols).unwrap_or(1),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn numel(&self, t: Type) -> f64 {
        self.dims(t).iter().product::<i64>().max(1) as f64
    }

    fn bytes(&self, t: Type) -> f64 {
        self.numel(t) * t.dtype().map_or(4, |d| d.byte_size()) as f64
    }

    /// The attributes of an op node (its attribute children).
    fn node_attrs(eg: &Graph, node: &Node) -> AttrDict {
        let Node::Op {
            attrs, children, ..
        } = node
        else {
            return AttrDict::empty();
        };
        let first = children.len() - attrs.len();
        AttrDict::new(
            attrs
                .iter()
                .zip(&children[first..])
                .filter_map(|(k, &c)| Some((*k, eg[c].data.attr?)))
                .collect(),
        )
    }

    /// A slice or concat along an axis with only unit dims before it touches one
    /// contiguous chunk: memory planning makes it a view, so it costs nothing.
    fn is_view(&self, eg: &Graph, class: Id, node: &Node, def: &OpDef, attrs: AttrDict) -> bool {
        let Node::Op { children, .. } = node else {
            return false;
        };
        let outer_unit = |t: Type, axis: i64| {
            let d = self.dims(t);
            let a = if axis < 0 {
                axis + d.len() as i64
            } else {
                axis
            };
            a >= 0 && d.iter().take(a as usize).all(|&x| x == 1)
        };
        let along = |axis: i64| {
            eg[class]
                .data
                .types
                .first()
                .is_some_and(|&t| outer_unit(t, axis))
        };
        if std::ptr::eq(def, Slice::DEF) {
            let Some(&input) = children.first().and_then(|&c| eg[c].data.types.first()) else {
                return false;
            };
            let a = Slice::attrs(&attrs);
            let axes = a.axes().unwrap_or_default();
            let steps_ok = a.steps().is_none_or(|s| s.iter().all(|&x| x == 1));
            axes.len() == 1 && steps_ok && outer_unit(input, axes[0])
        } else if std::ptr::eq(def, Concat::DEF) {
            along(Concat::attrs(&attrs).axis().unwrap_or(0))
        } else if std::ptr::eq(def, Split::DEF) {
            along(Split::attrs(&attrs).axis())
        } else {
            false
        }
    }

    /// Cost of `node` in class `class` (µs), excluding its children.
    pub fn node_cost(&self, eg: &Graph, class: Id, node: &Node) -> f64 {
        let data = &eg[class].data;
        match node {
            Node::Arg(_) | Node::Attr(_) | Node::Proj { .. } => 0.0,
            Node::Opaque { .. } => {
                let aic = self.soc.task_launch_us;
                let bytes: f64 = super::build::operand_children(node)
                    .iter()
                    .filter_map(|&c| eg[c].data.types.first().map(|&t| self.bytes(t)))
                    .sum::<f64>()
                    + data.types.iter().map(|&t| self.bytes(t)).sum::<f64>();
                aic + bytes / self.soc.bytes_per_us()
            }
            Node::Op { name, .. } => {
                let Some(&def) = eg.analysis.defs.get(name) else {
                    return f64::INFINITY;
                };
                // The op's cost model (the one lowering's roofline uses too).
                let model = def
                    .interface::<Cost>()
                    .copied()
                    .unwrap_or(Cost::ELEMENTWISE);
                let attrs = Self::node_attrs(eg, node);
                if model.free || self.is_view(eg, class, node, def, attrs) {
                    return 0.0;
                }
                // A strided slice is read in place by its consumer (a strided
                // load fused into the next kernel): memory traffic, no launch.
                if std::ptr::eq(def, Slice::DEF) {
                    let out = data.types.first().map_or(0.0, |&t| self.bytes(t));
                    return out / self.soc.bytes_per_us();
                }
                let operands = super::build::operand_children(node);
                // Only constants in (transitively): folded at compile time.
                if !operands.is_empty() && operands.iter().all(|&c| eg[c].data.foldable) {
                    return 0.0;
                }
                let ins: Vec<Type> = operands
                    .iter()
                    .filter_map(|&c| eg[c].data.types.first().copied())
                    .collect();
                let Some(&out) = data.types.first() else {
                    return f64::INFINITY;
                };
                let dt = match out.dtype().unwrap_or(DType::F32) {
                    DType::F64 => "f32",
                    DType::U8 => "i8",
                    d => d.name(),
                };
                let cost = model.eval(&CostCtx {
                    operand_types: &ins,
                    result_types: &data.types,
                    attrs,
                    symbols: &self.symbols,
                });
                let tflops = match cost.unit {
                    Unit::Cube => self.soc.cube(dt),
                    Unit::Vector => self.soc.vector(dt),
                }
                .max(1e-6);
                let compute_us = cost.flops / (tflops * 1e6);
                let bytes: f64 = ins.iter().map(|&t| self.bytes(t)).sum::<f64>()
                    + data.types.iter().map(|&t| self.bytes(t)).sum::<f64>();
                let mem_us = bytes / self.soc.bytes_per_us();
                self.soc.task_launch_us + compute_us.max(mem_us)
            }
        }
    }
}
