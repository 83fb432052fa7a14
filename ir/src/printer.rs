//! The `.air` printer: the exact inverse of the parser. Custom form through op
//! formats/custom syntax, or MLIR's generic form (`--print-op-generic`), which
//! real `mlir-opt --allow-unregistered-dialect` accepts.

use crate::affine_alias::AffineAliases;
use crate::attributes::{AttrData, AttrDict, Attribute, DenseElements, Element, NamedAttr};
use crate::body::{BlockId, Body, OpData, OpId, RegionId, ValueDef, ValueId};
use crate::dim::Dim;
use crate::location::Location;
use crate::module::{Module, ResourceValue};
use crate::opdef::Trait;
use crate::types::{DType, Type, TypeData};
use rayon::prelude::*;
// FxHash: keys are short strings and small ids, hashed millions of times.
use rustc_hash::FxHashMap as HashMap;
use std::fmt::{self, Write};

#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Print every op in MLIR's generic form.
    pub generic: bool,
    /// Print `loc(...)` after every op.
    pub debuginfo: bool,
    /// Print dense literals with more elements than this as hex.
    pub hex_elements_over: Option<usize>,
}

/// Names of values and blocks inside one body.
pub struct Names {
    values: Vec<ValName>,
    blocks: Vec<u32>,
}

/// The generic form's names of every body of a module, numbered as MLIR's
/// generic printer numbers them (`SSANameState` with unique ids): one
/// counter for the whole module, a region's own values (block arguments, op
/// results) before the regions nested in its ops, and those nested regions
/// from the last to the first (a stack) — isolated ops included, so a
/// reader that does not know an op is isolated (mlir-opt with an
/// unregistered dialect) never sees a name defined twice, and the text is
/// the one mlir-opt prints.
pub struct NameTable {
    names: Vec<Names>,
    /// A body's address (bodies do not move while borrowed for printing) → its names.
    index: HashMap<usize, usize>,
}

impl NameTable {
    /// Number `body`'s root regions and everything nested in them.
    pub fn build(body: &Body) -> NameTable {
        let mut t = NameTable {
            names: vec![],
            index: HashMap::default(),
        };
        let mut c = Counters::default();
        let mut stack: Vec<(&Body, RegionId)> =
            body.root_regions().into_iter().map(|r| (body, r)).collect();
        while let Some((b, r)) = stack.pop() {
            let i = *t.index.entry(b as *const Body as usize).or_insert_with(|| {
                t.names.push(Names::empty(b));
                t.names.len() - 1
            });
            let names = &mut t.names[i];
            let blocks = &b.region(r).blocks;
            for (bi, &blk) in blocks.iter().enumerate() {
                names.number_block(b, blk, bi, &mut c);
            }
            for &blk in blocks {
                for op in b.block_ops(blk) {
                    let d = b.op(op);
                    let rb = d.region_body(b);
                    stack.extend(d.regions().iter().map(|&r| (rb, r)));
                }
            }
        }
        t
    }

    /// The names of `body` (none if it was not numbered: values print as unknown).
    fn names_of(&self, body: &Body) -> &Names {
        static NONE: Names = Names {
            values: Vec::new(),
            blocks: Vec::new(),
        };
        self.index
            .get(&(body as *const Body as usize))
            .map_or(&NONE, |&i| &self.names[i])
    }
}

/// The names an op prints with: its body's, and in the generic form the
/// table holding every nested body's.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    names: &'a Names,
    table: Option<&'a NameTable>,
}

impl<'a> Scope<'a> {
    /// `body`'s names: from the table if there is one, else `names`.
    fn of(names: &'a Names, table: Option<&'a NameTable>, body: &Body) -> Scope<'a> {
        Scope {
            names: table.map_or(names, |t| t.names_of(body)),
            table,
        }
    }
}

/// The next free `%N` and `%argN`.
#[derive(Default)]
struct Counters {
    next: u32,
    next_arg: u32,
}

#[derive(Clone, Copy)]
enum ValName {
    Unnamed,
    Arg(u32),
    Result { n: u32, idx: u32, group: u32 },
}

impl Names {
    /// Number values in print order: entry-block arguments are `%argN`, other
    /// values `%N`; blocks `^bbN` per region.
    /// Nested non-isolated regions are numbered where they occur (custom
    /// form; the generic form numbers as MLIR does, see [`NameTable`]).
    pub fn compute(body: &Body) -> Names {
        let mut names = Names::empty(body);
        let mut c = Counters::default();
        for r in body.root_regions() {
            names.number_region(body, r, &mut c);
        }
        names
    }

    fn empty(body: &Body) -> Names {
        Names {
            values: vec![ValName::Unnamed; body.value_capacity()],
            blocks: vec![0; body.block_capacity()],
        }
    }

    fn number_region(&mut self, body: &Body, r: RegionId, c: &mut Counters) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            for (bi, &b) in body.region(r).blocks.iter().enumerate() {
                self.number_args(body, b, bi, c);
                for op in body.block_ops(b) {
                    self.number_results(body, op, &mut c.next);
                    let d = body.op(op);
                    if d.inner.is_none() {
                        for &r in d.regions() {
                            self.number_region(body, r, c);
                        }
                    }
                }
            }
        })
    }

    /// Block `b` is block `bi` of its region: its arguments (`%argN` in an
    /// entry block, else `%N`) and its ops' results, not what is nested.
    fn number_block(&mut self, body: &Body, b: BlockId, bi: usize, c: &mut Counters) {
        self.number_args(body, b, bi, c);
        for op in body.block_ops(b) {
            self.number_results(body, op, &mut c.next);
        }
    }

    fn number_args(&mut self, body: &Body, b: BlockId, bi: usize, c: &mut Counters) {
        self.blocks[b.index()] = bi as u32;
        for &a in &body.block(b).args {
            self.values[a.index()] = if bi == 0 {
                c.next_arg += 1;
                ValName::Arg(c.next_arg - 1)
            } else {
                c.next += 1;
                ValName::Result {
                    n: c.next - 1,
                    idx: 0,
                    group: 1,
                }
            };
        }
    }

    /// `%N` (or `%N#i` of `%N:k`) for the results of `op`.
    fn number_results(&mut self, body: &Body, op: OpId, next: &mut u32) {
        let results = body.op(op).results();
        let group = results.len() as u32;
        if group > 0 {
            for (i, &v) in results.iter().enumerate() {
                self.values[v.index()] = ValName::Result {
                    n: *next,
                    idx: i as u32,
                    group,
                };
            }
            *next += 1;
        }
    }

    /// The group name of a result (`%3` for `%3:2`).
    fn write_def(&self, out: &mut String, v: ValueId) {
        match self.values.get(v.index()).copied() {
            Some(ValName::Result { n, .. }) => {
                out.push('%');
                push_u32(out, n);
            }
            _ => self.write_use(out, v),
        }
    }

    fn write_use(&self, out: &mut String, v: ValueId) {
        match self
            .values
            .get(v.index())
            .copied()
            .unwrap_or(ValName::Unnamed)
        {
            ValName::Arg(n) => {
                out.push_str("%arg");
                push_u32(out, n);
            }
            ValName::Result { n, idx, group } => {
                out.push('%');
                push_u32(out, n);
                if group > 1 {
                    out.push('#');
                    push_u32(out, idx);
                }
            }
            ValName::Unnamed => {
                let _ = write!(out, "%<<UNKNOWN SSA VALUE {}>>", v.0);
            }
        }
    }
}

