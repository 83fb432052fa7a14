//! The IR graph: arenas of operations, values, blocks and regions addressed by
//! small `Copy` ids, with use-def chains kept exact by every mutation.
//!
//! A [`Body`] holds everything inside one *isolated-from-above* op (a module, a
//! `graph.func`): ops of an isolated op nested inside live in that op's own
//! `Body` (`OpData::inner`). Values never cross that boundary, so ids are
//! meaningful only with their body — and the pass manager can hand disjoint
//! `&mut` bodies of sibling functions to parallel threads without locks.

use crate::attributes::{AttrDict, Attribute};
use crate::ident::Ident;
use crate::location::Location;
use crate::opdef::{OpDef, Trait};
use crate::types::Type;
use smallvec::SmallVec;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// An operation in a [`Body`].
    OpId
);
id_type!(
    /// An SSA value (op result or block argument) in a [`Body`].
    ValueId
);
id_type!(
    /// A block in a [`Body`].
    BlockId
);
id_type!(
    /// A region in a [`Body`].
    RegionId
);

/// Where a value comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ValueDef {
    Result { op: OpId, index: u32 },
    BlockArg { block: BlockId, index: u32 },
}

/// One use of a value: operand `operand` of `op`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Use {
    pub op: OpId,
    pub operand: u32,
}

#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
    /// Location of a block argument (results use their op's location).
    pub loc: Location,
    uses: SmallVec<[Use; 2]>,
}

#[derive(Clone, Debug)]
pub struct OpData {
    pub name: Ident,
    /// The registered definition, if any (cached at creation).
    pub def: Option<&'static OpDef>,
    pub loc: Location,
    pub attrs: AttrDict,
    /// The properties of an *unregistered* op (`<{...}>` in the generic form),
    /// kept opaque as MLIR does. A registered op has none: its inherent
    /// attributes (those its definition declares) live in `attrs` and are its
    /// properties (see [`OpDef::is_inherent_attr`]).
    pub props: Option<Attribute>,
    operands: SmallVec<[ValueId; 2]>,
    results: SmallVec<[ValueId; 1]>,
    /// Regions; they live in `inner` when the op is isolated from above.
    regions: Box<[RegionId]>,
    successors: Box<[BlockId]>,
    parent: Option<BlockId>,
    prev: Option<OpId>,
    next: Option<OpId>,
    alive: bool,
    /// The arena of an isolated-from-above op's regions.
    pub inner: Option<Box<Body>>,
}

impl OpData {
    pub fn operands(&self) -> &[ValueId] {
        &self.operands
    }
    pub fn results(&self) -> &[ValueId] {
        &self.results
    }
    pub fn regions(&self) -> &[RegionId] {
        &self.regions
    }
    pub fn successors(&self) -> &[BlockId] {
        &self.successors
    }
    pub fn parent_block(&self) -> Option<BlockId> {
        self.parent
    }
    pub fn is_alive(&self) -> bool {
        self.alive
    }
    pub fn attr(&self, name: &str) -> Option<Attribute> {
        self.attrs.get(name)
    }
    pub fn has_trait(&self, t: Trait) -> bool {
        self.def.is_some_and(|d| d.has_trait(t))
    }
    pub fn is_isolated(&self) -> bool {
        self.inner.is_some()
    }
    /// The body holding this op's regions: its own if isolated, else `outer`.
    pub fn region_body<'a>(&'a self, outer: &'a Body) -> &'a Body {
        self.inner.as_deref().unwrap_or(outer)
    }
}

#[derive(Clone, Debug, Default)]
pub struct BlockData {
    pub args: Vec<ValueId>,
    first: Option<OpId>,
    last: Option<OpId>,
    parent: Option<RegionId>,
}

#[derive(Clone, Debug, Default)]
pub struct RegionData {
    pub blocks: Vec<BlockId>,
    /// The op owning this region (`None` for the root region of a body: its
    /// owner lives in the enclosing body).
    pub parent: Option<OpId>,
}

/// What to create: the generic shape of an op (MLIR's `OperationState`).
#[derive(Clone, Debug)]
pub struct OpState {
    pub name: Ident,
    pub def: Option<&'static OpDef>,
    pub loc: Location,
    pub operands: Vec<ValueId>,
    pub result_types: Vec<Type>,
    pub attrs: AttrDict,
    /// Properties of an unregistered op (see [`OpData::props`]).
    pub props: Option<Attribute>,
    pub num_regions: usize,
    pub successors: Vec<BlockId>,
}

