//! The `.air` parser: pest (`air.pest`) for everything lexical and for
//! types/attributes/locations; a small driver for the nesting of ops, regions
//! and blocks; op assembly formats (declarative, custom, or MLIR's generic
//! form) to bind each op's items. Errors are [`Diagnostic`]s with byte spans.

use crate::attributes::{AttrData, AttrDict, Attribute, DenseElements, Element, NamedAttr};
use crate::body::{BlockId, Body, OpId, OpState, RegionId, ValueId};
use crate::context::Context;
use crate::diagnostics::{Diagnostic, Pos};
use crate::dim::{Dim, DimExpr};
use crate::ident::Ident;
use crate::location::{LocData, Location};
use crate::module::{Blob, Module};
use crate::opdef::{AttrKind, OpDef, Trait};
use crate::types::{DType, TensorType, Type, TypeData};
use pest::iterators::Pair;
use pest::Parser as _;
use smallvec::SmallVec;
// FxHash: keys are short strings and small ids, hashed millions of times.
use rustc_hash::FxHashMap as HashMap;
use std::ops::Range;

mod build;
mod dense_text;
pub mod lex;
pub mod literals;
pub mod nesting;
mod op_parser;
mod parallel;
mod top_level;
pub use parallel::parallel_ops_parsed;
pub use top_level::{
    common_ends, resplit_module_text, resplit_with_ends, split_module_text, strip_trivia, TopLevel,
};

use literals::*;
pub use op_parser::OpParser;

#[derive(pest_derive::Parser)]
#[grammar = "air.pest"]
pub struct AirGrammar;

pub type PResult<T> = Result<T, Box<Diagnostic>>;

/// One token-level item of an op segment.
#[derive(Clone, Debug)]
pub enum ItemKind<'s> {
    Value { name: &'s str, index: u32 },
    Caret(&'s str),
    Symbol(Attribute),
    Dict(AttrDict),
    Attr(Attribute),
    Int(i64),
    Float(f64),
    Str(String),
    Type(Type),
    Keyword(&'s str),
    Punct(&'s str),
    Loc(Location),
}

#[derive(Clone, Debug)]
pub struct Item<'s> {
    pub kind: ItemKind<'s>,
    pub span: Range<usize>,
}

impl Item<'_> {
    /// A short description for "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            ItemKind::Value { name, .. } => format!("value '{name}'"),
            ItemKind::Caret(n) => format!("block '{n}'"),
            ItemKind::Symbol(a) => format!("symbol '{a}'"),
            ItemKind::Dict(_) => "attribute dictionary".into(),
            ItemKind::Attr(a) => format!("attribute '{a}'"),
            ItemKind::Int(i) => format!("integer '{i}'"),
            ItemKind::Float(f) => format!("float '{f}'"),
            ItemKind::Str(s) => format!("string {s:?}"),
            ItemKind::Type(t) => format!("type '{t}'"),
            ItemKind::Keyword(k) => format!("'{k}'"),
            ItemKind::Punct(p) => format!("'{p}'"),
            ItemKind::Loc(_) => "location".into(),
        }
    }
}

/// An operand named in the text, not yet bound to a value.
#[derive(Clone, Debug)]
pub struct OperandRef<'s> {
    pub name: &'s str,
    pub index: u32,
    pub span: Range<usize>,
}

/// A block argument declared in op syntax (`%x: T {attrs} loc(...)`).
#[derive(Clone, Debug)]
pub struct ArgDecl<'s> {
    pub name: &'s str,
    pub span: Range<usize>,
    pub ty: Type,
    /// MLIR's argument attributes (`{ge.name = "x"}`), as function
    /// signatures write them between the type and the location.
    pub attrs: Option<AttrDict>,
    pub loc: Option<Location>,
}

struct ValueDefEntry {
    values: SmallVec<[ValueId; 1]>,
    span: Range<usize>,
}

struct ForwardRef {
    placeholder: ValueId,
    dummy: OpId,
    span: Range<usize>,
}

struct BlockEntry {
    block: BlockId,
    defined: bool,
    span: Range<usize>,
}

/// A name scope: one per region. Isolated frames stop lookups and own the
/// forward references of everything nested in them.
#[derive(Default)]
struct Frame<'s> {
    names: HashMap<&'s str, ValueDefEntry>,
    isolated: bool,
    forward: HashMap<(&'s str, u32), ForwardRef>,
    blocks: HashMap<&'s str, BlockEntry>,
}

