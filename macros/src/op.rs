//! `def_op!`: parse one op declaration and generate its `static OpDef`, its
//! typed handle, its attribute view and (in ge-dialects) its ES method.

use crate::docs;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{
    braced, bracketed, parenthesized, Attribute, Expr, Ident, Lit, LitStr, Token, UnOp, Visibility,
};

#[derive(Clone, Copy, PartialEq)]
enum Arity {
    One,
    Optional,
    Variadic,
}

struct Group {
    name: Ident,
    arity: Arity,
    constraint: TokenStream,
}

/// The kind of an attribute, as the declaration spells it.
#[derive(Clone)]
enum Kind {
    I64,
    F64,
    Bool,
    Unit,
    Str,
    I64Array,
    F64Array,
    StrArray,
    Type,
    Symbol,
    Elements,
    Dict,
    Any,
    Enum(TokenStream),
}

struct AttrDecl {
    docs: Vec<String>,
    name: Ident,
    kind: Kind,
    optional: bool,
    default: Option<Expr>,
    /// `#[es(positional)]`: an argument of the ES method even with a default.
    es_positional: bool,
}

struct RegionDecl {
    docs: Vec<String>,
    name: Ident,
}

#[derive(Default)]
struct EsDecl {
    method: Option<Ident>,
    attrs: Option<Ident>,
    results: Option<Ident>,
    none: Option<LitStr>,
}

pub struct OpDecl {
    attrs: Vec<Attribute>,
    vis: Visibility,
    ident: Ident,
    name: LitStr,
    operands: Vec<Group>,
    results: Vec<Group>,
    op_attrs: Vec<AttrDecl>,
    regions: Vec<RegionDecl>,
    traits: Option<TokenStream>,
    format: Option<Expr>,
    syntax: Option<Expr>,
    verify: Option<Expr>,
    infer: Option<Expr>,
    fold: Option<Expr>,
    semantics: Option<Expr>,
    interfaces: Vec<Expr>,
    es: Option<EsDecl>,
}

/// Top-level token trees up to the next top-level `,` (consumed) or the end.
fn until_comma(input: ParseStream) -> syn::Result<Vec<TokenTree>> {
    let mut out = vec![];
    while !input.is_empty() && !input.peek(Token![,]) {
        out.push(input.parse::<TokenTree>()?);
    }
    if input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
    }
    Ok(out)
}

fn is_punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

/// `Wrapper<inner>` → (Wrapper, inner); anything else → (None, tokens).
fn unwrap_generic(tokens: Vec<TokenTree>) -> (Option<Ident>, TokenStream) {
    if tokens.len() >= 3 && is_punct(&tokens[1], '<') && is_punct(&tokens[tokens.len() - 1], '>') {
        if let TokenTree::Ident(w) = &tokens[0] {
            if w == "Option" || w == "Variadic" {
                let inner: TokenStream = tokens[2..tokens.len() - 1].iter().cloned().collect();
                return (Some(w.clone()), inner);
            }
        }
    }
    (None, tokens.into_iter().collect())
}