impl OpState {
    pub fn new(name: &str, loc: Location) -> OpState {
        OpState {
            name: Ident::new(name),
            def: None,
            loc,
            operands: vec![],
            result_types: vec![],
            attrs: AttrDict::empty(),
            props: None,
            num_regions: 0,
            successors: vec![],
        }
    }

    /// The shape of an existing op without its operands, results, regions
    /// and successors: name, definition, location, attributes, properties.
    /// Every copy of an op starts here, so no part of it is forgotten.
    pub fn like(d: &OpData) -> OpState {
        OpState {
            name: d.name,
            def: d.def,
            loc: d.loc,
            operands: vec![],
            result_types: vec![],
            attrs: d.attrs,
            props: d.props,
            num_regions: 0,
            successors: vec![],
        }
    }
}

/// Arena of everything inside one isolated-from-above op.
#[derive(Debug, Default)]
pub struct Body {
    ops: Vec<OpData>,
    values: Vec<ValueData>,
    blocks: Vec<BlockData>,
    regions: Vec<RegionData>,
    live_ops: usize,
}

impl Clone for Body {
    /// Nested isolated ops' bodies are cloned with their op: one level of
    /// recursion per nesting level, off the thread's stack limit.
    fn clone(&self) -> Body {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || Body {
            ops: self.ops.clone(),
            values: self.values.clone(),
            blocks: self.blocks.clone(),
            regions: self.regions.clone(),
            live_ops: self.live_ops,
        })
    }
}

impl Drop for Body {
    /// Nested isolated ops own nested bodies; dropping them recursively would
    /// overflow the stack for deeply nested IR, so they are unnested onto a
    /// heap stack and dropped one at a time.
    fn drop(&mut self) {
        let mut stack: Vec<Box<Body>> =
            self.ops.iter_mut().filter_map(|o| o.inner.take()).collect();
        while let Some(mut b) = stack.pop() {
            stack.extend(b.ops.iter_mut().filter_map(|o| o.inner.take()));
        }
    }
}

impl Body {
    pub fn new() -> Body {
        Body::default()
    }

    // ---- reading ---------------------------------------------------------

    pub fn op(&self, op: OpId) -> &OpData {
        &self.ops[op.index()]
    }
    pub fn op_mut(&mut self, op: OpId) -> &mut OpData {
        &mut self.ops[op.index()]
    }
    pub fn value(&self, v: ValueId) -> &ValueData {
        &self.values[v.index()]
    }
    pub fn block(&self, b: BlockId) -> &BlockData {
        &self.blocks[b.index()]
    }
    pub fn region(&self, r: RegionId) -> &RegionData {
        &self.regions[r.index()]
    }
    /// Number of live ops directly in this body (not counting nested bodies).
    pub fn num_ops(&self) -> usize {
        self.live_ops
    }
    /// Upper bound on op ids (for side tables indexed by `OpId`).
    pub fn op_capacity(&self) -> usize {
        self.ops.len()
    }
    pub fn value_capacity(&self) -> usize {
        self.values.len()
    }
    pub fn block_capacity(&self) -> usize {
        self.blocks.len()
    }
    /// All op slots with their ids, for parallel iteration by the pass manager.
    pub fn ops_mut(&mut self) -> &mut [OpData] {
        &mut self.ops
    }

    pub fn value_type(&self, v: ValueId) -> Type {
        self.values[v.index()].ty
    }
    pub fn set_value_loc(&mut self, v: ValueId, loc: Location) {
        self.values[v.index()].loc = loc;
    }
    pub fn set_value_type(&mut self, v: ValueId, ty: Type) {
        self.values[v.index()].ty = ty;
    }
    pub fn operand(&self, op: OpId, i: usize) -> ValueId {
        self.ops[op.index()].operands[i]
    }
    pub fn result(&self, op: OpId, i: usize) -> ValueId {
        self.ops[op.index()].results[i]
    }
    pub fn operand_types(&self, op: OpId) -> Vec<Type> {
        self.op(op)
            .operands
            .iter()
            .map(|&v| self.value_type(v))
            .collect()
    }
    pub fn result_types(&self, op: OpId) -> Vec<Type> {
        self.op(op)
            .results
            .iter()
            .map(|&v| self.value_type(v))
            .collect()
    }
    pub fn uses(&self, v: ValueId) -> &[Use] {
        &self.values[v.index()].uses
    }
    pub fn has_uses(&self, v: ValueId) -> bool {
        !self.values[v.index()].uses.is_empty()
    }
    /// Distinct ops using `v`, in use order.
    pub fn users(&self, v: ValueId) -> Vec<OpId> {
        let mut out: Vec<OpId> = Vec::new();
        for u in self.uses(v) {
            if !out.contains(&u.op) {
                out.push(u.op);
            }
        }
        out
    }
    /// The op defining `v`, if it is an op result.
    pub fn defining_op(&self, v: ValueId) -> Option<OpId> {
        match self.values[v.index()].def {
            ValueDef::Result { op, .. } => Some(op),
            ValueDef::BlockArg { .. } => None,
        }
    }
    /// Whether every result of `op` is unused.
    pub fn results_unused(&self, op: OpId) -> bool {
        self.op(op).results.iter().all(|&r| !self.has_uses(r))
    }