fn push_u32(out: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("0"));
}

/// The deepest indentation printed: 64 levels of regions (MLIR's text up
/// to there; deeper ops line up at this column).
const MAX_INDENT: usize = 2 * 64;

/// Printer state: output buffer, indentation and caches.
pub struct Printer {
    pub opts: PrintOptions,
    pub out: String,
    indent: usize,
    type_cache: HashMap<Type, String>,
    /// The generic form's `#map`/`#set` aliases of the module being printed.
    aliases: Option<std::sync::Arc<AffineAliases>>,
}

impl Printer {
    pub fn new(opts: PrintOptions) -> Printer {
        Printer {
            opts,
            out: String::new(),
            indent: 0,
            type_cache: HashMap::default(),
            aliases: None,
        }
    }

    fn style(&self) -> AttrStyle<'_> {
        AttrStyle::new(&self.opts, &self.aliases)
    }

    /// Give the generic form of `m` its `#map`/`#set` aliases and print
    /// their definitions (they come before the module, as in mlir-opt).
    fn start_module(&mut self, m: &Module) {
        if self.opts.generic {
            self.aliases = AffineAliases::collect(m).map(std::sync::Arc::new);
            if let Some(a) = &self.aliases {
                a.write_defs(&mut self.out);
            }
        }
    }

    fn newline(&mut self) {
        const SPACES: &str = "                                                                ";
        self.out.push('\n');
        // Indentation stops growing past `MAX_INDENT`: the text of n nested
        // regions would otherwise grow with n² (23 GB for 100,000 levels).
        let mut n = self.indent.min(MAX_INDENT);
        while n > 0 {
            let k = n.min(SPACES.len());
            self.out.push_str(&SPACES[..k]);
            n -= k;
        }
    }

    fn push_type(&mut self, t: Type) {
        if let Some(s) = self.type_cache.get(&t) {
            self.out.push_str(s);
            return;
        }
        let mut s = String::new();
        let _ = write_type_styled(&mut s, t, self.style());
        self.out.push_str(&s);
        self.type_cache.insert(t, s);
    }

    /// Print one op (with nested regions) at the current indentation.
    pub fn print_op(&mut self, body: &Body, scope: Scope<'_>, op: OpId) {
        stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, || {
            self.print_op_inner(body, scope, op)
        })
    }

    fn print_op_inner(&mut self, body: &Body, scope: Scope<'_>, op: OpId) {
        let d = body.op(op);
        let results = d.results();
        if !results.is_empty() {
            scope.names.write_def(&mut self.out, results[0]);
            if results.len() > 1 {
                self.out.push(':');
                push_u32(&mut self.out, results.len() as u32);
            }
            self.out.push_str(" = ");
        }
        let custom = if self.opts.generic { None } else { d.def };
        let mut pr = OpPrinter {
            body,
            names: scope.names,
            table: scope.table,
            p: self,
        };
        match custom {
            Some(def) if def.syntax.is_some() => {
                pr.p.out.push_str(short_name(def.name));
                if let Some(s) = def.syntax {
                    (s.print)(&mut pr, op)
                }
            }
            Some(def) if def.compiled_format().is_some() => {
                pr.p.out.push_str(short_name(def.name));
                if let Some(f) = def.compiled_format() {
                    f.print(&mut pr, op)
                }
            }
            _ => pr.print_generic(op),
        }
        if self.opts.debuginfo {
            self.out.push(' ');
            let _ = write!(self.out, "{}", d.loc);
        }
    }

    /// Print a whole module; top-level ops are printed in parallel.
    pub fn print_module(&mut self, m: &Module) {
        let top: Vec<OpId> = m.top_ops();
        let (names, table) = self.names_for(m.body());
        let scope = Scope::of(&names, table.as_ref(), m.body());
        self.start_module(m);
        let chunks = self.top_level_chunks(m, scope, &top);
        self.module_header(m, top.is_empty());
        for c in chunks {
            self.out.push_str(&c);
        }
        self.module_trailer(m);
    }

    /// The text of each of `ops` (top-level ops of `m`), printed in parallel.
    fn top_level_chunks(&self, m: &Module, scope: Scope<'_>, ops: &[OpId]) -> Vec<String> {
        let body = m.body();
        let opts = self.opts;
        ops.par_iter()
            .map(|&o| {
                let mut p = Printer::new(opts);
                p.aliases = self.aliases.clone();
                p.indent = 2;
                p.newline();
                p.print_op(body, scope, o);
                p.out
            })
            .collect()
    }

    /// Names of `body` for this printer's form: per body in the custom form,
    /// a table of every nested body's in the generic form.
    fn names_for(&self, body: &Body) -> (Names, Option<NameTable>) {
        if self.opts.generic {
            (
                Names {
                    values: vec![],
                    blocks: vec![],
                },
                Some(NameTable::build(body)),
            )
        } else {
            (Names::compute(body), None)
        }
    }

    /// `module attributes {...} {` (or the generic form's opening).
    fn module_header(&mut self, m: &Module, empty: bool) {
        let mop = m.outer.op(m.op);
        if self.opts.generic {
            self.out.push_str("\"builtin.module\"()");
            let (props, _) = split_properties(mop);
            self.properties(props);
            self.out.push_str(" ({");
            if empty {
                // The module's one block, even when empty (see `region_in_body`).
                self.out.push_str("\n^bb0:");
            }
        } else {
            self.out.push_str("module");
            if let Some(n) = mop.attr("sym_name").and_then(|a| a.as_str()) {
                self.out.push_str(" @");
                write_symbol_name(&mut self.out, n);
            }
            let rest = mop.attrs.without("sym_name");
            if !rest.is_empty() {
                self.out.push_str(" attributes ");
                self.attr_dict_entries(rest, &[]);
            }
            self.out.push_str(" {");
        }
    }

    /// The closing brace, location and the `{-# dialect_resources #-}` trailer.
    fn module_trailer(&mut self, m: &Module) {
        let mop = m.outer.op(m.op);
        self.out.push_str("\n}");
        if self.opts.generic {
            self.out.push(')');
            let (_, rest) = split_properties(mop);
            if !rest.is_empty() {
                self.out.push(' ');
                self.attr_dict_entries(rest, &[]);
            }
            self.out.push_str(" : () -> ()");
        }
        if self.opts.debuginfo {
            let _ = write!(self.out, " {}", mop.loc);
        }
        self.out.push('\n');
        self.resource_section(m);
    }

    /// `{-# dialect_resources: ..., external_resources: ... #-}` as MLIR
    /// prints it: the builtin blobs the IR refers to (an unreferenced blob is
    /// dead, and MLIR drops it too), then the external resources as read.
    fn resource_section(&mut self, m: &Module) {
        let blobs: Vec<_> = if m.resources.is_empty() {
            vec![]
        } else {
            resources_in_print_order(&m.outer, m.op, self.opts)
                .into_iter()
                .filter_map(|n| m.resources.get_key_value(n.as_str()))
                .collect()
        };
        push_resource_section(
            &mut self.out,
            blobs.len(),
            |out, i| push_blob_entry(out, blobs[i].0, blobs[i].1),
            &m.external_resources,
        );
    }

    /// ` <...>`: an unregistered op's opaque properties, or a registered op's
    /// inherent attributes (nothing when there are none).
    fn properties(&mut self, props: Option<Attribute>) {
        if let Some(p) = props {
            self.out.push_str(" <");
            let _ = write_attr_mode(
                &mut self.out,
                p,
                AttrStyle::new(&self.opts, &self.aliases),
                false,
            );
            self.out.push('>');
        }
    }

    fn attr_dict_entries(&mut self, d: AttrDict, skip: &[&str]) {
        self.out.push('{');
        let mut first = true;
        for (k, v) in d.entries() {
            if skip.contains(&k.as_str()) {
                continue;
            }
            if !first {
                self.out.push_str(", ");
            }
            first = false;
            write_attr_key(&mut self.out, k);
            if !matches!(v.data(), AttrData::Unit) {
                self.out.push_str(" = ");
                let _ = write_attr_mode(
                    &mut self.out,
                    *v,
                    AttrStyle::new(&self.opts, &self.aliases),
                    false,
                );
            }
        }
        self.out.push('}');
    }
}

