//! Cutting a module into units (its top-level ops, each as a self-contained
//! module text) and putting the optimised units back together.

use ge_ir::attributes::{AttrData, Attribute};
use ge_ir::body::{OpState, WalkOrder};
use ge_ir::module::ExternalResources;
use ge_ir::printer::{
    print_module, print_op, push_blob_entry, push_resource_section, resources_in_print_order,
    PrintOptions,
};
use ge_ir::{Body, Context, Location, Module, OpId};
use std::collections::BTreeSet;
use std::sync::Arc;

/// A unit's text when the module cannot be cut (a top-level op that is not
/// isolated from above, or has operands or results): the whole module.
pub const WHOLE_MODULE: &str = "#module";

pub struct Split {
    /// (unit name, unit module text).
    pub units: Vec<(String, String)>,
    pub frame: Frame,
}

/// The printed module around its top-level ops: before the first, and the
/// closing brace after the last; the resource section after that is
/// assembled from the units' blobs and the module's external resources
/// ([`Frame::trailer`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    pub header: String,
    pub closing: String,
    pub external: ExternalResources,
}

impl Frame {
    /// The text after the last top-level op, with a resource section
    /// listing `blobs` (printed entries, in print order) and the external
    /// resources.
    pub fn trailer(&self, blobs: &[(String, Arc<str>)]) -> String {
        let mut out = self.closing.clone();
        push_resource_section(
            &mut out,
            blobs.len(),
            |o, i| o.push_str(&blobs[i].1),
            &self.external,
        );
        out
    }
}

const PLACEHOLDER: &str = "ge.incremental_placeholder";

/// Cut `m` into units printed with `opts` (the same options the output uses,
/// so an unchanged unit needs no work to print).
pub fn split_module(ctx: &Context, m: &Module, opts: PrintOptions) -> Split {
    let body = m.body();
    let top = m.top_ops();
    // Builtin blobs are listed by each unit's result, in the order the
    // printer meets them after the pipeline (as MLIR prints them), and put
    // together behind the last unit; a blob named by the module op itself
    // would come first, which the frame cannot know.
    let mop = m.outer.op(m.op);
    let module_names_blob = mop
        .props
        .into_iter()
        .chain(mop.attrs.entries().iter().map(|(_, a)| *a))
        .any(|a| {
            let mut blobs = BTreeSet::new();
            scan_attr(a, &mut |_| {}, &mut blobs);
            !blobs.is_empty()
        });
    let cuttable = !module_names_blob
        && top.iter().all(|&o| {
            let d = body.op(o);
            d.inner.is_some() && d.operands().is_empty() && d.results().is_empty()
        });
    if !cuttable {
        return Split {
            units: vec![(WHOLE_MODULE.to_string(), print_module(m, opts))],
            frame: Frame::default(),
        };
    }
    let frame = frame(ctx, m, opts);
    let symbols: std::collections::HashMap<&str, OpId> = top
        .iter()
        .filter_map(|&o| {
            body.op(o)
                .attr("sym_name")
                .and_then(|a| a.as_str())
                .map(|n| (n, o))
        })
        .collect();
    let mut units = vec![];
    for (i, &o) in top.iter().enumerate() {
        let name = unit_name(body.op(o).attr("sym_name").and_then(|a| a.as_str()), i);
        let mut mini = empty_like(ctx, m);
        copy_op(&mut mini, body, o, true);
        // Declarations of the symbols it references, in module order.
        let mut blobs: BTreeSet<String> = BTreeSet::new();
        let refs: BTreeSet<String> = symbol_refs(body, o, &mut blobs)
            .into_iter()
            .filter(|s| symbols.get(s.as_str()).is_some_and(|&t| t != o))
            .collect();
        for &t in &top {
            let n = body.op(t).attr("sym_name").and_then(|a| a.as_str());
            if n.is_some_and(|n| refs.contains(n)) {
                copy_op(&mut mini, body, t, false);
            }
        }
        for b in blobs {
            if let Some(blob) = m.resources.get(&b) {
                mini.resources.insert(b, blob.clone());
            }
        }
        units.push((name, print_module(&mini, opts)));
    }
    Split { units, frame }
}

/// A unit's name: `@symbol`, or `#index` among the top-level ops.
pub fn unit_name(symbol: Option<&str>, index: usize) -> String {
    match symbol {
        Some(n) => format!("@{n}"),
        None => format!("#{index}"),
    }
}

/// The symbols (first components) top-level op `o` refers to, and the
/// resource blobs it uses (added to `blobs`).
pub fn symbol_refs(body: &Body, o: OpId, blobs: &mut BTreeSet<String>) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    if let Some(inner) = body.op(o).inner.as_deref() {
        inner.walk_deep(WalkOrder::Pre, &mut |b, op| {
            for (_, a) in b.op(op).attrs.entries() {
                scan_attr(
                    *a,
                    &mut |s| {
                        refs.insert(s.to_string());
                    },
                    blobs,
                );
            }
        });
    }
    refs
}

/// Top-level op `o` of `m` as a declaration (its attributes, an empty
/// region), printed as a module member like [`print_unit`].
pub fn declaration(ctx: &Context, m: &Module, o: OpId, opts: PrintOptions) -> String {
    let mut decl = empty_like(ctx, m);
    copy_op(&mut decl, m.body(), o, false);
    decl.top_ops()
        .first()
        .map(|&d| member(decl.body(), d, opts))
        .unwrap_or_default()
}

