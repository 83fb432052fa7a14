//! The reference interpreter: runs any function at any dialect level by
//! calling each op's reference semantics (`OpDef::semantics`). It is the
//! oracle every pass is checked against, so it also checks that every result
//! has the type the IR declares (shape inference bugs surface here).

use crate::body::{Body, OpId, RegionId, ValueId};
use crate::dim::Dim;
use crate::ident::Ident;
use crate::location::Location;
use crate::module::Module;
use crate::opdef::Trait;
use crate::tensor::Tensor;
use crate::types::{DType, Type};
use std::collections::HashMap;
use std::sync::Arc;

/// An interpreter failure, with the op it happened at.
#[derive(Debug, Clone, PartialEq)]
pub struct InterpError {
    pub msg: String,
    pub loc: Location,
}

impl InterpError {
    pub fn new(msg: impl Into<String>, loc: Location) -> InterpError {
        InterpError {
            msg: msg.into(),
            loc,
        }
    }
    pub fn to_diagnostic(&self) -> crate::diagnostics::Diagnostic {
        crate::diagnostics::Diagnostic::at_loc(
            crate::diagnostics::Severity::Error,
            self.msg.clone(),
            self.loc,
        )
    }
}

/// What a semantics function sees: the op (its attributes through the op's
/// typed accessors, `Conv2d::attrs(cx)`) and a way to run its regions or call
/// functions (for control flow and calls).
pub struct SemCtx<'a> {
    pub body: &'a Body,
    pub op: OpId,
    env: &'a Env,
    interp: &'a Interpreter<'a>,
    symbols: &'a HashMap<Ident, i64>,
}

impl SemCtx<'_> {
    pub fn result_types(&self) -> Vec<Type> {
        self.body.result_types(self.op)
    }
    /// Result `i`'s dtype.
    pub fn result_dtype(&self, i: usize) -> Option<crate::types::DType> {
        self.body.value_type(self.body.result(self.op, i)).dtype()
    }
    /// Concrete shape of result `i` when its declared dims are static or bound symbols.
    pub fn result_shape(&self, i: usize) -> Option<Vec<usize>> {
        let t = self.body.value_type(self.body.result(self.op, i));
        t.as_tensor()?
            .shape()
            .iter()
            .map(|d| d.eval(self.symbols).and_then(|x| usize::try_from(x).ok()))
            .collect()
    }
    pub fn num_regions(&self) -> usize {
        self.body.op(self.op).regions().len()
    }
    /// Run region `i` of the op with entry-block arguments `args`; returns the
    /// operands of its terminator.
    pub fn run_region(&self, i: usize, args: Vec<Tensor>) -> Result<Vec<Tensor>, String> {
        let d = self.body.op(self.op);
        let r = *d
            .regions()
            .get(i)
            .ok_or_else(|| format!("op has no region #{i}"))?;
        let res = match d.inner.as_deref() {
            Some(inner) => self.interp.run_region(inner, r, args, &Env::new(inner)),
            None => self.interp.run_region(self.body, r, args, self.env),
        };
        res.map(|v| v.into_iter().map(|t| (*t).clone()).collect())
            .map_err(|e| e.msg)
    }
    /// Call a function of the module by name.
    pub fn call(&self, name: &str, args: Vec<Tensor>) -> Result<Vec<Tensor>, String> {
        self.interp.run_function(name, args).map_err(|e| e.msg)
    }
    /// The module being run (its resource blobs back `dense_resource` constants).
    pub fn module(&self) -> &Module {
        self.interp.module
    }
    /// Values of the symbolic dims bound so far in the enclosing region.
    pub fn symbols(&self) -> &HashMap<Ident, i64> {
        self.symbols
    }
}

/// Values computed so far (indexed by `ValueId` of one body).
#[derive(Clone)]
pub struct Env {
    vals: Vec<Option<Arc<Tensor>>>,
}