/// Print a module straight into `w`: the same text as [`print_module`], with
/// top-level ops printed in parallel batches and written as they are done,
/// so a large module's text never sits in memory whole.
pub fn write_module(
    m: &Module,
    opts: PrintOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    const BATCH: usize = 64;
    let top: Vec<OpId> = m.top_ops();
    let mut p = Printer::new(opts);
    let (names, table) = p.names_for(m.body());
    let scope = Scope::of(&names, table.as_ref(), m.body());
    p.start_module(m);
    p.module_header(m, top.is_empty());
    w.write_all(p.out.as_bytes())?;
    p.out.clear();
    for batch in top.chunks(BATCH) {
        for c in p.top_level_chunks(m, scope, batch) {
            w.write_all(c.as_bytes())?;
        }
    }
    p.module_trailer(m);
    w.write_all(p.out.as_bytes())
}

/// Print a module to text.
pub fn print_module(m: &Module, opts: PrintOptions) -> String {
    let mut p = Printer::new(opts);
    p.print_module(m);
    p.out
}

/// Print one op of `body` (e.g. a function) to text.
pub fn print_op(body: &Body, op: OpId, opts: PrintOptions) -> String {
    let mut p = Printer::new(opts);
    let (names, table) = p.names_for(body);
    p.print_op(body, Scope::of(&names, table.as_ref(), body), op);
    p.out.push('\n');
    p.out
}

/// An op's properties and its other (discardable) attributes, as the generic
/// form prints them: an unregistered op's opaque properties and all its
/// attributes; a registered op's inherent attributes as a dictionary (none
/// when it has none) and the rest.
pub fn split_properties(d: &OpData) -> (Option<Attribute>, AttrDict) {
    let Some(def) = d.def else {
        return (d.props, d.attrs);
    };
    let entries = d.attrs.entries();
    if !entries.iter().any(|(k, _)| def.is_inherent_attr(k)) {
        return (None, d.attrs);
    }
    let (inherent, rest): (Vec<NamedAttr>, Vec<NamedAttr>) =
        entries.iter().partition(|(k, _)| def.is_inherent_attr(k));
    (
        Some(Attribute::dict(AttrDict::new(inherent))),
        AttrDict::new(rest),
    )
}

fn short_name(name: &str) -> &str {
    name.strip_prefix("builtin.").unwrap_or(name)
}

/// The API op formats and custom syntaxes print through.
pub struct OpPrinter<'a, 'p> {
    pub body: &'a Body,
    names: &'a Names,
    /// Every body's names, in the generic form.
    table: Option<&'a NameTable>,
    p: &'p mut Printer,
}

impl OpPrinter<'_, '_> {
    pub fn write(&mut self, s: &str) {
        self.p.out.push_str(s);
    }

    pub fn generic(&self) -> bool {
        self.p.opts.generic
    }

    /// Space before a format element (none right after `(`/`[`/`<`).
    pub fn elem_space(&mut self, _first: bool) {
        match self.p.out.as_bytes().last() {
            Some(b'(' | b'[' | b'<' | b' ') => {}
            _ => self.p.out.push(' '),
        }
    }