fn scan_attr(a: Attribute, sym: &mut dyn FnMut(&str), blobs: &mut BTreeSet<String>) {
    a.for_each_nested(&mut |x| match x.data() {
        AttrData::Symbol(parts) => {
            if let Some(p) = parts.first() {
                sym(p.as_str());
            }
        }
        AttrData::DenseResource { name, .. } => {
            blobs.insert(name.as_str().to_string());
        }
        _ => {}
    });
}

/// An empty module with `m`'s attributes and location.
fn empty_like(ctx: &Context, m: &Module) -> Module {
    let mop = m.outer.op(m.op);
    let mut out = Module::new(ctx, mop.loc);
    out.outer.op_mut(out.op).attrs = mop.attrs;
    out
}

/// Append a copy of top-level op `o` of `body` to `dst` — with its body, or
/// as a declaration (same attributes, an empty region).
fn copy_op(dst: &mut Module, body: &Body, o: OpId, with_body: bool) {
    let d = body.op(o);
    let mut st = OpState::like(d);
    let block = dst.block();
    let mb = dst.body_mut();
    let id = if with_body {
        mb.create_op_with_regions(st, d.regions().to_vec(), d.inner.clone())
    } else {
        st.num_regions = d.regions().len();
        mb.create_op(st)
    };
    mb.append_op(block, id);
}

/// The printed module around its top-level ops (see [`Frame`]).
pub fn frame(ctx: &Context, m: &Module, opts: PrintOptions) -> Frame {
    let mut shell = empty_like(ctx, m);
    let block = shell.block();
    let b = shell.body_mut();
    let p = b.create_op(OpState::new(PLACEHOLDER, Location::unknown()));
    b.append_op(block, p);
    let text = print_module(&shell, opts);
    let marker = format!("\"{PLACEHOLDER}\"");
    let (header, closing) = match text.find(&marker) {
        Some(at) => {
            let line_start = text[..at].rfind('\n').unwrap_or(0);
            let line_end = text[at..].find('\n').map(|e| at + e).unwrap_or(text.len());
            (text[..line_start].to_string(), text[line_end..].to_string())
        }
        None => (text, String::new()),
    };
    Frame {
        header,
        closing,
        external: m.external_resources.clone(),
    }
}

/// A unit module after its pipeline, printed as members of the assembled
/// module (`"\n  "` + each op, indented by two).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintedUnit {
    /// The unit's own op (or, for [`WHOLE_MODULE`], the whole module).
    pub chunk: String,
    /// Top-level ops the pipeline added (`emit-tasks`' kernels): they go
    /// after every unit's op, as a module pass appends them.
    pub extra: String,
    /// The symbols of both (to catch two units defining one name).
    pub symbols: Vec<String>,
    /// The builtin blobs `chunk` and `extra` refer to, each in print order:
    /// (name, printed resource entry).
    pub blobs: Vec<(String, Arc<str>)>,
    pub extra_blobs: Vec<(String, Arc<str>)>,
}

/// Print unit module `m`, whose top-level ops were `before` (the unit's op,
/// then declarations) when its pipeline started.
pub fn print_unit(m: &Module, opts: PrintOptions, whole: bool, before: &[OpId]) -> PrintedUnit {
    if whole {
        return PrintedUnit {
            chunk: print_module(m, opts),
            ..PrintedUnit::default()
        };
    }
    let body = m.body();
    let mut out = PrintedUnit::default();
    let mut symbol = |o: OpId| {
        if let Some(n) = body.op(o).attr("sym_name").and_then(|a| a.as_str()) {
            out.symbols.push(n.to_string());
        }
    };
    let tops = m.top_ops();
    let own = before.first().filter(|o| tops.contains(o));
    let added: Vec<OpId> = tops.into_iter().filter(|o| !before.contains(o)).collect();
    own.into_iter().chain(&added).for_each(|&o| symbol(o));
    if let Some(&o) = own {
        out.chunk = member(body, o, opts);
        out.blobs = blob_entries(m, &[o], opts);
    }
    out.extra = added.iter().map(|&o| member(body, o, opts)).collect();
    out.extra_blobs = blob_entries(m, &added, opts);
    out
}

/// The blobs of `m` that top-level ops `ops` refer to, in print order, with
/// their printed resource entries (a name without a blob prints nothing, as
/// in the printer).
fn blob_entries(m: &Module, ops: &[OpId], opts: PrintOptions) -> Vec<(String, Arc<str>)> {
    if m.resources.is_empty() {
        return vec![];
    }
    let mut seen = BTreeSet::new();
    let mut out = vec![];
    for &o in ops {
        for name in resources_in_print_order(m.body(), o, opts) {
            let Some((k, blob)) = m.resources.get_key_value(name.as_str()) else {
                continue;
            };
            if seen.insert(k.clone()) {
                let mut entry = String::new();
                push_blob_entry(&mut entry, k, blob);
                out.push((k.clone(), Arc::from(entry)));
            }
        }
    }
    out
}

/// Top-level op `o` printed as a module member: `"\n  "` + the op, indented by two.
fn member(body: &Body, o: OpId, opts: PrintOptions) -> String {
    let text = print_op(body, o, opts);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let mut out = String::with_capacity(text.len() + text.len() / 16 + 3);
    out.push_str("\n  ");
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(line);
    }
    out
}

/// Every op name that occurs in the module's arenas, erased ops included:
/// an op a rewrite created and removed again was still there for rules to
/// match.
pub fn op_names_ever(m: &mut Module) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Bodies nest as deep as the text: an explicit stack, not recursion.
    let mut stack: Vec<&mut Body> = vec![m.body_mut()];
    while let Some(b) = stack.pop() {
        for d in Body::ops_mut(b) {
            out.insert(d.name.as_str().to_string());
            if let Some(inner) = d.inner.as_deref_mut() {
                stack.push(inner);
            }
        }
    }
    out
}
