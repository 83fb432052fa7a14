//! Declarative assembly formats (MLIR's `assemblyFormat`), interpreted for
//! both parsing and printing so the two can never disagree.
//!
//! Elements:
//! - `` `kw` `` / `` `(` `` — a literal keyword or punctuation
//! - `$name` — an operand group, attribute or region of the op definition
//! - `operands`, `regions` — all operands / all regions
//! - `attr-dict`, `attr-dict-with-keyword` — the remaining attributes
//! - `type($x)`, `type(operands)`, `type(results)`, `type($result)`
//! - `functional-type(operands, results)` — `(T, T) -> T`
//! - `( ... )?` — an optional group, present when its first element is
//!
//! Result types the format does not spell come from the op's `infer` hook or
//! its `SameOperandsAndResultType` trait.

use crate::attributes::Attribute;
use crate::body::{OpId, ValueId};
use crate::opdef::{Arity, AttrKind, InferCtx, OpDef, Trait};
use crate::parser::{OpParser, OperandRef, PResult};
use crate::printer::OpPrinter;
use crate::types::Type;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TypeSel {
    Operand(usize),
    Result(usize),
    AllOperands,
    AllResults,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Elem {
    Lit(String),
    Operand(usize),
    AllOperands,
    Attr(usize),
    Region(usize),
    AllRegions,
    AttrDict { keyword: bool },
    Type(TypeSel),
    FunctionalType(TypeSel, TypeSel),
    Optional(Vec<Elem>),
}

#[derive(Debug)]
pub struct CompiledFormat {
    pub elems: Vec<Elem>,
    /// Attributes printed by the format itself (elided from `attr-dict`).
    pub format_attrs: Vec<&'static str>,
}

impl CompiledFormat {
    pub fn compile(def: &'static OpDef, text: &str) -> Result<CompiledFormat, String> {
        let toks = tokenize(text)?;
        let mut pos = 0;
        let elems = parse_elems(def, &toks, &mut pos, false)?;
        if pos != toks.len() {
            return Err(format!("unexpected '{}' in format", toks[pos]));
        }
        let mut format_attrs = vec![];
        collect_attrs(def, &elems, &mut format_attrs);
        let f = CompiledFormat {
            elems,
            format_attrs,
        };
        f.check_types_resolvable(def)?;
        Ok(f)
    }

    fn check_types_resolvable(&self, def: &OpDef) -> Result<(), String> {
        let mut ops = vec![false; def.operands.len()];
        let mut res = vec![false; def.results.len()];
        fn mark(sel: TypeSel, ops: &mut [bool], res: &mut [bool]) {
            match sel {
                TypeSel::Operand(i) => ops[i] = true,
                TypeSel::Result(i) => res[i] = true,
                TypeSel::AllOperands => ops.iter_mut().for_each(|x| *x = true),
                TypeSel::AllResults => res.iter_mut().for_each(|x| *x = true),
            }
        }
        fn walk(es: &[Elem], ops: &mut [bool], res: &mut [bool]) {
            for e in es {
                match e {
                    Elem::Type(s) => mark(*s, ops, res),
                    Elem::FunctionalType(a, b) => {
                        mark(*a, ops, res);
                        mark(*b, ops, res)
                    }
                    Elem::Optional(inner) => walk(inner, ops, res),
                    _ => {}
                }
            }
        }
        walk(&self.elems, &mut ops, &mut res);
        let same = def.has_trait(Trait::SameOperandsAndResultType);
        let results_ok =
            res.iter().all(|&x| x) || def.infer.is_some() || (same && ops.iter().any(|&x| x));
        let operands_ok = ops.iter().all(|&x| x) || (same && results_ok);
        if !results_ok {
            return Err(
                "the format does not give the result types and the op has no `infer` hook".into(),
            );
        }
        if !operands_ok {
            return Err("the format does not give every operand's type".into());
        }
        Ok(())
    }

    // ---- parsing -----------------------------------------------------------

    pub fn parse<'s>(&self, p: &mut OpParser<'_, '_, 's>) -> PResult<()> {
        let def = p.def.expect("formats belong to registered ops");
        let mut st = ParseState {
            groups: vec![None; def.operands.len()],
            all_operands: None,
            operand_types: vec![None; def.operands.len()],
            all_operand_types: None,
            result_types: vec![None; def.results.len()],
            all_result_types: None,
        };
        self.parse_elems(def, &self.elems, p, &mut st)?;
        finish_parse(def, p, st)
    }

    fn parse_elems<'s>(
        &self,
        def: &'static OpDef,
        elems: &[Elem],
        p: &mut OpParser<'_, '_, 's>,
        st: &mut ParseState<'s>,
    ) -> PResult<()> {
        for e in elems {
            match e {
                Elem::Lit(l) => {
                    if is_punct(l) {
                        p.expect_punct(l)?;
                    } else {
                        p.expect_keyword(l)?;
                    }
                }
                Elem::Operand(g) => {
                    let refs = match def.operands[*g].arity {
                        Arity::One => vec![p.parse_operand()?],
                        Arity::Optional => {
                            if p.peek_operand() {
                                vec![p.parse_operand()?]
                            } else {
                                vec![]
                            }
                        }
                        Arity::Variadic => p.parse_operand_list()?,
                    };
                    st.groups[*g] = Some(refs);
                }
                Elem::AllOperands => st.all_operands = Some(p.parse_operand_list()?),
                Elem::Attr(i) => {
                    let ad = &def.attrs[*i];
                    let span = p.here();
                    let v = p.parse_attr_value(ad.kind)?;
                    p.add_attr(ad.name, v, span)?;
                }
                Elem::Region(_) => {
                    p.parse_region(&[])?;
                }
                Elem::AllRegions => {
                    while p.peek_region() {
                        p.parse_region(&[])?;
                        if !p.try_punct(",") {
                            break;
                        }
                    }
                }
                Elem::AttrDict { keyword } => {
                    if *keyword {
                        p.parse_optional_attr_dict_with_keyword()?
                    } else if !(p.peek_region() && self.region_follows(e)) {
                        p.parse_optional_attr_dict()?
                    }
                }
                Elem::Type(sel) => {
                    let ts = match arity_of(def, *sel) {
                        Arity::One => vec![p.parse_type()?],
                        _ => {
                            if p.peek_type() {
                                p.parse_type_list()?
                            } else {
                                vec![]
                            }
                        }
                    };
                    st.set_types(*sel, ts);
                }
                Elem::FunctionalType(a, b) => {
                    let (ins, outs) = p.parse_functional_type()?;
                    st.set_types(*a, ins);
                    st.set_types(*b, outs);
                }
                Elem::Optional(inner) => {
                    if anchor_present(def, &inner[0], p) {
                        self.parse_elems(def, inner, p, st)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the element after `e` in the format is a region (so a
    /// `{...}` at this point belongs to it, not to `attr-dict`).
    fn region_follows(&self, e: &Elem) -> bool {
        let mut it = self.elems.iter().skip_while(|x| !std::ptr::eq(*x, e));
        it.next();
        matches!(it.next(), Some(Elem::Region(_) | Elem::AllRegions))
    }

    // ---- printing ------------------------------------------------------------

    pub fn print(&self, pr: &mut OpPrinter<'_, '_>, op: OpId) {
        let def = pr
            .body
            .op(op)
            .def
            .expect("formats belong to registered ops");
        let sizes = operand_group_sizes(def, pr, op);
        let mut first = true;
        self.print_elems(def, &self.elems, pr, op, &sizes, &mut first);
    }

    fn print_elems(
        &self,
        def: &'static OpDef,
        elems: &[Elem],
        pr: &mut OpPrinter<'_, '_>,
        op: OpId,
        sizes: &[usize],
        first: &mut bool,
    ) {
        for e in elems {
            match e {
                Elem::Lit(l) => {
                    pr.lit(l, *first);
                }
                Elem::Operand(g) => {
                    let vs = group_values(pr.body.op(op).operands(), sizes, *g).to_vec();
                    if !vs.is_empty() {
                        pr.elem_space(*first);
                        pr.value_list(&vs);
                    }
                }
                Elem::AllOperands => {
                    let vs = pr.body.op(op).operands().to_vec();
                    if !vs.is_empty() {
                        pr.elem_space(*first);
                        pr.value_list(&vs);
                    }
                }
                Elem::Attr(i) => {
                    if let Some(a) = pr.body.op(op).attr(def.attrs[*i].name) {
                        pr.elem_space(*first);
                        pr.attr_value(a);
                    }
                }
                Elem::Region(i) => {
                    // Unverified IR may lack the region; print what is there.
                    if let Some(&r) = pr.body.op(op).regions().get(*i) {
                        pr.elem_space(*first);
                        pr.region(op, r, true);
                    }
                }
                Elem::AllRegions => {
                    let rs = pr.body.op(op).regions().to_vec();
                    for (k, r) in rs.into_iter().enumerate() {
                        if k > 0 {
                            pr.write(",");
                        }
                        pr.elem_space(*first && k == 0);
                        pr.region(op, r, true);
                    }
                }
                Elem::AttrDict { keyword } => {
                    pr.attr_dict(op, &self.format_attrs, *keyword);
                }
                Elem::Type(sel) => {
                    let ts = select_types(pr, op, sizes, *sel);
                    if !ts.is_empty() {
                        pr.elem_space(*first);
                        pr.type_list(&ts);
                    }
                }
                Elem::FunctionalType(a, b) => {
                    let ins = select_types(pr, op, sizes, *a);
                    let outs = select_types(pr, op, sizes, *b);
                    pr.elem_space(*first);
                    pr.functional_type(&ins, &outs);
                }
                Elem::Optional(inner) => {
                    if anchor_printed(def, &inner[0], pr, op, sizes) {
                        self.print_elems(def, inner, pr, op, sizes, first);
                    }
                    continue;
                }
            }
            *first = false;
        }
    }
}

struct ParseState<'s> {
    groups: Vec<Option<Vec<OperandRef<'s>>>>,
    all_operands: Option<Vec<OperandRef<'s>>>,
    operand_types: Vec<Option<Vec<Type>>>,
    all_operand_types: Option<Vec<Type>>,
    result_types: Vec<Option<Vec<Type>>>,
    all_result_types: Option<Vec<Type>>,
}

impl ParseState<'_> {
    fn set_types(&mut self, sel: TypeSel, ts: Vec<Type>) {
        match sel {
            TypeSel::Operand(i) => self.operand_types[i] = Some(ts),
            TypeSel::Result(i) => self.result_types[i] = Some(ts),
            TypeSel::AllOperands => self.all_operand_types = Some(ts),
            TypeSel::AllResults => self.all_result_types = Some(ts),
        }
    }
}

/// Resolve operands and result types once all elements are read.
fn finish_parse<'s>(
    def: &'static OpDef,
    p: &mut OpParser<'_, '_, 's>,
    st: ParseState<'s>,
) -> PResult<()> {
    let ParseState {
        groups,
        all_operands,
        operand_types,
        all_operand_types,
        result_types,
        all_result_types,
    } = st;
    let (refs, sizes) = operand_refs(def, p, groups, all_operands)?;
    let (operand_types, mut result_types) = format_types(
        def,
        &sizes,
        refs.len(),
        (operand_types, all_operand_types),
        (result_types, all_result_types),
    );
    let operand_types = operand_types
        .ok_or_else(|| p.error_at(p.name_span.clone(), "operand types are not given"))?;
    if operand_types.len() != refs.len() {
        let span = refs.first().map_or(p.name_span.clone(), |r| {
            r.span.start..refs[refs.len() - 1].span.end
        });
        return Err(p.error_at(
            span,
            format!(
                "{} operands present, but {} types given",
                refs.len(),
                operand_types.len()
            ),
        ));
    }
    p.operands = p.resolve_operands(&refs, &operand_types)?;
    if result_types.is_none() {
        if let Some(infer) = def.infer {
            let mut attrs = p.attrs.clone();
            crate::builder::fill_default_attrs(def, &mut attrs);
            let consts = vec![None; operand_types.len()];
            let cx = InferCtx {
                operand_types: &operand_types,
                attrs: crate::attributes::AttrDict::new(attrs),
                operand_consts: &consts,
                group_sizes: &sizes,
                op: None,
            };
            result_types =
                Some(infer(&cx).map_err(|m| {
                    p.error_at(p.name_span.clone(), format!("'{}': {m}", def.name))
                })?);
        } else if def.has_trait(Trait::SameOperandsAndResultType) {
            result_types = operand_types.first().map(|t| vec![*t; def.results.len()]);
        }
    }
    p.result_types = Some(
        result_types
            .ok_or_else(|| p.error_at(p.name_span.clone(), "result types are not given"))?,
    );
    add_segment_sizes(def, p, &sizes);
    Ok(())
}

/// The operand references, flattened in group order, and the group sizes:
/// from `operands` (split by `operand_segment_sizes` or the groups' arities)
/// or from the `$group`s the format read.
fn operand_refs<'s>(
    def: &'static OpDef,
    p: &OpParser<'_, '_, 's>,
    groups: Vec<Option<Vec<OperandRef<'s>>>>,
    all_operands: Option<Vec<OperandRef<'s>>>,
) -> PResult<(Vec<OperandRef<'s>>, Vec<usize>)> {
    let Some(all) = all_operands else {
        let mut refs = vec![];
        let mut sizes = vec![];
        for g in groups {
            let g = g.unwrap_or_default();
            sizes.push(g.len());
            refs.extend(g);
        }
        return Ok((refs, sizes));
    };
    let segs = p
        .attrs
        .iter()
        .find(|(n, _)| n.as_str() == "operand_segment_sizes")
        .and_then(|(_, a)| a.as_i64_array());
    let sizes = def
        .group_sizes(def.operands, all.len(), segs.as_deref())
        .ok_or_else(|| {
            p.error_at(
                p.name_span.clone(),
                format!(
                    "'{}' expects {} operands, found {}",
                    def.name,
                    describe_arity(def.operands),
                    all.len()
                ),
            )
        })?;
    Ok((all, sizes))
}

/// Types read by a format: per group (`type($x)`) and all at once (`type(operands)`).
type FormatTypes = (Vec<Option<Vec<Type>>>, Option<Vec<Type>>);

/// The operand and result types the format spells (`None` where it does not
/// spell them all), completed by `SameOperandsAndResultType` for the operands
/// and by "no results" for an op without results.
fn format_types(
    def: &'static OpDef,
    sizes: &[usize],
    n_operands: usize,
    (operand_groups, all_operands): FormatTypes,
    (result_groups, all_results): FormatTypes,
) -> (Option<Vec<Type>>, Option<Vec<Type>>) {
    let flat = |groups: &[Option<Vec<Type>>]| groups.iter().flatten().flatten().copied().collect();
    let mut operand_types = all_operands;
    if operand_types.is_none()
        && operand_groups
            .iter()
            .enumerate()
            .all(|(i, t)| t.is_some() || sizes[i] == 0)
    {
        operand_types = Some(flat(&operand_groups));
    }
    let mut result_types = all_results;
    if result_types.is_none()
        && !def.results.is_empty()
        && result_groups.iter().all(|t| t.is_some())
    {
        result_types = Some(flat(&result_groups));
    }
    if def.results.is_empty() {
        result_types.get_or_insert_with(Vec::new);
    }
    if operand_types.is_none() && def.has_trait(Trait::SameOperandsAndResultType) {
        if let Some(rt) = result_types.as_ref().and_then(|r| r.first()) {
            operand_types = Some(vec![*rt; n_operands]);
        }
    }
    (operand_types, result_types)
}

/// An op with more than one variable-size operand group gets its
/// `operand_segment_sizes` (unless the text gave them).
fn add_segment_sizes(def: &'static OpDef, p: &mut OpParser<'_, '_, '_>, sizes: &[usize]) {
    let variable_groups = def
        .operands
        .iter()
        .filter(|g| g.arity != Arity::One)
        .count();
    if def.operands.len() > 1 && variable_groups > 1 {
        let seg: Vec<i64> = sizes.iter().map(|&s| s as i64).collect();
        if !p
            .attrs
            .iter()
            .any(|(n, _)| n.as_str() == "operand_segment_sizes")
        {
            p.attrs.push((
                crate::ident::Ident::new("operand_segment_sizes"),
                Attribute::i64_array(&seg),
            ));
        }
    }
}

fn describe_arity(groups: &[crate::opdef::OperandDef]) -> String {
    let fixed = groups.iter().filter(|g| g.arity == Arity::One).count();
    if groups.iter().any(|g| g.arity == Arity::Variadic) {
        format!("at least {fixed}")
    } else {
        let opt = groups.len() - fixed;
        if opt == 0 {
            format!("{fixed}")
        } else {
            format!("{fixed} to {}", fixed + opt)
        }
    }
}

pub fn operand_group_sizes(def: &OpDef, pr: &OpPrinter<'_, '_>, op: OpId) -> Vec<usize> {
    let d = pr.body.op(op);
    let segs = d
        .attr("operand_segment_sizes")
        .and_then(|a| a.as_i64_array());
    def.group_sizes(def.operands, d.operands().len(), segs.as_deref())
        .unwrap_or_else(|| vec![d.operands().len()])
}

fn group_values<'v>(all: &'v [ValueId], sizes: &[usize], g: usize) -> &'v [ValueId] {
    let start: usize = sizes.iter().take(g).sum();
    let len = sizes.get(g).copied().unwrap_or(0);
    all.get(start..start + len).unwrap_or(&[])
}