    /// A literal with MLIR's spacing rules.
    pub fn lit(&mut self, l: &str, first: bool) {
        let last = self.p.out.as_bytes().last().copied();
        let after_word = last.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'"');
        let no_space = match l {
            "," | ")" | "]" | ">" => true,
            "(" | "[" | "<" => after_word && !first,
            _ => matches!(last, Some(b'(' | b'[' | b'<')),
        };
        if !no_space && last != Some(b' ') {
            self.p.out.push(' ');
        }
        self.p.out.push_str(l);
    }

    pub fn value(&mut self, v: ValueId) {
        self.names.write_use(&mut self.p.out, v);
    }

    pub fn value_list(&mut self, vs: &[ValueId]) {
        for (i, &v) in vs.iter().enumerate() {
            if i > 0 {
                self.p.out.push_str(", ");
            }
            self.value(v);
        }
    }

    pub fn ty(&mut self, t: Type) {
        self.p.push_type(t);
    }

    pub fn type_list(&mut self, ts: &[Type]) {
        for (i, &t) in ts.iter().enumerate() {
            if i > 0 {
                self.p.out.push_str(", ");
            }
            self.ty(t);
        }
    }

    pub fn functional_type(&mut self, ins: &[Type], outs: &[Type]) {
        self.p.out.push('(');
        self.type_list(ins);
        self.p.out.push_str(") -> ");
        if outs.len() == 1 && !matches!(outs[0].data(), TypeData::Function { .. }) {
            self.ty(outs[0]);
        } else {
            self.p.out.push('(');
            self.type_list(outs);
            self.p.out.push(')');
        }
    }

    /// An attribute as it appears in a format (`[1, 1]`, `2`, `"AICore"`).
    pub fn attr_value(&mut self, a: Attribute) {
        let style = AttrStyle::new(&self.p.opts, &self.p.aliases);
        let _ = write_attr_mode(&mut self.p.out, a, style, true);
    }

    pub fn attr(&mut self, a: Attribute) {
        let style = AttrStyle::new(&self.p.opts, &self.p.aliases);
        let _ = write_attr_mode(&mut self.p.out, a, style, false);
    }

    pub fn symbol_name(&mut self, name: &str) {
        self.p.out.push('@');
        write_symbol_name(&mut self.p.out, name);
    }

    /// `%arg0: T` (with the location under `--print-debuginfo`).
    pub fn arg_decl(&mut self, v: ValueId) {
        self.arg_decl_with_attrs(v, None);
    }

    /// `%arg0: T {attrs}`: an argument with MLIR's argument attributes.
    pub fn arg_decl_with_attrs(&mut self, v: ValueId, attrs: Option<AttrDict>) {
        self.value(v);
        self.p.out.push_str(": ");
        let t = self.body.value_type(v);
        self.ty(t);
        self.arg_attrs(attrs);
        if self.p.opts.debuginfo {
            let loc = self.body.value(v).loc;
            let _ = write!(self.p.out, " {loc}");
        }
    }

    /// The op's attributes minus `skip`, minus registered attributes at their
    /// default value; nothing when empty. `operand_segment_sizes` is printed
    /// only when the operands alone would not say it (several optional
    /// groups with a gap: `%x, %w, %r, %len` of graph.rnn, whose bias is
    /// absent; without it the printed op would read back with `%len` as the bias).
    pub fn attr_dict(&mut self, op: OpId, skip: &[&str], keyword: bool) {
        let d = self.body.op(op);
        let def = d.def;
        let segments_needed = def.is_some_and(|def| {
            let segs = d
                .attr("operand_segment_sizes")
                .and_then(|a| a.as_i64_array());
            let n = d.operands().len();
            // Variadic groups are spelled by their ops' syntax (stream.launch).
            let optionals = def
                .operands
                .iter()
                .all(|g| g.arity != crate::opdef::Arity::Variadic);
            segs.is_some()
                && optionals
                && def.group_sizes(def.operands, n, None)
                    != def.group_sizes(def.operands, n, segs.as_deref())
        });
        let entries: Vec<_> = d
            .attrs
            .entries()
            .iter()
            .filter(|(k, v)| {
                !skip.contains(&k.as_str())
                    && (k.as_str() != "operand_segment_sizes" || segments_needed)
                    && !def
                        .and_then(|def| def.attr_def(k))
                        .is_some_and(|ad| crate::builder::is_default(ad, *v))
            })
            .cloned()
            .collect();
        if entries.is_empty() {
            return;
        }
        self.p
            .out
            .push_str(if keyword { " attributes " } else { " " });
        self.p.attr_dict_entries(AttrDict::new(entries), &[]);
    }

    /// Print a region. Entry-block arguments are printed unless the op's
    /// syntax already declared them (`print_entry_args = false`).
    pub fn region(&mut self, op: OpId, r: RegionId, print_entry_args: bool) {
        self.in_region_body(op, |p| p.region_in_body(r, print_entry_args));
    }

    /// Run `f` with a printer for the body holding `op`'s regions (its own,
    /// named as the form names nested bodies, if `op` is isolated).
    fn in_region_body(&mut self, op: OpId, f: impl FnOnce(&mut OpPrinter<'_, '_>)) {
        let Some(inner) = self.body.op(op).inner.as_deref() else {
            return f(self);
        };
        let owned;
        let names = match self.table {
            Some(t) => t.names_of(inner),
            None => {
                owned = Names::compute(inner);
                &owned
            }
        };
        f(&mut OpPrinter {
            body: inner,
            names,
            table: self.table,
            p: &mut *self.p,
        })
    }

    fn region_in_body(&mut self, r: RegionId, print_entry_args: bool) {
        let body = self.body;
        let blocks = &body.region(r).blocks;
        self.p.out.push('{');
        let base = self.p.indent;
        let mut preds: Option<HashMap<BlockId, Vec<u32>>> = None;
        for (bi, &b) in blocks.iter().enumerate() {
            let args = &body.block(b).args;
            // An empty entry block is labelled so it is not read back as an
            // empty region (MLIR's generic form does the same).
            let label = bi > 0
                || (print_entry_args && (!args.is_empty() || body.block_first_op(b).is_none()));
            if label {
                self.p.newline();
                self.block_label(b);
                let preds = preds.get_or_insert_with(|| self.predecessors(r));
                let empty = vec![];
                self.pred_comment(bi, preds.get(&b).unwrap_or(&empty));
            }
            self.p.indent = base + 2;
            for op in body.block_ops(b) {
                self.p.newline();
                let scope = Scope {
                    names: self.names,
                    table: self.table,
                };
                self.p.print_op(body, scope, op);
            }
            self.p.indent = base;
        }
        self.p.newline();
        self.p.out.push('}');
    }

    /// For each block of `r`, the indices of the blocks branching to it, one
    /// per branch, in block order.
    fn predecessors(&self, r: RegionId) -> HashMap<BlockId, Vec<u32>> {
        let mut preds: HashMap<BlockId, Vec<u32>> = HashMap::default();
        for (bi, &b) in self.body.region(r).blocks.iter().enumerate() {
            for op in self.body.block_ops(b) {
                for &s in self.body.op(op).successors() {
                    preds.entry(s).or_default().push(bi as u32);
                }
            }
        }
        preds
    }

    /// MLIR's comment after a block label: `// pred: ^bb0`,
    /// `// 2 preds: ^bb1, ^bb2`, or `// no predecessors` (not for an entry block).
    fn pred_comment(&mut self, bi: usize, preds: &[u32]) {
        match preds {
            [] if bi == 0 => {}
            [] => self.p.out.push_str("  // no predecessors"),
            [one] => {
                self.p.out.push_str("  // pred: ^bb");
                push_u32(&mut self.p.out, *one);
            }
            many => {
                let _ = write!(self.p.out, "  // {} preds: ", many.len());
                for (i, &pb) in many.iter().enumerate() {
                    if i > 0 {
                        self.p.out.push_str(", ");
                    }
                    self.p.out.push_str("^bb");
                    push_u32(&mut self.p.out, pb);
                }
            }
        }
    }

    fn block_label(&mut self, b: BlockId) {
        self.block_name(b);
        let args = self.body.block(b).args.clone();
        if !args.is_empty() {
            self.p.out.push('(');
            for (i, &a) in args.iter().enumerate() {
                if i > 0 {
                    self.p.out.push_str(", ");
                }
                self.arg_decl(a);
            }
            self.p.out.push(')');
        }
        self.p.out.push(':');
    }

    pub fn block_name(&mut self, b: BlockId) {
        self.p.out.push_str("^bb");
        push_u32(
            &mut self.p.out,
            self.names.blocks.get(b.index()).copied().unwrap_or(0),
        );
    }

    /// MLIR's generic form.
    pub fn print_generic(&mut self, op: OpId) {
        let d = self.body.op(op);
        self.p.out.push('"');
        self.p.out.push_str(&escape(&d.name));
        self.p.out.push_str("\"(");
        let operands = d.operands().to_vec();
        self.value_list(&operands);
        self.p.out.push(')');
        if !d.successors().is_empty() {
            self.p.out.push('[');
            for (i, &s) in d.successors().to_vec().iter().enumerate() {
                if i > 0 {
                    self.p.out.push_str(", ");
                }
                self.block_name(s);
            }
            self.p.out.push(']');
        }
        let (props, rest) = split_properties(d);
        self.p.properties(props);
        let regions = d.regions().to_vec();
        if !regions.is_empty() {
            self.p.out.push_str(" (");
            for (i, &r) in regions.iter().enumerate() {
                if i > 0 {
                    self.p.out.push_str(", ");
                }
                self.region(op, r, true);
            }
            self.p.out.push(')');
        }
        if !rest.is_empty() {
            self.p.out.push(' ');
            self.p.attr_dict_entries(rest, &[]);
        }
        self.p.out.push_str(" : ");
        let ins = self.body.operand_types(op);
        let outs = self.body.result_types(op);
        self.functional_type(&ins, &outs);
    }

    /// Whether the op's first region's entry block carries arguments.
    pub fn entry_args(&self, op: OpId) -> Vec<ValueId> {
        let d = self.body.op(op);
        let b = d.region_body(self.body);
        d.regions()
            .first()
            .and_then(|&r| b.entry_block(r))
            .map(|e| b.block(e).args.clone())
            .unwrap_or_default()
    }

    /// ` {attrs}` after an argument's or result's type; nothing when empty.
    pub fn arg_attrs(&mut self, attrs: Option<AttrDict>) {
        if let Some(a) = attrs.filter(|a| !a.entries().is_empty()) {
            self.p.out.push(' ');
            self.p.attr_dict_entries(a, &[]);
        }
    }

    /// Print `%arg0: T, ...` of the op's entry block (function signatures).
    pub fn entry_arg_decls(&mut self, op: OpId) {
        self.entry_arg_decls_with_attrs(op, &[]);
    }

    /// [`Self::entry_arg_decls`] with argument `i`'s attributes `attrs[i]`.
    pub fn entry_arg_decls_with_attrs(&mut self, op: OpId, attrs: &[Option<AttrDict>]) {
        let args = self.entry_args(op);
        self.in_region_body(op, |p| {
            for (i, &a) in args.iter().enumerate() {
                if i > 0 {
                    p.write(", ");
                }
                p.arg_decl_with_attrs(a, attrs.get(i).copied().flatten());
            }
        });
    }

    pub fn has_trait(&self, op: OpId, t: Trait) -> bool {
        self.body.op(op).has_trait(t)
    }

    pub fn loc(&self, op: OpId) -> Location {
        self.body.op(op).loc
    }
}