    pub fn block_ops(&self, block: BlockId) -> BlockOps<'_> {
        BlockOps {
            body: self,
            next: self.blocks[block.index()].first,
        }
    }
    pub fn block_first_op(&self, block: BlockId) -> Option<OpId> {
        self.blocks[block.index()].first
    }
    pub fn block_last_op(&self, block: BlockId) -> Option<OpId> {
        self.blocks[block.index()].last
    }
    pub fn block_parent(&self, block: BlockId) -> Option<RegionId> {
        self.blocks[block.index()].parent
    }
    pub fn next_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op.index()].next
    }
    pub fn prev_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op.index()].prev
    }
    /// The op owning the block containing `op` (within this body).
    pub fn parent_op(&self, op: OpId) -> Option<OpId> {
        let b = self.ops[op.index()].parent?;
        self.regions[self.blocks[b.index()].parent?.index()].parent
    }
    pub fn block_parent_op(&self, block: BlockId) -> Option<OpId> {
        self.regions[self.blocks[block.index()].parent?.index()].parent
    }
    /// The regions of `op` and the body they live in.
    pub fn op_regions(&self, op: OpId) -> (&Body, &[RegionId]) {
        let d = self.op(op);
        (d.region_body(self), &d.regions)
    }
    /// Entry block of a region.
    pub fn entry_block(&self, r: RegionId) -> Option<BlockId> {
        self.regions[r.index()].blocks.first().copied()
    }
    /// Whether `ancestor` encloses `op` (or is `op`) within this body.
    pub fn is_ancestor(&self, ancestor: OpId, mut op: OpId) -> bool {
        loop {
            if op == ancestor {
                return true;
            }
            match self.parent_op(op) {
                Some(p) => op = p,
                None => return false,
            }
        }
    }
    /// Index of `op` within its block (O(block length)).
    pub fn position_in_block(&self, op: OpId) -> usize {
        let mut n = 0;
        let mut cur = self.ops[op.index()].prev;
        while let Some(p) = cur {
            n += 1;
            cur = self.ops[p.index()].prev;
        }
        n
    }

    // ---- creation ----------------------------------------------------------

    /// Create a detached op. Regions are created empty (in a new inner body
    /// when the definition says the op is isolated from above).
    pub fn create_op(&mut self, st: OpState) -> OpId {
        let id = OpId(self.ops.len() as u32);
        let isolated = st.num_regions > 0
            && st
                .def
                .is_some_and(|d| d.has_trait(Trait::IsolatedFromAbove));
        let mut inner = isolated.then(|| Box::new(Body::new()));
        let regions: Box<[RegionId]> = (0..st.num_regions)
            .map(|_| match inner.as_deref_mut() {
                Some(b) => b.new_region(None),
                None => self.new_region(Some(id)),
            })
            .collect();
        let results = st
            .result_types
            .iter()
            .enumerate()
            .map(|(i, &ty)| {
                self.new_value(
                    ty,
                    ValueDef::Result {
                        op: id,
                        index: i as u32,
                    },
                    Location::unknown(),
                )
            })
            .collect();
        for (i, &v) in st.operands.iter().enumerate() {
            self.values[v.index()].uses.push(Use {
                op: id,
                operand: i as u32,
            });
        }
        self.ops.push(OpData {
            name: st.name,
            def: st.def,
            loc: st.loc,
            attrs: st.attrs,
            props: st.props,
            operands: st.operands.into(),
            results,
            regions,
            successors: st.successors.into(),
            parent: None,
            prev: None,
            next: None,
            alive: true,
            inner,
        });
        self.live_ops += 1;
        id
    }

    /// Create a detached op adopting already-built regions: regions of this
    /// body, or the root regions of `inner` for an isolated op.
    pub fn create_op_with_regions(
        &mut self,
        mut st: OpState,
        regions: Vec<RegionId>,
        inner: Option<Box<Body>>,
    ) -> OpId {
        st.num_regions = 0;
        let id = self.create_op(st);
        if inner.is_none() {
            for &r in &regions {
                self.regions[r.index()].parent = Some(id);
            }
        }
        let d = &mut self.ops[id.index()];
        d.regions = regions.into();
        d.inner = inner;
        id
    }

    fn new_value(&mut self, ty: Type, def: ValueDef, loc: Location) -> ValueId {
        let id = ValueId(self.values.len() as u32);
        self.values.push(ValueData {
            ty,
            def,
            loc,
            uses: SmallVec::new(),
        });
        id
    }

    /// A new empty region owned by `parent` (or a body root when `None`).
    pub fn new_region(&mut self, parent: Option<OpId>) -> RegionId {
        let id = RegionId(self.regions.len() as u32);
        self.regions.push(RegionData {
            blocks: vec![],
            parent,
        });
        id
    }

    /// Append a new block to `region`.
    pub fn add_block(&mut self, region: RegionId) -> BlockId {
        let b = self.new_block();
        self.attach_block(region, b);
        b
    }

    /// A block not yet in any region (the parser creates forward-referenced blocks this way).
    pub fn new_block(&mut self) -> BlockId {
        let id = BlockId(self.blocks.len() as u32);
        self.blocks.push(BlockData::default());
        id
    }

    pub fn attach_block(&mut self, region: RegionId, b: BlockId) {
        self.blocks[b.index()].parent = Some(region);
        self.regions[region.index()].blocks.push(b);
    }

    pub fn add_block_arg(&mut self, block: BlockId, ty: Type, loc: Location) -> ValueId {
        let index = self.blocks[block.index()].args.len() as u32;
        let v = self.new_value(ty, ValueDef::BlockArg { block, index }, loc);
        self.blocks[block.index()].args.push(v);
        v
    }

    // ---- placement -------------------------------------------------------

    pub fn append_op(&mut self, block: BlockId, op: OpId) {
        let last = self.blocks[block.index()].last;
        self.link(op, block, last, None);
    }

    pub fn insert_op_before(&mut self, before: OpId, op: OpId) {
        let d = &self.ops[before.index()];
        let (block, prev) = (d.parent.expect("anchor op is in a block"), d.prev);
        self.link(op, block, prev, Some(before));
    }

    pub fn insert_op_after(&mut self, after: OpId, op: OpId) {
        let d = &self.ops[after.index()];
        let (block, next) = (d.parent.expect("anchor op is in a block"), d.next);
        self.link(op, block, Some(after), next);
    }

    pub fn prepend_op(&mut self, block: BlockId, op: OpId) {
        let first = self.blocks[block.index()].first;
        self.link(op, block, None, first);
    }

    fn link(&mut self, op: OpId, block: BlockId, prev: Option<OpId>, next: Option<OpId>) {
        debug_assert!(self.ops[op.index()].parent.is_none(), "op already placed");
        {
            let d = &mut self.ops[op.index()];
            d.parent = Some(block);
            d.prev = prev;
            d.next = next;
        }
        match prev {
            Some(p) => self.ops[p.index()].next = Some(op),
            None => self.blocks[block.index()].first = Some(op),
        }
        match next {
            Some(n) => self.ops[n.index()].prev = Some(op),
            None => self.blocks[block.index()].last = Some(op),
        }
    }

    /// Unlink `op` from its block, keeping it alive (to be re-inserted).
    pub fn detach_op(&mut self, op: OpId) {
        let Some(block) = self.ops[op.index()].parent else {
            return;
        };
        let (prev, next) = (self.ops[op.index()].prev, self.ops[op.index()].next);
        match prev {
            Some(p) => self.ops[p.index()].next = next,
            None => self.blocks[block.index()].first = next,
        }
        match next {
            Some(n) => self.ops[n.index()].prev = prev,
            None => self.blocks[block.index()].last = prev,
        }
        let d = &mut self.ops[op.index()];
        d.parent = None;
        d.prev = None;
        d.next = None;
    }

    pub fn move_op_before(&mut self, before: OpId, op: OpId) {
        self.detach_op(op);
        self.insert_op_before(before, op);
    }

    // ---- mutation ----------------------------------------------------------

    pub fn set_operand(&mut self, op: OpId, i: usize, v: ValueId) {
        let old = self.ops[op.index()].operands[i];
        if old == v {
            return;
        }
        self.remove_use(old, op, i as u32);
        self.ops[op.index()].operands[i] = v;
        self.values[v.index()].uses.push(Use {
            op,
            operand: i as u32,
        });
    }

    /// Replace the whole operand list.
    pub fn set_operands(&mut self, op: OpId, vs: &[ValueId]) {
        let old: SmallVec<[ValueId; 2]> = self.ops[op.index()].operands.clone();
        for (i, &v) in old.iter().enumerate() {
            self.remove_use(v, op, i as u32);
        }
        for (i, &v) in vs.iter().enumerate() {
            self.values[v.index()].uses.push(Use {
                op,
                operand: i as u32,
            });
        }
        self.ops[op.index()].operands = vs.into();
    }

    fn remove_use(&mut self, v: ValueId, op: OpId, operand: u32) {
        let uses = &mut self.values[v.index()].uses;
        if let Some(pos) = uses.iter().position(|u| u.op == op && u.operand == operand) {
            uses.swap_remove(pos);
        }
    }

    /// Point every use of `old` at `new`. O(uses of `old`).
    pub fn replace_all_uses(&mut self, old: ValueId, new: ValueId) {
        if old == new {
            return;
        }
        let uses = std::mem::take(&mut self.values[old.index()].uses);
        for u in &uses {
            self.ops[u.op.index()].operands[u.operand as usize] = new;
        }
        self.values[new.index()].uses.extend(uses);
    }

    /// Replace uses of `old` for which `pred` holds.
    pub fn replace_uses_if(
        &mut self,
        old: ValueId,
        new: ValueId,
        mut pred: impl FnMut(&Body, Use) -> bool,
    ) {
        let uses: Vec<Use> = self.values[old.index()].uses.to_vec();
        for u in uses {
            if pred(self, u) {
                self.set_operand(u.op, u.operand as usize, new);
            }
        }
    }

    /// Replace every result of `op` with `new_values` (same count), then erase `op`.
    pub fn replace_op(&mut self, op: OpId, new_values: &[ValueId]) {
        let results: SmallVec<[ValueId; 1]> = self.ops[op.index()].results.clone();
        assert_eq!(results.len(), new_values.len(), "replace_op arity");
        for (&r, &n) in results.iter().zip(new_values) {
            self.replace_all_uses(r, n);
        }
        self.erase_op(op);
    }

    pub fn set_attr(&mut self, op: OpId, name: &str, value: Attribute) {
        let d = &mut self.ops[op.index()];
        d.attrs = d.attrs.with(Ident::new(name), value);
    }
    pub fn remove_attr(&mut self, op: OpId, name: &str) {
        let d = &mut self.ops[op.index()];
        d.attrs = d.attrs.without(name);
    }

    pub fn set_successors(&mut self, op: OpId, succ: Vec<BlockId>) {
        self.ops[op.index()].successors = succ.into();
    }

    /// Erase `op` and everything nested in it. Its results must be unused
    /// (uses by ops nested inside it are fine).
    pub fn erase_op(&mut self, op: OpId) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.erase_op_rec(op));
    }

    fn erase_op_rec(&mut self, op: OpId) {
        if !self.ops[op.index()].alive {
            return;
        }
        self.detach_op(op);
        if self.ops[op.index()].inner.is_none() {
            let regions = self.ops[op.index()].regions.clone();
            for r in regions.iter() {
                self.clear_region(*r);
            }
        }
        let operands: SmallVec<[ValueId; 2]> = std::mem::take(&mut self.ops[op.index()].operands);
        for (i, v) in operands.iter().enumerate() {
            self.remove_use(*v, op, i as u32);
        }
        let d = &mut self.ops[op.index()];
        d.alive = false;
        d.inner = None;
        d.regions = Box::new([]);
        self.live_ops -= 1;
    }

    /// Erase every op and block of a region (the region itself stays, empty).
    pub fn clear_region(&mut self, r: RegionId) {
        let blocks = std::mem::take(&mut self.regions[r.index()].blocks);
        // Drop all uses first so ops can be erased in any order.
        for &b in &blocks {
            let ops: Vec<OpId> = self.block_ops(b).collect();
            for &o in ops.iter().rev() {
                self.erase_op_rec(o);
            }
            self.blocks[b.index()].parent = None;
        }
    }

    /// Erase a block: its ops and arguments. Arguments must be unused outside it.
    pub fn erase_block(&mut self, b: BlockId) {
        let ops: Vec<OpId> = self.block_ops(b).collect();
        for &o in ops.iter().rev() {
            self.erase_op(o);
        }
        if let Some(r) = self.blocks[b.index()].parent.take() {
            self.regions[r.index()].blocks.retain(|&x| x != b);
        }
    }

    /// Take the inner body of an isolated op (to work on it alone).
    pub fn take_inner(&mut self, op: OpId) -> Option<Box<Body>> {
        self.ops[op.index()].inner.take()
    }
    pub fn put_inner(&mut self, op: OpId, inner: Box<Body>) {
        self.ops[op.index()].inner = Some(inner);
    }
    pub fn inner(&self, op: OpId) -> Option<&Body> {
        self.ops[op.index()].inner.as_deref()
    }
    pub fn inner_mut(&mut self, op: OpId) -> Option<&mut Body> {
        self.ops[op.index()].inner.as_deref_mut()
    }

    /// The root regions of this body (regions whose owner is the enclosing op).
    pub fn root_regions(&self) -> Vec<RegionId> {
        (0..self.regions.len() as u32)
            .map(RegionId)
            .filter(|r| self.regions[r.index()].parent.is_none())
            .collect()
    }

    // ---- walking ---------------------------------------------------------

    /// Visit `op` and every op nested in it in this body (not inside nested
    /// isolated bodies), pre- or post-order.
    pub fn walk(&self, op: OpId, order: WalkOrder, f: &mut dyn FnMut(OpId)) {
        walk_ops(vec![(self, op)], false, order, &mut |_, o| f(o));
    }

    /// Values defined outside `op` that ops nested in its (non-isolated)
    /// regions use — what a region of `graph.if`/`graph.while` captures from
    /// the enclosing function — in first-use order, without repeats. The
    /// lowering passes them to a control-flow task as inputs after its
    /// operands; the runtime's control-flow kernel reads them in that order.
    pub fn captured_values(&self, op: OpId) -> Vec<ValueId> {
        let mut out: Vec<ValueId> = vec![];
        if self.op(op).inner.is_some() || self.op(op).regions().is_empty() {
            return out;
        }
        let mut inside = std::collections::HashSet::new();
        self.walk(op, WalkOrder::Pre, &mut |o| {
            inside.insert(o);
        });
        let mut seen = std::collections::HashSet::new();
        self.walk(op, WalkOrder::Pre, &mut |o| {
            if o == op {
                return;
            }
            for &v in self.op(o).operands() {
                let defined_inside = match self.value(v).def {
                    ValueDef::Result { op: d, .. } => inside.contains(&d),
                    ValueDef::BlockArg { block, .. } => self
                        .block_parent_op(block)
                        .is_some_and(|p| inside.contains(&p)),
                };
                if !defined_inside && seen.insert(v) {
                    out.push(v);
                }
            }
        });
        out
    }

    /// [`Body::walk`] for every op of region `r`.
    pub fn walk_region(&self, r: RegionId, order: WalkOrder, f: &mut dyn FnMut(OpId)) {
        walk_ops(self.region_ops(r), false, order, &mut |_, o| f(o));
    }

    /// Every op in this body, in textual pre-order (root regions first).
    pub fn all_ops(&self, order: WalkOrder) -> Vec<OpId> {
        let mut out = Vec::with_capacity(self.live_ops);
        for r in self.root_regions() {
            self.walk_region(r, order, &mut |o| out.push(o));
        }
        out
    }

    /// Visit every op here and in nested isolated bodies, with the body it lives in.
    pub fn walk_deep(&self, order: WalkOrder, f: &mut dyn FnMut(&Body, OpId)) {
        let mut ops = vec![];
        for r in self.root_regions() {
            ops.extend(self.region_ops(r));
        }
        walk_ops(ops, true, order, f);
    }

    /// The ops of region `r`, in order, with this body.
    fn region_ops(&self, r: RegionId) -> Vec<(&Body, OpId)> {
        let mut out = vec![];
        for &b in &self.regions[r.index()].blocks {
            out.extend(self.block_ops(b).map(|o| (self, o)));
        }
        out
    }

    /// Total live ops here and in nested bodies.
    pub fn deep_op_count(&self) -> usize {
        let mut n = 0;
        let mut stack = vec![self];
        while let Some(b) = stack.pop() {
            n += b.live_ops;
            stack.extend(
                b.ops
                    .iter()
                    .filter(|o| o.alive)
                    .filter_map(|o| o.inner.as_deref()),
            );
        }
        n
    }
}