fn select_types(pr: &OpPrinter<'_, '_>, op: OpId, sizes: &[usize], sel: TypeSel) -> Vec<Type> {
    let b = pr.body;
    let d = b.op(op);
    let tys = |vs: &[ValueId]| vs.iter().map(|&v| b.value_type(v)).collect::<Vec<_>>();
    match sel {
        TypeSel::AllOperands => tys(d.operands()),
        TypeSel::AllResults => tys(d.results()),
        TypeSel::Operand(g) => tys(group_values(d.operands(), sizes, g)),
        TypeSel::Result(g) => {
            let def = d.def.expect("registered");
            let rs = def
                .group_sizes(def.results, d.results().len(), None)
                .unwrap_or_else(|| vec![d.results().len()]);
            tys(group_values(d.results(), &rs, g))
        }
    }
}

fn arity_of(def: &OpDef, sel: TypeSel) -> Arity {
    match sel {
        TypeSel::Operand(i) => def.operands[i].arity,
        TypeSel::Result(i) => def.results[i].arity,
        _ => Arity::Variadic,
    }
}

fn anchor_present(def: &OpDef, e: &Elem, p: &OpParser<'_, '_, '_>) -> bool {
    match e {
        Elem::Lit(l) => p.peek_literal(l),
        Elem::Operand(_) | Elem::AllOperands => p.peek_operand(),
        Elem::Attr(i) => {
            let k = def.attrs[*i].kind;
            p.peek().is_some_and(|it| {
                use crate::parser::ItemKind as K;
                match &it.kind {
                    K::Int(_)
                    | K::Float(_)
                    | K::Str(_)
                    | K::Attr(_)
                    | K::Symbol(_)
                    | K::Type(_) => true,
                    K::Punct("[") => true,
                    K::Keyword("true" | "false" | "unit") => true,
                    K::Keyword(_) => matches!(k, AttrKind::Enum(_) | AttrKind::Str),
                    K::Dict(_) => k == AttrKind::Dict,
                    _ => false,
                }
            })
        }
        Elem::Region(_) | Elem::AllRegions => p.peek_region(),
        Elem::AttrDict { keyword: true } => p.peek_keyword("attributes"),
        Elem::AttrDict { keyword: false } => p.peek_attr_dict(),
        Elem::Type(_) | Elem::FunctionalType(..) => p.peek_type() || p.peek_punct("("),
        Elem::Optional(inner) => anchor_present(def, &inner[0], p),
    }
}

