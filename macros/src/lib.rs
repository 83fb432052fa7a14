//! ge-macros: the declaration macros of ge (re-exported by ge-ir).
//!
//! - [`def_op!`]: one op declaration → its `static OpDef` (what the parser,
//!   printer, verifier, interpreter and docs read), a typed handle
//!   (`Conv2d::matches(body, op)`, operand/result/attribute accessors), an
//!   attribute view for hooks (`Conv2d::attrs(cx).strides()`), and in
//!   ge-dialects its ES builder method.
//! - [`derive@PassOptions`]: a pass's options as a typed struct, giving the
//!   `OptionDef` list and the parse from `PassOptions`.
//!
//! In the spirit of MLIR's ODS and pliron's `#[def_op]`.

mod docs;
mod op;
mod pass_options;

use proc_macro::TokenStream;

/// Declare an op. See `ge_ir::opdef` for the full grammar; in short:
///
/// ```text
/// def_op! {
///     /// Summary line.
///     ///
///     /// Description (Markdown; soft line breaks are joined).
///     pub Conv2d = "graph.conv2d" {
///         operands { input: FloatTensor, filter: FloatTensor, bias: Option<FloatTensor> },
///         results { output: FloatTensor },
///         attrs {
///             /// stride along H and W
///             strides: I64Array = [1, 1],
///             /// number of channel groups
///             group: I64 = 1,
///         },
///         traits [Pure, SameOperandsElementType],
///         format: COMPUTE_FORMAT,
///         verify: verify_by_infer, infer: infer_conv2d, semantics: sem_conv2d,
///         interfaces [Cost::cube(conv_flops), FusionPattern::OutElementwiseFusable],
///         es,
///     }
/// }
/// ```
#[proc_macro]
pub fn def_op(input: TokenStream) -> TokenStream {
    let decl = syn::parse_macro_input!(input as op::OpDecl);
    match decl.expand() {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Typed pass options: `#[derive(PassOptions)]` on a struct whose fields are
/// `bool`, `i64`, `String` or `Vec<String>`, each with
/// `#[option("name", default = …)]` (plus `one_of = [...]` for a `String`
/// from a fixed set) and a doc comment, or `#[option(flatten)]` on a field
/// that is itself a `PassOptions` struct (options several passes share, such
/// as the greedy driver's: its options join this list where the field is
/// declared). Generates `Self::DEFS` (the `OptionDef` list for
/// `PassInfo::options`) and `Self::from_options`.
#[proc_macro_derive(PassOptions, attributes(option))]
pub fn derive_pass_options(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    match pass_options::expand(&input) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}
