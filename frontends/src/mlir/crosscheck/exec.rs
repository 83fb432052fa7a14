//! Lower an exported module with MLIR's own pipeline and run a function in
//! MLIR's execution engine through its C interface (memref descriptors).

use crate::mlir::DiagnosticSink;
use ge_ir::attributes::{read_element, write_element, Element};
use ge_ir::tensor::{Data, Tensor};
use ge_ir::DType;
use melior::ir::Module as MModule;
use melior::pass::PassManager;
use melior::utility::parse_pass_pipeline;
use melior::{Context, ExecutionEngine};

/// TOSA → linalg → loops → bufferized memrefs → LLVM (MLIR 22 pass names).
pub const PIPELINE: &str = "builtin.module(\
func.func(tosa-optional-decompositions,tosa-to-scf,tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),\
one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},\
convert-linalg-to-loops,buffer-deallocation-pipeline,convert-bufferization-to-memref,\
expand-strided-metadata,lower-affine,convert-scf-to-cf,func.func(convert-math-to-llvm),convert-math-to-libm,\
convert-to-llvm,reconcile-unrealized-casts)";

/// MLIR's C runner utilities (`memrefCopy` and friends, which bufferized
/// code calls): `GE_MLIR_RUNNER_UTILS`, else the LLVM 22 install the crate
/// was built against, else Debian's path.
pub fn runner_utils() -> Option<String> {
    let mut candidates = vec![];
    if let Ok(p) = std::env::var("GE_MLIR_RUNNER_UTILS") {
        candidates.push(p);
    }
    for prefix in [
        std::env::var("MLIR_SYS_220_PREFIX").ok(),
        option_env!("MLIR_SYS_220_PREFIX").map(str::to_string),
        Some("/usr/lib/llvm-22".to_string()),
    ]
    .into_iter()
    .flatten()
    {
        candidates.push(format!("{prefix}/lib/libmlir_c_runner_utils.so"));
    }
    candidates
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

/// Run [`PIPELINE`] over the module.
pub fn lower(ctx: &Context, m: &mut MModule) -> Result<(), String> {
    let sink = DiagnosticSink::attach(ctx);
    let pm = PassManager::new(ctx);
    let r = parse_pass_pipeline(pm.as_operation_pass_manager(), PIPELINE)
        .map_err(|e| format!("cannot parse the pass pipeline: {e}"))
        .and_then(|()| pm.run(m).map_err(|e| format!("lowering failed: {e}")));
    let msgs = sink.take();
    sink.detach(ctx);
    r.map_err(|e| {
        if msgs.is_empty() {
            e
        } else {
            format!("{e}:\n{}", msgs.join("\n"))
        }
    })
}

/// A strided memref descriptor as the C interface lays it out:
/// `{allocated, aligned, offset, sizes[rank], strides[rank]}` (all 8-byte words).
fn descriptor(data: *mut u8, shape: &[usize]) -> Vec<i64> {
    let mut d = vec![data as i64, data as i64, 0];
    d.extend(shape.iter().map(|&s| s as i64));
    let mut strides = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as i64;
    }
    d.extend(strides);
    d
}

fn to_bytes(t: &Tensor) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len() * t.dtype.byte_size().max(1));
    for i in 0..t.len() {
        let e = match &t.data {
            Data::F(_) => Element::Float(t.get_f(i)),
            Data::I(_) if t.dtype == DType::I1 => Element::Bool(t.get_i(i) != 0),
            Data::I(_) => Element::Int(t.get_i(i)),
        };
        write_element(t.dtype, e, &mut out);
    }
    out
}

