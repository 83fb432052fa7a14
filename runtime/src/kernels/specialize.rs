//! The kernel of `graph.specialize` (hybrid execution, issue 15): reads the
//! value operands (axes, shapes, counts), builds the concrete op with those
//! attributes, infers and verifies it with the op's own definition
//! (`ge_dialects::graph::specialize::concrete_module`), checks its result
//! shapes against the memory the plan gave the results, and runs it with the
//! op's native kernel from the registry ([`super::compile`], the same path a
//! kernel function of the `.om` takes at load time). Concrete programs are
//! cached per (operand shapes, values), so a run with values seen before
//! costs a lookup. A concrete op without a native kernel runs on the
//! interpreter and is reported ([`Kernel::run_time_fallbacks`]).

use super::{compile, Kernel, KernelProgram, Par, Slot};
use crate::buffer::AlignedBuf;
use ge_dialects::graph::specialize::{concrete_module, Spec};
use ge_ir::body::{Body, OpId};
use ge_ir::module::Module;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Location, Type};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// Concrete programs kept per kernel (values beyond it evict everything:
/// a model that feeds ever new axes is not the case to optimise).
const CACHE_CAP: usize = 64;

/// A concrete op: its verified module, its program and result types.
struct Concrete {
    module: Module,
    prog: KernelProgram,
}

pub struct Specialize {
    spec: Spec,
    loc: Location,
    cache: Mutex<HashMap<String, Arc<Concrete>>>,
    fallbacks: Mutex<BTreeSet<String>>,
}

impl std::fmt::Debug for Specialize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Specialize({})", self.spec.def.name)
    }
}

impl Specialize {
    /// The kernel of `graph.specialize` op `o` (`None` when the op is not
    /// one the verifier accepts; the loader verified it already).
    pub fn from_op(b: &Body, o: OpId) -> Option<Specialize> {
        Some(Specialize {
            spec: Spec::of(b, o).ok()?,
            loc: b.op(o).loc,
            cache: Mutex::new(HashMap::new()),
            fallbacks: Mutex::new(BTreeSet::new()),
        })
    }

    /// The concrete program for these operand types and values.
    fn concrete(&self, data: &[Type], values: &[Tensor]) -> Result<Arc<Concrete>, String> {
        let key = format!(
            "{data:?}|{:?}",
            values
                .iter()
                .map(|t| (t.dtype, t.to_f64()))
                .collect::<Vec<_>>()
        );
        if let Some(c) = self.cache.lock().map_err(|_| "poisoned")?.get(&key) {
            return Ok(c.clone());
        }
        let vals: Vec<&Tensor> = values.iter().collect();
        let attrs = self.spec.concrete_attrs(&vals)?;
        let (module, _) = concrete_module(self.spec.def, &attrs, data, self.loc)?;
        let prog = compile(&module, "k")?;
        let c = Arc::new(Concrete { module, prog });
        let mut cache = self.cache.lock().map_err(|_| "poisoned")?;
        if cache.len() >= CACHE_CAP {
            cache.clear();
        }
        cache.insert(key, c.clone());
        Ok(c)
    }
}

/// A slot's elements as a reference tensor.
pub(super) fn tensor_of(s: &Slot) -> Result<Tensor, String> {
    // SAFETY: the executor gives every operand slot `s.bytes()` valid bytes
    // (the contract of `Step::run`).
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr as *const u8, s.bytes()) };
    ge_dialects::data::tensor_from_bytes(bytes, s.shape.clone(), s.dtype)
}

pub(super) fn static_type(s: &Slot) -> Type {
    let dims: Vec<Dim> = s.shape.iter().map(|&d| Dim::Static(d as i64)).collect();
    Type::tensor(&dims, s.dtype)
}