/// The parser state for one source buffer.
pub struct Parser<'c, 's> {
    pub ctx: &'c Context,
    src: &'s str,
    /// Offset of `src` within the registered source file (for split chunks).
    base: usize,
    file_id: usize,
    file_name: Ident,
    /// `file_name`'s index for packed locations.
    file_index: Option<u16>,
    /// Byte offsets of line starts in `src` (for op locations).
    line_starts: std::sync::Arc<[usize]>,
    /// Line number of the first line of `src` in the file (1-based).
    first_line: usize,
    pos: usize,
    type_aliases: HashMap<&'s str, Type>,
    attr_aliases: HashMap<&'s str, Attribute>,
    /// `#loc3 = loc(...)` definitions.
    loc_aliases: HashMap<&'s str, Location>,
    /// Uses of location aliases not defined when met (resolved at the end).
    loc_alias_uses: Vec<(&'s str, Range<usize>)>,
    /// Every `distinct[N]<…>` read: its id, referenced attribute and span
    /// (checked at the end: one id, one referenced attribute).
    distinct_uses: Vec<(u64, Attribute, Range<usize>)>,
    /// A worker parsing ops whose regions are not isolated records every
    /// value name it defines here (see `parallel`).
    defined_names: Option<Vec<&'s str>>,
    type_cache: HashMap<&'s str, Type>,
    /// Resolved op names → interned name and definition ([custom form, generic form]).
    op_names: [HashMap<String, (Ident, Option<&'static OpDef>)>; 2],
    frames: Vec<Frame<'s>>,
    bodies: Vec<Body>,
    resource_uses: Vec<(String, Range<usize>)>,
    resources: indexmap::IndexMap<String, Blob>,
    external_resources: crate::module::ExternalResources,
    forward_dummy: &'static OpDef,
    /// Parse runs of functions on rayon's threads (see `parallel`).
    parallel: bool,
    /// Ops starting before this offset were already considered for that.
    serial_until: usize,
    /// Line of the last location made (`loc_at` starts looking there).
    last_line: usize,
    /// The input nests at most `SHALLOW_NESTING` deep.
    shallow: bool,
}

crate::def_op! {
    /// Parser placeholder for a value used before its definition
    ForwardRefOp = "builtin.forward_ref" {}
}

fn span_pos(file: usize, r: Range<usize>) -> Pos {
    Pos::Span { file, range: r }
}

/// Where the text given to [`parse_module`] lies, for its locations and
/// diagnostics. The default is a whole file that is file 0 of the
/// [`crate::diagnostics::SourceMap`] (or of none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// The file's index in the [`crate::diagnostics::SourceMap`].
    pub file_id: usize,
    /// Byte offset of the text in its file (non-zero for a chunk of a split file).
    pub base: usize,
    /// Line number (1-based) of the text's first line in its file.
    pub first_line: usize,
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        ParseOptions {
            file_id: 0,
            base: 0,
            first_line: 1,
        }
    }
}

impl ParseOptions {
    /// A whole file, registered as `file_id` in the source map.
    pub fn file(file_id: usize) -> ParseOptions {
        ParseOptions {
            file_id,
            ..ParseOptions::default()
        }
    }
}

/// Parse a whole buffer into a module.
pub fn parse_module(
    ctx: &Context,
    file_name: &str,
    src: &str,
    opts: ParseOptions,
) -> PResult<Module> {
    let ParseOptions {
        file_id,
        base,
        first_line,
    } = opts;
    let mut p = Parser::new(ctx, file_name, file_id, src, base, first_line);
    // Every recursion below goes a bracket deeper: bound them all at once.
    if let Some(at) = nesting::scan(src, nesting::MAX_NESTING).too_deep_at {
        let (span, msg) = nesting::too_deep(at);
        return Err(p.err(span, msg));
    }
    p.parallel = ctx.threading && rayon::current_num_threads() > 1;
    if p.shallow {
        // A small input with a few levels of nesting (the usual unit of
        // incremental compilation). The per-op and per-item `maybe_grow`
        // calls protect the stack without mapping a new one (an mmap, and
        // TLB shootdowns on munmap, per parse).
        return p.parse_top();
    }
    // Big or deeply nested input: one large (lazily committed) stack for the
    // whole parse, enough for `MAX_NESTING` levels, so that per-op
    // `maybe_grow` calls below never need a new segment.
    stacker::maybe_grow(PARSE_RED_ZONE, PARSE_STACK, || p.parse_top())
}

/// Nesting (brackets outside strings and comments) up to which an input is
/// parsed on the caller's stack.
const SHALLOW_NESTING: usize = 64;
/// Inputs longer than this are not scanned for their nesting (the parse
/// gets a big stack; parallel workers scan their own batches).
const SHALLOW_SCAN_MAX: usize = 1 << 20;

/// Whether `src` nests brackets no deeper than [`SHALLOW_NESTING`].
fn is_shallow(src: &str) -> bool {
    nesting::scan(src, SHALLOW_NESTING).too_deep_at.is_none()
}

/// Run a pest rule: on the caller's stack for shallow inputs (with a guard
/// that maps a new segment only if it is nearly used up), else on a big one.
fn run_pest<'s>(
    shallow: bool,
    rule: Rule,
    text: &'s str,
) -> Result<pest::iterators::Pairs<'s, Rule>, pest::error::Error<Rule>> {
    if shallow {
        stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, || {
            AirGrammar::parse(rule, text)
        })
    } else {
        stacker::maybe_grow(4 * 1024 * 1024, 256 * 1024 * 1024, || {
            AirGrammar::parse(rule, text)
        })
    }
}

/// Stack the parser runs on unless this much is already available.
const PARSE_RED_ZONE: usize = 64 * 1024 * 1024;
/// Size of the parser's stack (virtual memory; only touched pages are committed).
const PARSE_STACK: usize = 256 * 1024 * 1024;

/// Parse a type from text (used for attribute defaults and tests).
pub fn parse_type_str(ctx: &Context, text: &str) -> PResult<Type> {
    let mut p = Parser::new(ctx, "<string>", 0, text, 0, 1);
    if let Some(at) = nesting::scan(text, nesting::MAX_NESTING).too_deep_at {
        let (span, msg) = nesting::too_deep(at);
        return Err(p.err(span, msg));
    }
    let pairs =
        run_pest(is_shallow(text), Rule::type_only, text).map_err(|e| p.pest_error(e, 0))?;
    let pair = pairs.into_iter().next().and_then(|x| x.into_inner().next());
    match pair {
        Some(pr) => p.build_type(pr),
        None => Err(p.err(0..text.len(), "expected type")),
    }
}

