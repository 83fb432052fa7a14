//! `OpParser`: the API assembly formats use to read an op's items, and the
//! MLIR generic form.

use super::*;

/// Parses one op's items into an op. Used by declarative formats, custom
/// syntaxes and the generic form.
pub struct OpParser<'a, 'c, 's> {
    pub p: &'a mut Parser<'c, 's>,
    pub(super) items: Vec<Item<'s>>,
    pub(super) idx: usize,
    pub def: Option<&'static OpDef>,
    pub name: Ident,
    pub name_span: Range<usize>,
    pub(super) start: usize,
    /// Operands resolved so far (in order).
    pub operands: Vec<ValueId>,
    /// Result types, once known.
    pub result_types: Option<Vec<Type>>,
    pub attrs: Vec<NamedAttr>,
    /// Properties of an unregistered op (`<...>` in the generic form).
    pub(super) props: Option<Attribute>,
    pub(super) regions: Vec<RegionId>,
    pub(super) successors: Vec<BlockId>,
    pub(super) inner: Option<Box<Body>>,
    pub(super) region_frames_isolated: bool,
}

impl<'a, 'c, 's> OpParser<'a, 'c, 's> {
    // ---- looking at items ------------------------------------------------

    pub fn peek(&self) -> Option<&Item<'s>> {
        self.items.get(self.idx)
    }

    pub fn next_item(&mut self) -> Option<Item<'s>> {
        let it = self.items.get(self.idx).cloned();
        if it.is_some() {
            self.idx += 1;
        }
        it
    }

    pub fn at_end(&self) -> bool {
        self.idx >= self.items.len()
    }

    /// Span of the next item, or an empty span after the last one.
    pub fn here(&self) -> Range<usize> {
        match self.peek() {
            Some(i) => i.span.clone(),
            None => {
                let end = self.items.last().map_or(self.name_span.end, |i| i.span.end);
                end..end
            }
        }
    }

    pub fn error_at(&self, span: Range<usize>, msg: impl Into<String>) -> Box<Diagnostic> {
        self.p.err(span, msg)
    }

    /// "expected X, found Y" at the next item.
    pub fn expected(&self, what: &str) -> Box<Diagnostic> {
        if self.at_end() {
            if let Some(e) = self.diagnose_string() {
                return e;
            }
            if what != "region" {
                if let Some(e) = self.diagnose_dict().filter(|_| self.dict_follows()) {
                    return e;
                }
            }
        }
        let found = match self.peek() {
            Some(i) => i.describe(),
            None if self.p.peek_char() == Some(b'{') => "a region".to_string(),
            None => "end of op".to_string(),
        };
        self.p
            .err(self.here(), format!("expected {what}, found {found}"))
            .tap_label(format!("expected {what}"))
    }

    pub fn peek_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Item { kind: ItemKind::Punct(x), .. }) if *x == p)
    }

    pub fn try_punct(&mut self, p: &str) -> bool {
        let yes = self.peek_punct(p);
        if yes {
            self.idx += 1;
        }
        yes
    }

    pub fn expect_punct(&mut self, p: &str) -> PResult<Range<usize>> {
        let span = self.here();
        if self.try_punct(p) {
            Ok(span)
        } else {
            Err(self.expected(&format!("'{p}'")))
        }
    }

    pub fn peek_keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Item { kind: ItemKind::Keyword(x), .. }) if *x == k)
    }

    pub fn try_keyword(&mut self, k: &str) -> bool {
        let yes = self.peek_keyword(k);
        if yes {
            self.idx += 1;
        }
        yes
    }

    pub fn expect_keyword(&mut self, k: &str) -> PResult<()> {
        if self.try_keyword(k) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{k}'")))
        }
    }

    /// Whether the next item is a literal keyword or punctuation spelled `lit`.
    pub fn peek_literal(&self, lit: &str) -> bool {
        self.peek_punct(lit) || self.peek_keyword(lit)
    }

    // ---- operands ----------------------------------------------------------

    pub fn peek_operand(&self) -> bool {
        matches!(
            self.peek(),
            Some(Item {
                kind: ItemKind::Value { .. },
                ..
            })
        )
    }

    pub fn parse_operand(&mut self) -> PResult<OperandRef<'s>> {
        match self.peek().cloned() {
            Some(Item {
                kind: ItemKind::Value { name, index },
                span,
            }) => {
                self.idx += 1;
                Ok(OperandRef { name, index, span })
            }
            _ => Err(self.expected("SSA operand")),
        }
    }

    /// Zero or more comma-separated operands.
    pub fn parse_operand_list(&mut self) -> PResult<Vec<OperandRef<'s>>> {
        let mut out = vec![];
        if !self.peek_operand() {
            return Ok(out);
        }
        loop {
            out.push(self.parse_operand()?);
            if !self.try_punct(",") {
                break;
            }
        }
        Ok(out)
    }

    /// Bind operand references to values of the given types (creating forward references).
    pub fn resolve_operands(
        &mut self,
        refs: &[OperandRef<'s>],
        types: &[Type],
    ) -> PResult<Vec<ValueId>> {
        if refs.len() != types.len() {
            let span = refs.first().map_or(self.name_span.clone(), |r| {
                r.span.start..refs[refs.len() - 1].span.end
            });
            return Err(self.p.err(
                span,
                format!(
                    "{} operands present, but expected {} types",
                    refs.len(),
                    types.len()
                ),
            ));
        }
        refs.iter()
            .zip(types)
            .map(|(r, &t)| self.p.resolve_use(r, t))
            .collect()
    }

    // ---- types -------------------------------------------------------------

    pub fn peek_type(&self) -> bool {
        matches!(
            self.peek(),
            Some(Item {
                kind: ItemKind::Type(_),
                ..
            })
        )
    }

    pub fn parse_type(&mut self) -> PResult<Type> {
        match self.peek().cloned() {
            Some(Item {
                kind: ItemKind::Type(t),
                ..
            }) => {
                self.idx += 1;
                Ok(t)
            }
            // A word that did not lex as a type (`tensor<4xf7>`): say where
            // the type breaks. Anything else is simply not a type.
            Some(Item {
                kind: ItemKind::Keyword(_),
                span,
            }) => Err(self.diagnose_type(span.start)),
            Some(_) => Err(self.expected("type")),
            None => Err(self.expected("type")),
        }
    }

    /// A precise message for text that should have been a type.
    fn diagnose_type(&self, at: usize) -> Box<Diagnostic> {
        let saved = self.p.pos;
        // Run the strict type rule at `at` to find where it breaks.
        let text = &self.p.src[at..];
        match run_pest(self.p.shallow, Rule::type_, text) {
            Err(e) => self.p.pest_error(e, at),
            Ok(_) => {
                let _ = saved;
                self.expected("type")
            }
        }
    }

    /// The next non-blank position after the items.
    fn after_items(&self) -> usize {
        let rest = &self.p.src[self.p.pos..];
        self.p.pos + (rest.len() - rest.trim_start().len())
    }

    /// If the items stopped at a string that does not lex (e.g. one without
    /// its closing quote), the error pointing at it.
    fn diagnose_string(&self) -> Option<Box<Diagnostic>> {
        let mut at = self.after_items();
        if self.p.src[at..].starts_with("@\"") {
            at += 1; // a quoted symbol name
        }
        let text = &self.p.src[at..];
        if !text.starts_with('"') {
            return None;
        }
        run_pest(self.p.shallow, Rule::string, text)
            .err()
            .map(|e| self.p.pest_error(e, at))
    }

    /// Whether the `{` after the items starts an attribute dictionary rather
    /// than a region: its first entry is a key followed by `=`, `,` or `}`.
    fn dict_follows(&self) -> bool {
        let at = self.after_items();
        let Some(text) = self.p.src[at..].strip_prefix('{') else {
            return false;
        };
        let text = text.trim_start();
        let key_len = if let Some(q) = text.strip_prefix('"') {
            match q.find('"') {
                Some(i) => i + 2,
                None => return true, // an unterminated string key
            }
        } else {
            text.find(|c: char| !(c.is_ascii_alphanumeric() || "_$.-".contains(c)))
                .unwrap_or(text.len())
        };
        key_len > 0 && text[key_len..].trim_start().starts_with(['=', ',', '}'])
    }

    /// If the text after the items is a `{` that does not parse as an
    /// attribute dictionary, the error pointing into it.
    fn diagnose_dict(&self) -> Option<Box<Diagnostic>> {
        let at = self.after_items();
        let text = &self.p.src[at..];
        if !text.starts_with('{') || text.starts_with("{-#") {
            return None;
        }
        run_pest(self.p.shallow, Rule::dict_attr, text)
            .err()
            .map(|e| self.p.pest_error(e, at))
    }

    /// One or more comma-separated types.
    pub fn parse_type_list(&mut self) -> PResult<Vec<Type>> {
        let mut out = vec![self.parse_type()?];
        while self.try_punct(",") {
            out.push(self.parse_type()?);
        }
        Ok(out)
    }

    /// `(T, ...)` possibly empty.
    pub fn parse_paren_type_list(&mut self) -> PResult<Vec<Type>> {
        self.expect_punct("(")?;
        if self.try_punct(")") {
            return Ok(vec![]);
        }
        let v = self.parse_type_list()?;
        self.expect_punct(")")?;
        Ok(v)
    }

    /// `(T, ...) -> T` or `(T, ...) -> (T, ...)`.
    pub fn parse_functional_type(&mut self) -> PResult<(Vec<Type>, Vec<Type>)> {
        if !self.peek_punct("(") {
            return Err(self.expected("function type '(...) -> ...'"));
        }
        let ins = self.parse_paren_type_list()?;
        self.expect_punct("->")?;
        let outs = if self.peek_punct("(") {
            self.parse_paren_type_list()?
        } else {
            vec![self.parse_type()?]
        };
        Ok((ins, outs))
    }

    // ---- attributes --------------------------------------------------------

    /// Read an attribute value item, converting literals for `kind`.
    pub fn parse_attr_value(&mut self, kind: AttrKind) -> PResult<Attribute> {
        let Some(item) = self.peek().cloned() else {
            return Err(self.expected(&kind.describe()));
        };
        let attr = match item.kind {
            ItemKind::Int(i) if kind == AttrKind::F64 => Attribute::f64(i as f64),
            ItemKind::Int(i) => Attribute::i64(i),
            ItemKind::Float(f) => Attribute::f64(f),
            ItemKind::Str(s) => Attribute::string(&s),
            ItemKind::Attr(a) | ItemKind::Symbol(a) => a,
            ItemKind::Dict(d) => Attribute::dict(d),
            ItemKind::Type(t) => Attribute::ty(t),
            ItemKind::Keyword("true") => Attribute::bool(true),
            ItemKind::Keyword("false") => Attribute::bool(false),
            ItemKind::Keyword("unit") => Attribute::unit(),
            ItemKind::Keyword(k) if matches!(kind, AttrKind::Enum(_) | AttrKind::Str) => {
                Attribute::string(k)
            }
            ItemKind::Punct("[") => {
                self.idx += 1;
                let elem = match kind {
                    AttrKind::I64Array => AttrKind::I64,
                    AttrKind::F64Array => AttrKind::F64,
                    AttrKind::StrArray => AttrKind::Str,
                    _ => AttrKind::Any,
                };
                let mut xs = vec![];
                if !self.try_punct("]") {
                    loop {
                        xs.push(self.parse_attr_value(elem)?);
                        if !self.try_punct(",") {
                            break;
                        }
                    }
                    self.expect_punct("]")?;
                }
                return self.check_attr_kind(
                    Attribute::array(xs),
                    kind,
                    item.span.start..self.here().start,
                );
            }
            _ => return Err(self.expected(&kind.describe())),
        };
        self.idx += 1;
        self.check_attr_kind(attr, kind, item.span)
    }

    fn check_attr_kind(
        &self,
        a: Attribute,
        kind: AttrKind,
        span: Range<usize>,
    ) -> PResult<Attribute> {
        if kind.accepts(a) {
            Ok(a)
        } else {
            Err(self.p.err(
                span,
                format!(
                    "expected {}, found {} '{a}'",
                    kind.describe(),
                    a.kind_name()
                ),
            ))
        }
    }

    pub fn add_attr(&mut self, name: &str, value: Attribute, span: Range<usize>) -> PResult<()> {
        let id = Ident::new(name);
        if self.attrs.iter().any(|(n, _)| *n == id) {
            return Err(self
                .p
                .err(span, format!("attribute '{name}' occurs more than once")));
        }
        self.attrs.push((id, value));
        Ok(())
    }

    pub fn peek_attr_dict(&self) -> bool {
        matches!(
            self.peek(),
            Some(Item {
                kind: ItemKind::Dict(_),
                ..
            })
        )
    }

    /// An optional `{...}` attribute dictionary, merged into the op's attributes.
    pub fn parse_optional_attr_dict(&mut self) -> PResult<()> {
        if let Some(Item {
            kind: ItemKind::Dict(d),
            span,
        }) = self.peek().cloned()
        {
            // `{...}` right before a region start may be the region itself
            // (e.g. `{ graph.return }`); formats that expect a region after
            // the dictionary resolve that via `parse_region`.
            self.idx += 1;
            for (k, v) in d.entries() {
                self.add_attr(k, *v, span.clone())?;
            }
        }
        Ok(())
    }

    /// `attributes {...}` (optional).
    pub fn parse_optional_attr_dict_with_keyword(&mut self) -> PResult<()> {
        if self.try_keyword("attributes") {
            if !self.peek_attr_dict() {
                if self.at_end() {
                    if let Some(e) = self.diagnose_dict() {
                        return Err(e);
                    }
                }
                return Err(self.expected("attribute dictionary"));
            }
            self.parse_optional_attr_dict()?;
        }
        Ok(())
    }

    /// `@name`: a symbol name definition.
    pub fn parse_symbol_name(&mut self) -> PResult<(Ident, Range<usize>)> {
        match self.peek().cloned() {
            Some(Item {
                kind: ItemKind::Symbol(a),
                span,
            }) => {
                self.idx += 1;
                match a.data() {
                    AttrData::Symbol(parts) if parts.len() == 1 => Ok((parts[0], span)),
                    _ => Err(self.p.err(span, "expected a simple symbol name")),
                }
            }
            _ => Err(self.expected("symbol name '@name'")),
        }
    }

    pub fn peek_symbol(&self) -> bool {
        matches!(
            self.peek(),
            Some(Item {
                kind: ItemKind::Symbol(_),
                ..
            })
        )
    }

    /// `%name: type [loc(...)]` — a block argument declared in op syntax.
    pub fn parse_arg_decl(&mut self) -> PResult<ArgDecl<'s>> {
        let r = self.parse_operand()?;
        if r.index != 0 || r.name.contains('#') {
            return Err(self.p.err(r.span, "expected an argument name without '#'"));
        }
        self.expect_punct(":")?;
        let ty = self.parse_type()?;
        let attrs = self.parse_optional_arg_attrs();
        let loc = match self.peek().cloned() {
            Some(Item {
                kind: ItemKind::Loc(l),
                ..
            }) => {
                self.idx += 1;
                Some(l)
            }
            _ => None,
        };
        Ok(ArgDecl {
            name: r.name,
            span: r.span,
            ty,
            attrs,
            loc,
        })
    }

    /// An argument's or result's attribute dictionary after its type
    /// (`tensor<4xf32> {ge.name = "x"}`). A dictionary that is the op's last
    /// item is left alone: it may be a region (`{ graph.return }`).
    pub fn parse_optional_arg_attrs(&mut self) -> Option<AttrDict> {
        match self.peek() {
            Some(Item {
                kind: ItemKind::Dict(d),
                ..
            }) if self.idx + 1 < self.items.len() => {
                let d = *d;
                self.idx += 1;
                Some(d)
            }
            _ => None,
        }
    }

    // ---- regions and successors ------------------------------------------

    /// Whether a region starts here (a `{` the items stopped at, or a
    /// dictionary-looking `{...}` that may really be a region).
    pub fn peek_region(&self) -> bool {
        match self.peek() {
            None => {
                let rest = self.p.src[self.p.pos..].trim_start();
                rest.starts_with('{') && !rest.starts_with("{-#")
            }
            Some(Item {
                kind: ItemKind::Dict(_),
                ..
            }) => self.idx + 1 == self.items.len(),
            _ => false,
        }
    }

    /// Parse a region; `args` become the entry block's arguments.
    pub fn parse_region(&mut self, args: &[ArgDecl<'s>]) -> PResult<RegionId> {
        match self.peek() {
            Some(Item {
                kind: ItemKind::Dict(_),
                span,
            }) => {
                // The dictionary was really a region: re-read from its `{`.
                self.p.pos = span.start;
                self.items.truncate(self.idx);
            }
            Some(_) => return Err(self.expected("region")),
            None => {}
        }
        self.p.skip_ws();
        if self.p.peek_char() != Some(b'{') {
            return Err(self.expected("region"));
        }
        let region = if self.region_frames_isolated {
            let body = self.inner.take().map(|b| *b).unwrap_or_default();
            self.p.bodies.push(body);
            let r = self.p.body().new_region(None);
            let res = self.p.parse_region_body(r, args, true);
            let body = self.p.bodies.pop().expect("pushed body");
            self.inner = Some(Box::new(body));
            res?;
            r
        } else {
            let r = self.p.body().new_region(None);
            self.p.parse_region_body(r, args, false)?;
            r
        };
        self.regions.push(region);
        self.refill()?;
        Ok(region)
    }

    /// Give a parsed region an empty entry block if it has none (`module {}`).
    pub fn ensure_entry_block(&mut self, r: RegionId) {
        let body = if self.region_frames_isolated {
            self.inner.get_or_insert_with(Default::default)
        } else {
            self.p.body()
        };
        if body.region(r).blocks.is_empty() {
            body.add_block(r);
        }
    }

    /// Add a region with no blocks (e.g. a function declaration's body).
    pub fn add_empty_region(&mut self) -> RegionId {
        let r = if self.region_frames_isolated {
            self.inner
                .get_or_insert_with(Default::default)
                .new_region(None)
        } else {
            self.p.body().new_region(None)
        };
        self.regions.push(r);
        r
    }

    /// Read the items following a region.
    fn refill(&mut self) -> PResult<()> {
        self.p.skip_ws();
        if lex::fast_lexer() {
            return self.p.lex_items(&mut self.items);
        }
        let start = self.p.pos;
        let seg = self.p.run(Rule::op_continue)?;
        for pair in seg.clone().into_inner() {
            let item = self.p.build_item(pair, start)?;
            self.items.push(item);
        }
        self.p.pos = start + seg.as_span().end();
        Ok(())
    }

    /// Number of regions parsed so far.
    pub fn num_regions(&self) -> usize {
        self.regions.len()
    }

    pub fn peek_successor(&self) -> bool {
        matches!(
            self.peek(),
            Some(Item {
                kind: ItemKind::Caret(_),
                ..
            })
        )
    }

    pub fn parse_successor(&mut self) -> PResult<BlockId> {
        match self.peek().cloned() {
            Some(Item {
                kind: ItemKind::Caret(name),
                span,
            }) => {
                self.idx += 1;
                let b = self.p.block_ref(name, span, false)?;
                self.successors.push(b);
                Ok(b)
            }
            _ => Err(self.expected("successor block '^bb'")),
        }
    }

    // ---- the generic form --------------------------------------------------

    /// `"d.op"(%a) [^bb] <{props}> ({regions}) {attrs} : (T) -> T`
    pub(super) fn parse_generic(&mut self) -> PResult<()> {
        self.expect_punct("(")?;
        let refs = self.parse_operand_list()?;
        self.expect_punct(")")?;
        if self.try_punct("[") {
            loop {
                self.parse_successor()?;
                if !self.try_punct(",") {
                    break;
                }
            }
            self.expect_punct("]")?;
        }
        if self.try_punct("<") {
            self.parse_properties()?;
        }
        if self.peek_punct("(") {
            self.idx += 1;
            loop {
                self.parse_region(&[])?;
                if !self.try_punct(",") {
                    break;
                }
            }
            self.expect_punct(")")?;
        }
        self.parse_optional_attr_dict()?;
        if self.at_end() {
            // Items stop at a `{` that is not a valid dictionary: say why.
            if let Some(e) = self.diagnose_dict() {
                return Err(e);
            }
        }
        self.expect_punct(":")?;
        let (ins, outs) = self.parse_functional_type()?;
        self.operands = self.resolve_operands(&refs, &ins)?;
        self.result_types = Some(outs);
        Ok(())
    }

    /// The properties after `<` (and the closing `>`). An unregistered op
    /// keeps them as one opaque attribute; a registered op's properties are
    /// its inherent attributes, so they must be a dictionary of those.
    fn parse_properties(&mut self) -> PResult<()> {
        let span = self.here();
        let value = match self.peek() {
            // Nearly always a dictionary, already an item.
            Some(Item {
                kind: ItemKind::Dict(d),
                ..
            }) => {
                let d = *d;
                self.idx += 1;
                Attribute::dict(d)
            }
            // Any other attribute: read whole from the text by the grammar
            // (items split `5 : i32` or `[() -> ()]` apart), then step over
            // the items it covers.
            Some(_) => {
                let at = span.start;
                let text = &self.p.src[at..];
                let pair = run_pest(self.p.shallow, Rule::attribute, text)
                    .map_err(|e| self.p.pest_error(e, at))?
                    .next()
                    .ok_or_else(|| self.expected("properties"))?;
                let end = at + pair.as_span().end();
                let value = self.p.build_attr_at(pair, at)?;
                while self.peek().is_some_and(|i| i.span.start < end) {
                    self.idx += 1;
                }
                value
            }
            None => return Err(self.expected("properties")),
        };
        let span = span.start..self.here().start.max(span.end);
        self.expect_punct(">")?;
        let Some(def) = self.def else {
            self.props = Some(value);
            return Ok(());
        };
        let Some(dict) = value.as_dict() else {
            return Err(self.p.err(
                span,
                format!(
                    "the properties of '{}' must be a dictionary of its inherent attributes, found {} '{value}'",
                    def.name,
                    value.kind_name()
                ),
            ));
        };
        for (k, v) in dict.entries() {
            if !def.is_inherent_attr(k) {
                return Err(self.p.err(
                    span,
                    format!(
                        "'{k}' is not an inherent attribute of '{}', so it cannot be a property; \
                         discardable attributes go in the attribute dictionary '{{...}}'",
                        def.name
                    ),
                ));
            }
            self.add_attr(k, *v, span.clone())?;
        }
        Ok(())
    }

    // ---- finishing -----------------------------------------------------------

    /// Create the op from what the format parsed; bind result names.
    pub(super) fn finish(mut self, groups: Vec<(&'s str, u32, Range<usize>)>) -> PResult<OpId> {
        let mut loc = None;
        if let Some(Item {
            kind: ItemKind::Loc(l),
            ..
        }) = self.peek()
        {
            loc = Some(*l);
            self.idx += 1;
        }
        if let Some(Item {
            kind: ItemKind::Keyword("loc"),
            span,
        }) = self.peek()
        {
            // `loc` not followed by a valid location: say what is wrong with it.
            if let Err(e) = run_pest(self.p.shallow, Rule::location, &self.p.src[span.start..]) {
                return Err(self.p.pest_error(e, span.start));
            }
        }
        if !self.at_end() {
            let what = self.peek().map(|i| i.describe()).unwrap_or_default();
            return Err(self
                .p
                .err(self.here(), format!("unexpected {what} in '{}'", self.name)));
        }
        let result_types = match self.result_types.take() {
            Some(t) => t,
            None => {
                return Err(self.p.err(
                    self.name_span.clone(),
                    format!("cannot determine the result types of '{}'", self.name),
                ))
            }
        };
        let named: u32 = groups.iter().map(|g| g.1).sum();
        if !groups.is_empty() && named as usize != result_types.len() {
            let span = groups[0].2.start..groups[groups.len() - 1].2.end;
            return Err(self.p.err(
                span,
                format!(
                    "operation defines {} results but was provided {named} to bind",
                    result_types.len()
                ),
            ));
        }
        if let Some(def) = self.def {
            crate::builder::fill_default_attrs(def, &mut self.attrs);
        }
        let loc = loc.unwrap_or_else(|| self.p.loc_at(self.start));
        let st = OpState {
            name: self.name,
            def: self.def,
            loc,
            operands: std::mem::take(&mut self.operands),
            result_types,
            attrs: AttrDict::new(std::mem::take(&mut self.attrs)),
            props: self.props.take(),
            num_regions: 0,
            successors: std::mem::take(&mut self.successors),
        };
        let regions = std::mem::take(&mut self.regions);
        let inner = self.inner.take();
        let op = self.p.body().create_op_with_regions(st, regions, inner);
        let mut next = 0usize;
        for (name, count, span) in groups {
            let vals: SmallVec<[ValueId; 1]> = (next..next + count as usize)
                .map(|i| self.p.body().result(op, i))
                .collect();
            next += count as usize;
            self.p.define(name, vals, span)?;
        }
        Ok(op)
    }
}

trait TapLabel {
    fn tap_label(self, l: String) -> Self;
}
impl TapLabel for Box<Diagnostic> {
    fn tap_label(mut self, l: String) -> Self {
        self.label = l;
        self
    }
}
