//! A parsed or built top-level module: the `builtin.module` op, its body and
//! the module's resource blobs (`dense_resource` payloads).

use crate::attributes::{AttrData, Attribute, DenseElements};
use crate::body::{BlockId, Body, OpId, OpState, WalkOrder};
use crate::context::Context;
use crate::ident::Ident;
use crate::location::Location;
use indexmap::IndexMap;
use std::collections::HashSet;

/// A `dense_resource` blob: MLIR's hex encoding is a little-endian u32 alignment then the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob {
    pub alignment: u32,
    pub data: Vec<u8>,
}

/// A value of an `external_resources` entry: a hex blob (a string starting
/// `0x`), another string, or a boolean — as MLIR reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceValue {
    Blob(Blob),
    String(String),
    Bool(bool),
}

/// `{-# external_resources: { group: { key: value } } #-}`: resources of
/// tools ge does not know, kept in order to be printed back.
pub type ExternalResources = IndexMap<String, IndexMap<String, ResourceValue>>;

#[derive(Clone)]
pub struct Module {
    /// The body holding the module op itself (and nothing else).
    pub outer: Body,
    /// The `builtin.module` op.
    pub op: OpId,
    /// `{-# dialect_resources: { builtin: { name: "0x…" } } #-}`
    pub resources: IndexMap<String, Blob>,
    pub external_resources: ExternalResources,
}

impl Module {
    /// An empty `builtin.module` with one block.
    pub fn new(ctx: &Context, loc: Location) -> Module {
        let mut outer = Body::new();
        let root = outer.new_region(None);
        let top = outer.add_block(root);
        let mut st = OpState::new(crate::builtin::Module::NAME, loc);
        st.def = ctx.op_def(crate::builtin::Module::NAME);
        st.num_regions = 1;
        let op = outer.create_op(st);
        outer.append_op(top, op);
        let inner = outer.inner_mut(op).expect("builtin.module is isolated");
        let r = inner.root_regions()[0];
        inner.add_block(r);
        Module {
            outer,
            op,
            resources: IndexMap::new(),
            external_resources: IndexMap::new(),
        }
    }

    /// Wrap an already-built module op living in `outer`.
    pub fn from_parts(outer: Body, op: OpId) -> Module {
        Module {
            outer,
            op,
            resources: IndexMap::new(),
            external_resources: IndexMap::new(),
        }
    }

    /// The module's own body: where functions live.
    pub fn body(&self) -> &Body {
        self.outer.inner(self.op).expect("module op owns a body")
    }

    pub fn body_mut(&mut self) -> &mut Body {
        self.outer
            .inner_mut(self.op)
            .expect("module op owns a body")
    }

    /// The single block of the module body.
    pub fn block(&self) -> BlockId {
        let b = self.body();
        let r = b.op_regions_root();
        b.entry_block(r).expect("module has a block")
    }

    /// Top-level ops (functions, globals) in order.
    pub fn top_ops(&self) -> Vec<OpId> {
        self.body().block_ops(self.block()).collect()
    }

    /// Find a top-level op defining symbol `name`.
    pub fn lookup_symbol(&self, name: &str) -> Option<OpId> {
        let b = self.body();
        self.top_ops()
            .into_iter()
            .find(|&o| b.op(o).attr("sym_name").and_then(|a| a.as_str()) == Some(name))
    }

    /// Number of ops in the whole module, including the module op.
    pub fn op_count(&self) -> usize {
        self.outer.deep_op_count()
    }

    /// Replace every `dense_resource<name>` attribute whose blob is in this
    /// module (and has the type's size) by the equivalent `dense<…>` literal,
    /// and drop the blobs no longer referenced. Passes see only attributes,
    /// not the module's resource table, so this makes resource-held weights
    /// foldable (BatchNorm folding, weight layout conversion at compile time).
    /// Returns how many attributes were inlined.
    pub fn inline_resources(&mut self) -> usize {
        let res = std::mem::take(&mut self.resources);
        let mut n = 0;
        // Bodies nest as deep as the text: an explicit stack, not recursion.
        let mut stack: Vec<&mut Body> = vec![&mut self.outer];
        while let Some(body) = stack.pop() {
            for d in Body::ops_mut(body) {
                let mut attrs = d.attrs;
                for (name, a) in d.attrs.entries() {
                    if let AttrData::DenseResource { name: blob, ty } = a.data() {
                        let want = ty.as_tensor().and_then(|t| {
                            let n: i64 = t.static_shape()?.iter().product();
                            Some(n.max(0) as usize * t.dtype.byte_size())
                        });
                        if let Some(b) = res
                            .get(blob.as_str())
                            .filter(|b| Some(b.data.len()) == want)
                        {
                            let dense = Attribute::dense(DenseElements {
                                ty: *ty,
                                splat: false,
                                bytes: b.data.clone().into_boxed_slice(),
                            });
                            attrs = attrs.with(*name, dense);
                            n += 1;
                        }
                    }
                }
                d.attrs = attrs;
                if let Some(inner) = d.inner.as_deref_mut() {
                    stack.push(inner);
                }
            }
        }
        let kept = self.referenced_resources();
        self.resources = res
            .into_iter()
            .filter(|(k, _)| kept.contains(&Ident::new(k)))
            .collect();
        n
    }

    /// Names of the `dense_resource` blobs the IR refers to anywhere (nested
    /// in arrays, dictionaries, properties, type encodings too).
    pub fn referenced_resources(&self) -> HashSet<Ident> {
        let mut out = HashSet::new();
        let mut note = |a: Attribute| {
            a.for_each_nested(&mut |x| {
                if let AttrData::DenseResource { name, .. } = x.data() {
                    out.insert(*name);
                }
            })
        };
        self.outer.walk_deep(WalkOrder::Pre, &mut |b, o| {
            let d = b.op(o);
            for (_, a) in d.attrs.entries() {
                note(*a);
            }
            if let Some(p) = d.props {
                note(p);
            }
            // Locations may carry attributes too (fused metadata).
            d.loc.for_each_metadata(&mut note);
            let rb = d.region_body(b);
            for &r in d.regions() {
                for &blk in &rb.region(r).blocks {
                    for &a in &rb.block(blk).args {
                        rb.value(a).loc.for_each_metadata(&mut note);
                    }
                }
            }
        });
        out
    }

    /// Ops named `name` anywhere (deep), counted.
    pub fn count_ops_named(&self, name: &str) -> usize {
        let id = Ident::new(name);
        let mut n = 0;
        self.outer.walk_deep(WalkOrder::Pre, &mut |b, o| {
            if b.op(o).name == id {
                n += 1
            }
        });
        n
    }
}

impl Body {
    /// The first root region of a body (the region of the isolated op owning it).
    pub fn op_regions_root(&self) -> crate::body::RegionId {
        self.root_regions()[0]
    }
}
