//! `es_ops!`: the typed ES methods, their `XxxAttrs` structs, multi-result
//! structs and the [`super::ES_OPS`] table, all from one list that names each
//! op's static `OpDef` and the Rust names and types of its operands and
//! attributes.
//!
//! One entry:
//!
//! ```text
//! "graph.conv2d" = graph::nn::CONV2D => fn conv2d(input: one, filter: one, bias: opt)
//!     attrs Conv2dAttrs { strides: Vec<i64>, pads: Vec<i64>, dilations: Vec<i64>, group: i64 }
//!     -> one;
//! ```
//!
//! - operands: `name: one | opt | many` (a `Tensor`, an `Option<Tensor>`, a
//!   `&[Tensor]`), in definition order;
//! - after `;`: attributes passed positionally (`shape: &[i64]`), always set;
//! - `attrs Name { field [as "attrName"]: Type, ... }`: a struct whose
//!   `Default` comes from the definition's defaults;
//! - results: `one` (a `Tensor`), `many` (a `Vec<Tensor>`) or
//!   `Name { field, ... }` (a struct with one `Tensor` per result).
//!
//! The drift test in `tests.rs` checks every entry against its `OpDef`.

/// The Rust type of an operand group.
macro_rules! es_operand_ty {
    ($lt:lifetime, one) => { $crate::es::Tensor<$lt> };
    ($lt:lifetime, opt) => { Option<$crate::es::Tensor<$lt>> };
    ($lt:lifetime, many) => { &[$crate::es::Tensor<$lt>] };
}

/// An operand group as passed to `GraphBuilder::create_op`.
macro_rules! es_operand_group {
    (one, $v:expr) => {
        $crate::es::Group::One($v)
    };
    (opt, $v:expr) => {
        $crate::es::Group::Opt($v)
    };
    (many, $v:expr) => {
        $crate::es::Group::Many($v)
    };
}

/// The arity of an operand group.
macro_rules! es_arity {
    (one) => {
        ge_ir::opdef::Arity::One
    };
    (opt) => {
        ge_ir::opdef::Arity::Optional
    };
    (many) => {
        ge_ir::opdef::Arity::Variadic
    };
}

/// The result type of a method.
macro_rules! es_ret_ty {
    ($lt:lifetime, one) => { $crate::es::Tensor<$lt> };
    ($lt:lifetime, many) => { Vec<$crate::es::Tensor<$lt>> };
    ($lt:lifetime, $s:ident) => { $s<$lt> };
}

/// Wrap the created result values.
macro_rules! es_ret {
    ($b:expr, $vals:expr, $method:expr, one) => {
        $b.one_result($vals, $method)
    };
    ($b:expr, $vals:expr, $method:expr, many) => {
        Ok($b.all_results($vals))
    };
    ($b:expr, $vals:expr, $method:expr, $s:ident { $($rf:ident),+ }) => {{
        let mut it = $b.all_results($vals).into_iter();
        Ok($s {
            $($rf: it.next().ok_or_else(|| $crate::es::EsError::new(format!(
                "b.{}: missing result '{}'", $method, stringify!($rf)
            )))?,)+
        })
    }};
}

/// The struct of a multi-result op.
macro_rules! es_result_struct {
    ($op:literal, one) => {};
    ($op:literal, many) => {};
    ($op:literal, $s:ident { $($rf:ident),+ }) => {
        #[doc = concat!("The results of `", $op, "`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $s<'g> {
            $(
                #[doc = concat!("Result `", stringify!($rf), "`.")]
                pub $rf: $crate::es::Tensor<'g>,
            )+
        }
    };
}

/// The results description of the table.
macro_rules! es_results {
    (one) => { $crate::es::EsResults::One };
    (many) => { $crate::es::EsResults::Many };
    ($s:ident { $($rf:ident),+ }) => {
        $crate::es::EsResults::Struct { name: stringify!($s), fields: &[$(stringify!($rf)),+] }
    };
}

/// The attribute name of a parameter (its Rust name unless `as "name"`).
macro_rules! es_attr_name {
    ($f:ident) => {
        stringify!($f)
    };
    ($f:ident, $alias:literal) => {
        $alias
    };
}

macro_rules! es_opt_name {
    () => {
        None
    };
    ($s:ident) => {
        Some(stringify!($s))
    };
}