// ---- types and attributes -------------------------------------------------

pub fn write_type(f: &mut dyn fmt::Write, t: Type, generic: bool) -> fmt::Result {
    write_type_styled(f, t, AttrStyle::plain(generic))
}

fn write_type_styled(f: &mut dyn fmt::Write, t: Type, style: AttrStyle<'_>) -> fmt::Result {
    // Types nest (function types, encodings): deep nesting must not overflow the stack.
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_type_rec(f, t, style))
}

fn write_type_rec(f: &mut dyn fmt::Write, t: Type, style: AttrStyle<'_>) -> fmt::Result {
    let generic = style.generic;
    match t.data() {
        TypeData::Scalar(d) => f.write_str(d.name()),
        TypeData::None => f.write_str("none"),
        TypeData::Tensor(tt) => {
            f.write_str("tensor<")?;
            let symbolic = generic && tt.has_symbolic_dims();
            match &tt.dims {
                None => f.write_str("*x")?,
                Some(ds) => {
                    for d in ds.iter() {
                        match d {
                            Dim::Sym(_) if generic => f.write_str("?")?,
                            d => write!(f, "{d}")?,
                        }
                        f.write_str("x")?;
                    }
                }
            }
            f.write_str(tt.dtype.name())?;
            if symbolic {
                f.write_str(", #ge.dims<\"")?;
                for (i, d) in tt.shape().iter().enumerate() {
                    if i > 0 {
                        f.write_str("x")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("\"")?;
                if let Some(e) = tt.encoding {
                    f.write_str(", ")?;
                    write_attr_mode(f, e, style, false)?;
                }
                f.write_str(">")?;
            } else if let Some(e) = tt.encoding {
                f.write_str(", ")?;
                write_attr_mode(f, e, style, false)?;
            }
            f.write_str(">")
        }
        TypeData::Function { inputs, results } => {
            f.write_str("(")?;
            for (i, t) in inputs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_type_styled(f, *t, style)?;
            }
            f.write_str(") -> ")?;
            if results.len() == 1 && !matches!(results[0].data(), TypeData::Function { .. }) {
                write_type_styled(f, results[0], style)
            } else {
                f.write_str("(")?;
                for (i, t) in results.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_type_styled(f, *t, style)?;
                }
                f.write_str(")")
            }
        }
        TypeData::Verbatim(text) => style.verbatim(f, text),
        TypeData::Opaque {
            dialect,
            name,
            body,
        } => {
            if name.is_empty() {
                write!(f, "!{dialect}{body}")
            } else {
                write!(f, "!{dialect}.{name}{body}")
            }
        }
    }
}