/// Parse an attribute from text (used for attribute defaults and tests).
pub fn parse_attr_str(ctx: &Context, text: &str) -> PResult<Attribute> {
    let mut p = Parser::new(ctx, "<string>", 0, text, 0, 1);
    if let Some(at) = nesting::scan(text, nesting::MAX_NESTING).too_deep_at {
        let (span, msg) = nesting::too_deep(at);
        return Err(p.err(span, msg));
    }
    let pairs =
        run_pest(is_shallow(text), Rule::attribute_only, text).map_err(|e| p.pest_error(e, 0))?;
    let pair = pairs.into_iter().next().and_then(|x| x.into_inner().next());
    match pair {
        Some(pr) => p.build_attr(pr),
        None => Err(p.err(0..text.len(), "expected attribute")),
    }
}

fn rule_desc(r: &Rule) -> &'static str {
    match r {
        Rule::type_ | Rule::simple_type | Rule::type_only => "type",
        Rule::scalar_type => "element type (f32, f16, bf16, i64, i1, index, …)",
        Rule::tensor_type => "tensor type",
        Rule::tensor_shape | Rule::dim => "dimension",
        Rule::attribute | Rule::attribute_only => "attribute",
        Rule::dict_entry => "attribute entry",
        Rule::value_id | Rule::value_use => "SSA value",
        Rule::op_name => "operation name",
        Rule::string => "string",
        Rule::integer | Rule::dec_int => "integer",
        Rule::float => "float",
        Rule::bare_id | Rule::keyword => "identifier",
        Rule::location | Rule::loc_inner => "location",
        Rule::caret_id | Rule::block_label => "block label",
        Rule::function_results => "function result types",
        Rule::EOI => "end of input",
        Rule::dense_body => "dense literal",
        Rule::dense_array_elem => "array element",
        Rule::dialect_body => "'>'",
        _ => "token",
    }
}

impl<'c, 's> Parser<'c, 's> {
    pub fn new(
        ctx: &'c Context,
        file_name: &str,
        file_id: usize,
        src: &'s str,
        base: usize,
        first_line: usize,
    ) -> Parser<'c, 's> {
        let mut line_starts = vec![0];
        line_starts.extend(memchr_newlines(src));
        Parser {
            ctx,
            src,
            base,
            file_id,
            file_name: Ident::new(file_name),
            file_index: crate::location::file_index(Ident::new(file_name)),
            line_starts: line_starts.into(),
            first_line,
            pos: 0,
            type_aliases: HashMap::default(),
            attr_aliases: HashMap::default(),
            loc_aliases: HashMap::default(),
            loc_alias_uses: vec![],
            distinct_uses: vec![],
            defined_names: None,
            type_cache: HashMap::default(),
            op_names: Default::default(),
            frames: vec![],
            bodies: vec![],
            resource_uses: vec![],
            resources: indexmap::IndexMap::new(),
            external_resources: indexmap::IndexMap::new(),
            forward_dummy: &FORWARD_REF_OP,
            parallel: false,
            serial_until: 0,
            last_line: 0,
            shallow: src.len() <= SHALLOW_SCAN_MAX && is_shallow(src),
        }
    }

    // ---- errors and positions ------------------------------------------------

    pub fn err(&self, span: Range<usize>, msg: impl Into<String>) -> Box<Diagnostic> {
        Box::new(Diagnostic::error(msg, self.pos_of(span)))
    }

    pub fn pos_of(&self, span: Range<usize>) -> Pos {
        span_pos(self.file_id, span.start + self.base..span.end + self.base)
    }

    fn loc_at(&mut self, offset: usize) -> Location {
        // Ops come in source order: the line is usually the last one or a
        // few after it, which a short forward scan finds without a search.
        let ls = &self.line_starts;
        let mut line = self.last_line;
        if ls[line] <= offset {
            let mut steps = 0;
            while line + 1 < ls.len() && ls[line + 1] <= offset && steps < 8 {
                line += 1;
                steps += 1;
            }
        }
        if ls[line] > offset || (line + 1 < ls.len() && ls[line + 1] <= offset) {
            line = match ls.binary_search(&offset) {
                Ok(i) => i,
                Err(i) => i - 1,
            };
        }
        self.last_line = line;
        let line_start = self.line_starts[line];
        let prefix = &self.src[line_start..offset];
        // Columns count characters; ASCII lines (the usual case) need no decoding.
        let col = if prefix.is_ascii() {
            prefix.len()
        } else {
            prefix.chars().count()
        } + 1;
        let line = (line + self.first_line) as u32;
        match self.file_index {
            Some(i) => Location::packed(i, line, col as u32),
            None => Location::new(LocData::File {
                file: self.file_name,
                line,
                col: col as u32,
            }),
        }
    }

