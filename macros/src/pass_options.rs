//! `#[derive(PassOptions)]`: a pass's options declared once as a struct.

use crate::docs;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Expr, Fields, Lit, LitStr, Type, UnOp};

enum OptType {
    Bool,
    Int,
    Str,
    List,
}

fn opt_type(ty: &Type) -> Option<OptType> {
    let s = quote!(#ty).to_string().replace(' ', "");
    Some(match s.as_str() {
        "bool" => OptType::Bool,
        "i64" => OptType::Int,
        "String" => OptType::Str,
        "Vec<String>" => OptType::List,
        _ => return None,
    })
}

/// The text of a default literal, as `PassOptions` parses it.
fn default_text(e: &Expr) -> syn::Result<String> {
    let err = || syn::Error::new_spanned(e, "expected a literal default");
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => Ok(i.base10_digits().to_string()),
            Lit::Bool(b) => Ok(b.value.to_string()),
            Lit::Str(s) => Ok(s.value()),
            _ => Err(err()),
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
            Ok(format!("-{}", default_text(&u.expr)?))
        }
        _ => Err(err()),
    }
}

/// `#[option(flatten)]`: the field is another `PassOptions` struct whose
/// options this pass takes over (clap's `#[command(flatten)]`; MLIR passes
/// share options by inheriting a common options class).
fn is_flatten(f: &syn::Field) -> syn::Result<bool> {
    let mut flatten = false;
    for a in f.attrs.iter().filter(|a| a.path().is_ident("option")) {
        if let Ok(id) = a.parse_args::<syn::Ident>() {
            if id != "flatten" {
                return Err(syn::Error::new_spanned(id, "expected flatten or \"name\""));
            }
            flatten = true;
        }
    }
    Ok(flatten)
}

pub fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let ident = &input.ident;
    let Data::Struct(s) = &input.data else {
        return Err(syn::Error::new_spanned(
            ident,
            "PassOptions derives for structs",
        ));
    };
    let Fields::Named(fields) = &s.fields else {
        return Err(syn::Error::new_spanned(
            ident,
            "PassOptions needs named fields",
        ));
    };
    // The option list in declaration order: runs of this struct's own
    // options, and the `DEFS` of each flattened struct where it is declared.
    let mut parts: Vec<TokenStream> = vec![];
    let mut defs = vec![];
    let mut reads = vec![];
    for f in &fields.named {
        let Some(fname) = &f.ident else { continue };
        if is_flatten(f)? {
            let ty = &f.ty;
            if !defs.is_empty() {
                parts.push(quote!(&[#(#defs),*]));
                defs.clear();
            }
            parts.push(quote!(<#ty>::DEFS));
            reads.push(quote!(#fname: <#ty>::from_options(o)));
            continue;
        }
        let mut name: Option<LitStr> = None;
        let mut default: Option<String> = None;
        let mut one_of: Option<Vec<LitStr>> = None;
        for a in f.attrs.iter().filter(|a| a.path().is_ident("option")) {
            a.parse_args_with(|p: syn::parse::ParseStream| {
                name = Some(p.parse()?);
                while !p.is_empty() {
                    p.parse::<syn::Token![,]>()?;
                    if p.is_empty() {
                        break;
                    }
                    let key: syn::Ident = p.parse()?;
                    p.parse::<syn::Token![=]>()?;
                    if key == "default" {
                        default = Some(default_text(&p.parse::<Expr>()?)?);
                    } else if key == "one_of" {
                        let content;
                        syn::bracketed!(content in p);
                        one_of = Some(
                            content
                                .parse_terminated(
                                    |c: syn::parse::ParseStream| c.parse::<LitStr>(),
                                    syn::Token![,],
                                )?
                                .into_iter()
                                .collect(),
                        );
                    } else {
                        return Err(syn::Error::new(
                            key.span(),
                            "expected default = … or one_of = [...]",
                        ));
                    }
                }
                Ok(())
            })?;
        }
        let Some(name) = name else {
            return Err(syn::Error::new_spanned(
                fname,
                "every field needs #[option(\"name\", default = …)]",
            ));
        };
        let doc = docs::one_line(&docs::doc_lines(&f.attrs)?);
        let Some(ty) = opt_type(&f.ty) else {
            return Err(syn::Error::new_spanned(
                &f.ty,
                "option fields are bool, i64, String or Vec<String>",
            ));
        };
        let default = match (&ty, default) {
            (_, Some(d)) => d,
            (OptType::Str | OptType::List, None) => String::new(),
            (OptType::Bool, None) => "false".into(),
            (OptType::Int, None) => "0".into(),
        };
        let kind = match (&ty, &one_of) {
            (OptType::Str, Some(vs)) => quote!(::ge_ir::pass::OptKind::Enum(&[#(#vs),*])),
            (_, Some(_)) => {
                return Err(syn::Error::new_spanned(
                    fname,
                    "one_of is for String options",
                ))
            }
            (OptType::Bool, None) => quote!(::ge_ir::pass::OptKind::Bool),
            (OptType::Int, None) => quote!(::ge_ir::pass::OptKind::Int),
            (OptType::Str, None) => quote!(::ge_ir::pass::OptKind::Str),
            (OptType::List, None) => quote!(::ge_ir::pass::OptKind::List),
        };
        defs.push(quote!(::ge_ir::pass::OptionDef { name: #name, kind: #kind, default: #default, doc: #doc }));
        reads.push(match ty {
            OptType::Bool => quote!(#fname: o.derived_bool(#name)),
            OptType::Int => quote!(#fname: o.derived_int(#name)),
            OptType::Str => quote!(#fname: o.derived_str(#name)),
            OptType::List => quote!(#fname: o.derived_list(#name)),
        });
    }
    let list = if parts.is_empty() {
        quote!(&[#(#defs),*])
    } else {
        if !defs.is_empty() {
            parts.push(quote!(&[#(#defs),*]));
        }
        // Concatenated at compile time (the flattened lists' lengths are
        // constants of other types); a repeated name is a compile error.
        quote!({
            const PARTS: &[&[::ge_ir::pass::OptionDef]] = &[#(#parts),*];
            const ALL: [::ge_ir::pass::OptionDef; ::ge_ir::pass::option_count(PARTS)] =
                ::ge_ir::pass::concat_options(PARTS);
            &ALL
        })
    };
    Ok(quote! {
        impl #ident {
            /// The options as `--list-passes` and the pipeline parser see them.
            pub const DEFS: &'static [::ge_ir::pass::OptionDef] = #list;
            /// The typed options of a parsed pass instance (defaults filled in).
            pub fn from_options(o: &::ge_ir::pass::PassOptions) -> Self {
                #ident { #(#reads,)* }
            }
        }
    })
}