/// Float text that the parser reads back exactly (always with a `.`).
pub fn fmt_float(v: f64, dt: DType) -> String {
    // Finite in f64 may still be out of range for `dt` (3e38 as f16).
    if !crate::tensor::round_f(dt, v).is_finite() {
        return fmt_float_bits(v, dt);
    }
    let s = match dt {
        DType::F32 => format!("{:?}", v as f32),
        DType::F16 => format!("{:?}", half::f16::from_f64(v).to_f32()),
        DType::BF16 => format!("{:?}", half::bf16::from_f64(v).to_f32()),
        _ => format!("{v:?}"),
    };
    if s.contains('.') {
        s
    } else if let Some(i) = s.find('e') {
        format!("{}.0{}", &s[..i], &s[i..])
    } else {
        format!("{s}.0")
    }
}

/// MLIR's hex spelling of a float's bits (used for inf and nan).
fn fmt_float_bits(v: f64, dt: DType) -> String {
    crate::mlir_float::hex_bits(v, dt)
}

/// A float as the style prints it: MLIR's exact spelling in the generic
/// form (`1.500000e+00`), the shortest that reads back otherwise (`1.5`).
fn float_text(v: f64, dt: DType, style: AttrStyle<'_>) -> String {
    if style.generic {
        crate::mlir_float::mlir_float(v, dt)
    } else {
        fmt_float(v, dt)
    }
}

fn write_typed_suffix(f: &mut dyn fmt::Write, t: Type, style: AttrStyle<'_>) -> fmt::Result {
    f.write_str(" : ")?;
    write_type_styled(f, t, style)
}

/// An attribute in full (`1 : i64`, `2.5 : f32`).
pub fn write_attr(f: &mut dyn fmt::Write, a: Attribute, generic: bool) -> fmt::Result {
    write_attr_mode(f, a, AttrStyle::plain(generic), false)
}

/// An attribute with `i64`/`f64` types elided (array elements, format values).
pub fn write_attr_elided(f: &mut dyn fmt::Write, a: Attribute, generic: bool) -> fmt::Result {
    write_attr_mode(f, a, AttrStyle::plain(generic), true)
}

/// How attributes and types print: generic spellings, dense literals as hex
/// past a size, affine maps and sets by their aliases.
#[derive(Clone, Copy)]
struct AttrStyle<'a> {
    generic: bool,
    hex_over: Option<usize>,
    aliases: Option<&'a AffineAliases>,
}

impl<'a> AttrStyle<'a> {
    /// From a printer's fields (apart, so its output can be written meanwhile).
    fn new(opts: &PrintOptions, aliases: &'a Option<std::sync::Arc<AffineAliases>>) -> Self {
        AttrStyle {
            generic: opts.generic,
            hex_over: opts.hex_elements_over,
            aliases: aliases.as_deref(),
        }
    }

    fn plain(generic: bool) -> AttrStyle<'static> {
        AttrStyle {
            generic,
            hex_over: None,
            aliases: None,
        }
    }

    /// Verbatim text, affine maps and sets written as their aliases.
    fn verbatim(self, f: &mut dyn fmt::Write, text: &str) -> fmt::Result {
        match self.aliases {
            Some(a) => a.write_substituted(f, text),
            None => f.write_str(text),
        }
    }
}

fn write_attr_mode(
    f: &mut dyn fmt::Write,
    a: Attribute,
    style: AttrStyle<'_>,
    elide: bool,
) -> fmt::Result {
    // Arrays and dictionaries nest arbitrarily deep.
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        write_attr_mode_rec(f, a, style, elide)
    })
}

// long: one arm per attribute kind, the printing mirror of the parser's
// `build_attr_rec`; the arms share the style and elision state.
fn write_attr_mode_rec(
    f: &mut dyn fmt::Write,
    a: Attribute,
    style: AttrStyle<'_>,
    elide: bool,
) -> fmt::Result {
    match a.data() {
        AttrData::Unit => f.write_str("unit"),
        AttrData::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
        AttrData::Int { value, ty } => {
            match ty.data() {
                TypeData::Scalar(DType::I1) => {
                    write!(f, "{}", if *value != 0 { "true" } else { "false" })?
                }
                // The low bits of the type's width, read as MLIR prints them
                // (and the parser keeps them): unsigned types zero-extended,
                // signless ones sign-extended.
                TypeData::Scalar(d) if d.bit_width() < 64 => {
                    let shift = 64 - d.bit_width();
                    if d.is_unsigned_int() {
                        write!(f, "{}", ((*value as u64) << shift) >> shift)?
                    } else {
                        write!(f, "{}", (*value << shift) >> shift)?
                    }
                }
                TypeData::Scalar(DType::U64) => write!(f, "{}", *value as u64)?,
                _ => write!(f, "{value}")?,
            }
            if matches!(ty.data(), TypeData::Scalar(DType::I1))
                || (elide && *ty.data() == TypeData::Scalar(DType::I64))
            {
                return Ok(());
            }
            write_typed_suffix(f, *ty, style)
        }
        AttrData::Float { bits, ty } => {
            let dt = ty.dtype().unwrap_or(DType::F64);
            let text = float_text(f64::from_bits(*bits), dt, style);
            f.write_str(&text)?;
            // A hex f64 keeps its type (MLIR could not tell it from an integer).
            if elide && dt == DType::F64 && !(style.generic && text.starts_with("0x")) {
                return Ok(());
            }
            write_typed_suffix(f, *ty, style)
        }
        AttrData::String(s) => write_string_literal(f, s),
        AttrData::Array(xs) => {
            f.write_str("[")?;
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_attr_mode(f, *x, style, true)?;
            }
            f.write_str("]")
        }
        AttrData::DenseArray { dtype, values } => {
            write!(f, "array<{}", dtype.name())?;
            for (i, v) in values.iter().enumerate() {
                f.write_str(if i == 0 { ": " } else { ", " })?;
                if dtype.is_float() {
                    f.write_str(&float_text(f64::from_bits(*v as u64), *dtype, style))?;
                } else if *dtype == DType::I1 {
                    f.write_str(if *v != 0 { "true" } else { "false" })?;
                } else {
                    write!(f, "{v}")?;
                }
            }
            f.write_str(">")
        }
        AttrData::Dict(d) => {
            f.write_str("{")?;
            for (i, (k, v)) in d.entries().iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                let mut key = String::new();
                write_attr_key(&mut key, k);
                f.write_str(&key)?;
                if !matches!(v.data(), AttrData::Unit) {
                    f.write_str(" = ")?;
                    write_attr_mode(f, *v, style, false)?;
                }
            }
            f.write_str("}")
        }
        AttrData::Symbol(parts) => {
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    f.write_str("::")?;
                }
                f.write_str("@")?;
                let mut s = String::new();
                write_symbol_name(&mut s, p);
                f.write_str(&s)?;
            }
            Ok(())
        }
        AttrData::Type(t) => write_type_styled(f, *t, style),
        AttrData::Dense(d) => {
            f.write_str("dense<")?;
            write_dense_body_styled(f, d, style)?;
            f.write_str(">")?;
            write_typed_suffix(f, d.ty, style)
        }
        AttrData::DenseResource { name, ty } => {
            write!(f, "dense_resource<{name}>")?;
            write_typed_suffix(f, *ty, style)
        }
        AttrData::External {
            path,
            offset,
            length,
            ty,
        } => {
            f.write_str("#ge.external<")?;
            write_string_literal(f, path)?;
            write!(f, ", offset = {offset}, length = {length}, type = ")?;
            write_type_styled(f, *ty, style)?;
            f.write_str(">")
        }
        AttrData::Format(fa) => {
            write!(f, "#ge.format<{}", fa.storage)?;
            if let Some(o) = fa.origin {
                write!(f, ", origin = {o}")?;
            }
            if let Some(s) = &fa.origin_shape {
                f.write_str(", origin_shape = [")?;
                for (i, d) in s.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("]")?;
            }
            f.write_str(">")
        }
        AttrData::Verbatim(text) => style.verbatim(f, text),
        AttrData::Location(l) => write!(f, "{l}"),
        AttrData::Distinct { id, referenced } => {
            write!(f, "distinct[{id}]<")?;
            if !matches!(referenced.data(), AttrData::Unit) {
                // In full, also inside an array (`[distinct[0]<1 : i64>]`).
                write_attr_mode(f, *referenced, style, false)?;
            }
            f.write_str(">")
        }
        AttrData::Opaque {
            dialect,
            name,
            body,
        } => {
            if name.is_empty() {
                write!(f, "#{dialect}{body}")
            } else {
                write!(f, "#{dialect}.{name}{body}")
            }
        }
    }
}