/// The whole ES API: see the module docs.
macro_rules! es_ops {
    ($(
        $opname:literal = $def:path => fn $method:ident (
            $( $opnd:ident : $ar:ident ),*
            $( ; $( $pname:ident $(as $palias:literal)? : $pty:ty ),+ )?
        )
        $( attrs $Attrs:ident { $( $fname:ident $(as $falias:literal)? : $fty:ty ),* $(,)? } )?
        -> $ret:ident $( { $( $rf:ident ),+ } )? ;
    )*) => {
        $(
            $(
                #[doc = concat!("Attributes of `", $opname, "` (`b.", stringify!($method),
                    "`); `Default` gives the definition's defaults.")]
                #[derive(Clone, Debug, PartialEq)]
                pub struct $Attrs {
                    $(
                        #[doc = concat!("Attribute `", es_attr_name!($fname $(, $falias)?), "`.")]
                        pub $fname: $fty,
                    )*
                }

                impl Default for $Attrs {
                    fn default() -> Self {
                        let _def: &'static ge_ir::opdef::OpDef = &$def;
                        $Attrs {
                            $( $fname: $crate::es::attr::default_of::<$fty>(
                                _def, es_attr_name!($fname $(, $falias)?)), )*
                        }
                    }
                }
            )?

            es_result_struct!($opname, $ret $({ $($rf),+ })?);

            impl $crate::es::GraphBuilder {
                #[doc = concat!("Builds `", $opname, "` (see docs/dialects/ for its semantics); \
                    result types come from its shape inference.")]
                #[allow(clippy::too_many_arguments, clippy::wrong_self_convention)]
                pub fn $method<'g>(
                    &'g self,
                    $( $opnd: es_operand_ty!('g, $ar), )*
                    $($( $pname: $pty, )+)?
                    $( attrs: $Attrs, )?
                ) -> $crate::es::EsResult<es_ret_ty!('g, $ret)> {
                    let def: &'static ge_ir::opdef::OpDef = &$def;
                    #[allow(unused_mut)]
                    let mut named: Vec<(&'static str, ge_ir::Attribute)> = Vec::new();
                    $($(
                        $crate::es::attr::push_attr(
                            &mut named, def, es_attr_name!($pname $(, $palias)?), &$pname);
                    )+)?
                    $($(
                        $crate::es::attr::push_attr(
                            &mut named, def, es_attr_name!($fname $(, $falias)?), &attrs.$fname);
                    )*)?
                    let vals = self.create_op(
                        def,
                        stringify!($method),
                        &[$( es_operand_group!($ar, $opnd) ),*],
                        named,
                    )?;
                    es_ret!(self, vals, stringify!($method), $ret $({ $($rf),+ })?)
                }
            }
        )*

        /// Every op of the ES API: what the macro generated, for the drift
        /// test, `ge-docgen` and tools.
        pub static ES_OPS: &[$crate::es::EsOp] = &[
            $(
                $crate::es::EsOp {
                    op: $opname,
                    def: &$def,
                    method: stringify!($method),
                    operands: &[$( (stringify!($opnd), es_arity!($ar)) ),*],
                    positional: &[$($(
                        $crate::es::EsAttrInfo {
                            name: es_attr_name!($pname $(, $palias)?),
                            rust_name: stringify!($pname),
                            rust_type: stringify!($pty),
                            kind_ok: <$pty as $crate::es::attr::IntoAttr>::kind_ok,
                            is_option: <$pty as $crate::es::attr::IntoAttr>::IS_OPTION,
                            parses_default: None,
                        },
                    )+)?],
                    attrs_struct: es_opt_name!($($Attrs)?),
                    fields: &[$($(
                        $crate::es::EsAttrInfo {
                            name: es_attr_name!($fname $(, $falias)?),
                            rust_name: stringify!($fname),
                            rust_type: stringify!($fty),
                            kind_ok: <$fty as $crate::es::attr::IntoAttr>::kind_ok,
                            is_option: <$fty as $crate::es::attr::IntoAttr>::IS_OPTION,
                            parses_default: Some($crate::es::attr::parses::<$fty>),
                        },
                    )*)?],
                    results: es_results!($ret $({ $($rf),+ })?),
                },
            )*
        ];
    };
}