/// A type constraint: the variants of `TypeConstraint` may be named bare.
fn constraint_tokens(ts: TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = ts.clone().into_iter().collect();
    // A fragment of a macro_rules expansion (`$c:expr`) arrives as an invisible group.
    if let [TokenTree::Group(g)] = tokens.as_slice() {
        if g.delimiter() == proc_macro2::Delimiter::None {
            return constraint_tokens(g.stream());
        }
    }
    if let Some(TokenTree::Ident(i)) = tokens.first() {
        let bare = [
            "Any",
            "AnyTensor",
            "FloatTensor",
            "IntTensor",
            "BoolTensor",
            "IndexTensor",
            "TensorOf",
            "Scalar",
            "AnyScalar",
            "TensorOrScalar",
        ];
        if bare.iter().any(|b| i == b) {
            return quote!(::ge_ir::opdef::TypeConstraint::#ts);
        }
    }
    ts
}

fn parse_groups(input: ParseStream) -> syn::Result<Vec<Group>> {
    let content;
    braced!(content in input);
    let mut out = vec![];
    while !content.is_empty() {
        let name = Ident::parse_any(&content)?;
        content.parse::<Token![:]>()?;
        let tokens = until_comma(&content)?;
        if tokens.is_empty() {
            return Err(syn::Error::new(name.span(), "expected a type constraint"));
        }
        let (wrapper, inner) = unwrap_generic(tokens);
        let arity = match wrapper {
            Some(w) if w == "Option" => Arity::Optional,
            Some(_) => Arity::Variadic,
            None => Arity::One,
        };
        out.push(Group {
            name,
            arity,
            constraint: constraint_tokens(inner),
        });
    }
    Ok(out)
}

fn parse_kind(ts: TokenStream, span: Span) -> syn::Result<Kind> {
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    let Some(TokenTree::Ident(i)) = tokens.first() else {
        return Err(syn::Error::new(
            span,
            "expected an attribute kind (I64, F64, Str, Enum(NAMES), …)",
        ));
    };
    let simple = match i.to_string().as_str() {
        "I64" => Some(Kind::I64),
        "F64" => Some(Kind::F64),
        "Bool" => Some(Kind::Bool),
        "Unit" => Some(Kind::Unit),
        "Str" => Some(Kind::Str),
        "I64Array" => Some(Kind::I64Array),
        "F64Array" => Some(Kind::F64Array),
        "StrArray" => Some(Kind::StrArray),
        "Type" => Some(Kind::Type),
        "Symbol" => Some(Kind::Symbol),
        "Elements" => Some(Kind::Elements),
        "Dict" => Some(Kind::Dict),
        "Any" => Some(Kind::Any),
        _ => None,
    };
    if let Some(k) = simple {
        if tokens.len() != 1 {
            return Err(syn::Error::new(
                i.span(),
                "unexpected tokens after the attribute kind",
            ));
        }
        return Ok(k);
    }
    if i == "Enum" && tokens.len() == 2 {
        if let TokenTree::Group(g) = &tokens[1] {
            return Ok(Kind::Enum(g.stream()));
        }
    }
    Err(syn::Error::new(
        i.span(),
        "unknown attribute kind: expected I64, F64, Bool, Unit, Str, I64Array, F64Array, \
         StrArray, Type, Symbol, Elements, Dict, Any or Enum(NAMES)",
    ))
}

fn parse_attrs(input: ParseStream) -> syn::Result<Vec<AttrDecl>> {
    let content;
    braced!(content in input);
    let mut out = vec![];
    while !content.is_empty() {
        let attrs = content.call(Attribute::parse_outer)?;
        let mut es_positional = false;
        for a in &attrs {
            if a.path().is_ident("es") {
                a.parse_nested_meta(|m| {
                    if m.path.is_ident("positional") {
                        es_positional = true;
                        Ok(())
                    } else {
                        Err(m.error("expected `positional`"))
                    }
                })?;
            } else if !a.path().is_ident("doc") {
                return Err(syn::Error::new_spanned(
                    a,
                    "expected doc comments or #[es(positional)]",
                ));
            }
        }
        let docs = docs::doc_lines(&attrs)?;
        let name = Ident::parse_any(&content)?;
        content.parse::<Token![:]>()?;
        let mut kind_tokens = vec![];
        while !content.is_empty() && !content.peek(Token![,]) && !content.peek(Token![=]) {
            kind_tokens.push(content.parse::<TokenTree>()?);
        }
        let (wrapper, inner) = unwrap_generic(kind_tokens);
        let optional = match wrapper {
            Some(w) if w == "Option" => true,
            Some(w) => {
                return Err(syn::Error::new(
                    w.span(),
                    "attributes are `Kind` or `Option<Kind>`",
                ))
            }
            None => false,
        };
        let kind = parse_kind(inner, name.span())?;
        let default = if content.peek(Token![=]) {
            content.parse::<Token![=]>()?;
            Some(content.parse::<Expr>()?)
        } else {
            None
        };
        if optional && default.is_some() {
            return Err(syn::Error::new(
                name.span(),
                "an optional attribute has no default",
            ));
        }
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
        out.push(AttrDecl {
            docs,
            name,
            kind,
            optional,
            default,
            es_positional,
        });
    }
    Ok(out)
}

fn parse_regions(input: ParseStream) -> syn::Result<Vec<RegionDecl>> {
    let content;
    braced!(content in input);
    let mut out = vec![];
    while !content.is_empty() {
        let attrs = content.call(Attribute::parse_outer)?;
        let docs = docs::doc_lines(&attrs)?;
        let name = Ident::parse_any(&content)?;
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
        out.push(RegionDecl { docs, name });
    }
    Ok(out)
}

fn parse_es(input: ParseStream) -> syn::Result<EsDecl> {
    let mut es = EsDecl::default();
    if !input.peek(syn::token::Paren) {
        return Ok(es);
    }
    let content;
    parenthesized!(content in input);
    while !content.is_empty() {
        let key: Ident = content.parse()?;
        content.parse::<Token![=]>()?;
        match key.to_string().as_str() {
            "method" => es.method = Some(Ident::parse_any(&content)?),
            "attrs" => es.attrs = Some(content.parse()?),
            "results" => es.results = Some(content.parse()?),
            "none" => es.none = Some(content.parse()?),
            _ => {
                return Err(syn::Error::new(
                    key.span(),
                    "expected method = …, attrs = …, results = … or none = \"reason\"",
                ))
            }
        }
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(es)
}

impl Parse for OpDecl {
    fn parse(input: ParseStream) -> syn::Result<OpDecl> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let ident: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let name: LitStr = input.parse()?;
        let body;
        braced!(body in input);
        let mut d = OpDecl {
            attrs,
            vis,
            ident,
            name,
            operands: vec![],
            results: vec![],
            op_attrs: vec![],
            regions: vec![],
            traits: None,
            format: None,
            syntax: None,
            verify: None,
            infer: None,
            fold: None,
            semantics: None,
            interfaces: vec![],
            es: None,
        };
        while !body.is_empty() {
            let key = Ident::parse_any(&body)?;
            let expr = |b: ParseStream| -> syn::Result<Expr> {
                b.parse::<Token![:]>()?;
                b.parse()
            };
            match key.to_string().as_str() {
                "operands" => d.operands = parse_groups(&body)?,
                "results" => d.results = parse_groups(&body)?,
                "attrs" => d.op_attrs = parse_attrs(&body)?,
                "regions" => d.regions = parse_regions(&body)?,
                "traits" => {
                    if body.peek(syn::token::Bracket) {
                        let content;
                        bracketed!(content in body);
                        let names = content.parse_terminated(Ident::parse, Token![,])?;
                        let names = names.iter();
                        d.traits = Some(quote!(&[#(::ge_ir::opdef::Trait::#names),*]));
                    } else {
                        d.traits = Some(expr(&body)?.to_token_stream());
                    }
                }
                "format" => d.format = Some(expr(&body)?),
                "syntax" => d.syntax = Some(expr(&body)?),
                "verify" => d.verify = Some(expr(&body)?),
                "infer" => d.infer = Some(expr(&body)?),
                "fold" => d.fold = Some(expr(&body)?),
                "semantics" => d.semantics = Some(expr(&body)?),
                "interfaces" => {
                    let content;
                    bracketed!(content in body);
                    d.interfaces = content
                        .parse_terminated(Expr::parse, Token![,])?
                        .into_iter()
                        .collect();
                }
                "es" => d.es = Some(parse_es(&body)?),
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        "unknown entry: expected operands, results, attrs, regions, traits, \
                         format, syntax, verify, infer, fold, semantics, interfaces or es",
                    ))
                }
            }
            if !body.is_empty() {
                body.parse::<Token![,]>()?;
            }
        }
        Ok(d)
    }
}

/// `ConvTranspose2d` → `CONV_TRANSPOSE2D`: an underscore before each capital
/// that follows a lower-case letter or a digit.
fn screaming_snake(s: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// `transA` → `trans_a` (attribute names as Rust names).
fn snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A Rust identifier for `name` (raw when it is a keyword).
fn rust_ident(name: &str, span: Span) -> Ident {
    match syn::parse_str::<Ident>(name) {
        Ok(mut i) => {
            i.set_span(span);
            i
        }
        Err(_) => Ident::new_raw(name, span),
    }
}

fn arity_tokens(a: Arity) -> TokenStream {
    match a {
        Arity::One => quote!(::ge_ir::opdef::Arity::One),
        Arity::Optional => quote!(::ge_ir::opdef::Arity::Optional),
        Arity::Variadic => quote!(::ge_ir::opdef::Arity::Variadic),
    }
}

fn kind_tokens(k: &Kind) -> TokenStream {
    let k = match k {
        Kind::I64 => quote!(I64),
        Kind::F64 => quote!(F64),
        Kind::Bool => quote!(Bool),
        Kind::Unit => quote!(Unit),
        Kind::Str => quote!(Str),
        Kind::I64Array => quote!(I64Array),
        Kind::F64Array => quote!(F64Array),
        Kind::StrArray => quote!(StrArray),
        Kind::Type => quote!(Type),
        Kind::Symbol => quote!(Symbol),
        Kind::Elements => quote!(Elements),
        Kind::Dict => quote!(Dict),
        Kind::Any => quote!(Any),
        Kind::Enum(names) => quote!(Enum(#names)),
    };
    quote!(::ge_ir::opdef::AttrKind::#k)
}

/// A default value: its `.air` text and its Rust value.
struct Default {
    text: String,
    value: TokenStream,
}

fn strip_group(e: &Expr) -> &Expr {
    match e {
        Expr::Group(g) => strip_group(&g.expr),
        Expr::Paren(p) => strip_group(&p.expr),
        e => e,
    }
}

fn scalar_default(kind: &Kind, e: &Expr) -> syn::Result<Default> {
    let err = |m: &str| syn::Error::new_spanned(e, m);
    let (neg, lit) = match strip_group(e) {
        Expr::Lit(l) => (false, &l.lit),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => match strip_group(&u.expr) {
            Expr::Lit(l) => (true, &l.lit),
            _ => return Err(err("expected a literal default")),
        },
        _ => return Err(err("expected a literal default")),
    };
    let sign = if neg { "-" } else { "" };
    match (kind, lit) {
        (Kind::I64, Lit::Int(i)) if i.suffix().is_empty() => {
            let v: i64 = i.base10_parse()?;
            let v = if neg { -v } else { v };
            Ok(Default {
                text: v.to_string(),
                value: quote!(#v),
            })
        }
        (Kind::F64, Lit::Float(f)) => {
            let digits = f.base10_digits();
            let (text, value) = match f.suffix() {
                "" | "f64" => {
                    let v: f64 = format!("{sign}{digits}")
                        .parse()
                        .map_err(|_| err("bad float"))?;
                    let text = match f.suffix() {
                        "" => format!("{sign}{digits}"),
                        _ => format!("{sign}{digits} : f64"),
                    };
                    (text, quote!(#v))
                }
                "f32" => {
                    let v: f32 = format!("{sign}{digits}")
                        .parse()
                        .map_err(|_| err("bad float"))?;
                    (format!("{sign}{digits} : f32"), quote!((#v as f64)))
                }
                _ => return Err(err("a float default has no suffix, f32 or f64")),
            };
            Ok(Default { text, value })
        }
        (Kind::Bool, Lit::Bool(b)) if !neg => {
            let v = b.value;
            Ok(Default {
                text: v.to_string(),
                value: quote!(#v),
            })
        }
        (Kind::Str | Kind::Enum(_), Lit::Str(s)) if !neg => {
            let v = s.value();
            if v.contains(['"', '\\']) {
                return Err(err(
                    "quotes and backslashes are not supported in string defaults",
                ));
            }
            Ok(Default {
                text: format!("\"{v}\""),
                value: quote!(#v),
            })
        }
        _ => Err(err("the default does not fit the attribute kind")),
    }
}

fn default_of(kind: &Kind, e: &Expr) -> syn::Result<Default> {
    let elem = match kind {
        Kind::I64Array => Some(Kind::I64),
        Kind::F64Array => Some(Kind::F64),
        _ => None,
    };
    match (elem, strip_group(e)) {
        (Some(k), Expr::Array(a)) => {
            let items = a
                .elems
                .iter()
                .map(|x| scalar_default(&k, x))
                .collect::<syn::Result<Vec<_>>>()?;
            let text = format!(
                "[{}]",
                items
                    .iter()
                    .map(|d| d.text.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let values = items.iter().map(|d| &d.value);
            Ok(Default {
                text,
                value: quote!(::std::vec![#(#values),*]),
            })
        }
        (Some(_), _) => Err(syn::Error::new_spanned(
            e,
            "expected an array default `[...]`",
        )),
        (None, _) => scalar_default(kind, e),
    }
}

/// The Rust type an accessor returns for a kind, and how it reads an `Attribute` `a`.
fn accessor_parts(kind: &Kind) -> (TokenStream, TokenStream) {
    match kind {
        Kind::I64 => (quote!(i64), quote!(a.as_int())),
        Kind::F64 => (quote!(f64), quote!(a.as_float())),
        Kind::Bool => (quote!(bool), quote!(a.as_bool())),
        Kind::Unit => (quote!(bool), quote!(Some(true))),
        Kind::Str | Kind::Enum(_) => (quote!(&'static str), quote!(a.as_str())),
        Kind::I64Array => (quote!(::std::vec::Vec<i64>), quote!(a.as_i64_array())),
        Kind::F64Array => (quote!(::std::vec::Vec<f64>), quote!(a.as_f64_array())),
        Kind::StrArray => (
            quote!(::std::vec::Vec<&'static str>),
            quote!(a
                .as_array()
                .and_then(|xs| xs.iter().map(|x| x.as_str()).collect())),
        ),
        Kind::Type => (quote!(::ge_ir::Type), quote!(a.as_type())),
        Kind::Symbol => (quote!(::ge_ir::Ident), quote!(a.as_symbol())),
        Kind::Dict => (quote!(::ge_ir::AttrDict), quote!(a.as_dict())),
        Kind::Elements | Kind::Any => (quote!(::ge_ir::Attribute), quote!(Some(a))),
    }
}

/// ES parameter types: (as an argument, as a field of the attributes struct, as text).
fn es_types(kind: &Kind) -> (TokenStream, TokenStream, &'static str, &'static str) {
    match kind {
        Kind::I64 => (quote!(i64), quote!(i64), "i64", "i64"),
        Kind::F64 => (quote!(f64), quote!(f64), "f64", "f64"),
        Kind::Bool | Kind::Unit => (quote!(bool), quote!(bool), "bool", "bool"),
        Kind::Str | Kind::Enum(_) | Kind::Symbol => (
            quote!(&str),
            quote!(::std::string::String),
            "&str",
            "String",
        ),
        Kind::I64Array => (
            quote!(&[i64]),
            quote!(::std::vec::Vec<i64>),
            "&[i64]",
            "Vec<i64>",
        ),
        Kind::F64Array => (
            quote!(&[f64]),
            quote!(::std::vec::Vec<f64>),
            "&[f64]",
            "Vec<f64>",
        ),
        Kind::StrArray => (
            quote!(&[&str]),
            quote!(::std::vec::Vec<::std::string::String>),
            "&[&str]",
            "Vec<String>",
        ),
        // An element type (`to` of graph.cast).
        Kind::Type => (
            quote!(::ge_ir::DType),
            quote!(::ge_ir::DType),
            "DType",
            "DType",
        ),
        Kind::Elements | Kind::Dict | Kind::Any => (
            quote!(::ge_ir::Attribute),
            quote!(::ge_ir::Attribute),
            "Attribute",
            "Attribute",
        ),
    }
}

fn str_tokens(s: &str) -> LitStr {
    LitStr::new(s, Span::call_site())
}

impl OpDecl {
    pub fn expand(&self) -> syn::Result<TokenStream> {
        let doc_lines = docs::doc_lines(&self.attrs)?;
        let (summary, description) = docs::summary_and_description(&doc_lines);
        if summary.is_empty() {
            return Err(syn::Error::new(
                self.ident.span(),
                "an op needs a doc comment: its summary line",
            ));
        }
        let vis = &self.vis;
        let ident = &self.ident;
        let static_ident = format_ident!(
            "{}",
            screaming_snake(&ident.to_string()),
            span = ident.span()
        );
        let view_ident = format_ident!("{}AttrView", ident);
        let name = &self.name;
        // Rustdoc of the generated items: the same text, with code fences marked
        // `text` so rustdoc does not compile them as doc tests.
        let rustdoc = docs::for_rustdoc(&summary, &description);
        let docs_attrs = quote!(#[doc = #rustdoc]);

        let group_defs = |groups: &[Group]| -> Vec<TokenStream> {
            groups
                .iter()
                .map(|g| {
                    let n = str_tokens(&g.name.unraw().to_string());
                    let a = arity_tokens(g.arity);
                    let c = &g.constraint;
                    quote!(::ge_ir::opdef::OperandDef { name: #n, arity: #a, constraint: #c })
                })
                .collect()
        };
        let operand_defs = group_defs(&self.operands);
        let result_defs = group_defs(&self.results);

        let mut attr_defs = vec![];
        let mut defaults = vec![];
        for a in &self.op_attrs {
            let n = str_tokens(&a.name.unraw().to_string());
            let k = kind_tokens(&a.kind);
            let doc = str_tokens(&docs::one_line(&a.docs));
            let opt = a.optional;
            let dv = a
                .default
                .as_ref()
                .map(|e| default_of(&a.kind, e))
                .transpose()?;
            let text = match &dv {
                Some(d) => {
                    let t = str_tokens(&d.text);
                    quote!(Some(#t))
                }
                None => quote!(None),
            };
            attr_defs.push(quote!(::ge_ir::opdef::AttrDef {
                name: #n, kind: #k, default: #text, optional: #opt, doc: #doc
            }));
            defaults.push(dv);
        }
        let region_defs: Vec<TokenStream> = self
            .regions
            .iter()
            .map(|r| {
                let n = str_tokens(&r.name.unraw().to_string());
                let doc = str_tokens(&docs::one_line(&r.docs));
                quote!(::ge_ir::opdef::RegionDef { name: #n, doc: #doc })
            })
            .collect();
        let traits = self.traits.clone().unwrap_or_else(|| quote!(&[]));
        let some = |e: &Option<Expr>| match e {
            Some(e) => quote!(Some(#e)),
            None => quote!(None),
        };
        let format = some(&self.format);
        let syntax = some(&self.syntax);
        let verify = some(&self.verify);
        let infer = some(&self.infer);
        let fold = some(&self.fold);
        let semantics = some(&self.semantics);
        let summary = str_tokens(&summary);
        let description = str_tokens(&description);

        let es = self
            .es
            .as_ref()
            .map(|e| self.expand_es(e, &defaults))
            .transpose()?;
        let (es_iface, es_items) = match es {
            Some((i, items)) => (Some(i), items),
            None => (None, quote!()),
        };
        let ifaces = &self.interfaces;
        let es_iface = es_iface.into_iter();

        // ---- the handle: operand, result and attribute accessors --------
        let mut accessors = vec![];
        for (i, g) in self.operands.iter().enumerate() {
            let f = rust_ident(&g.name.unraw().to_string(), g.name.span());
            let doc = format!("Operand `{}`.", g.name.unraw());
            accessors.push(match g.arity {
                // `matches` checked that the operands fit the definition.
                Arity::One => quote!(#[doc = #doc] pub fn #f(self) -> ::ge_ir::ValueId { self.operand_group(#i)[0] }),
                Arity::Optional => quote!(#[doc = #doc] pub fn #f(self) -> Option<::ge_ir::ValueId> { self.operand_group(#i).first().copied() }),
                Arity::Variadic => quote!(#[doc = #doc] pub fn #f(self) -> &'b [::ge_ir::ValueId] { self.operand_group(#i) }),
            });
        }
        for (i, g) in self.results.iter().enumerate() {
            let f = rust_ident(&g.name.unraw().to_string(), g.name.span());
            let doc = format!("Result `{}`.", g.name.unraw());
            accessors.push(match g.arity {
                Arity::One => quote!(#[doc = #doc] pub fn #f(self) -> ::ge_ir::ValueId { self.result_group(#i)[0] }),
                Arity::Optional => quote!(#[doc = #doc] pub fn #f(self) -> Option<::ge_ir::ValueId> { self.result_group(#i).first().copied() }),
                Arity::Variadic => quote!(#[doc = #doc] pub fn #f(self) -> &'b [::ge_ir::ValueId] { self.result_group(#i) }),
            });
        }
        let mut view_accessors = vec![];
        for (a, dv) in self.op_attrs.iter().zip(&defaults) {
            let raw = a.name.unraw().to_string();
            let n = str_tokens(&raw);
            let f = rust_ident(&snake(&raw), a.name.span());
            let (ty, read) = accessor_parts(&a.kind);
            let doc_text = docs::one_line(&a.docs);
            let (ret, body, doc) = match (dv, &a.kind) {
                (_, Kind::Unit) => (
                    quote!(bool),
                    quote!(self.0.get(#n).is_some()),
                    format!("Whether unit attribute `{raw}` is present: {doc_text}."),
                ),
                (Some(d), _) => {
                    let v = &d.value;
                    (
                        ty.clone(),
                        quote!(self.0.get(#n).and_then(|a| #read).unwrap_or_else(|| #v)),
                        format!("Attribute `{raw}` (default `{}`): {doc_text}.", d.text),
                    )
                }
                (None, _) => (
                    quote!(Option<#ty>),
                    quote!(self.0.get(#n).and_then(|a| #read)),
                    format!(
                        "Attribute `{raw}` ({}): {doc_text}.",
                        if a.optional {
                            "optional"
                        } else {
                            "required: present in verified IR"
                        }
                    ),
                ),
            };
            view_accessors.push(quote!(#[doc = #doc] pub fn #f(&self) -> #ret { #body }));
            accessors.push(quote!(#[doc = #doc] pub fn #f(self) -> #ret { #view_ident(self.op_data().attrs).#f() }));
        }
        let handle_doc = format!(
            "A `{}` op: [`{ident}::matches`] finds one by its definition; accessors read its operands, results and attributes.",
            name.value()
        );
        let view_doc = format!(
            "The attributes of a `{}` op with typed accessors (declared defaults filled in), from any [`::ge_ir::opdef::AttrSource`]: `{ident}::attrs(cx)`.",
            name.value()
        );
        Ok(quote! {
            #docs_attrs
            #vis static #static_ident: ::ge_ir::opdef::OpDef = ::ge_ir::opdef::OpDef {
                name: #name,
                summary: #summary,
                description: #description,
                operands: &[#(#operand_defs),*],
                results: &[#(#result_defs),*],
                attrs: &[#(#attr_defs),*],
                regions: &[#(#region_defs),*],
                traits: #traits,
                format: #format,
                syntax: #syntax,
                verify: #verify,
                infer: #infer,
                fold: #fold,
                semantics: #semantics,
                interfaces: &[#(&#ifaces as &dyn ::ge_ir::interfaces::OpInterface,)* #(#es_iface as &dyn ::ge_ir::interfaces::OpInterface)*],
                ..::ge_ir::opdef::OpDef::DEFAULT
            };

            #[doc = #handle_doc]
            #[doc = ""]
            #docs_attrs
            #[derive(Clone, Copy)]
            #vis struct #ident<'b> {
                body: &'b ::ge_ir::Body,
                op: ::ge_ir::OpId,
            }

            #[allow(dead_code, clippy::wrong_self_convention)]
            impl<'b> #ident<'b> {
                /// The op's definition (compare definitions, never names).
                pub const DEF: &'static ::ge_ir::opdef::OpDef = &#static_ident;
                /// The op's name.
                pub const NAME: &'static str = #name;

                /// The op `op` of `body` as this op, if it is one: its definition is
                /// [`Self::DEF`] and its operands and results fit the definition.
                pub fn matches(body: &'b ::ge_ir::Body, op: ::ge_ir::OpId) -> Option<Self> {
                    let d = body.op(op);
                    match d.def {
                        Some(def) if ::core::ptr::eq(def, Self::DEF) && def.fits(d) => Some(Self { body, op }),
                        _ => None,
                    }
                }
                /// Whether `d` is this op (by definition).
                pub fn is(d: &::ge_ir::OpData) -> bool {
                    d.def.is_some_and(|def| ::core::ptr::eq(def, Self::DEF))
                }
                /// Typed attributes of any attribute source (an op, a dictionary,
                /// an inference or semantics context).
                pub fn attrs(src: &impl ::ge_ir::opdef::AttrSource) -> #view_ident {
                    #view_ident(src.attr_dict())
                }
                pub fn op_id(self) -> ::ge_ir::OpId {
                    self.op
                }
                pub fn body(self) -> &'b ::ge_ir::Body {
                    self.body
                }
                pub fn op_data(self) -> &'b ::ge_ir::OpData {
                    self.body.op(self.op)
                }
                fn operand_group(self, i: usize) -> &'b [::ge_ir::ValueId] {
                    let d = self.op_data();
                    Self::DEF.operand_range(d, i).and_then(|r| d.operands().get(r)).unwrap_or(&[])
                }
                fn result_group(self, i: usize) -> &'b [::ge_ir::ValueId] {
                    let d = self.op_data();
                    Self::DEF.result_range(d, i).and_then(|r| d.results().get(r)).unwrap_or(&[])
                }
                #(#accessors)*
            }

            #[doc = #view_doc]
            #[derive(Clone, Copy, Debug)]
            #vis struct #view_ident(pub ::ge_ir::AttrDict);

            #[allow(dead_code)]
            impl #view_ident {
                #(#view_accessors)*
            }

            #es_items
        })
    }

    /// The ES interface value and items (attributes struct, result struct,
    /// the `GraphBuilder` method) of the op.
    fn expand_es(
        &self,
        es: &EsDecl,
        defaults: &[Option<Default>],
    ) -> syn::Result<(TokenStream, TokenStream)> {
        let name = &self.name;
        if let Some(reason) = &es.none {
            return Ok((quote!(&crate::es::EsExcluded(#reason)), quote!()));
        }
        let op_name = name.value();
        let short = op_name.split_once('.').map_or(op_name.as_str(), |(_, s)| s);
        let method = es
            .method
            .clone()
            .unwrap_or_else(|| rust_ident(short, name.span()));
        let method_str = method.unraw().to_string();
        let static_ident = format_ident!("{}", screaming_snake(&self.ident.to_string()));

        // Operands.
        let mut params = vec![];
        let mut groups = vec![];
        let mut operand_info = vec![];
        for g in &self.operands {
            let p = rust_ident(&g.name.unraw().to_string(), g.name.span());
            let n = str_tokens(&g.name.unraw().to_string());
            let a = arity_tokens(g.arity);
            match g.arity {
                Arity::One => {
                    params.push(quote!(#p: crate::es::Tensor<'g>));
                    groups.push(quote!(crate::es::Group::One(#p)));
                }
                Arity::Optional => {
                    params.push(quote!(#p: Option<crate::es::Tensor<'g>>));
                    groups.push(quote!(crate::es::Group::Opt(#p)));
                }
                Arity::Variadic => {
                    params.push(quote!(#p: &[crate::es::Tensor<'g>]));
                    groups.push(quote!(crate::es::Group::Many(#p)));
                }
            }
            operand_info.push(quote!((#n, #a)));
        }
        // Attributes: required ones (and those marked) are arguments, the rest
        // fields of the attributes struct.
        let mut pushes = vec![];
        let mut positional_info = vec![];
        let mut fields = vec![];
        let mut field_info = vec![];
        let mut field_defaults = vec![];
        for (a, dv) in self.op_attrs.iter().zip(defaults) {
            let raw = a.name.unraw().to_string();
            let n = str_tokens(&raw);
            let rn = snake(&raw);
            let f = rust_ident(&rn, a.name.span());
            let rn = str_tokens(&rn);
            let (arg_ty, field_ty, arg_text, field_text) = es_types(&a.kind);
            let required = dv.is_none() && !a.optional;
            if required || a.es_positional {
                params.push(quote!(#f: #arg_ty));
                pushes.push(quote!(crate::es::attr::push_attr(&mut named, def, #n, &#f);));
                let t = str_tokens(arg_text);
                positional_info.push(
                    quote!(crate::es::EsAttrInfo { name: #n, rust_name: #rn, rust_type: #t }),
                );
            } else {
                let doc = format!("Attribute `{raw}`: {}.", docs::one_line(&a.docs));
                let (ty, text, value) = match dv {
                    Some(d) => {
                        let v = &d.value;
                        let value = match a.kind {
                            Kind::Str | Kind::Enum(_) => quote!(::std::string::String::from(#v)),
                            _ => quote!(#v),
                        };
                        (field_ty, field_text.to_string(), value)
                    }
                    None => (
                        quote!(Option<#field_ty>),
                        format!("Option<{field_text}>"),
                        quote!(None),
                    ),
                };
                fields.push(quote!(#[doc = #doc] pub #f: #ty));
                field_defaults.push(quote!(#f: #value));
                pushes.push(quote!(crate::es::attr::push_attr(&mut named, def, #n, &attrs.#f);));
                let t = str_tokens(&text);
                field_info.push(
                    quote!(crate::es::EsAttrInfo { name: #n, rust_name: #rn, rust_type: #t }),
                );
            }
        }
        let mut items = quote!();
        let attrs_struct = if fields.is_empty() {
            quote!(None)
        } else {
            let s = es
                .attrs
                .clone()
                .unwrap_or_else(|| format_ident!("{}Attrs", self.ident));
            let doc = format!(
                "Attributes of `{op_name}` (`b.{method_str}`); `Default` gives the definition's defaults."
            );
            params.push(quote!(attrs: #s));
            items.extend(quote! {
                #[doc = #doc]
                #[derive(Clone, Debug, PartialEq)]
                pub struct #s { #(#fields,)* }
                impl ::core::default::Default for #s {
                    fn default() -> Self {
                        #s { #(#field_defaults,)* }
                    }
                }
            });
            let st = str_tokens(&s.to_string());
            quote!(Some(#st))
        };
        // Results.
        let (ret_ty, ret, results_info) = match (self.results.as_slice(), &es.results) {
            ([g], None) if g.arity == Arity::One => (
                quote!(crate::es::Tensor<'g>),
                quote!(self.one_result(vals, #method_str)),
                quote!(crate::es::EsResults::One),
            ),
            ([g], None) if g.arity == Arity::Variadic => (
                quote!(::std::vec::Vec<crate::es::Tensor<'g>>),
                quote!(Ok(self.all_results(vals))),
                quote!(crate::es::EsResults::Many),
            ),
            (rs, Some(s)) if rs.len() > 1 && rs.iter().all(|g| g.arity == Arity::One) => {
                let rf: Vec<Ident> = rs
                    .iter()
                    .map(|g| rust_ident(&g.name.unraw().to_string(), g.name.span()))
                    .collect();
                let rf_names: Vec<LitStr> = rf.iter().map(|f| str_tokens(&f.unraw().to_string())).collect();
                let doc = format!("The results of `{op_name}`.");
                let field_docs: Vec<String> = rf.iter().map(|f| format!("Result `{}`.", f.unraw())).collect();
                items.extend(quote! {
                    #[doc = #doc]
                    #[derive(Clone, Copy, Debug)]
                    pub struct #s<'g> {
                        #(#[doc = #field_docs] pub #rf: crate::es::Tensor<'g>,)*
                    }
                });
                let st = str_tokens(&s.to_string());
                (
                    quote!(#s<'g>),
                    quote!({
                        let mut it = self.all_results(vals).into_iter();
                        Ok(#s {
                            #(#rf: it.next().ok_or_else(|| crate::es::EsError::new(format!(
                                "b.{}: missing result '{}'", #method_str, #rf_names
                            )))?,)*
                        })
                    }),
                    quote!(crate::es::EsResults::Struct { name: #st, fields: &[#(#rf_names),*] }),
                )
            }
            _ => {
                return Err(syn::Error::new(
                    self.ident.span(),
                    "an ES method returns one result, a variadic result, or (with es(results = Name)) a struct of several",
                ))
            }
        };
        let doc = format!(
            "Builds `{op_name}` (see docs/dialects/ for its semantics); result types come from its shape inference."
        );
        let method_lit = str_tokens(&method_str);
        items.extend(quote! {
            impl crate::es::GraphBuilder {
                #[doc = #doc]
                #[allow(clippy::too_many_arguments, clippy::wrong_self_convention)]
                pub fn #method<'g>(&'g self, #(#params),*) -> crate::es::EsResult<#ret_ty> {
                    let def: &'static ::ge_ir::opdef::OpDef = &#static_ident;
                    #[allow(unused_mut)]
                    let mut named: ::std::vec::Vec<(&'static str, ::ge_ir::Attribute)> = ::std::vec::Vec::new();
                    #(#pushes)*
                    let vals = self.create_op(def, #method_lit, &[#(#groups),*], named)?;
                    #ret
                }
            }
        });
        let iface = quote!(&crate::es::EsOp {
            op: #name,
            method: #method_lit,
            operands: &[#(#operand_info),*],
            positional: &[#(#positional_info),*],
            attrs_struct: #attrs_struct,
            fields: &[#(#field_info),*],
            results: #results_info,
        });
        Ok((iface, items))
    }
}