impl Kernel for Specialize {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let nd = self.spec.num_data;
        if ins.len() < nd {
            return Err(format!("{} operands, expected at least {nd}", ins.len()));
        }
        let data: Vec<Type> = ins[..nd].iter().map(|s| static_type(s)).collect();
        let values: Vec<Tensor> = ins[nd..]
            .iter()
            .map(|s| tensor_of(s))
            .collect::<Result<_, _>>()?;
        let c = self.concrete(&data, &values)?;
        let p = &c.prog;
        // The plan gave each result memory for its declared shape: the
        // concrete op must compute exactly that (else its kernel would write
        // past it).
        if p.results.len() != outs.len() {
            return Err(format!(
                "'{}' has {} results here, the model declares {}",
                self.spec.def.name,
                p.results.len(),
                outs.len()
            ));
        }
        for (i, (&r, o)) in p.results.iter().zip(outs).enumerate() {
            let got = p.types[r];
            if got != static_type(o) {
                return Err(format!(
                    "'{}' with these operand values gives result #{i} type '{got}', but the model declares '{}'",
                    self.spec.def.name,
                    static_type(o)
                ));
            }
        }
        if let Some(op) = &p.fallback {
            if let Ok(mut f) = self.fallbacks.lock() {
                f.insert(op.clone());
            }
            return interpret(&c, ins, outs, nd);
        }
        run_native(p, ins, outs, par)
    }

    /// The concrete op's own program decides (it falls back where its
    /// kernel does not take f64).
    fn f64_ok(&self) -> bool {
        true
    }

    fn run_time_fallbacks(&self) -> Vec<String> {
        self.fallbacks
            .lock()
            .map(|f| f.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// Run the concrete program's native steps on the operand and result
/// slots; values in between get memory of their own.
fn run_native(p: &KernelProgram, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
    let mut own: Vec<AlignedBuf> = vec![];
    let mut slots: Vec<Slot> = Vec::with_capacity(p.types.len());
    for (v, &t) in p.types.iter().enumerate() {
        let dtype = t.dtype().unwrap_or(DType::U8);
        let shape = super::concrete(t, &HashMap::new())?;
        let ptr = if let Some(i) = p.args.iter().position(|&a| a == v) {
            ins[i].ptr
        } else if let Some(i) = p.results.iter().position(|&r| r == v) {
            outs[i].ptr
        } else if let Some((_, b)) = p.consts.iter().find(|(c, _)| *c == v) {
            b.as_ptr() as *mut u8
        } else {
            let n = shape.iter().product::<usize>() * dtype.byte_size();
            let mut b = AlignedBuf::zeroed(n.max(1));
            let ptr = b.as_mut_ptr();
            own.push(b);
            ptr
        };
        slots.push(Slot { ptr, shape, dtype });
    }
    // Each slot is valid for its bytes: operands and results are the
    // executor's (their shapes are the concrete op's, checked above), the
    // rest were allocated here at their static size. The module was
    // verified, so the steps' operand and result shapes agree.
    for s in &p.steps {
        s.run(&slots, par)?;
    }
    drop(own);
    Ok(())
}

/// Run the concrete op on the interpreter and store its results.
fn interpret(c: &Concrete, ins: &[&Slot], outs: &[&Slot], nd: usize) -> Result<(), String> {
    let args: Vec<Tensor> = ins[..nd]
        .iter()
        .map(|s| tensor_of(s))
        .collect::<Result<_, _>>()?;
    let res = ge_ir::interp::Interpreter::new(&c.module)
        .run_function("k", args)
        .map_err(|e| e.msg)?;
    for (t, o) in res.iter().zip(outs) {
        let b = ge_dialects::data::tensor_to_bytes(t);
        if b.len() != o.bytes() {
            return Err(format!(
                "result has {} bytes, expected {}",
                b.len(),
                o.bytes()
            ));
        }
        // SAFETY: the result slot holds `o.bytes()` bytes (the executor's
        // contract), equal to `b.len()` as checked; `b` is fresh.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), o.ptr, b.len()) };
    }
    Ok(())
}
