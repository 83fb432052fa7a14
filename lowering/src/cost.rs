//! A roofline cost model of tasks on a SoC profile: the duration of a task is
//! its engine's launch overhead plus the larger of its compute time
//! (FLOPs / engine peak) and its memory time (bytes moved / bandwidth).
//! The stream scheduler orders tasks and the benchmarks simulate makespans
//! with it; symbolic dims count at their upper bounds.

use crate::funcs::{for_each_nested, Bounds};
use ge_ir::body::{Body, OpId};
use ge_ir::{Dim, Type};
use ge_soc::Soc;

/// Elements of a tensor type with symbols at their bounds (unknown dims count as 1).
pub fn elements(t: Type, bounds: &Bounds) -> f64 {
    let Some(tt) = t.as_tensor() else { return 1.0 };
    tt.shape()
        .iter()
        .map(|d| match d {
            Dim::Static(v) => *v as f64,
            Dim::Sym(_) => d.eval(bounds).unwrap_or(1) as f64,
            Dim::Unknown => 1.0,
        })
        .product()
}

/// Bytes of a tensor type with symbols at their bounds.
pub fn bytes(t: Type, bounds: &Bounds) -> f64 {
    elements(t, bounds) * t.dtype().map_or(0, |d| d.byte_size()) as f64
}

/// Which unit of an AI Core an op mostly uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    Cube,
    Vector,
}

/// FLOPs of one op (not counting nested ops) and the unit doing them.
pub fn op_flops(body: &Body, op: OpId, bounds: &Bounds) -> (f64, Unit) {
    let d = body.op(op);
    let out = d.results().first().map(|&r| body.value_type(r));
    let out_elems = out.map_or(0.0, |t| elements(t, bounds));
    let dims = |v: usize| -> Vec<f64> {
        d.operands()
            .get(v)
            .and_then(|&x| body.value_type(x).as_tensor())
            .map(|t| {
                t.shape()
                    .iter()
                    .map(|d| d.eval(bounds).unwrap_or(1) as f64)
                    .collect()
            })
            .unwrap_or_default()
    };
    match d.name.as_str() {
        "graph.conv2d" | "graph.conv_transpose2d" => {
            // 2 · out elements · (C_in / groups) · kH · kW
            let w = dims(1);
            let per: f64 = w.iter().skip(1).product();
            (2.0 * out_elems * per, Unit::Cube)
        }
        "graph.matmul" | "graph.batch_matmul" | "graph.gemm" => {
            let a = dims(0);
            let k = match d.name.as_str() {
                "graph.gemm" if d.attr("transA").and_then(|a| a.as_int()).unwrap_or(0) != 0 => {
                    a.first().copied().unwrap_or(1.0)
                }
                _ => a.last().copied().unwrap_or(1.0),
            };
            (2.0 * out_elems * k, Unit::Cube)
        }
        "graph.scaled_dot_product_attention" => {
            let q = dims(0);
            let s = dims(1);
            let l = q.iter().rev().nth(1).copied().unwrap_or(1.0);
            let e = q.last().copied().unwrap_or(1.0);
            let sk = s.iter().rev().nth(1).copied().unwrap_or(1.0);
            let batch: f64 = q.iter().rev().skip(2).product();
            (4.0 * batch * l * sk * e, Unit::Cube)
        }
        "graph.avg_pool2d" | "graph.max_pool2d" => {
            let k: f64 = crate::funcs::i64s(d.attr("kernel_shape"))
                .iter()
                .map(|&x| x as f64)
                .product();
            (out_elems * k.max(1.0), Unit::Vector)
        }
        _ => {
            let in_elems: f64 = d
                .operands()
                .iter()
                .map(|&v| elements(body.value_type(v), bounds))
                .fold(0.0, f64::max);
            (out_elems.max(in_elems), Unit::Vector)
        }
    }
}

/// Estimated duration of a task in microseconds on `engine`.
pub fn task_us(body: &Body, op: OpId, engine: &str, soc: &Soc, bounds: &Bounds) -> f64 {
    let d = body.op(op);
    // Bytes moved: the task's inputs and outputs (intermediates of a kernel stay on chip).
    let mut moved = 0.0;
    for &v in crate::funcs::inputs_of(body, op).iter().chain(d.results()) {
        moved += bytes(body.value_type(v), bounds);
    }
    let mut cube = 0.0;
    let mut vector = 0.0;
    let mut dtype = "f16".to_string();
    let mut add = |b: &Body, o: OpId| {
        let (f, u) = op_flops(b, o, bounds);
        match u {
            Unit::Cube => cube += f,
            Unit::Vector => vector += f,
        }
    };
    if d.name.as_str() == "graph.fused" || !d.regions().is_empty() {
        for_each_nested(body, op, &mut |b, o| add(b, o));
    } else {
        add(body, op);
    }
    if let Some(t) = d
        .results()
        .first()
        .and_then(|&r| body.value_type(r).dtype())
    {
        dtype = t.name().to_string();
    }
    let (launch, compute) = match engine {
        "AICore" => (
            soc.task_launch_us,
            cube / soc.cube_flops(&dtype) + vector / soc.vector_flops(&dtype),
        ),
        "VectorCore" => (
            soc.task_launch_us,
            (cube + vector) / soc.vector_flops(&dtype),
        ),
        "HostCPU" => (
            soc.host_launch_us,
            (cube + vector) / (soc.host_gflops * 1e9),
        ),
        _ => (
            soc.aicpu_launch_us,
            (cube + vector) / (soc.aicpu_gflops * 1e9),
        ),
    };
    let memory = moved / (soc.hbm_bandwidth_gbps * 1e9);
    launch + 1e6 * compute.max(memory)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_ir::DType;

    #[test]
    fn symbolic_elements_use_bounds() {
        let b: Bounds = [(ge_ir::Ident::new("B"), 8)].into_iter().collect();
        let t = Type::tensor(&[Dim::sym("B"), Dim::Static(4)], DType::F16);
        assert_eq!(elements(t, &b), 32.0);
        assert_eq!(bytes(t, &b), 64.0);
    }
}