/// Where the ids of one body start inside another it is appended to (see
/// [`Body::append_shifted`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdShift {
    pub ops: u32,
    pub values: u32,
    pub blocks: u32,
    pub regions: u32,
}

impl IdShift {
    pub fn op(self, o: OpId) -> OpId {
        OpId(o.0 + self.ops)
    }
}

impl Body {
    /// The ids the next op, value, block and region of this body would get.
    pub fn next_ids(&self) -> IdShift {
        IdShift {
            ops: self.ops.len() as u32,
            values: self.values.len() as u32,
            blocks: self.blocks.len() as u32,
            regions: self.regions.len() as u32,
        }
    }

    /// Add `by` to every id inside this body, so that it can be appended to
    /// a body whose [`Body::next_ids`] are `by` (nested isolated bodies keep
    /// their own ids). Bodies parsed apart (on other threads) are joined so.
    pub fn shift_ids(&mut self, by: IdShift) {
        let (o, v, b, r) = (by.ops, by.values, by.blocks, by.regions);
        let op = |x: &mut OpId| x.0 += o;
        for d in &mut self.ops {
            d.operands.iter_mut().for_each(|x| x.0 += v);
            d.results.iter_mut().for_each(|x| x.0 += v);
            // An isolated op's regions are its own body's.
            if d.inner.is_none() {
                d.regions.iter_mut().for_each(|x| x.0 += r);
            }
            d.successors.iter_mut().for_each(|x| x.0 += b);
            d.parent.iter_mut().for_each(|x| x.0 += b);
            d.prev.iter_mut().for_each(op);
            d.next.iter_mut().for_each(op);
        }
        for val in &mut self.values {
            match &mut val.def {
                ValueDef::Result { op: x, .. } => x.0 += o,
                ValueDef::BlockArg { block, .. } => block.0 += b,
            }
            val.uses.iter_mut().for_each(|u| u.op.0 += o);
        }
        for blk in &mut self.blocks {
            blk.args.iter_mut().for_each(|x| x.0 += v);
            blk.first.iter_mut().for_each(op);
            blk.last.iter_mut().for_each(op);
            blk.parent.iter_mut().for_each(|x| x.0 += r);
        }
        for reg in &mut self.regions {
            reg.blocks.iter_mut().for_each(|x| x.0 += b);
            reg.parent.iter_mut().for_each(op);
        }
    }

