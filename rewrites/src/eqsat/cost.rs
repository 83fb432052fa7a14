//! The cost of an e-node on a SoC: a per-engine roofline plus launch overhead
//! (time in µs). Cube ops (conv, matmul) run at cube throughput, everything
//! else at vector throughput; memory traffic at the SoC's bandwidth; pure data
//! reinterpretations (reshape, squeeze) are free; ops computing only on
//! constants are free (they fold at compile time).

use super::analysis::Graph;
use super::lang::Node;
use egg::Id;
use ge_ir::{DType, Dim, Ident, Type};
use ge_soc::Soc;
use std::collections::HashMap;

pub struct CostModel {
    pub soc: Soc,
    /// Values for symbolic dims (their upper bounds).
    pub symbols: HashMap<Ident, i64>,
}

const FREE: &[&str] = &[
    "data.reshape",
    "data.squeeze",
    "data.unsqueeze",
    "data.identity",
    "data.constant",
];
const CUBE: &[&str] = &[
    "graph.conv2d",
    "graph.conv_transpose2d",
    "graph.matmul",
    "graph.batch_matmul",
    "graph.gemm",
    "graph.scaled_dot_product_attention",
];

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

    /// Floating-point operations of an op (multiply-add = 2).
    fn flops(&self, name: &str, ins: &[Type], out: Type) -> f64 {
        let o = self.numel(out);
        match name {
            "graph.matmul" | "graph.batch_matmul" | "graph.gemm" => {
                let k = ins
                    .first()
                    .map(|&t| self.dims(t))
                    .and_then(|d| d.last().copied())
                    .unwrap_or(1) as f64;
                2.0 * o * k
            }
            "graph.conv2d" | "graph.conv_transpose2d" => {
                let w = ins.get(1).map(|&t| self.dims(t)).unwrap_or_default();
                let per = w.iter().skip(1).product::<i64>().max(1) as f64;
                2.0 * o * per
            }
            "graph.exp" | "graph.log" | "graph.tanh" | "graph.sigmoid" | "graph.erf"
            | "graph.gelu" | "graph.silu" | "graph.softmax" | "graph.log_softmax" => 8.0 * o,
            "graph.layer_norm" | "graph.rms_norm" | "graph.batch_norm" => 6.0 * o,
            _ => {
                // Reductions read their input once; elementwise ops touch each output once.
                let i = ins.first().map(|&t| self.numel(t)).unwrap_or(o);
                i.max(o)
            }
        }
    }

    /// A slice or concat along an axis with only unit dims before it touches one
    /// contiguous chunk: memory planning makes it a view, so it costs nothing.
    fn is_view(&self, eg: &Graph, class: Id, node: &Node) -> bool {
        let Node::Op {
            name,
            attrs,
            children,
        } = node
        else {
            return false;
        };
        let attr = |k: &str| {
            attrs
                .iter()
                .position(|a| a.as_str() == k)
                .and_then(|i| eg[children[children.len() - attrs.len() + i]].data.attr)
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
        match name.as_str() {
            "data.slice" => {
                let Some(&input) = children.first().and_then(|&c| eg[c].data.types.first()) else {
                    return false;
                };
                let axes = attr("axes")
                    .and_then(|a| a.as_i64_array())
                    .unwrap_or_default();
                let steps_ok = attr("steps")
                    .and_then(|a| a.as_i64_array())
                    .is_none_or(|s| s.iter().all(|&x| x == 1));
                axes.len() == 1 && steps_ok && outer_unit(input, axes[0])
            }
            "data.concat" | "data.split" => {
                let axis = attr("axis").and_then(|a| a.as_int()).unwrap_or(0);
                eg[class]
                    .data
                    .types
                    .first()
                    .is_some_and(|&t| outer_unit(t, axis))
            }
            _ => false,
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
                let n = name.as_str();
                if FREE.contains(&n) || self.is_view(eg, class, node) {
                    return 0.0;
                }
                // A strided slice is read in place by its consumer (a strided
                // load fused into the next kernel): memory traffic, no launch.
                if n == "data.slice" {
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
                let tflops = if CUBE.contains(&n) {
                    self.soc.cube(dt)
                } else {
                    self.soc.vector(dt)
                }
                .max(1e-6);
                let compute_us = self.flops(n, &ins, out) / (tflops * 1e6);
                let bytes: f64 = ins.iter().map(|&t| self.bytes(t)).sum::<f64>()
                    + data.types.iter().map(|&t| self.bytes(t)).sum::<f64>();
                let mem_us = bytes / self.soc.bytes_per_us();
                self.soc.task_launch_us + compute_us.max(mem_us)
            }
        }
    }
}