/// The body of `dense<...>`: a splat, nested lists, or hex past `hex_over` elements.
pub fn write_dense_body(
    f: &mut dyn fmt::Write,
    d: &DenseElements,
    hex_over: Option<usize>,
) -> fmt::Result {
    write_dense_body_styled(
        f,
        d,
        AttrStyle {
            generic: false,
            hex_over,
            aliases: None,
        },
    )
}

/// [`write_dense_body`] as the generic form spells it (MLIR's splats and
/// float spelling); `hex`: more than 100 elements as hex, as MLIR does for
/// dense values but not for sparse indices.
pub fn write_dense_body_generic(
    f: &mut dyn fmt::Write,
    d: &DenseElements,
    hex: bool,
) -> fmt::Result {
    write_dense_body_styled(
        f,
        d,
        AttrStyle {
            generic: true,
            hex_over: Some(if hex {
                MLIR_HEX_ELEMENTS_OVER
            } else {
                usize::MAX
            }),
            aliases: None,
        },
    )
}

/// Elements MLIR prints as hex by default (`dense<"0x...">`) when there are
/// more of them than this.
const MLIR_HEX_ELEMENTS_OVER: usize = 100;

/// [`write_dense_body`] in a style. The generic form spells it as MLIR does:
/// elements all equal print as a splat, more than 100 elements as hex (unless
/// the options say otherwise), `i1` hex bit-packed, floats in MLIR's spelling.
fn write_dense_body_styled(
    f: &mut dyn fmt::Write,
    d: &DenseElements,
    style: AttrStyle<'_>,
) -> fmt::Result {
    let dt = d.dtype();
    let elem = |f: &mut dyn fmt::Write, e: Element| -> fmt::Result {
        match e {
            Element::Bool(b) => f.write_str(if b { "true" } else { "false" }),
            Element::Float(x) => f.write_str(&float_text(x, dt, style)),
            Element::Int(i) => write!(f, "{i}"),
            Element::UInt(u) => write!(f, "{u}"),
        }
    };
    let w = dt.byte_size().max(1);
    // MLIR: several equal elements, or a single one, are a splat.
    let all_equal = || d.bytes.chunks(w).all(|c| c == &d.bytes[..w]);
    if d.splat || (style.generic && (d.len() == 1 || (d.len() > 1 && all_equal()))) {
        return elem(f, d.get(0));
    }
    let hex_over = match style.hex_over {
        None if style.generic => Some(MLIR_HEX_ELEMENTS_OVER),
        h => h,
    };
    if hex_over.is_some_and(|n| d.len() > n) {
        let mut s = String::from("\"0x");
        if dt == DType::I1 {
            // MLIR keeps booleans one bit each, least significant first.
            let packed: Vec<u8> = d
                .bytes
                .chunks(8)
                .map(|c| {
                    c.iter()
                        .enumerate()
                        .fold(0u8, |a, (i, &b)| a | ((b & 1) << i))
                })
                .collect();
            push_hex(&mut s, &packed);
        } else {
            push_hex(&mut s, &d.bytes);
        }
        s.push('"');
        return f.write_str(&s);
    }
    let shape =
        d.ty.as_tensor()
            .and_then(|t| t.static_shape())
            .unwrap_or_default();
    if shape.is_empty() {
        return elem(f, d.get(0));
    }
    // Walk the flat elements, opening/closing brackets at dimension boundaries.
    let total: usize = shape.iter().product::<i64>() as usize;
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as usize;
    }
    if total == 0 {
        // `dense<>` as MLIR prints it: nested brackets cannot spell a shape
        // such as 0x3 (`[[]]` reads back as 1x0).
        return Ok(());
    }
    for i in 0..total {
        // Opening brackets: every dim whose block starts at i.
        let opens = (0..shape.len())
            .filter(|&k| i % (strides[k] * shape[k] as usize) == 0)
            .count();
        if i > 0 {
            f.write_str(", ")?;
        }
        for _ in 0..opens {
            f.write_str("[")?;
        }
        elem(f, d.get(i))?;
        let closes = (0..shape.len())
            .filter(|&k| (i + 1) % (strides[k] * shape[k] as usize) == 0)
            .count();
        for _ in 0..closes {
            f.write_str("]")?;
        }
    }
    Ok(())
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const H: &[u8; 16] = b"0123456789ABCDEF";
    let hex: Vec<u8> = bytes
        .iter()
        .flat_map(|&b| [H[(b >> 4) as usize], H[(b & 15) as usize]])
        .collect();
    // Only ASCII hex digits were written.
    out.push_str(std::str::from_utf8(&hex).unwrap_or_default());
}