impl Env {
    fn new(body: &Body) -> Env {
        Env {
            vals: vec![None; body.value_capacity()],
        }
    }
    fn get(&self, v: ValueId) -> Option<&Arc<Tensor>> {
        self.vals.get(v.index()).and_then(|x| x.as_ref())
    }
    fn set(&mut self, v: ValueId, t: Arc<Tensor>) {
        if v.index() >= self.vals.len() {
            self.vals.resize(v.index() + 1, None);
        }
        self.vals[v.index()] = Some(t);
    }
}

pub struct Interpreter<'m> {
    pub module: &'m Module,
    /// Limit on executed ops (guards against runaway loops); `None` = unlimited.
    pub max_ops: Option<usize>,
    /// Stop with an error once this instant has passed (checked before each
    /// op, so a loop that never exits ends at the caller's deadline: the
    /// runtime's `--timeout` when an op such as `graph.while` runs here).
    pub deadline: Option<std::time::Instant>,
    /// Limit on nested function calls. The verifier rejects recursive calls;
    /// this is the second line of defence for IR that was not verified: a
    /// clear error instead of recursing until the stack cannot grow.
    pub max_call_depth: usize,
    /// Symbol values known before the arguments bind any (a runtime kernel
    /// whose shapes name symbols its own arguments do not carry, such as
    /// `data.iota {count = "S"}`).
    pub symbols: HashMap<Ident, i64>,
    executed: std::sync::atomic::AtomicUsize,
}

/// Default [`Interpreter::max_call_depth`].
pub const MAX_CALL_DEPTH: usize = 256;

/// How an error from exceeding the call depth starts; callers do not wrap it
/// once per level (it would repeat "in call to" hundreds of times).
const CALL_DEPTH_ERROR: &str = "call depth limit";

/// An error from inside an op (`context`: "'graph.if'", "in call to '@f'"),
/// except the call-depth error, which would otherwise grow by one prefix
/// per level of recursion.
fn op_error(context: &str, msg: String, loc: Location) -> InterpError {
    if msg.starts_with(CALL_DEPTH_ERROR) {
        InterpError::new(msg, loc)
    } else {
        InterpError::new(format!("{context}: {msg}"), loc)
    }
}

