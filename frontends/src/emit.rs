//! Emitting IR from importers: ops are created by name through the IR
//! builder (attribute defaults, inferred result types), and an op whose
//! operands are all constants is folded on the spot with its reference
//! semantics, so shape computations of exported models (Shape → Gather →
//! Concat → Reshape) become constants that shape-like attributes can take.

use ge_ir::attributes::Attribute;
use ge_ir::body::{BlockId, Body, OpId, ValueId};
use ge_ir::builder::{constant_value, Builder, InsertPoint};
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Dim, Location, Type};

/// Operands or results larger than this many elements are not folded.
pub(crate) const FOLD_LIMIT: i64 = 1 << 22;

pub struct Emitter<'a> {
    pub b: Builder<'a>,
    /// Fold ops with constant operands (on by default).
    pub fold: bool,
}

impl<'a> Emitter<'a> {
    pub fn new(ctx: &'a Context, body: &'a mut Body, block: BlockId) -> Emitter<'a> {
        Emitter {
            b: Builder::at_end(ctx, body, block),
            fold: true,
        }
    }

    pub fn body(&self) -> &Body {
        self.b.body
    }

    pub fn set_loc(&mut self, loc: Location) {
        self.b.loc = loc;
    }

    pub fn set_block(&mut self, block: BlockId) {
        self.b.set_insertion_point(InsertPoint::End(block));
    }

    pub fn insertion_block(&self) -> Option<BlockId> {
        match self.b.ip {
            InsertPoint::End(b) => Some(b),
            _ => None,
        }
    }

    pub fn ty(&self, v: ValueId) -> Type {
        self.b.body.value_type(v)
    }

    pub fn dtype(&self, v: ValueId) -> Result<DType, String> {
        let t = self.ty(v);
        t.dtype()
            .ok_or_else(|| format!("expected a tensor, but got '{t}'"))
    }

    /// The dims of a ranked tensor value.
    pub fn dims(&self, v: ValueId) -> Result<Vec<Dim>, String> {
        let t = self.ty(v);
        t.as_tensor()
            .and_then(|tt| tt.dims.as_ref().map(|d| d.to_vec()))
            .ok_or_else(|| format!("expected a ranked tensor, but got '{t}'"))
    }

    pub fn rank(&self, v: ValueId) -> Result<usize, String> {
        Ok(self.dims(v)?.len())
    }

    /// The static shape of a value, if every dim is static.
    pub fn static_shape(&self, v: ValueId) -> Option<Vec<i64>> {
        self.ty(v).as_tensor().and_then(|t| t.static_shape())
    }

    /// The value of a constant (a `data.constant` with dense or external elements).
    pub fn const_value(&self, v: ValueId) -> Option<Tensor> {
        let a = constant_value(self.b.body, v)?;
        ge_dialects::data::constant::elements_tensor(a, None).ok()
    }

    /// Create an op; returns its results (folded to constants when possible).
    pub fn op_multi(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
        result_types: Option<Vec<Type>>,
    ) -> Result<Vec<ValueId>, String> {
        let op = self
            .b
            .create(name, operands, attrs, result_types, 0)
            .map_err(|e| format!("'{name}': {e}"))?;
        let results = self.b.body.op(op).results().to_vec();
        if self.fold {
            if let Some(folded) = self.try_fold(op) {
                return Ok(folded);
            }
        }
        Ok(results)
    }

    /// Create a single-result op (types inferred).
    pub fn op(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
    ) -> Result<ValueId, String> {
        let r = self.op_multi(name, operands, attrs, None)?;
        r.first()
            .copied()
            .ok_or_else(|| format!("'{name}' has no result"))
    }

    fn try_fold(&mut self, op: ge_ir::OpId) -> Option<Vec<ValueId>> {
        let body = &*self.b.body;
        let d = body.op(op);
        let mut consts = Vec::with_capacity(d.operands().len());
        for &v in d.operands() {
            let a = constant_value(body, v)?;
            a.as_dense()?;
            let n = body.value_type(v).as_tensor()?.num_elements()?;
            if n > FOLD_LIMIT {
                return None;
            }
            consts.push(Some(a));
        }
        for &r in d.results() {
            let n = body.value_type(r).as_tensor()?.num_elements()?;
            if n > FOLD_LIMIT {
                return None;
            }
        }
        let mut out = vec![];
        if let Some(ds) = ge_ir::interp::fold_bytes(body, op, &consts) {
            for d in ds {
                out.push(self.constant_attr(Attribute::dense(d)).ok()?);
            }
        } else {
            let tensors = ge_ir::interp::fold_with_semantics(body, op, &consts)?;
            for t in &tensors {
                out.push(self.constant(t).ok()?);
            }
        }
        // The folded op was created just now: nothing uses its results yet.
        self.b.body.erase_op(op);
        Some(out)
    }

    /// A constant holding `t`.
    pub fn constant(&mut self, t: &Tensor) -> Result<ValueId, String> {
        self.constant_attr(Attribute::dense(t.to_dense()))
    }

    /// A constant holding an elements attribute (dense or external).
    pub fn constant_attr(&mut self, a: Attribute) -> Result<ValueId, String> {
        let op = self
            .b
            .create("data.constant", &[], vec![("value", a)], None, 0)?;
        Ok(self.b.body.result(op, 0))
    }

    /// A rank-0 constant of `dtype`.
    pub fn scalar(&mut self, dtype: DType, x: f64) -> Result<ValueId, String> {
        self.constant(&Tensor::scalar(dtype, x))
    }

    /// A 1-D i64 constant.
    pub fn i64_vector(&mut self, v: &[i64]) -> Result<ValueId, String> {
        self.constant(&Tensor::from_i64(vec![v.len()], DType::I64, v.to_vec()))
    }

    /// A cumulative sum along `axis` (of static length `len`), as a product
    /// with a triangular 0/1 matrix along that axis (moved last and back):
    /// `exclusive` drops the diagonal, `reverse` sums from the end (ONNX
    /// CumSum and TensorFlow Cumsum alike).
    pub fn cumsum(
        &mut self,
        x: ValueId,
        axis: usize,
        len: usize,
        exclusive: bool,
        reverse: bool,
    ) -> Result<ValueId, String> {
        let rank = self.rank(x)?;
        let dt = self.dtype(x)?;
        let tri: Vec<i64> = (0..len * len)
            .map(|k| {
                let (i, j) = (k / len, k % len);
                (match (reverse, exclusive) {
                    (false, false) => i <= j,
                    (false, true) => i < j,
                    (true, false) => i >= j,
                    (true, true) => i > j,
                }) as i64
            })
            .collect();
        let t = self.constant(&Tensor::from_i64(vec![len, len], dt, tri))?;
        let mut perm: Vec<i64> = (0..rank as i64).filter(|&d| d != axis as i64).collect();
        perm.push(axis as i64);
        let last = axis + 1 == rank;
        let perm_attr = |p: &[i64]| vec![("perm", Attribute::i64_array(p))];
        let axes0 = || vec![("axes", Attribute::i64_array(&[0]))];
        let mut y = x;
        if !last {
            y = self.op("data.transpose", &[y], perm_attr(&perm))?;
        }
        if rank == 1 {
            y = self.op("data.unsqueeze", &[y], axes0())?;
        }
        y = self.op("graph.matmul", &[y, t], vec![])?;
        if rank == 1 {
            y = self.op("data.squeeze", &[y], axes0())?;
        }
        if last {
            return Ok(y);
        }
        let mut inv = vec![0i64; rank];
        for (k, &p) in perm.iter().enumerate() {
            inv[p as usize] = k as i64;
        }
        self.op("data.transpose", &[y], perm_attr(&inv))
    }
}