/// A string's contents as MLIR (LLVM's `printEscapedString`) writes them:
/// printable ASCII as is, `\\` doubled, anything else (quotes, newlines,
/// UTF-8 bytes) as `\\XX`.
pub fn escape(s: &str) -> String {
    let plain = |b: u8| (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\';
    if s.bytes().all(plain) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for b in s.bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b if plain(b) => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
    out
}

pub fn write_string_literal(f: &mut dyn fmt::Write, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    f.write_str(&escape(s))?;
    f.write_str("\"")
}

fn is_bare(s: &str, allow_leading_digit: bool) -> bool {
    let mut cs = s.chars();
    match cs.next() {
        Some(c)
            if c.is_ascii_alphabetic()
                || c == '_'
                || (allow_leading_digit && c.is_ascii_digit()) => {}
        _ => return false,
    }
    cs.all(|c| c.is_ascii_alphanumeric() || "_$.".contains(c))
}

pub fn write_symbol_name(out: &mut String, s: &str) {
    if is_bare(s, false) {
        out.push_str(s);
    } else {
        out.push('"');
        out.push_str(&escape(s));
        out.push('"');
    }
}

fn write_attr_key(out: &mut String, s: &str) {
    write_symbol_name(out, s)
}

fn write_resource_key(out: &mut String, s: &str) {
    write_symbol_name(out, s)
}

/// `{-# dialect_resources: ..., external_resources: ... #-}` (nothing when
/// both are empty): `n_blobs` builtin blob entries, each written by `blob`
/// (see [`push_blob_entry`]), then the external resources. Incremental
/// compilation assembles the section from entries printed per unit.
pub fn push_resource_section(
    out: &mut String,
    n_blobs: usize,
    mut blob: impl FnMut(&mut String, usize),
    external: &crate::module::ExternalResources,
) {
    if n_blobs == 0 && external.is_empty() {
        return;
    }
    out.push_str("\n{-#\n");
    if n_blobs > 0 {
        out.push_str("  dialect_resources: {\n    builtin: {\n");
        for i in 0..n_blobs {
            blob(out, i);
            out.push_str(if i + 1 < n_blobs { ",\n" } else { "\n" });
        }
        out.push_str("    }\n  }");
    }
    if !external.is_empty() {
        if n_blobs > 0 {
            out.push_str(",\n");
        }
        out.push_str("  external_resources: {\n");
        let n = external.len();
        for (i, (group, entries)) in external.iter().enumerate() {
            out.push_str("    ");
            write_resource_key(out, group);
            out.push_str(": {\n");
            let m = entries.len();
            for (j, (k, v)) in entries.iter().enumerate() {
                push_resource_entry(out, k, v);
                out.push_str(if j + 1 < m { ",\n" } else { "\n" });
            }
            out.push_str(if i + 1 < n { "    },\n" } else { "    }\n" });
        }
        out.push_str("  }");
    }
    out.push_str("\n#-}\n");
}

/// One builtin blob's line of the resource section, `      name: "0x…"`
/// (without the separator).
pub fn push_blob_entry(out: &mut String, name: &str, blob: &crate::module::Blob) {
    out.push_str("      ");
    write_resource_key(out, name);
    out.push_str(": ");
    push_blob_hex(out, blob);
}

fn push_blob_hex(out: &mut String, blob: &crate::module::Blob) {
    out.push_str("\"0x");
    push_hex(out, &blob.alignment.to_le_bytes());
    push_hex(out, &blob.data);
    out.push('"');
}

fn push_resource_entry(out: &mut String, name: &str, value: &ResourceValue) {
    out.push_str("      ");
    write_resource_key(out, name);
    out.push_str(": ");
    match value {
        ResourceValue::Blob(b) => push_blob_hex(out, b),
        ResourceValue::String(s) => {
            let _ = write_string_literal(out, s);
        }
        ResourceValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
    }
}

/// The `dense_resource` names op `o` of `body` (and everything nested in
/// it) refers to, in the order the printer meets them (MLIR lists the blobs
/// in that order): an op's properties, then — in the generic form — what is
/// nested in its regions and after that its attributes; in the custom form
/// its attributes come first.
pub fn resources_in_print_order(
    body: &Body,
    o: OpId,
    opts: PrintOptions,
) -> Vec<crate::ident::Ident> {
    enum Step<'a> {
        Op(&'a Body, OpId),
        Attrs(Vec<Attribute>),
    }
    let mut seen = indexmap::IndexSet::new();
    let mut note = |a: Attribute| {
        a.for_each_nested(&mut |x| {
            if let AttrData::DenseResource { name, .. } = x.data() {
                seen.insert(*name);
            }
        })
    };
    let (generic, debuginfo) = (opts.generic, opts.debuginfo);
    let mut stack = vec![Step::Op(body, o)];
    while let Some(step) = stack.pop() {
        let (b, o) = match step {
            Step::Attrs(xs) => {
                xs.into_iter().for_each(&mut note);
                continue;
            }
            Step::Op(b, o) => (b, o),
        };
        let d = b.op(o);
        d.props.into_iter().for_each(&mut note);
        // An op's location prints after everything else of it.
        let mut locs = vec![];
        if debuginfo {
            d.loc.for_each_metadata(&mut |a| locs.push(a));
        }
        let after = d.attrs.entries().iter().map(|(_, a)| *a);
        if generic {
            stack.push(Step::Attrs(after.chain(locs).collect()));
        } else {
            after.for_each(&mut note);
            stack.push(Step::Attrs(locs));
        }
        let rb = d.region_body(b);
        let at = stack.len();
        for &r in d.regions() {
            for &blk in &rb.region(r).blocks {
                let mut arg_locs = vec![];
                if debuginfo {
                    for &a in &rb.block(blk).args {
                        rb.value(a).loc.for_each_metadata(&mut |m| arg_locs.push(m));
                    }
                }
                stack.push(Step::Attrs(arg_locs));
                stack.extend(rb.block_ops(blk).map(|c| Step::Op(rb, c)));
            }
        }
        stack[at..].reverse();
    }
    seen.into_iter().collect()
}

/// The operand types of a value's defining op, for messages.
pub fn describe_value(body: &Body, v: ValueId) -> String {
    match body.value(v).def {
        ValueDef::Result { op, index } => format!("result #{index} of '{}'", body.op(op).name),
        ValueDef::BlockArg { index, .. } => format!("block argument #{index}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::Attribute;

    #[test]
    fn integers_print_the_bits_of_their_width() {
        // Built by code, not parsed: printed as MLIR reads them back.
        let s = |v: i64, d: DType| {
            let mut out = String::new();
            write_attr(&mut out, Attribute::int(v, Type::scalar(d)), true).unwrap_or_default();
            out
        };
        assert_eq!(s(255, DType::I8), "-1 : i8");
        assert_eq!(s(-1, DType::U8), "255 : ui8");
        assert_eq!(s(-1, DType::U32), "4294967295 : ui32");
        assert_eq!(s(-1, DType::U64), "18446744073709551615 : ui64");
        assert_eq!(s(-5, DType::I16), "-5 : i16");
        assert_eq!(s(i64::MIN, DType::I64), "-9223372036854775808 : i64");
    }
}
