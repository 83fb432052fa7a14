//! Building types, attributes, locations and items from pest pairs.

use super::literals::*;
use crate::float_formats::FloatFormat;

fn join_dims(d: &[i64]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
use super::*;

/// Longest type spelling the parser's type cache keeps.
const TYPE_CACHE_MAX_LEN: usize = 256;
/// The deepest a symbolic dimension expression may nest operators
/// (`((B+1)/2+1)/2 ...`); dims are hashed, evaluated and printed recursively.
pub const MAX_DIM_DEPTH: usize = 1024;

impl<'c, 's> Parser<'c, 's> {
    // ---- items -------------------------------------------------------------

    pub(super) fn build_item(&mut self, p: Pair<'s, Rule>, base: usize) -> PResult<Item<'s>> {
        let span = Self::pspan(&p, base);
        let kind = match p.as_rule() {
            Rule::value_use => {
                let mut it = p.into_inner();
                let name = it.next().map(|x| x.as_str()).unwrap_or("%");
                let index = match it.next() {
                    Some(i) => i
                        .as_str()
                        .parse()
                        .map_err(|_| self.err(span.clone(), "invalid result number"))?,
                    None => 0,
                };
                ItemKind::Value { name, index }
            }
            Rule::caret_id => ItemKind::Caret(p.as_str()),
            Rule::symbol_ref => ItemKind::Symbol(self.build_symbol(p, span.clone())?),
            Rule::dict_attr => ItemKind::Dict(self.build_dict(p, base)?),
            Rule::dense_attr
            | Rule::sparse_attr
            | Rule::dense_resource_attr
            | Rule::dense_array_attr
            | Rule::hash_attr => ItemKind::Attr(self.build_attr_at(p, base)?),
            Rule::float => ItemKind::Float(
                parse_float(p.as_str())
                    .ok_or_else(|| self.err(span.clone(), "invalid float literal"))?,
            ),
            Rule::integer => ItemKind::Int(
                parse_int(p.as_str())
                    .ok_or_else(|| self.err(span.clone(), "integer literal out of range"))?,
            ),
            Rule::string => ItemKind::Str(
                unescape(&p.as_str()[1..p.as_str().len() - 1])
                    .ok_or_else(|| self.err(span.clone(), NOT_UTF8))?,
            ),
            Rule::simple_type => ItemKind::Type(self.build_type_at(p, base)?),
            Rule::keyword => ItemKind::Keyword(p.as_str()),
            Rule::punct => ItemKind::Punct(p.as_str()),
            Rule::location => ItemKind::Loc(self.build_loc(p, base)?),
            r => return Err(self.err(span, format!("unexpected {r:?}"))),
        };
        Ok(Item { kind, span })
    }

    // ---- types -------------------------------------------------------------

    pub(super) fn build_type_at(&mut self, p: Pair<'s, Rule>, base: usize) -> PResult<Type> {
        let saved = self.pos;
        self.pos = base;
        let r = self.build_type(p);
        self.pos = saved;
        r
    }

    /// Build a type from a pair; spans in errors are relative to `self.pos`.
    pub(super) fn build_type(&mut self, p: Pair<'s, Rule>) -> PResult<Type> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.build_type_rec(p))
    }

    fn build_type_rec(&mut self, p: Pair<'s, Rule>) -> PResult<Type> {
        let text = p.as_str();
        // Only short spellings are cached: hashing the text of every level of a
        // deeply nested type would make building it quadratic.
        let cacheable = text.len() <= TYPE_CACHE_MAX_LEN;
        if cacheable {
            if let Some(&t) = self.type_cache.get(text) {
                return Ok(t);
            }
        }
        let base = self.pos;
        let span = Self::pspan(&p, base);
        let t = match p.as_rule() {
            Rule::type_ | Rule::simple_type | Rule::function_results => {
                let inner = p
                    .into_inner()
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected type"))?;
                return self.build_type(inner);
            }
            Rule::scalar_type => match DType::parse(text) {
                Some(d) => Type::scalar(d),
                // Builtin scalar types ge does not model (`i3`, `si8`,
                // `f80`) are kept as written, outside tensors.
                None if int_type_name(text).is_some() || matches!(text, "f80" | "f128") => {
                    Type::verbatim(text)
                }
                None => Type::scalar(self.build_dtype(text, span)?),
            },
            Rule::none_type => Type::none(),
            Rule::tensor_type => self.build_tensor(p)?,
            Rule::function_type => {
                let mut it = p.into_inner();
                let mut inputs = vec![];
                let mut next = it.next();
                if let Some(tl) = next.clone().filter(|x| x.as_rule() == Rule::type_list) {
                    for t in tl.into_inner() {
                        inputs.push(self.build_type(t)?);
                    }
                    next = it.next();
                }
                let mut results = vec![];
                if let Some(res) = next {
                    let mut ri = res.into_inner().peekable();
                    match ri.peek().map(|x| x.as_rule()) {
                        Some(Rule::type_list) => {
                            for t in ri.next().into_iter().flat_map(|x| x.into_inner()) {
                                results.push(self.build_type(t)?);
                            }
                        }
                        Some(_) => {
                            if let Some(t) = ri.next() {
                                results.push(self.build_type(t)?)
                            }
                        }
                        None => {}
                    }
                }
                Type::function(&inputs, &results)
            }
            Rule::dialect_type => {
                let mut it = p.into_inner();
                let id = it.next().map(|x| &x.as_str()[1..]).unwrap_or("");
                let body = it.next().map(|x| x.as_str());
                match (id.split_once('.'), body) {
                    (None, None) => *self.type_aliases.get(id).ok_or_else(|| {
                        self.err(span.clone(), format!("undefined type alias '!{id}'"))
                    })?,
                    (Some((d, n)), b) => Type::new(TypeData::Opaque {
                        dialect: Ident::new(d),
                        name: Ident::new(n),
                        body: b.unwrap_or("").into(),
                    }),
                    (None, Some(b)) => Type::new(TypeData::Opaque {
                        dialect: Ident::new(id),
                        name: Ident::new(""),
                        body: b.into(),
                    }),
                }
            }
            Rule::verbatim_type => Type::verbatim(&self.resolve_verbatim(text, span)?),
            r => return Err(self.err(span, format!("expected type, found {r:?}"))),
        };
        if cacheable {
            self.type_cache.insert(text, t);
        }
        Ok(t)
    }

    /// The text of a verbatim type or attribute with the aliases it names
    /// (`#map`, `!t`; not dialect names such as `#foo.bar`) written out: the
    /// text is kept, and must not depend on definitions that are not.
    fn resolve_verbatim(&self, text: &str, span: Range<usize>) -> PResult<String> {
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let (mut i, mut copied) = (0, 0);
        while i < b.len() {
            if b[i] == b'"' {
                i += lex::string_len(&b[i..]).max(1);
                continue;
            }
            if !matches!(b[i], b'#' | b'!') {
                i += 1;
                continue;
            }
            let n = b[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-'))
                .count();
            let id = &text[i + 1..i + 1 + n];
            if n == 0 || id.contains('.') {
                i += 1;
                continue;
            }
            let mut spelled = String::new();
            if b[i] == b'#' {
                let a = self.attr_aliases.get(id).ok_or_else(|| {
                    self.err(span.clone(), format!("undefined attribute alias '#{id}'"))
                })?;
                let _ = crate::printer::write_attr(&mut spelled, *a, true);
            } else {
                let t = self.type_aliases.get(id).ok_or_else(|| {
                    self.err(span.clone(), format!("undefined type alias '!{id}'"))
                })?;
                let _ = crate::printer::write_type(&mut spelled, *t, true);
            }
            out.push_str(&text[copied..i]);
            out.push_str(&spelled);
            i += 1 + n;
            copied = i;
        }
        out.push_str(&text[copied..]);
        Ok(out)
    }

    pub(super) fn build_dtype(&self, text: &str, span: Range<usize>) -> PResult<DType> {
        DType::parse(text).ok_or_else(|| {
            self.err(
                span,
                format!("unsupported element type '{text}' (expected one of f64, f32, f16, bf16, i64, i32, i16, i8, ui64, ui32, ui16, ui8, i1, index, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU, f4E2M1FN, i4, ui4, i2, ui2)"),
            )
        })
    }

    pub(super) fn build_tensor(&mut self, p: Pair<'s, Rule>) -> PResult<Type> {
        let base = self.pos;
        let mut dims: Option<Vec<Dim>> = Some(vec![]);
        let mut dtype = DType::F32;
        let mut encoding = None;
        let mut enc_span = 0..0;
        for part in p.into_inner() {
            let sp = Self::pspan(&part, base);
            match part.as_rule() {
                Rule::tensor_shape => {
                    for d in part.into_inner() {
                        match d.as_rule() {
                            Rule::unranked_dim => dims = None,
                            Rule::dim => {
                                let dsp = Self::pspan(&d, base);
                                let dim = self.build_dim(d, dsp)?;
                                if let Some(v) = dims.as_mut() {
                                    v.push(dim)
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Rule::scalar_type => dtype = self.build_dtype(part.as_str(), sp)?,
                Rule::attribute => {
                    enc_span = sp;
                    encoding = Some(self.build_attr(part)?);
                }
                _ => {}
            }
        }
        // `#ge.dims<"Bx64">` in generic output carries symbolic dims past mlir-opt.
        if let Some(enc) = encoding {
            if let AttrData::Opaque {
                dialect,
                name,
                body,
            } = enc.data()
            {
                if dialect.as_str() == "ge" && name.as_str() == "dims" {
                    let (names, rest) = self.parse_dims_encoding(body, enc_span.clone())?;
                    let ds = dims.as_mut().ok_or_else(|| {
                        self.err(enc_span.clone(), "#ge.dims on an unranked tensor")
                    })?;
                    if names.len() != ds.len() {
                        return Err(self.err(
                            enc_span,
                            format!(
                                "#ge.dims names {} dims but the tensor has rank {}",
                                names.len(),
                                ds.len()
                            ),
                        ));
                    }
                    for (d, n) in ds.iter_mut().zip(names) {
                        match (*d, n) {
                            (Dim::Unknown, n) => *d = n,
                            (a, b) if a == b => {}
                            (a, b) => {
                                return Err(self.err(
                                    enc_span.clone(),
                                    format!("#ge.dims dim '{b}' contradicts static dim '{a}'"),
                                ))
                            }
                        }
                    }
                    encoding = rest;
                }
            }
        }
        Ok(Type::new(TypeData::Tensor(TensorType {
            dims: dims.map(|v| v.into_boxed_slice()),
            dtype,
            encoding,
        })))
    }

    pub(super) fn parse_dims_encoding(
        &mut self,
        body: &str,
        span: Range<usize>,
    ) -> PResult<(Vec<Dim>, Option<Attribute>)> {
        // body: <"Bx64x?" [, attribute]>
        let inner = body
            .strip_prefix('<')
            .and_then(|b| b.strip_suffix('>'))
            .unwrap_or("");
        let inner = inner.trim();
        let close = inner.get(1..).and_then(|s| s.find('"')).map(|i| i + 1);
        let (Some(close), true) = (close, inner.starts_with('"')) else {
            return Err(self.err(span, "expected #ge.dims<\"dims\"[, encoding]>"));
        };
        let dims_text = &inner[1..close];
        let mut dims = vec![];
        if !dims_text.is_empty() {
            let ty_text = format!("tensor<{dims_text}xf32>");
            let t = parse_type_str(self.ctx, &ty_text).map_err(|_| {
                self.err(
                    span.clone(),
                    format!("invalid dims '{dims_text}' in #ge.dims"),
                )
            })?;
            dims = t
                .as_tensor()
                .map(|t| t.shape().to_vec())
                .unwrap_or_default();
        }
        let rest = inner[close + 1..].trim_start();
        let enc = match rest.strip_prefix(',') {
            Some(a) => Some(
                parse_attr_str(self.ctx, a.trim())
                    .map_err(|_| self.err(span.clone(), "invalid encoding in #ge.dims"))?,
            ),
            None => None,
        };
        Ok((dims, enc))
    }

    pub(super) fn build_dim(&self, d: Pair<'s, Rule>, span: Range<usize>) -> PResult<Dim> {
        let inner = d
            .into_inner()
            .next()
            .ok_or_else(|| self.err(span.clone(), "expected dimension"))?;
        Ok(match inner.as_rule() {
            Rule::unknown_dim => Dim::Unknown,
            Rule::static_dim => Dim::Static(
                inner
                    .as_str()
                    .parse()
                    .map_err(|_| self.err(span.clone(), "dimension out of range"))?,
            ),
            Rule::sym_dim => Dim::sym(inner.as_str()),
            Rule::dim_expr => Dim::from_expr(self.build_dim_expr(inner, &span, 0)?),
            _ => return Err(self.err(span, "expected dimension")),
        })
    }

    /// A dimension expression; `depth` counts the operators it sits under:
    /// each makes the expression tree one level deeper, and everything
    /// recursive over dims (hashing, evaluating, printing) walks that tree.
    pub(super) fn build_dim_expr(
        &self,
        p: Pair<'s, Rule>,
        span: &Range<usize>,
        depth: usize,
    ) -> PResult<DimExpr> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            self.build_dim_expr_rec(p, span, depth)
        })
    }

    fn build_dim_expr_rec(
        &self,
        p: Pair<'s, Rule>,
        span: &Range<usize>,
        depth: usize,
    ) -> PResult<DimExpr> {
        let (rule, text) = (p.as_rule(), p.as_str());
        let mut it = p.into_inner().peekable();
        match rule {
            Rule::dim_expr | Rule::dim_term | Rule::dim_func => {
                // Operands of an operator (or a min/max) sit one level deeper.
                let depth = if it.clone().count() > 1 {
                    depth + 1
                } else {
                    depth
                };
                if depth > MAX_DIM_DEPTH {
                    return Err(self.err(
                        span.clone(),
                        format!(
                            "dimension expression nested more than {MAX_DIM_DEPTH} operators deep"
                        ),
                    ));
                }
                if rule == Rule::dim_func {
                    let max = it.next().is_some_and(|n| n.as_str() == "max");
                    let mut acc: Option<DimExpr> = None;
                    for a in it {
                        let a = self.build_dim_expr(a, span, depth)?;
                        acc = Some(match acc {
                            None => a,
                            Some(x) if max => x.max(a),
                            Some(x) => x.min(a),
                        });
                    }
                    return acc.ok_or_else(|| self.err(span.clone(), "expected arguments"));
                }
                let neg = rule == Rule::dim_expr
                    && it.next_if(|x| x.as_rule() == Rule::dim_neg).is_some();
                let what = if rule == Rule::dim_expr {
                    "term"
                } else {
                    "factor"
                };
                let first = it
                    .next()
                    .ok_or_else(|| self.err(span.clone(), format!("expected {what}")))?;
                let mut acc = self.build_dim_expr(first, span, depth)?;
                if neg {
                    acc = acc.mul(-1);
                }
                while let (Some(op), Some(t)) = (it.next(), it.next()) {
                    let t = self.build_dim_expr(t, span, depth)?;
                    let shown = t.to_string();
                    acc = match op.as_str() {
                        "+" => acc.add(t),
                        "-" => acc.sub(t),
                        "*" => acc.mul_expr(t),
                        "/" => acc.div_expr(t).ok_or_else(|| self.err(span.clone(), format!("floor division of a symbolic dim needs a positive constant or an exact divisor, not '{shown}'")))?,
                        _ => acc.rem_expr(t).ok_or_else(|| self.err(span.clone(), format!("remainder of a symbolic dim needs a positive constant or an exact divisor, not '{shown}'")))?,
                    };
                }
                Ok(acc)
            }
            Rule::dim_factor => {
                let i = it
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected factor"))?;
                self.build_dim_expr(i, span, depth)
            }
            Rule::static_dim => {
                Ok(DimExpr::Const(text.parse().map_err(|_| {
                    self.err(span.clone(), "number out of range")
                })?))
            }
            Rule::sym_dim => Ok(DimExpr::sym(text)),
            _ => Err(self.err(span.clone(), "expected dimension expression")),
        }
    }

    // ---- attributes --------------------------------------------------------

    pub(super) fn build_attr_at(&mut self, p: Pair<'s, Rule>, base: usize) -> PResult<Attribute> {
        let saved = self.pos;
        self.pos = base;
        let r = self.build_attr(p);
        self.pos = saved;
        r
    }

    fn typed_suffix(&mut self, it: &mut pest::iterators::Pairs<'s, Rule>) -> PResult<Option<Type>> {
        match it.next() {
            Some(ts) => {
                let t = ts
                    .into_inner()
                    .next()
                    .ok_or_else(|| self.err(self.pos..self.pos, "expected type"))?;
                Ok(Some(self.build_type(t)?))
            }
            None => Ok(None),
        }
    }

    /// Build an attribute; spans relative to `self.pos`.
    pub(super) fn build_attr(&mut self, p: Pair<'s, Rule>) -> PResult<Attribute> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.build_attr_rec(p))
    }

    // long: one arm per attribute rule of the grammar (air.pest), each a few
    // lines; the arms share the span and error plumbing of the one match.
    fn build_attr_rec(&mut self, p: Pair<'s, Rule>) -> PResult<Attribute> {
        let base = self.pos;
        let span = Self::pspan(&p, base);
        Ok(match p.as_rule() {
            Rule::attribute | Rule::location_attr => {
                let inner = p
                    .into_inner()
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected attribute"))?;
                return self.build_attr(inner);
            }
            Rule::bool_attr => Attribute::bool(p.as_str() == "true"),
            Rule::unit_attr => Attribute::unit(),
            Rule::float_attr => {
                let mut it = p.into_inner();
                let v = it.next().map(|x| x.as_str()).unwrap_or("0.0");
                let v = parse_float(v)
                    .ok_or_else(|| self.err(span.clone(), "invalid float literal"))?;
                let ty = self
                    .typed_suffix(&mut it)?
                    .unwrap_or(Type::scalar(DType::F64));
                if let TypeData::Verbatim(name) = ty.data() {
                    // Float types ge does not model: kept as MLIR prints them.
                    let Some(f) = FloatFormat::of(name) else {
                        return Err(self.err(
                            span,
                            format!("ge cannot keep float attributes of type '{name}': it models f16, bf16, f32, f64, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU and f4E2M1FN, and keeps f80, f128, tf32, f8E4M3 and f8E3M4 as text"),
                        ));
                    };
                    return Ok(Attribute::verbatim(&format!(
                        "{} : {name}",
                        f.print(f.encode_f64(v))
                    )));
                }
                if !ty.dtype().is_some_and(|d| d.is_float()) {
                    return Err(self.err(span, format!("float literal with non-float type '{ty}'")));
                }
                Attribute::float(v, ty)
            }
            Rule::int_attr => {
                let mut it = p.into_inner();
                let text = it.next().map(|x| x.as_str()).unwrap_or("0");
                let ty = self
                    .typed_suffix(&mut it)?
                    .unwrap_or(Type::scalar(DType::I64));
                // Hex bit patterns of float types ge does not model: kept as
                // MLIR prints them.
                if let TypeData::Verbatim(name) = ty.data() {
                    if let Some(f) = FloatFormat::of(name) {
                        let bits = hex_float_bits(text, f.width())
                            .map_err(|e| self.err(span.clone(), e))?;
                        return Ok(Attribute::verbatim(&format!(
                            "{} : {name}",
                            f.print(f.canonical(bits))
                        )));
                    }
                }
                match ty.data() {
                    TypeData::Scalar(d) if d.is_float() => {
                        // Hex bit patterns denote floats exactly (MLIR prints inf/nan so).
                        let bits = parse_int(text).ok_or_else(|| {
                            self.err(span.clone(), "integer literal out of range")
                        })?;
                        let v = if text.starts_with("0x") {
                            float_from_bits(*d, bits as u64)
                        } else {
                            bits as f64
                        };
                        Attribute::float(v, ty)
                    }
                    TypeData::Scalar(DType::I1) => {
                        let v = int_literal_i64(text, 1, IntKind::Signless)
                            .map_err(|e| self.err(span.clone(), e))?;
                        Attribute::int(i64::from(v != 0), ty)
                    }
                    TypeData::Scalar(d) => {
                        // MLIR's range rules; the value kept is the one it
                        // prints (signless: signed, `255 : i8` is `-1 : i8`).
                        let kind = if d.is_unsigned_int() {
                            IntKind::Unsigned
                        } else if *d == DType::Index {
                            IntKind::Signed
                        } else {
                            IntKind::Signless
                        };
                        let v = int_literal_i64(text, d.bit_width(), kind)
                            .map_err(|e| self.err(span.clone(), e))?;
                        Attribute::int(v, ty)
                    }
                    // Integer types ge does not model (`i3`, `si8`, `i128`):
                    // kept as MLIR prints them.
                    TypeData::Verbatim(name) if int_type_name(name).is_some() => {
                        let (kind, width) = int_type_name(name).unwrap_or((IntKind::Signless, 0));
                        let v = int_literal_value(text, width, kind)
                            .map_err(|e| self.err(span.clone(), e))?;
                        Attribute::verbatim(&format!("{v} : {name}"))
                    }
                    _ => {
                        return Err(
                            self.err(span, format!("integer literal with non-scalar type '{ty}'"))
                        )
                    }
                }
            }
            Rule::string_attr => {
                let mut it = p.into_inner();
                let s = it.next().map(|x| x.as_str()).unwrap_or("\"\"");
                let text =
                    unescape(&s[1..s.len() - 1]).ok_or_else(|| self.err(span.clone(), NOT_UTF8))?;
                match self.typed_suffix(&mut it)? {
                    // A typed string (`"s" : i32`, rare) is kept as MLIR
                    // prints it; ge's string attributes have no type.
                    Some(ty) => {
                        let mut t = String::new();
                        let _ = crate::printer::write_string_literal(&mut t, &text);
                        t.push_str(" : ");
                        let _ = crate::printer::write_type(&mut t, ty, true);
                        Attribute::verbatim(&t)
                    }
                    None => Attribute::string(&text),
                }
            }
            Rule::array_attr => {
                let mut items = vec![];
                for a in p.into_inner() {
                    items.push(self.build_attr(a)?);
                }
                Attribute::array(items)
            }
            Rule::dict_attr => Attribute::dict(self.build_dict(p, base)?),
            Rule::symbol_ref => self.build_symbol(p, span.clone())?,
            Rule::type_ => Attribute::ty(self.build_type(p)?),
            Rule::verbatim_attr => Attribute::verbatim(&self.resolve_verbatim(p.as_str(), span)?),
            Rule::hash_attr => {
                let mut it = p.into_inner();
                let id = it.next().map(|x| &x.as_str()[1..]).unwrap_or("");
                let body = it.next().map(|x| x.as_str());
                match (id.split_once('.'), body) {
                    (None, None) => match (self.attr_aliases.get(id), self.loc_aliases.get(id)) {
                        (Some(a), _) => *a,
                        // `#loc3` defined as `loc(...)`: the location as an attribute.
                        (None, Some(l)) if !l.has_alias() => Attribute::new(AttrData::Location(*l)),
                        _ => {
                            return Err(self
                                .err(span.clone(), format!("undefined attribute alias '#{id}'")))
                        }
                    },
                    (Some(("ge", name)), b) => self.build_ge_attr(name, b.unwrap_or(""), span)?,
                    (Some((d, n)), b) => Attribute::new(AttrData::Opaque {
                        dialect: Ident::new(d),
                        name: Ident::new(n),
                        body: b.unwrap_or("").into(),
                    }),
                    (None, Some(b)) => Attribute::new(AttrData::Opaque {
                        dialect: Ident::new(id),
                        name: Ident::new(""),
                        body: b.into(),
                    }),
                }
            }
            Rule::dense_attr => {
                let mut body = None;
                let mut ty = None;
                for x in p.into_inner() {
                    match x.as_rule() {
                        Rule::dense_body => body = Some((x.as_str(), Self::pspan(&x, base))),
                        _ => {
                            // Complex and string elements: kept as MLIR prints them.
                            if let Some(t) =
                                dense_text::dense_text(body.as_ref().map(|b| b.0), x.as_str())
                            {
                                let t = t.map_err(|e| self.err(span.clone(), e))?;
                                return Ok(Attribute::verbatim(&t));
                            }
                            ty = Some(self.build_type(x)?)
                        }
                    }
                }
                let ty =
                    ty.ok_or_else(|| self.err(span.clone(), "dense attribute needs a type"))?;
                Attribute::dense(self.build_dense(body, ty, span)?)
            }
            Rule::sparse_attr => {
                let mut bodies = vec![];
                let mut ty = None;
                for x in p.into_inner() {
                    match x.as_rule() {
                        Rule::dense_body => bodies.push((x.as_str(), Self::pspan(&x, base))),
                        _ => ty = Some(self.build_type(x)?),
                    }
                }
                let ty = ty.ok_or_else(|| self.err(span.clone(), "expected type"))?;
                Attribute::verbatim(&self.build_sparse(&bodies, ty, span)?)
            }
            Rule::dense_resource_attr => {
                let mut it = p.into_inner();
                let name = it.next().map(|x| x.as_str()).unwrap_or("");
                let tp = it
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected type"))?;
                let ty = self.build_type(tp)?;
                self.resource_uses.push((name.to_string(), span));
                Attribute::new(AttrData::DenseResource {
                    name: Ident::new(name),
                    ty,
                })
            }
            Rule::dense_array_attr => {
                let mut it = p.into_inner();
                let dt_pair = it
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected element type"))?;
                let dtype = self.build_dtype(dt_pair.as_str(), span.clone())?;
                let mut values = vec![];
                for e in it {
                    let s = e.as_str();
                    let v = if dtype.is_float() {
                        // A hex integer is the element's bit pattern (inf, nan).
                        let hex = |s: &str| {
                            let h = s.strip_prefix("0x")?;
                            Some(float_from_bits(dtype, u64::from_str_radix(h, 16).ok()?))
                        };
                        hex(s)
                            .or_else(|| parse_float(s))
                            .or_else(|| parse_int(s).map(|i| i as f64))
                            .map(|f| dtype.float_from_bits(dtype.float_bits(f)).to_bits() as i64)
                    } else if s == "true" || s == "false" {
                        Some((s == "true") as i64)
                    } else {
                        parse_int(s)
                    };
                    values.push(v.ok_or_else(|| {
                        self.err(span.clone(), format!("invalid {dtype} element '{s}'"))
                    })?);
                }
                Attribute::new(AttrData::DenseArray {
                    dtype,
                    values: values.into(),
                })
            }
            Rule::location => {
                let l = self.build_loc(p, base)?;
                if l.has_alias() {
                    // mlir-opt defines the aliases of attribute locations first.
                    return Err(self.err(
                        span,
                        "a location alias used in an attribute must be defined before it",
                    ));
                }
                Attribute::new(AttrData::Location(l))
            }
            Rule::distinct_attr => {
                let mut it = p.into_inner();
                let n = it.next().map_or("", |x| x.as_str());
                let id: u64 = n.parse().map_err(|_| {
                    self.err(
                        span.clone(),
                        format!("distinct id {n} is out of range (at most {})", u64::MAX),
                    )
                })?;
                let referenced = match it.next() {
                    Some(a) => self.build_attr(a)?,
                    None => Attribute::unit(),
                };
                self.distinct_uses.push((id, referenced, span.clone()));
                Attribute::new(AttrData::Distinct { id, referenced })
            }
            r => return Err(self.err(span, format!("expected attribute, found {r:?}"))),
        })
    }

    pub(super) fn build_symbol(&self, p: Pair<'s, Rule>, span: Range<usize>) -> PResult<Attribute> {
        let parts: Vec<Ident> = p
            .into_inner()
            .map(|s| {
                let t = &s.as_str()[1..];
                if t.starts_with('"') {
                    unescape(&t[1..t.len() - 1])
                        .map(|n| Ident::new(&n))
                        .ok_or_else(|| self.err(span.clone(), NOT_UTF8))
                } else {
                    Ok(Ident::new(t))
                }
            })
            .collect::<PResult<_>>()?;
        Ok(Attribute::new(AttrData::Symbol(parts.into_boxed_slice())))
    }

    pub(super) fn build_dict(&mut self, p: Pair<'s, Rule>, base: usize) -> PResult<AttrDict> {
        let saved = self.pos;
        self.pos = base;
        let mut entries: Vec<NamedAttr> = vec![];
        for e in p.into_inner() {
            let sp = Self::pspan(&e, base);
            let mut it = e.into_inner();
            let k = it.next().map(|x| x.as_str()).unwrap_or("");
            let key = if k.starts_with('"') {
                unescape(&k[1..k.len() - 1]).ok_or_else(|| self.err(sp.clone(), NOT_UTF8))?
            } else {
                k.to_string()
            };
            let v = match it.next() {
                Some(v) => self.build_attr(v)?,
                None => Attribute::unit(),
            };
            let key = Ident::new(&key);
            if entries.iter().any(|(n, _)| *n == key) {
                self.pos = saved;
                return Err(self.err(sp, format!("duplicate key '{key}' in dictionary attribute")));
            }
            entries.push((key, v));
        }
        self.pos = saved;
        Ok(AttrDict::new(entries))
    }

    pub(super) fn build_ge_attr(
        &mut self,
        name: &str,
        body: &str,
        span: Range<usize>,
    ) -> PResult<Attribute> {
        let inner = body
            .strip_prefix('<')
            .and_then(|b| b.strip_suffix('>'))
            .unwrap_or(body)
            .trim();
        Ok(match name {
            "format" => {
                let mut parts = split_top_level(inner).into_iter();
                let storage = parts.next().unwrap_or("").trim();
                let storage = crate::attributes::Format::parse(storage)
                    .ok_or_else(|| self.err(span.clone(), format!("unknown format '{storage}' (expected one of ND, NCHW, NHWC, HWCN, CHWN, NCDHW, NDHWC, NC1HWC0, FRACTAL_Z, FRACTAL_NZ)")))?;
                let mut origin = None;
                let mut origin_shape = None;
                for kv in parts {
                    let (k, v) = kv
                        .split_once('=')
                        .map(|(k, v)| (k.trim(), v.trim()))
                        .unwrap_or((kv.trim(), ""));
                    match k {
                        "origin" => {
                            origin = Some(crate::attributes::Format::parse(v).ok_or_else(|| {
                                self.err(span.clone(), format!("unknown origin format '{v}'"))
                            })?)
                        }
                        "origin_shape" => {
                            let t = parse_type_str(
                                self.ctx,
                                &format!(
                                    "tensor<{}f32>",
                                    v.trim_matches(|c| c == '[' || c == ']')
                                        .split(',')
                                        .map(|d| format!("{}x", d.trim()))
                                        .collect::<String>()
                                ),
                            )
                            .map_err(|_| {
                                self.err(span.clone(), format!("invalid origin_shape '{v}'"))
                            })?;
                            origin_shape =
                                t.as_tensor().map(|t| t.shape().to_vec().into_boxed_slice());
                        }
                        _ => {
                            return Err(self
                                .err(span.clone(), format!("unknown #ge.format parameter '{k}'")))
                        }
                    }
                }
                Attribute::format(crate::attributes::FormatAttr {
                    storage,
                    origin,
                    origin_shape,
                })
            }
            "external" => {
                let mut parts = split_top_level(inner).into_iter();
                let path = parts.next().unwrap_or("").trim();
                if !(path.starts_with('"') && path.ends_with('"') && path.len() >= 2) {
                    return Err(self.err(
                        span,
                        "expected #ge.external<\"file\", offset = N, length = N, type = T>",
                    ));
                }
                let path = unescape(&path[1..path.len() - 1])
                    .ok_or_else(|| self.err(span.clone(), NOT_UTF8))?;
                let (mut offset, mut length, mut ty) = (None, None, None);
                for kv in parts {
                    let (k, v) = kv
                        .split_once('=')
                        .map(|(k, v)| (k.trim(), v.trim()))
                        .unwrap_or((kv.trim(), ""));
                    match k {
                        "offset" => offset = v.parse::<u64>().ok(),
                        "length" => length = v.parse::<u64>().ok(),
                        "type" => ty = parse_type_str(self.ctx, v).ok(),
                        _ => {
                            return Err(self.err(
                                span.clone(),
                                format!("unknown #ge.external parameter '{k}'"),
                            ))
                        }
                    }
                }
                match (offset, length, ty) {
                    (Some(offset), Some(length), Some(ty)) => Attribute::new(AttrData::External {
                        path: path.into(),
                        offset,
                        length,
                        ty,
                    }),
                    _ => {
                        return Err(self.err(
                            span,
                            "expected #ge.external<\"file\", offset = N, length = N, type = T>",
                        ))
                    }
                }
            }
            _ => Attribute::new(AttrData::Opaque {
                dialect: Ident::new("ge"),
                name: Ident::new(name),
                body: body.into(),
            }),
        })
    }

    /// `sparse<indices, values> : ty` as mlir-opt prints it, read as MLIR
    /// reads it: the indices are an `[N, rank]` list of i64 (one splat index
    /// is `[1, rank]`), the values N elements of the type's element type (a
    /// splat fills N), each index inside the type's shape.
    fn build_sparse(
        &self,
        bodies: &[(&str, Range<usize>)],
        ty: Type,
        span: Range<usize>,
    ) -> PResult<String> {
        let tt = ty.as_tensor().ok_or_else(|| {
            self.err(
                span.clone(),
                format!("sparse elements type must be a tensor, got '{ty}'"),
            )
        })?;
        let shape = tt.static_shape().ok_or_else(|| {
            self.err(
                span.clone(),
                format!("sparse elements need a static shape, got '{ty}'"),
            )
        })?;
        let mut out = String::from("sparse<");
        if let [(ind, ispan), (val, vspan)] = bodies {
            let rank = shape.len() as i64;
            let (_, ishape) = scan_dense(ind).map_err(|m| self.err(ispan.clone(), m))?;
            let ishape = ishape.unwrap_or_else(|| vec![1, rank]);
            let n = ishape.first().copied().unwrap_or(0);
            let fits = match ishape[..] {
                [_, r] => r == rank,
                [_] => rank == 1,
                _ => false,
            };
            if !fits {
                return Err(self.err(
                    ispan.clone(),
                    format!(
                        "expected shape ([{n}, {rank}]); inferred shape of indices literal ([{}])",
                        join_dims(&ishape)
                    ),
                ));
            }
            let ity = Type::tensor(
                &ishape.iter().map(|&d| Dim::Static(d)).collect::<Vec<_>>(),
                DType::I64,
            );
            let indices = self.build_dense(Some((ind, ispan.clone())), ity, span.clone())?;
            // Every index inside the shape.
            let r = rank.max(1) as usize;
            for k in 0..indices.len() / r {
                let idx: Vec<i64> = (0..r).map(|j| indices.get(k * r + j).as_i64()).collect();
                if idx.iter().zip(&shape).any(|(&v, &d)| v < 0 || v >= d) {
                    return Err(self.err(
                        ispan.clone(),
                        format!(
                            "sparse index #{k} ([{}]) is not contained within the shape of '{ty}'",
                            join_dims(&idx)
                        ),
                    ));
                }
            }
            let (_, vshape) = scan_dense(val).map_err(|m| self.err(vspan.clone(), m))?;
            let vshape = vshape.unwrap_or_else(|| vec![n]);
            if vshape.first() != Some(&n) {
                return Err(self.err(
                    vspan.clone(),
                    format!(
                        "expected {n} sparse values, but got {}",
                        vshape.first().copied().unwrap_or(0)
                    ),
                ));
            }
            let vty = Type::tensor(
                &vshape.iter().map(|&d| Dim::Static(d)).collect::<Vec<_>>(),
                tt.dtype,
            );
            let values = self.build_dense(Some((val, vspan.clone())), vty, span)?;
            if n > 0 {
                let _ = crate::printer::write_dense_body_generic(&mut out, &indices, false);
                out.push_str(", ");
                let _ = crate::printer::write_dense_body_generic(&mut out, &values, true);
            }
        }
        out.push_str("> : ");
        let _ = crate::printer::write_type(&mut out, ty, true);
        Ok(out)
    }

    pub(super) fn build_dense(
        &self,
        body: Option<(&str, Range<usize>)>,
        ty: Type,
        span: Range<usize>,
    ) -> PResult<DenseElements> {
        let tt = ty.as_tensor().ok_or_else(|| {
            self.err(
                span.clone(),
                format!("dense literal type must be a tensor, got '{ty}'"),
            )
        })?;
        let shape = tt.static_shape().ok_or_else(|| {
            self.err(
                span.clone(),
                format!("dense literal needs a static shape, got '{ty}'"),
            )
        })?;
        let n: i64 = shape.iter().product();
        let dt = tt.dtype;
        let Some((text, bspan)) = body else {
            if n != 0 {
                return Err(self.err(
                    span,
                    format!("empty dense literal for a type with {n} elements"),
                ));
            }
            return Ok(DenseElements {
                ty,
                splat: false,
                bytes: Box::new([]),
            });
        };
        if let Some(hex) = text.strip_prefix("\"0x").and_then(|t| t.strip_suffix('"')) {
            let mut bytes = decode_hex(hex)
                .ok_or_else(|| self.err(bspan.clone(), "invalid hex in dense literal"))?;
            if dt == DType::I1 {
                bytes = unpack_i1_hex(bytes, n);
            }
            let w = dt.byte_size() as i64;
            let splat = bytes.len() as i64 == w && n != 1;
            if !splat && bytes.len() as i64 != n * w {
                return Err(self.err(
                    bspan,
                    format!(
                        "hex dense literal has {} bytes, type '{ty}' needs {}",
                        bytes.len(),
                        n * w
                    ),
                ));
            }
            return Ok(DenseElements {
                ty,
                splat,
                bytes: bytes.into(),
            }
            .canonical());
        }
        let (elems, lit_shape) =
            scan_dense_typed(text, Some(dt)).map_err(|m| self.err(bspan.clone(), m))?;
        let mut bytes = Vec::with_capacity(elems.len() * dt.byte_size());
        for e in &elems {
            if dt == DType::I1 && !matches!(e, Element::Bool(_) | Element::Int(0 | 1)) {
                return Err(self.err(bspan, "i1 dense literal elements must be true/false or 0/1"));
            }
            if dt.is_int() && matches!(e, Element::Float(_)) {
                return Err(self.err(
                    bspan,
                    format!("float element in an integer dense literal of type '{ty}'"),
                ));
            }
            crate::attributes::write_element(dt, *e, &mut bytes);
        }
        match lit_shape {
            None => Ok(DenseElements {
                ty,
                splat: n != 1,
                bytes: bytes.into(),
            }
            .canonical()),
            Some(s) => {
                if s != shape {
                    return Err(self.err(
                        bspan,
                        format!(
                            "dense literal shape [{}] does not match type '{ty}'",
                            s.iter()
                                .map(|d| d.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
                Ok(DenseElements {
                    ty,
                    splat: false,
                    bytes: bytes.into(),
                }
                .canonical())
            }
        }
    }

    // ---- locations ---------------------------------------------------------

    pub(super) fn build_loc(&mut self, p: Pair<'s, Rule>, base: usize) -> PResult<Location> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.build_loc_rec(p, base))
    }

    fn build_loc_rec(&mut self, p: Pair<'s, Rule>, base: usize) -> PResult<Location> {
        let span = Self::pspan(&p, base);
        match p.as_rule() {
            Rule::location => {
                let i = p
                    .into_inner()
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected location"))?;
                self.build_loc(i, base)
            }
            Rule::loc_inner => {
                let i = p
                    .into_inner()
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected location"))?;
                self.build_loc(i, base)
            }
            Rule::loc_unknown => Ok(Location::unknown()),
            Rule::loc_file => {
                let mut it = p.into_inner();
                let f = it.next().map(|x| x.as_str()).unwrap_or("\"\"");
                let line = it.next().and_then(|x| x.as_str().parse().ok()).unwrap_or(0);
                let col = it.next().and_then(|x| x.as_str().parse().ok()).unwrap_or(0);
                let f =
                    unescape(&f[1..f.len() - 1]).ok_or_else(|| self.err(span.clone(), NOT_UTF8))?;
                Ok(Location::file(&f, line, col))
            }
            Rule::loc_name => {
                let mut it = p.into_inner();
                let n = it.next().map(|x| x.as_str()).unwrap_or("\"\"");
                let child = match it.next() {
                    Some(c) => Some(self.build_loc(c, base)?),
                    None => None,
                };
                let n =
                    unescape(&n[1..n.len() - 1]).ok_or_else(|| self.err(span.clone(), NOT_UTF8))?;
                Ok(Location::name(&n, child))
            }
            Rule::loc_callsite => {
                let mut it = p.into_inner();
                let a = it
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected callee location"))?;
                let b = it
                    .next()
                    .ok_or_else(|| self.err(span.clone(), "expected caller location"))?;
                Ok(Location::new(LocData::CallSite {
                    callee: self.build_loc(a, base)?,
                    caller: self.build_loc(b, base)?,
                }))
            }
            Rule::loc_fused => {
                let mut locs = vec![];
                let mut metadata = None;
                for x in p.into_inner() {
                    if x.as_rule() == Rule::attribute {
                        metadata = Some(self.build_attr_at(x, base)?);
                    } else {
                        locs.push(self.build_loc(x, base)?);
                    }
                }
                Ok(Location::new(LocData::Fused {
                    locs: locs.into(),
                    metadata,
                }))
            }
            Rule::loc_alias => {
                // mlir-opt defines most location aliases after the module:
                // an alias not seen yet is resolved when the parse ends.
                let id = &p.as_str()[1..];
                if let Some(&l) = self.loc_aliases.get(id) {
                    return Ok(l);
                }
                self.loc_alias_uses.push((id, span));
                Ok(Location::new(LocData::Alias(Ident::new(id))))
            }
            _ => Err(self.err(span, "expected location")),
        }
    }
}

/// `i1` elements of a hex dense literal as MLIR writes them: one bit each,
/// least significant first (`ceil(n/8)` bytes), or one byte `0x00`/`0xFF`
/// for a splat. Returned one byte per element as ge stores them; other
/// lengths (one byte per element, older ge output) are left for the caller.
fn unpack_i1_hex(bytes: Vec<u8>, n: i64) -> Vec<u8> {
    let n = n.max(0) as usize;
    match bytes.as_slice() {
        [b @ (0 | 0xFF)] if n != 1 => vec![b & 1],
        _ if bytes.len() == n.div_ceil(8) && (n != 1 || bytes[0] <= 1) => {
            (0..n).map(|i| (bytes[i / 8] >> (i % 8)) & 1).collect()
        }
        _ => bytes,
    }
}