fn anchor_printed(
    def: &OpDef,
    e: &Elem,
    pr: &OpPrinter<'_, '_>,
    op: OpId,
    sizes: &[usize],
) -> bool {
    let d = pr.body.op(op);
    match e {
        Elem::Lit(_) => true,
        Elem::Operand(g) => !group_values(d.operands(), sizes, *g).is_empty(),
        Elem::AllOperands => !d.operands().is_empty(),
        Elem::Attr(i) => {
            let ad = &def.attrs[*i];
            match d.attr(ad.name) {
                None => false,
                Some(a) => !crate::builder::is_default(ad, a),
            }
        }
        Elem::Region(i) => d
            .regions()
            .get(*i)
            .is_some_and(|&r| !d.region_body(pr.body).region(r).blocks.is_empty()),
        Elem::AllRegions => !d.regions().is_empty(),
        Elem::AttrDict { .. } => true,
        Elem::Type(sel) => !select_types(pr, op, sizes, *sel).is_empty(),
        Elem::FunctionalType(..) => true,
        Elem::Optional(inner) => anchor_printed(def, &inner[0], pr, op, sizes),
    }
}

fn collect_attrs(def: &OpDef, es: &[Elem], out: &mut Vec<&'static str>) {
    for e in es {
        match e {
            Elem::Attr(i) => out.push(def.attrs[*i].name),
            Elem::Optional(inner) => collect_attrs(def, inner, out),
            _ => {}
        }
    }
}