    fn pest_error(&self, e: pest::error::Error<Rule>, offset: usize) -> Box<Diagnostic> {
        let at = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        } + offset;
        let msg = match &e.variant {
            pest::error::ErrorVariant::ParsingError { positives, .. } => {
                let mut names: Vec<&str> = positives.iter().map(rule_desc).collect();
                names.dedup();
                if names.is_empty() {
                    "unexpected token".to_string()
                } else {
                    format!("expected {}", names.join(" or "))
                }
            }
            pest::error::ErrorVariant::CustomError { message }
                if message.contains("limit reached") =>
            {
                "input is nested too deeply for the parser".to_string()
            }
            pest::error::ErrorVariant::CustomError { message } => message.clone(),
        };
        let end = self.token_end(at);
        let found = &self.src[at..end];
        let msg = if found.is_empty() {
            format!("{msg}, found end of input")
        } else if found.starts_with('"') && !self.string_terminates(at) {
            "unterminated string literal".to_string()
        } else {
            msg
        };
        self.err(at..end.max(at), msg)
    }

    /// Whether the string literal starting at `at` is closed on its line.
    fn string_terminates(&self, at: usize) -> bool {
        let mut esc = false;
        for c in self.src[at + 1..].chars() {
            match c {
                '\n' => return false,
                '\\' if !esc => esc = true,
                '"' if !esc => return true,
                _ => esc = false,
            }
        }
        false
    }

    /// End of the token starting at `at` (for labels).
    fn token_end(&self, at: usize) -> usize {
        let rest = &self.src[at.min(self.src.len())..];
        if let Some(body) = rest.strip_prefix('"') {
            let mut esc = false;
            for (i, c) in body.char_indices() {
                match c {
                    '\\' if !esc => esc = true,
                    '"' if !esc => return at + i + 2,
                    '\n' => return at + i + 1,
                    _ => esc = false,
                }
            }
            return at + rest.len();
        }
        let n = rest
            .char_indices()
            .find(|&(_, c)| c.is_whitespace() || (",;(){}[]<>=".contains(c)))
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        at + n.max(rest.chars().next().map_or(0, |c| c.len_utf8()))
    }

    fn skip_ws(&mut self) {
        let b = self.src.as_bytes();
        loop {
            while self.pos < b.len() && b[self.pos].is_ascii_whitespace() {
                self.pos += 1;
            }
            if b[self.pos..].starts_with(b"//") {
                while self.pos < b.len() && b[self.pos] != b'\n' {
                    self.pos += 1;
                }
                continue;
            }
            break;
        }
    }

    fn peek_char(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn rest(&self) -> &'s str {
        &self.src[self.pos..]
    }

    fn run(&self, rule: Rule) -> PResult<Pair<'s, Rule>> {
        let text = self.rest();
        let res = run_pest(self.shallow, rule, text);
        match res {
            Ok(mut pairs) => pairs
                .next()
                .ok_or_else(|| self.err(self.pos..self.pos, "expected input")),
            Err(e) => Err(self.pest_error(e, self.pos)),
        }
    }

    /// Absolute (within `src`) span of a pair parsed from `rest()` at `base`.
    fn pspan(pair: &Pair<'s, Rule>, base: usize) -> Range<usize> {
        let s = pair.as_span();
        base + s.start()..base + s.end()
    }

    // ---- top level -------------------------------------------------------------

    fn parse_top(&mut self) -> PResult<Module> {
        let mut top = Body::new();
        let root = top.new_region(None);
        let block = top.add_block(root);
        self.bodies.push(top);
        self.frames.push(Frame {
            isolated: true,
            ..Frame::default()
        });
        let mut first_op_pos = None;
        loop {
            self.skip_ws();
            let Some(c) = self.peek_char() else { break };
            if self.rest().starts_with("{-#") {
                self.parse_resources()?;
                continue;
            }
            if c == b'!' || (c == b'#' && self.is_alias_def()) {
                self.parse_alias_def()?;
                continue;
            }
            if c == b'}' {
                return Err(self.err(self.pos..self.pos + 1, "unexpected '}' at top level"));
            }
            first_op_pos.get_or_insert(self.pos);
            if self.parse_parallel_run(block) {
                continue;
            }
            let op = self.parse_op()?;
            self.bodies[0].append_op(block, op);
        }
        self.pop_frame()?;
        self.resolve_loc_aliases()?;
        self.check_distinct_uses()?;
        for (name, span) in std::mem::take(&mut self.resource_uses) {
            if !self.resources.contains_key(&name) {
                return Err(self.err(
                    span,
                    format!("dense_resource '{name}' has no blob in the resource section"),
                ));
            }
        }
        let top = self.bodies.pop().expect("top body");
        let ops: Vec<OpId> = top.block_ops(block).collect();
        let is_module = ops.len() == 1 && crate::builtin::Module::is(top.op(ops[0]));
        let mut module = if is_module {
            let mut top = top;
            // A generic `"builtin.module"() ({})` still gets its one block.
            if let Some(inner) = top.inner_mut(ops[0]) {
                if let Some(&r) = inner.root_regions().first() {
                    if inner.region(r).blocks.is_empty() {
                        inner.add_block(r);
                    }
                }
            }
            Module::from_parts(top, ops[0])
        } else {
            let mut outer = Body::new();
            let r = outer.new_region(None);
            let b = outer.add_block(r);
            // At its first op, so that module-level diagnostics point into the
            // file (mlir-opt says `file:0:0`, which points nowhere).
            let mut st = OpState::new(
                crate::builtin::Module::NAME,
                self.loc_at(first_op_pos.unwrap_or(0)),
            );
            st.def = Some(crate::builtin::Module::DEF);
            let op = outer.create_op_with_regions(st, vec![root], Some(Box::new(top)));
            outer.append_op(b, op);
            Module::from_parts(outer, op)
        };
        module.resources = std::mem::take(&mut self.resources);
        module.external_resources = std::mem::take(&mut self.external_resources);
        Ok(module)
    }

    /// Replace the location aliases used before their definitions, in every
    /// op's and block argument's location, once all definitions are read.
    fn resolve_loc_aliases(&mut self) -> PResult<()> {
        if self.loc_alias_uses.is_empty() {
            return Ok(());
        }
        // Each alias resolved once; a cycle (`#a = loc(#b)`, `#b = loc(#a)`) is an error.
        let mut done: HashMap<Ident, Option<Location>> = HashMap::default();
        let defs: HashMap<Ident, Location> = self
            .loc_aliases
            .iter()
            .map(|(k, v)| (Ident::new(k), *v))
            .collect();
        fn resolve(
            name: Ident,
            defs: &HashMap<Ident, Location>,
            done: &mut HashMap<Ident, Option<Location>>,
        ) -> Option<Location> {
            if let Some(r) = done.get(&name) {
                return *r;
            }
            done.insert(name, None);
            let r = defs
                .get(&name)
                .and_then(|l| l.resolve_aliases(&mut |n| resolve(n, defs, done)).ok());
            done.insert(name, r);
            r
        }
        for (name, span) in std::mem::take(&mut self.loc_alias_uses) {
            if resolve(Ident::new(name), &defs, &mut done).is_none() {
                let why = if defs.contains_key(&Ident::new(name)) {
                    "is defined in terms of itself"
                } else {
                    "is not defined"
                };
                return Err(self.err(span, format!("location alias '#{name}' {why}")));
            }
        }
        let mut lookup = |n: Ident| done.get(&n).copied().flatten();
        let mut stack: Vec<&mut Body> = self.bodies.iter_mut().collect();
        while let Some(body) = stack.pop() {
            for v in 0..body.value_capacity() {
                let v = ValueId(v as u32);
                let l = body.value(v).loc;
                if l.has_alias() {
                    let l = l.resolve_aliases(&mut lookup).unwrap_or_default();
                    body.set_value_loc(v, l);
                }
            }
            for d in Body::ops_mut(body) {
                if d.loc.has_alias() {
                    d.loc = d.loc.resolve_aliases(&mut lookup).unwrap_or_default();
                }
                if let Some(inner) = d.inner.as_deref_mut() {
                    stack.push(inner);
                }
            }
        }
        Ok(())
    }

    /// Within a file, every `distinct[N]<…>` with the same N is the same
    /// attribute, so it must refer to the same attribute (mlir-opt's rule and
    /// message).
    fn check_distinct_uses(&mut self) -> PResult<()> {
        let mut first: HashMap<u64, Attribute> = HashMap::default();
        for (id, referenced, span) in std::mem::take(&mut self.distinct_uses) {
            match first.get(&id) {
                Some(&r) if r != referenced => {
                    return Err(self.err(
                        span,
                        format!("referenced attribute does not match previous definition: {r}"),
                    ))
                }
                Some(_) => {}
                None => {
                    first.insert(id, referenced);
                }
            }
        }
        Ok(())
    }

    fn is_alias_def(&self) -> bool {
        // `#name = ...` at top level (an op never starts with `#`).
        let r = self.rest();
        let end = r[1..]
            .find(|c: char| !(c.is_alphanumeric() || "_$.-".contains(c)))
            .map_or(r.len(), |i| i + 1);
        r[end..].trim_start().starts_with('=')
    }

    fn parse_alias_def(&mut self) -> PResult<()> {
        let start = self.pos;
        if self.peek_char() == Some(b'!') {
            let pair = self.run(Rule::type_alias_def)?;
            let mut it = pair.clone().into_inner();
            let name = it.next().map(|p| &p.as_str()[1..]).unwrap_or("");
            let ty_pair = it
                .next()
                .ok_or_else(|| self.err(start..start + 1, "expected type"))?;
            let ty = self.build_type_at(ty_pair, start)?;
            if self.type_aliases.insert(name, ty).is_some() {
                return Err(self.err(
                    start..start + name.len() + 1,
                    format!("redefinition of type alias '!{name}'"),
                ));
            }
            self.pos = start + pair.as_span().end();
        } else {
            let pair = self.run(Rule::attr_alias_def)?;
            let mut it = pair.clone().into_inner();
            let name = it.next().map(|p| &p.as_str()[1..]).unwrap_or("");
            let attr_pair = it
                .next()
                .ok_or_else(|| self.err(start..start + 1, "expected attribute"))?;
            let loc = attr_pair
                .clone()
                .into_inner()
                .next()
                .filter(|p| p.as_rule() == Rule::location_attr)
                .and_then(|p| p.into_inner().next());
            let redefined = match loc {
                Some(l) => {
                    let loc = self.build_loc(l, start)?;
                    self.loc_aliases.insert(name, loc).is_some()
                        || self.attr_aliases.contains_key(name)
                }
                None => {
                    let attr = self.build_attr_at(attr_pair, start)?;
                    self.attr_aliases.insert(name, attr).is_some()
                        || self.loc_aliases.contains_key(name)
                }
            };
            if redefined {
                return Err(self.err(
                    start..start + name.len() + 1,
                    format!("redefinition of attribute alias '#{name}'"),
                ));
            }
            self.pos = start + pair.as_span().end();
        }
        Ok(())
    }

    /// `{-# dialect_resources: {...}, external_resources: {...} #-}`. The
    /// builtin dialect's resources are `dense_resource` blobs; external ones
    /// are kept as read and printed back. Anything else (other dialects'
    /// resources, other sections) is an error, never dropped.
    fn parse_resources(&mut self) -> PResult<()> {
        let start = self.pos;
        let pair = self.run(Rule::resource_section)?;
        for group in pair.clone().into_inner() {
            let gspan = Self::pspan(&group, start);
            let mut g = group.into_inner();
            let kind = g.next().map(|p| p.as_str()).unwrap_or("");
            if kind != "dialect_resources" && kind != "external_resources" {
                return Err(self.err(
                    gspan,
                    format!("unknown resource section '{kind}' (expected 'dialect_resources' or 'external_resources')"),
                ));
            }
            for dialect in g {
                let dspan = Self::pspan(&dialect, start);
                let mut d = dialect.into_inner();
                let dname = d.next().map(|p| p.as_str()).unwrap_or("");
                if kind == "dialect_resources" && dname != "builtin" {
                    return Err(self.err(
                        dspan,
                        format!("resources of dialect '{dname}' cannot be kept: ge reads the builtin dialect's (dense_resource blobs) only"),
                    ));
                }
                for entry in d {
                    let sp = Self::pspan(&entry, start);
                    let mut e = entry.into_inner();
                    let key = e
                        .next()
                        .map_or(Some(String::new()), |p| unquote_key(p.as_str()))
                        .ok_or_else(|| self.err(sp.clone(), NOT_UTF8))?;
                    let val = e.next().map(|p| p.as_str()).unwrap_or("");
                    let blob = || {
                        parse_hex_blob(val).ok_or_else(|| {
                            self.err(sp.clone(), format!("resource '{key}' is not a valid hex blob (\"0x\" + 4-byte alignment + data)"))
                        })
                    };
                    let dup = if kind == "dialect_resources" {
                        let b = blob()?;
                        self.resources.insert(key.clone(), b).is_some()
                    } else {
                        let value = if val.starts_with("\"0x") {
                            crate::module::ResourceValue::Blob(blob()?)
                        } else if let Some(q) =
                            val.strip_prefix('"').and_then(|v| v.strip_suffix('"'))
                        {
                            crate::module::ResourceValue::String(
                                unescape(q).ok_or_else(|| self.err(sp.clone(), NOT_UTF8))?,
                            )
                        } else {
                            crate::module::ResourceValue::Bool(val == "true")
                        };
                        self.external_resources
                            .entry(dname.to_string())
                            .or_default()
                            .insert(key.clone(), value)
                            .is_some()
                    };
                    if dup {
                        return Err(self.err(
                            sp,
                            format!("resource '{key}' of '{dname}' is defined twice"),
                        ));
                    }
                }
            }
        }
        self.pos = start + pair.as_span().end();
        Ok(())
    }

    // ---- ops ---------------------------------------------------------------

    /// Parse one op at `pos` into the current body; returns it detached.
    fn parse_op(&mut self) -> PResult<OpId> {
        stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, || self.parse_op_inner())
    }

    fn parse_op_inner(&mut self) -> PResult<OpId> {
        let start = self.pos;
        if lex::fast_lexer() {
            if let Some(head) = self.lex_head() {
                let mut items = Vec::with_capacity(16);
                self.lex_items(&mut items)?;
                let (name, generic, name_span) = head.name;
                return self.parse_op_body(start, head.results, name, generic, name_span, items);
            }
            self.pos = start;
        }
        let seg = self.run(Rule::op_segment)?;
        let mut result_groups: Vec<(&'s str, u32, Range<usize>)> = vec![];
        let mut name_pair = None;
        let mut items = Vec::new();
        for p in seg.clone().into_inner() {
            match p.as_rule() {
                Rule::op_results => {
                    for g in p.into_inner() {
                        let sp = Self::pspan(&g, start);
                        let mut it = g.into_inner();
                        let name = it.next().map(|x| x.as_str()).unwrap_or("%");
                        let count = match it.next() {
                            Some(n) => n
                                .as_str()
                                .parse::<u32>()
                                .map_err(|_| self.err(sp.clone(), "invalid result count"))?,
                            None => 1,
                        };
                        if count == 0 {
                            return Err(self.err(sp, "expected a non-zero result count"));
                        }
                        result_groups.push((name, count, sp));
                    }
                }
                Rule::op_name => name_pair = Some(p),
                _ => items.push(self.build_item(p, start)?),
            }
        }
        let name_pair =
            name_pair.ok_or_else(|| self.err(start..start + 1, "expected operation name"))?;
        let name_span = Self::pspan(&name_pair, start);
        let inner_name = name_pair.into_inner().next();
        let (name, generic): (String, bool) = match inner_name {
            Some(n) if n.as_rule() == Rule::string => {
                let n = unescape(&n.as_str()[1..n.as_str().len() - 1])
                    .ok_or_else(|| self.err(name_span.clone(), NOT_UTF8))?;
                (n, true)
            }
            Some(n) => (n.as_str().to_string(), false),
            None => return Err(self.err(name_span, "expected operation name")),
        };
        self.pos = start + seg.as_span().end();
        self.parse_op_body(start, result_groups, name.into(), generic, name_span, items)
    }

    /// Bind a segment's items with the op's format and create the op.
    fn parse_op_body(
        &mut self,
        start: usize,
        result_groups: Vec<(&'s str, u32, Range<usize>)>,
        name: std::borrow::Cow<'s, str>,
        generic: bool,
        name_span: Range<usize>,
        items: Vec<Item<'s>>,
    ) -> PResult<OpId> {
        let (name, def) = self.resolve_op_name(&name, generic, name_span.clone())?;
        let mut op = OpParser {
            p: self,
            items,
            idx: 0,
            def,
            name,
            name_span: name_span.clone(),
            start,
            operands: vec![],
            result_types: None,
            attrs: vec![],
            props: None,
            regions: vec![],
            successors: vec![],
            inner: None,
            region_frames_isolated: def.is_some_and(|d| d.has_trait(Trait::IsolatedFromAbove)),
        };
        if generic {
            op.parse_generic()?;
        } else if let Some(def) = def {
            if let Some(syn) = def.syntax {
                (syn.parse)(&mut op)?;
            } else if let Some(fmt) = def.compiled_format() {
                fmt.parse(&mut op)?;
            } else if def.format.is_some() {
                let e = def
                    .compiled
                    .get()
                    .and_then(|r| r.as_ref().err())
                    .cloned()
                    .unwrap_or_default();
                return Err(op.p.err(
                    name_span,
                    format!("op '{}' has an invalid assembly format: {e}", def.name),
                ));
            } else {
                return Err(op.p.err(
                    name_span,
                    format!(
                        "op '{}' has no custom assembly form; use the generic form",
                        def.name
                    ),
                ));
            }
        }
        op.finish(result_groups)
    }

    fn resolve_op_name(
        &mut self,
        name: &str,
        generic: bool,
        span: Range<usize>,
    ) -> PResult<(Ident, Option<&'static OpDef>)> {
        let cache = &self.op_names[generic as usize];
        if let Some(&hit) = cache.get(name) {
            return Ok(hit);
        }
        let r = self.resolve_op_name_uncached(name, generic, span)?;
        self.op_names[generic as usize].insert(name.to_string(), r);
        Ok(r)
    }

    fn resolve_op_name_uncached(
        &self,
        name: &str,
        generic: bool,
        span: Range<usize>,
    ) -> PResult<(Ident, Option<&'static OpDef>)> {
        let full = if !name.contains('.') {
            format!("builtin.{name}")
        } else {
            name.to_string()
        };
        if let Some(def) = self.ctx.op_def(&full) {
            return Ok((Ident::new(def.name), Some(def)));
        }
        if !generic {
            return Err(self.err(span, format!("custom op '{name}' is unknown")));
        }
        let dialect = name.split_once('.').map_or("", |(d, _)| d);
        if self.ctx.is_dialect_registered(dialect) {
            return Err(self.err(
                span,
                format!("unregistered operation '{name}' found in dialect ('{dialect}') that does not allow unknown operations"),
            ));
        }
        if !self.ctx.allow_unregistered {
            return Err(self.err(
                span,
                format!("operation '{name}' of unregistered dialect '{dialect}'; use --allow-unregistered-dialect to keep it"),
            ));
        }
        Ok((Ident::new(name), None))
    }

    // ---- scopes ------------------------------------------------------------

    fn push_frame(&mut self, isolated: bool) {
        self.frames.push(Frame {
            isolated,
            ..Frame::default()
        });
    }

    fn pop_frame(&mut self) -> PResult<()> {
        let f = self.frames.pop().expect("frame");
        if let Some((name, e)) = f
            .blocks
            .iter()
            .filter(|(_, e)| !e.defined)
            .min_by_key(|(_, e)| e.span.start)
        {
            return Err(self.err(
                e.span.clone(),
                format!("reference to an undefined block '{name}'"),
            ));
        }
        if f.isolated {
            if let Some(((name, idx), fr)) = f.forward.iter().min_by_key(|(_, fr)| fr.span.start) {
                let shown = if *idx == 0 {
                    name.to_string()
                } else {
                    format!("{name}#{idx}")
                };
                return Err(self.err(
                    fr.span.clone(),
                    format!("use of undeclared SSA value name '{shown}'"),
                ));
            }
        }
        Ok(())
    }

    fn body(&mut self) -> &mut Body {
        self.bodies.last_mut().expect("body")
    }

    fn isolated_frame_index(&self) -> usize {
        self.frames.iter().rposition(|f| f.isolated).unwrap_or(0)
    }

    fn lookup(&self, name: &str) -> Option<&ValueDefEntry> {
        for f in self.frames.iter().rev() {
            if let Some(e) = f.names.get(name) {
                return Some(e);
            }
            if f.isolated {
                break;
            }
        }
        None
    }

    /// Bind a name to values in the innermost frame, resolving forward references.
    fn define(
        &mut self,
        name: &'s str,
        values: SmallVec<[ValueId; 1]>,
        span: Range<usize>,
    ) -> PResult<()> {
        if let Some(prev) = self.lookup(name) {
            let prev_span = prev.span.clone();
            return Err(Box::new(
                Diagnostic::error(
                    format!("redefinition of SSA value '{name}'"),
                    self.pos_of(span),
                )
                .with_label("redefined here")
                .with_note("previously defined here", self.pos_of(prev_span)),
            ));
        }
        let fi = self.isolated_frame_index();
        for (i, &v) in values.iter().enumerate() {
            if let Some(fr) = self.frames[fi].forward.remove(&(name, i as u32)) {
                let want = self.body().value_type(fr.placeholder);
                let got = self.body().value_type(v);
                if want != got {
                    return Err(Box::new(
                        Diagnostic::error(
                            format!("definition of '{name}' has type '{got}' but earlier uses expect '{want}'"),
                            self.pos_of(span),
                        )
                        .with_note("first used here", self.pos_of(fr.span)),
                    ));
                }
                let body = self.body();
                body.replace_all_uses(fr.placeholder, v);
                body.erase_op(fr.dummy);
            }
        }
        if let Some(d) = &mut self.defined_names {
            d.push(name);
        }
        let top = self.frames.last_mut().expect("frame");
        top.names.insert(name, ValueDefEntry { values, span });
        Ok(())
    }

    /// Resolve a use to a value of type `ty`, creating a forward reference if needed.
    fn resolve_use(&mut self, r: &OperandRef<'s>, ty: Type) -> PResult<ValueId> {
        if let Some(e) = self.lookup(r.name) {
            let Some(&v) = e.values.get(r.index as usize) else {
                let n = e.values.len();
                return Err(self.err(
                    r.span.clone(),
                    format!(
                        "reference to invalid result number {} of '{}' (it has {n})",
                        r.index, r.name
                    ),
                ));
            };
            let have = self.bodies.last().expect("body").value_type(v);
            if have != ty {
                let def_span = e.span.clone();
                return Err(Box::new(
                    Diagnostic::error(
                        format!("use of value '{}' expects different type than prior uses: '{ty}' vs '{have}'", r.name),
                        self.pos_of(r.span.clone()),
                    )
                    .with_label(format!("used as '{ty}'"))
                    .with_note(format!("defined here as '{have}'"), self.pos_of(def_span)),
                ));
            }
            return Ok(v);
        }
        let fi = self.isolated_frame_index();
        if let Some(fr) = self.frames[fi].forward.get(&(r.name, r.index)) {
            let have = self.bodies.last().expect("body").value_type(fr.placeholder);
            if have != ty {
                return Err(self.err(
                    r.span.clone(),
                    format!("use of value '{}' expects different type than prior uses: '{ty}' vs '{have}'", r.name),
                ));
            }
            return Ok(fr.placeholder);
        }
        let mut st = OpState::new(FORWARD_REF_OP.name, Location::unknown());
        st.def = Some(self.forward_dummy);
        st.result_types = vec![ty];
        let body = self.body();
        let dummy = body.create_op(st);
        let v = body.result(dummy, 0);
        self.frames[fi].forward.insert(
            (r.name, r.index),
            ForwardRef {
                placeholder: v,
                dummy,
                span: r.span.clone(),
            },
        );
        Ok(v)
    }

    fn block_ref(&mut self, name: &'s str, span: Range<usize>, defining: bool) -> PResult<BlockId> {
        let top = self.frames.len() - 1;
        if let Some(e) = self.frames[top].blocks.get_mut(name) {
            if defining {
                if e.defined {
                    let prev = e.span.clone();
                    return Err(Box::new(
                        Diagnostic::error(
                            format!("redefinition of block '{name}'"),
                            self.pos_of(span),
                        )
                        .with_note("previously defined here", self.pos_of(prev)),
                    ));
                }
                e.defined = true;
                e.span = span;
            }
            return Ok(e.block);
        }
        let b = self.body().new_block();
        self.frames[top].blocks.insert(
            name,
            BlockEntry {
                block: b,
                defined: defining,
                span,
            },
        );
        Ok(b)
    }

    // ---- regions -----------------------------------------------------------

    /// Parse `{ ... }` at `pos` into `region` of the current body.
    fn parse_region_body(
        &mut self,
        region: RegionId,
        args: &[ArgDecl<'s>],
        isolated: bool,
    ) -> PResult<()> {
        self.skip_ws();
        let open = self.pos;
        if self.peek_char() != Some(b'{') {
            return Err(self.err(open..open + 1, "expected '{' to begin a region"));
        }
        self.pos += 1;
        self.push_frame(isolated);
        let mut current: Option<BlockId> = None;
        if !args.is_empty() {
            let b = self.body().add_block(region);
            for a in args {
                let loc = a.loc.unwrap_or_else(|| self.loc_at(a.span.start));
                let v = self.body().add_block_arg(b, a.ty, loc);
                self.define(a.name, smallvec::smallvec![v], a.span.clone())?;
            }
            current = Some(b);
        }
        loop {
            self.skip_ws();
            match self.peek_char() {
                None => return Err(self.err(open..open + 1, "unterminated region: expected '}'")),
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                Some(b'^') => {
                    let start = self.pos;
                    let label = self.run(Rule::block_label)?;
                    let mut it = label.clone().into_inner();
                    let name_pair = it
                        .next()
                        .ok_or_else(|| self.err(start..start + 1, "expected block name"))?;
                    let name = name_pair.as_str();
                    let nspan = Self::pspan(&name_pair, start);
                    if !args.is_empty()
                        && current.is_some()
                        && self.body().region(region).blocks.len() == 1
                        && self
                            .body()
                            .block_first_op(current.unwrap_or(BlockId(0)))
                            .is_none()
                    {
                        return Err(
                            self.err(nspan, "invalid block name in region with named arguments")
                        );
                    }
                    let b = self.block_ref(name, nspan.clone(), true)?;
                    self.body().attach_block(region, b);
                    self.pos = start + label.as_span().end();
                    for a in it {
                        let mut ai = a.into_inner();
                        let vname = ai
                            .next()
                            .ok_or_else(|| self.err(nspan.clone(), "expected argument"))?;
                        let vspan = Self::pspan(&vname, start);
                        let tp = ai
                            .next()
                            .ok_or_else(|| self.err(vspan.clone(), "expected type"))?;
                        let ty = self.build_type_at(tp, start)?;
                        let loc = match ai.next() {
                            Some(l) => self.build_loc(l, start)?,
                            None => self.loc_at(vspan.start),
                        };
                        let v = self.body().add_block_arg(b, ty, loc);
                        self.define(vname.as_str(), smallvec::smallvec![v], vspan)?;
                    }
                    current = Some(b);
                }
                Some(_) => {
                    let b = match current {
                        Some(b) => b,
                        None => {
                            let b = self.body().add_block(region);
                            current = Some(b);
                            b
                        }
                    };
                    if self.parse_parallel_run(b) {
                        continue;
                    }
                    let op = self.parse_op()?;
                    self.body().append_op(b, op);
                }
            }
        }
        self.pop_frame()
    }
}