    /// Room for `more` ops, values, blocks and regions (before appending
    /// bodies: one allocation instead of a copy per doubling).
    pub fn reserve(&mut self, more: IdShift) {
        self.ops.reserve(more.ops as usize);
        self.values.reserve(more.values as usize);
        self.blocks.reserve(more.blocks as usize);
        self.regions.reserve(more.regions as usize);
    }

    /// Append the arenas of `other`, already shifted by this body's
    /// [`Body::next_ids`]. Its ops stay detached (or where they were linked
    /// among themselves); the caller places them.
    pub fn append_shifted(&mut self, mut other: Body) {
        self.ops.append(&mut other.ops);
        self.values.append(&mut other.values);
        self.blocks.append(&mut other.blocks);
        self.regions.append(&mut other.regions);
        self.live_ops += std::mem::take(&mut other.live_ops);
    }
}

/// Visit `roots` (ops with the body each lives in) and everything nested in
/// them — into nested isolated bodies if `deep` — pre- or post-order, with an
/// explicit stack: IR nests as deep as its text, and a recursive walk would
/// put that depth on the thread's stack.
fn walk_ops<'a>(
    roots: Vec<(&'a Body, OpId)>,
    deep: bool,
    order: WalkOrder,
    f: &mut dyn FnMut(&Body, OpId),
) {
    // (body, op, children pushed?) — an op is visited post-order when it is
    // met again after its children.
    let mut stack: Vec<(&'a Body, OpId, bool)> = roots
        .into_iter()
        .rev()
        .map(|(b, o)| (b, o, false))
        .collect();
    while let Some((b, o, expanded)) = stack.pop() {
        if expanded {
            f(b, o);
            continue;
        }
        if order == WalkOrder::Pre {
            f(b, o);
        } else {
            stack.push((b, o, true));
        }
        let d = b.op(o);
        let inner = match d.inner.as_deref() {
            Some(_) if !deep => continue,
            Some(inner) => inner,
            None => b,
        };
        // Children pushed last to first, so the first is visited next.
        for &r in d.regions.iter().rev() {
            for &blk in inner.regions[r.index()].blocks.iter().rev() {
                let mut cur = inner.blocks[blk.index()].last;
                while let Some(c) = cur {
                    stack.push((inner, c, false));
                    cur = inner.ops[c.index()].prev;
                }
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WalkOrder {
    Pre,
    Post,
}

/// Iterator over the ops of a block, robust to erasing the op just returned.
pub struct BlockOps<'a> {
    body: &'a Body,
    next: Option<OpId>,
}

impl Iterator for BlockOps<'_> {
    type Item = OpId;
    fn next(&mut self) -> Option<OpId> {
        let cur = self.next?;
        self.next = self.body.ops[cur.index()].next;
        Some(cur)
    }
}

/// The parts of a moved-out op that refer to its enclosing body.
pub struct ScratchSaved {
    operands: SmallVec<[ValueId; 2]>,
    results: SmallVec<[ValueId; 1]>,
    successors: Box<[BlockId]>,
    parent: Option<BlockId>,
    prev: Option<OpId>,
    next: Option<OpId>,
}

impl Body {
    /// Move `op` into a fresh body on its own (for printing or verifying an
    /// isolated op from a pass-manager thread). Put it back with [`Body::restore`].
    /// Operands and results of the op refer to the enclosing body and are
    /// left out of the scratch copy.
    pub fn scratch(op: &mut OpData) -> (Body, OpId, ScratchSaved) {
        let mut b = Body::new();
        let r = b.new_region(None);
        let blk = b.add_block(r);
        let taken = std::mem::replace(op, OpData::placeholder());
        let st = OpState::like(&taken);
        let saved = ScratchSaved {
            operands: taken.operands,
            results: taken.results,
            successors: taken.successors,
            parent: taken.parent,
            prev: taken.prev,
            next: taken.next,
        };
        let id = b.create_op_with_regions(st, taken.regions.to_vec(), taken.inner);
        b.append_op(blk, id);
        (b, id, saved)
    }

    /// Move the op back out of a scratch body.
    pub fn restore(mut self, op: &mut OpData, id: OpId, saved: ScratchSaved) {
        let mut taken = std::mem::replace(&mut self.ops[id.index()], OpData::placeholder());
        taken.operands = saved.operands;
        taken.results = saved.results;
        taken.successors = saved.successors;
        taken.parent = saved.parent;
        taken.prev = saved.prev;
        taken.next = saved.next;
        *op = taken;
    }
}

impl OpData {
    fn placeholder() -> OpData {
        OpData {
            name: Ident::new("builtin.placeholder"),
            def: None,
            loc: Location::unknown(),
            attrs: AttrDict::empty(),
            props: None,
            operands: SmallVec::new(),
            results: SmallVec::new(),
            regions: Box::new([]),
            successors: Box::new([]),
            parent: None,
            prev: None,
            next: None,
            alive: true,
            inner: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DType;

    fn st(name: &str, operands: Vec<ValueId>, results: usize) -> OpState {
        let mut s = OpState::new(name, Location::unknown());
        s.operands = operands;
        s.result_types = vec![Type::tensor_static(&[4], DType::F32); results];
        s
    }

    #[test]
    fn use_def_chains_follow_replace_and_erase() {
        let mut b = Body::new();
        let r = b.new_region(None);
        let blk = b.add_block(r);
        let x = b.add_block_arg(
            blk,
            Type::tensor_static(&[4], DType::F32),
            Location::unknown(),
        );
        let a = b.create_op(st("t.a", vec![x], 1));
        b.append_op(blk, a);
        let av = b.result(a, 0);
        let c = b.create_op(st("t.c", vec![av, av], 1));
        b.append_op(blk, c);
        assert_eq!(b.uses(av).len(), 2);
        assert_eq!(b.users(av), vec![c]);
        b.replace_all_uses(av, x);
        assert!(!b.has_uses(av));
        assert_eq!(b.op(c).operands(), &[x, x]);
        assert_eq!(b.uses(x).len(), 3);
        b.erase_op(a);
        assert_eq!(b.uses(x).len(), 2);
        assert_eq!(b.block_ops(blk).collect::<Vec<_>>(), vec![c]);
        assert_eq!(b.num_ops(), 1);
    }

    #[test]
    fn insertion_keeps_block_order() {
        let mut b = Body::new();
        let r = b.new_region(None);
        let blk = b.add_block(r);
        let o1 = b.create_op(st("t.1", vec![], 0));
        let o3 = b.create_op(st("t.3", vec![], 0));
        let o2 = b.create_op(st("t.2", vec![], 0));
        let o0 = b.create_op(st("t.0", vec![], 0));
        b.append_op(blk, o1);
        b.append_op(blk, o3);
        b.insert_op_before(o3, o2);
        b.prepend_op(blk, o0);
        assert_eq!(b.block_ops(blk).collect::<Vec<_>>(), vec![o0, o1, o2, o3]);
        b.move_op_before(o0, o3);
        assert_eq!(b.block_ops(blk).collect::<Vec<_>>(), vec![o3, o0, o1, o2]);
        assert_eq!(b.position_in_block(o1), 2);
    }
}