pub fn is_punct(l: &str) -> bool {
    !l.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
}

// ---- format-string tokenizer and element parser ---------------------------

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut toks = vec![];
    let cs: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '`' {
            let j = cs[i + 1..]
                .iter()
                .position(|&x| x == '`')
                .ok_or("unterminated literal")?
                + i
                + 1;
            toks.push(cs[i..=j].iter().collect());
            i = j + 1;
        } else if c == '(' || c == ')' || c == '?' || c == ',' {
            toks.push(c.to_string());
            i += 1;
        } else {
            let j = cs[i..]
                .iter()
                .position(|&x| x.is_whitespace() || "()?,`".contains(x))
                .map_or(cs.len(), |p| p + i);
            toks.push(cs[i..j].iter().collect());
            i = j;
        }
    }
    Ok(toks)
}

fn parse_elems(
    def: &'static OpDef,
    toks: &[String],
    pos: &mut usize,
    in_group: bool,
) -> Result<Vec<Elem>, String> {
    let mut out = vec![];
    while *pos < toks.len() {
        let t = toks[*pos].as_str();
        *pos += 1;
        let e = match t {
            ")" if in_group => {
                if toks.get(*pos).map(|s| s.as_str()) != Some("?") {
                    return Err("an optional group must end with `)?`".into());
                }
                *pos += 1;
                return Ok(out);
            }
            "(" => {
                let inner = parse_elems(def, toks, pos, true)?;
                if inner.is_empty() {
                    return Err("empty optional group".into());
                }
                Elem::Optional(inner)
            }
            "attr-dict" => Elem::AttrDict { keyword: false },
            "attr-dict-with-keyword" => Elem::AttrDict { keyword: true },
            "operands" => Elem::AllOperands,
            "regions" => Elem::AllRegions,
            "type" | "functional-type" => {
                if toks.get(*pos).map(|s| s.as_str()) != Some("(") {
                    return Err(format!("expected '(' after {t}"));
                }
                *pos += 1;
                let mut args = vec![];
                loop {
                    let a = toks.get(*pos).ok_or("unterminated type directive")?;
                    *pos += 1;
                    args.push(type_sel(def, a)?);
                    match toks.get(*pos).map(|s| s.as_str()) {
                        Some(",") => *pos += 1,
                        Some(")") => {
                            *pos += 1;
                            break;
                        }
                        _ => return Err(format!("expected ',' or ')' in {t}")),
                    }
                }
                match (t, args.as_slice()) {
                    ("type", [a]) => Elem::Type(*a),
                    ("functional-type", [a, b]) => Elem::FunctionalType(*a, *b),
                    _ => return Err(format!("wrong number of arguments to {t}")),
                }
            }
            _ if t.starts_with('`') => {
                let lit = t.trim_matches('`');
                if lit.is_empty() || lit == " " {
                    continue;
                }
                Elem::Lit(lit.to_string())
            }
            _ if t.starts_with('$') => {
                let n = &t[1..];
                if let Some(i) = def.operands.iter().position(|o| o.name == n) {
                    Elem::Operand(i)
                } else if let Some(i) = def.attrs.iter().position(|a| a.name == n) {
                    Elem::Attr(i)
                } else if let Some(i) = def.regions.iter().position(|r| r.name == n) {
                    Elem::Region(i)
                } else {
                    return Err(format!(
                        "'{n}' is not an operand, attribute or region of {}",
                        def.name
                    ));
                }
            }
            _ => return Err(format!("unknown format element '{t}'")),
        };
        out.push(e);
    }
    if in_group {
        return Err("unterminated optional group".into());
    }
    Ok(out)
}

fn type_sel(def: &OpDef, a: &str) -> Result<TypeSel, String> {
    match a {
        "operands" => Ok(TypeSel::AllOperands),
        "results" => Ok(TypeSel::AllResults),
        _ => {
            let n = a
                .strip_prefix('$')
                .ok_or_else(|| format!("expected $name, found '{a}'"))?;
            if let Some(i) = def.operands.iter().position(|o| o.name == n) {
                Ok(TypeSel::Operand(i))
            } else if let Some(i) = def.results.iter().position(|o| o.name == n) {
                Ok(TypeSel::Result(i))
            } else {
                Err(format!("'{n}' is not an operand or result of {}", def.name))
            }
        }
    }
}
