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

#[derive(Clone)]
pub struct Module {
    /// The body holding the module op itself (and nothing else).
    pub outer: Body,
    /// The `builtin.module` op.
    pub op: OpId,
    /// `{-# dialect_resources: { builtin: { name: "0x…" } } #-}`
    pub resources: IndexMap<String, Blob>,
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
        }
    }

    /// Wrap an already-built module op living in `outer`.
    pub fn from_parts(outer: Body, op: OpId) -> Module {
        Module {
            outer,
            op,
            resources: IndexMap::new(),
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
        fn walk(
            body: &mut Body,
            res: &IndexMap<String, Blob>,
            kept: &mut HashSet<String>,
        ) -> usize {
            let mut n = 0;
            for d in body.ops_mut() {
                let mut attrs = d.attrs;
                for (name, a) in d.attrs.entries() {
                    if let AttrData::DenseResource { name: blob, ty } = a.data() {
                        let want = ty.as_tensor().and_then(|t| {
                            let n: i64 = t.static_shape()?.iter().product();
                            Some(n.max(0) as usize * t.dtype.byte_size())
                        });
                        match res.get(blob.as_str()) {
                            Some(b) if Some(b.data.len()) == want => {
                                let dense = Attribute::dense(DenseElements {
                                    ty: *ty,
                                    splat: false,
                                    bytes: b.data.clone().into_boxed_slice(),
                                });
                                attrs = attrs.with(*name, dense);
                                n += 1;
                            }
                            _ => {
                                kept.insert(blob.as_str().to_string());
                            }
                        }
                    }
                }
                d.attrs = attrs;
                if let Some(inner) = d.inner.as_deref_mut() {
                    n += walk(inner, res, kept);
                }
            }
            n
        }
        let mut kept = HashSet::new();
        let res = std::mem::take(&mut self.resources);
        let n = walk(&mut self.outer, &res, &mut kept);
        self.resources = res.into_iter().filter(|(k, _)| kept.contains(k)).collect();
        n
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