/// Run `@name` (exported with `llvm.emit_c_interface`, already lowered) on
/// `inputs`; `outputs` gives each result's shape and dtype.
pub fn run(
    m: &MModule,
    name: &str,
    inputs: &[Tensor],
    outputs: &[(Vec<usize>, DType)],
) -> Result<Vec<Tensor>, String> {
    // melior hands each path's data pointer to MLIR, which reads it as a C
    // string: keep them NUL-terminated.
    let libs: Vec<String> = runner_utils()
        .into_iter()
        .map(|p| format!("{p}\0"))
        .collect();
    let libs: Vec<&str> = libs.iter().map(String::as_str).collect();
    let engine = ExecutionEngine::new(m, 2, &libs, false, false);
    // Input buffers and descriptors stay alive until the call returns.
    let mut buffers: Vec<Vec<u8>> = inputs.iter().map(to_bytes).collect();
    let mut descs: Vec<Vec<i64>> = buffers
        .iter_mut()
        .zip(inputs)
        .map(|(b, t)| descriptor(b.as_mut_ptr(), &t.shape))
        .collect();
    // The results: one struct of descriptors, passed by pointer first.
    let words: usize = outputs.iter().map(|(s, _)| 3 + 2 * s.len()).sum();
    let mut result = vec![0i64; words.max(1)];
    let mut result_ptr = result.as_mut_ptr();
    let mut desc_ptrs: Vec<*mut i64> = descs.iter_mut().map(|d| d.as_mut_ptr()).collect();
    let mut args: Vec<*mut ()> = Vec::with_capacity(1 + desc_ptrs.len());
    if !outputs.is_empty() {
        args.push(&mut result_ptr as *mut *mut i64 as *mut ());
    }
    for p in desc_ptrs.iter_mut() {
        args.push(p as *mut *mut i64 as *mut ());
    }
    let sym = format!("_mlir_ciface_{name}");
    if engine.lookup(&sym).is_null() {
        return Err(format!(
            "the execution engine has no '{sym}' (did the module lower to LLVM?)"
        ));
    }
    // SAFETY: `args` holds, for `_mlir_ciface_<name>(result*, desc*...)`, a
    // pointer to each argument: the result struct pointer and one pointer per
    // input descriptor, all alive for this call and laid out as MLIR's C
    // interface expects (see `descriptor`).
    // (MLIR's C API prefixes the name with `_mlir_ciface_` itself.)
    unsafe { engine.invoke_packed(name, &mut args) }
        .map_err(|e| format!("cannot invoke '{sym}': {e}"))?;
    let mut out = vec![];
    let mut at = 0;
    for (shape, dt) in outputs {
        let r = shape.len();
        let d = &result[at..at + 3 + 2 * r];
        at += 3 + 2 * r;
        let aligned = d[1] as *const u8;
        let offset = d[2];
        let sizes: Vec<usize> = d[3..3 + r].iter().map(|&x| x as usize).collect();
        let strides = &d[3 + r..3 + 2 * r];
        if &sizes != shape {
            return Err(format!(
                "result of shape {sizes:?}, but the function's type says {shape:?}"
            ));
        }
        if aligned.is_null() {
            return Err("the execution engine returned a null buffer".into());
        }
        let w = dt.byte_size().max(1);
        let n: usize = shape.iter().product();
        let mut idx = vec![0usize; r];
        let mut f = vec![];
        let mut ints = vec![];
        for _ in 0..n {
            let lin: i64 = offset
                + idx
                    .iter()
                    .zip(strides)
                    .map(|(&i, &s)| i as i64 * s)
                    .sum::<i64>();
            // SAFETY: the descriptor returned by the JIT-compiled function
            // describes a live allocation holding `sizes` elements at
            // `aligned + offset` with `strides` (in elements).
            let bytes = unsafe { std::slice::from_raw_parts(aligned.add(lin as usize * w), w) };
            match read_element(*dt, bytes) {
                Element::Float(x) => f.push(x),
                Element::Int(x) => ints.push(x),
                Element::UInt(x) => ints.push(x as i64),
                Element::Bool(b) => ints.push(b as i64),
            }
            for k in (0..r).rev() {
                idx[k] += 1;
                if idx[k] < shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        out.push(if dt.is_float() {
            Tensor::from_f64(shape.clone(), *dt, f)
        } else {
            Tensor::from_i64(shape.clone(), *dt, ints)
        });
    }
    drop(buffers);
    Ok(out)
}