/// A new `graph.func` appended to `m`, with an empty entry block: the op, its
/// body and that block (every importer builds its function this way).
pub fn new_function<'m>(
    ctx: &Context,
    m: &'m mut ge_ir::Module,
    loc: Location,
) -> Result<(OpId, &'m mut Body, BlockId), crate::ImportError> {
    ge_dialects::graph::func::new_function(ctx, m, loc).map_err(crate::ImportError::invalid)
}

/// Name a new function's inputs and outputs (`ge.name` argument/result
/// attributes) after the model's, which are untrusted: a name that is empty,
/// too long, holds a control character or occurs twice is an error.
pub fn set_io_names(
    body: &mut Body,
    func: OpId,
    inputs: &[String],
    outputs: &[String],
) -> Result<(), crate::ImportError> {
    use ge_dialects::graph::func::check_io_names;
    check_io_names("graph input", inputs.iter().map(String::as_str))
        .and_then(|()| check_io_names("graph output", outputs.iter().map(String::as_str)))
        .map_err(crate::ImportError::invalid)?;
    ge_dialects::graph::func::set_io_names(body, func, inputs, outputs);
    Ok(())
}

/// Erase constants nothing uses (initializers of unused inputs, operands of
/// folded ops), repeatedly.
pub fn remove_unused_constants(body: &mut Body) {
    remove_unused(body, |d| d.name.as_str() == "data.constant");
}

/// Erase ops `erasable` accepts whose results nothing uses, repeatedly (an
/// erased op's operands may become unused).
pub fn remove_unused(body: &mut Body, erasable: impl Fn(&ge_ir::OpData) -> bool) {
    loop {
        let dead: Vec<ge_ir::OpId> = body
            .all_ops(ge_ir::WalkOrder::Post)
            .into_iter()
            .filter(|&o| {
                let d = body.op(o);
                d.is_alive() && erasable(d) && d.results().iter().all(|&r| !body.has_uses(r))
            })
            .collect();
        if dead.is_empty() {
            break;
        }
        for o in dead {
            body.erase_op(o);
        }
    }
}