thread_local! {
    /// Calls active on this thread (every interpreter: one stack).
    static CALL_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One level of call depth, released on drop.
struct DepthGuard;

impl DepthGuard {
    fn enter(limit: usize) -> Option<DepthGuard> {
        CALL_DEPTH.with(|d| {
            let n = d.get();
            (n < limit).then(|| {
                d.set(n + 1);
                DepthGuard
            })
        })
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        CALL_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

impl<'m> Interpreter<'m> {
    /// Count one executed op against [`Self::max_ops`] and check
    /// [`Self::deadline`]: an error at `loc` once either is passed.
    fn count_op(&self, loc: Location) -> Result<(), InterpError> {
        if let Some(limit) = self.max_ops {
            let n = self
                .executed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n >= limit {
                return Err(InterpError::new(
                    format!("stopped after {limit} ops (the step budget, --max-steps: does a loop never exit?)"),
                    loc,
                ));
            }
        }
        if self
            .deadline
            .is_some_and(|t| std::time::Instant::now() >= t)
        {
            return Err(InterpError::new(
                "stopped at the run's deadline (--timeout)",
                loc,
            ));
        }
        Ok(())
    }

    pub fn new(module: &'m Module) -> Interpreter<'m> {
        Interpreter {
            module,
            max_ops: None,
            deadline: None,
            max_call_depth: MAX_CALL_DEPTH,
            symbols: HashMap::new(),
            executed: Default::default(),
        }
    }

    /// The function's input and output types.
    pub fn signature(&self, name: &str) -> Option<(&'static [Type], &'static [Type])> {
        let f = self.module.lookup_symbol(name)?;
        self.module
            .body()
            .op(f)
            .attr("function_type")?
            .as_type()?
            .as_function()
    }

    /// Run function `name` on `args`.
    pub fn run_function(&self, name: &str, args: Vec<Tensor>) -> Result<Vec<Tensor>, InterpError> {
        let mb = self.module.body();
        let f = self.module.lookup_symbol(name).ok_or_else(|| {
            InterpError::new(format!("no function named '@{name}'"), Location::unknown())
        })?;
        let fd = mb.op(f);
        let inner = fd
            .inner
            .as_deref()
            .ok_or_else(|| InterpError::new(format!("'@{name}' has no body"), fd.loc))?;
        let r = *fd
            .regions()
            .first()
            .ok_or_else(|| InterpError::new(format!("'@{name}' has no body"), fd.loc))?;
        if inner.entry_block(r).is_none() {
            return Err(InterpError::new(
                format!("'@{name}' is a declaration without a body"),
                fd.loc,
            ));
        }
        let Some(_depth) = DepthGuard::enter(self.max_call_depth) else {
            return Err(InterpError::new(
                format!(
                    "{CALL_DEPTH_ERROR} ({}) exceeded calling '@{name}': the calls recurse",
                    self.max_call_depth
                ),
                fd.loc,
            ));
        };
        let out = self.run_region(inner, r, args, &Env::new(inner))?;
        Ok(out
            .into_iter()
            .map(|t| Arc::try_unwrap(t).unwrap_or_else(|a| (*a).clone()))
            .collect())
    }

    /// Run a region's blocks from the entry block; `outer` supplies values
    /// defined outside the region (same body).
    fn run_region(
        &self,
        body: &Body,
        r: RegionId,
        args: Vec<Tensor>,
        outer: &Env,
    ) -> Result<Vec<Arc<Tensor>>, InterpError> {
        stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, || {
            self.run_region_inner(body, r, args, outer)
        })
    }

    fn run_region_inner(
        &self,
        body: &Body,
        r: RegionId,
        args: Vec<Tensor>,
        outer: &Env,
    ) -> Result<Vec<Arc<Tensor>>, InterpError> {
        let mut env = outer.clone();
        if env.vals.len() < body.value_capacity() {
            env.vals.resize(body.value_capacity(), None);
        }
        let region_loc = body
            .region(r)
            .parent
            .map(|p| body.op(p).loc)
            .unwrap_or_default();
        let mut block = body
            .entry_block(r)
            .ok_or_else(|| InterpError::new("region has no blocks", region_loc))?;
        let mut symbols: HashMap<Ident, i64> = self.symbols.clone();
        let mut incoming = args;
        loop {
            let bargs = body.block(block).args.clone();
            if bargs.len() != incoming.len() {
                return Err(InterpError::new(
                    format!(
                        "region expects {} arguments, got {}",
                        bargs.len(),
                        incoming.len()
                    ),
                    region_loc,
                ));
            }
            for (i, (&a, t)) in bargs.iter().zip(incoming.drain(..)).enumerate() {
                check_type(body.value_type(a), &t, &mut symbols).map_err(|m| {
                    InterpError::new(format!("argument #{i}: {m}"), body.value(a).loc)
                })?;
                env.set(a, Arc::new(t));
            }
            let mut next_block = None;
            for op in body.block_ops(block) {
                let d = body.op(op);
                let operands: Vec<Arc<Tensor>> = d
                    .operands()
                    .iter()
                    .map(|&v| {
                        env.get(v).cloned().ok_or_else(|| {
                            InterpError::new("operand has no value (not computed yet)", d.loc)
                        })
                    })
                    .collect::<Result<_, _>>()?;
                if d.has_trait(Trait::ReturnLike)
                    || (d.has_trait(Trait::Terminator)
                        && d.successors().is_empty()
                        && d.def.and_then(|x| x.semantics).is_none())
                {
                    return Ok(operands);
                }
                self.count_op(d.loc)?;
                if !d.successors().is_empty() {
                    // A branch: its semantics picks successor `k` and passes its operands on.
                    let sem = d.def.and_then(|x| x.semantics).ok_or_else(|| {
                        InterpError::new(format!("'{}' has no reference semantics", d.name), d.loc)
                    })?;
                    let refs: Vec<&Tensor> = operands.iter().map(|t| t.as_ref()).collect();
                    let cx = SemCtx {
                        body,
                        op,
                        env: &env,
                        interp: self,
                        symbols: &symbols,
                    };
                    let out = sem(&cx, &refs)
                        .map_err(|m| op_error(&format!("'{}'", d.name), m, d.loc))?;
                    let k = out.first().map(|t| t.get_i(0) as usize).unwrap_or(0);
                    let target = *d
                        .successors()
                        .get(k)
                        .ok_or_else(|| InterpError::new("branch to a missing successor", d.loc))?;
                    incoming = out.into_iter().skip(1).collect();
                    next_block = Some(target);
                    break;
                }
                for (i, &r) in d.results().iter().enumerate() {
                    let ty = body.value_type(r);
                    crate::budget::check_reference_tensor(
                        ty,
                        &symbols,
                        &format_args!("'{}' result #{i} of type '{ty}'", d.name),
                    )
                    .map_err(|m| InterpError::new(m, d.loc))?;
                }
                let results = self.eval_op(body, op, &operands, &env, &symbols)?;
                for (i, (&v, t)) in d.results().iter().zip(results).enumerate() {
                    check_type(body.value_type(v), &t, &mut symbols).map_err(|m| {
                        InterpError::new(format!("'{}' result #{i}: {m}", d.name), d.loc)
                    })?;
                    env.set(v, Arc::new(t));
                }
            }
            match next_block {
                Some(b) => block = b,
                None => return Ok(vec![]),
            }
        }
    }

    /// Run the one op `op` of `body` on `operands` (its result types may
    /// name [`Self::symbols`]; each result is checked against its type).
    /// For callers that evaluate a slice of a function rather than all of
    /// it (the runtime's host prefix of value symbols).
    pub fn run_op(
        &self,
        body: &Body,
        op: OpId,
        operands: Vec<Tensor>,
    ) -> Result<Vec<Tensor>, InterpError> {
        let d = body.op(op);
        self.count_op(d.loc)?;
        let operands: Vec<Arc<Tensor>> = operands.into_iter().map(Arc::new).collect();
        let mut symbols = self.symbols.clone();
        let results = self.eval_op(body, op, &operands, &Env::new(body), &symbols)?;
        for (i, (&v, t)) in d.results().iter().zip(&results).enumerate() {
            check_type(body.value_type(v), t, &mut symbols)
                .map_err(|m| InterpError::new(format!("'{}' result #{i}: {m}", d.name), d.loc))?;
        }
        Ok(results)
    }

    fn eval_op(
        &self,
        body: &Body,
        op: OpId,
        operands: &[Arc<Tensor>],
        env: &Env,
        symbols: &HashMap<Ident, i64>,
    ) -> Result<Vec<Tensor>, InterpError> {
        let d = body.op(op);
        if d.has_trait(Trait::CallLike) {
            let callee = d
                .attr("callee")
                .and_then(|a| a.as_symbol())
                .ok_or_else(|| InterpError::new("call without callee", d.loc))?;
            let args = operands.iter().map(|t| (**t).clone()).collect();
            return self
                .run_function(&callee, args)
                .map_err(|e| op_error(&format!("in call to '@{callee}'"), e.msg, d.loc));
        }
        let sem = d.def.and_then(|x| x.semantics).ok_or_else(|| {
            InterpError::new(format!("'{}' has no reference semantics", d.name), d.loc)
        })?;
        let refs: Vec<&Tensor> = operands.iter().map(|t| t.as_ref()).collect();
        let cx = SemCtx {
            body,
            op,
            env,
            interp: self,
            symbols,
        };
        let out = sem(&cx, &refs).map_err(|m| op_error(&format!("'{}'", d.name), m, d.loc))?;
        if out.len() != d.results().len() {
            return Err(InterpError::new(
                format!(
                    "'{}' semantics produced {} results for {} declared",
                    d.name,
                    out.len(),
                    d.results().len()
                ),
                d.loc,
            ));
        }
        Ok(out)
    }
}

/// Check a concrete tensor against a declared type, binding symbolic dims.
pub fn check_type(ty: Type, t: &Tensor, symbols: &mut HashMap<Ident, i64>) -> Result<(), String> {
    let Some(tt) = ty.as_tensor() else {
        return Ok(());
    };
    if tt.dtype != t.dtype {
        return Err(format!(
            "has element type {} but '{ty}' was declared",
            t.dtype
        ));
    }
    let Some(dims) = &tt.dims else { return Ok(()) };
    if dims.len() != t.shape.len() {
        return Err(format!("has shape {:?} but '{ty}' was declared", t.shape));
    }
    for (d, &n) in dims.iter().zip(&t.shape) {
        let n = n as i64;
        let ok = match d {
            Dim::Static(s) => *s == n,
            Dim::Unknown => true,
            Dim::Sym(s) => match s.expr() {
                crate::dim::DimExpr::Sym(name) => *symbols.entry(*name).or_insert(n) == n,
                e => e.eval(symbols).is_none_or(|v| v == n),
            },
        };
        if !ok {
            return Err(format!("has shape {:?} but '{ty}' was declared", t.shape));
        }
    }
    Ok(())
}

/// Fold an op by running its semantics on constant operands (used by
/// constant folding): `None` unless every operand is a known dense constant.
pub fn fold_with_semantics(
    body: &Body,
    op: OpId,
    consts: &[Option<crate::attributes::Attribute>],
) -> Option<Vec<Tensor>> {
    let sem = foldable(body, op)?;
    let tensors: Vec<Tensor> = consts
        .iter()
        .map(|c| {
            c.and_then(|a| a.as_dense())
                .and_then(|dn| Tensor::from_dense(dn).ok())
        })
        .collect::<Option<_>>()?;
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let out = run_semantics(body, op, sem, &refs)?;
    let tys = body.result_types(op);
    (out.len() == tys.len()
        && out.iter().zip(&tys).all(|(t, &ty)| {
            ty.as_tensor().is_some_and(|tt| {
                tt.static_shape()
                    .is_some_and(|s| s.iter().map(|&x| x as usize).eq(t.shape.iter().copied()))
                    && tt.dtype == t.dtype
            })
        }))
    .then_some(out)
}

/// Fold an elementwise op whose operands are all splat constants: its
/// semantics run on one element of each (rank-0 tensors) and each result is
/// a splat of its type — the elements [`fold_with_semantics`] computes one by
/// one, all equal, without materialising any tensor (folding batch norms
/// into splat filters took 3.7 s of ResNet-50's compile). `None` when the op
/// is not elementwise, an operand is not a one-element splat, a result would
/// not fit the memory budget expanded (so it folds exactly when
/// [`fold_with_semantics`] would), or the semantics do not give one element
/// of each result's dtype.
pub fn fold_splats(
    body: &Body,
    op: OpId,
    consts: &[Option<crate::attributes::Attribute>],
) -> Option<Vec<crate::attributes::DenseElements>> {
    use crate::attributes::DenseElements;
    if !body.op(op).has_trait(Trait::Elementwise) {
        return None;
    }
    // Folds exactly when the expanded fold would (within the memory budget).
    let sem = foldable(body, op)?;
    let tensors: Vec<Tensor> = consts
        .iter()
        .map(|c| {
            let dn = c.and_then(|a| a.as_dense())?;
            let w = dn.dtype().byte_size();
            // A splat, or a one-element constant (a scalar bound).
            if dn.bytes.len() != w || w == 0 {
                return None;
            }
            let one = DenseElements {
                ty: Type::tensor_static(&[], dn.dtype()),
                splat: false,
                bytes: dn.bytes.clone(),
            };
            Tensor::from_dense(&one).ok()
        })
        .collect::<Option<_>>()?;
    if tensors.is_empty() {
        return None;
    }
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let out = run_semantics(body, op, sem, &refs)?;
    let tys = body.result_types(op);
    if out.len() != tys.len() {
        return None;
    }
    out.iter()
        .zip(tys)
        .map(|(t, ty)| {
            let tt = ty.as_tensor()?;
            // An empty result folds to no elements, not to a splat.
            tt.num_elements().filter(|&n| n > 0)?;
            (t.len() == 1 && t.dtype == tt.dtype)
                .then(|| DenseElements::from_elements(ty, &[t.to_dense().get(0)]))
        })
        .collect()
}

/// Fold an op whose kernel is a byte copy ([`KernelFamily::Copy`]: a reshape,
/// squeeze, unsqueeze, a bitcast between dtypes of one width) of one dense
/// constant: its result is the operand's bytes under the result's type — a
/// splat stays a splat, nothing goes through `f64` tensors (a reshape of a
/// splat weight materialised every element: 30 % of Inception v1's compile).
/// `None` when the op is not such a copy, the operand is not dense, the result
/// type is not static with the operand's element count and element width, or
/// the op would not fold by its semantics either (so it folds exactly when
/// [`fold_with_semantics`] would).
///
/// [`KernelFamily::Copy`]: crate::interfaces::KernelFamily::Copy
pub fn fold_bytes(
    body: &Body,
    op: OpId,
    consts: &[Option<crate::attributes::Attribute>],
) -> Option<Vec<crate::attributes::DenseElements>> {
    use crate::attributes::DenseElements;
    use crate::interfaces::KernelFamily;
    let d = body.op(op);
    if d.def?.interface::<KernelFamily>() != Some(&KernelFamily::Copy) {
        return None;
    }
    foldable(body, op)?;
    let ([Some(c)], [r]) = (consts, d.results()) else {
        return None;
    };
    let dn = c.as_dense()?;
    let ty = body.value_type(*r);
    let (from, to) = (dn.ty.as_tensor()?, ty.as_tensor()?);
    // An empty result folds to no elements, not to a splat.
    let n = to.num_elements().filter(|&n| n > 0)?;
    let w = to.dtype.byte_size();
    let stored = if dn.splat {
        w
    } else {
        usize::try_from(n).ok()?.checked_mul(w)?
    };
    // A bitcast between whole-byte types only: sub-byte and bool storage is not
    // the bits the result reads.
    let whole = |t: DType| t != DType::I1 && t.bit_width() as usize == 8 * t.byte_size();
    let same = from.dtype == to.dtype || (whole(from.dtype) && whole(to.dtype));
    (same && from.num_elements()? == n && from.dtype.byte_size() == w && dn.bytes.len() == stored)
        .then(|| {
            vec![DenseElements {
                ty,
                splat: dn.splat,
                bytes: dn.bytes.clone(),
            }]
        })
}

/// The semantics of `op` if constant folding may run them: a pure op without
/// regions whose results, materialised, fit the memory budget.
fn foldable(body: &Body, op: OpId) -> Option<crate::opdef::SemanticsFn> {
    let d = body.op(op);
    let sem = d.def?.semantics?;
    if !d.has_trait(Trait::Pure) || !d.regions().is_empty() {
        return None;
    }
    let none = HashMap::new();
    for &r in d.results() {
        crate::budget::check_reference_tensor(body.value_type(r), &none, &"a folded value").ok()?;
    }
    Some(sem)
}

/// Run semantics `sem` of `op` on `args`, as constant folding does (no
/// regions, no symbols).
fn run_semantics(
    body: &Body,
    op: OpId,
    sem: crate::opdef::SemanticsFn,
    args: &[&Tensor],
) -> Option<Vec<Tensor>> {
    // No regions run during folding; a throwaway module backs the context.
    thread_local! {
        static EMPTY: Module = Module::new(crate::context::bare(), Location::unknown());
    }
    EMPTY.with(|m| {
        let interp = Interpreter::new(m);
        let env = Env::new(body);
        let symbols = HashMap::new();
        let cx = SemCtx {
            body,
            op,
            env: &env,
            interp: &interp,
            symbols: &symbols,
        };
        sem(&cx, args).ok()
    })
}
