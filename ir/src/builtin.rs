//! The builtin dialect: `builtin.module` (printed as `module`).

use crate::body::OpId;
use crate::opdef::{CustomSyntax, Dialect};
use crate::parser::{OpParser, PResult};
use crate::printer::OpPrinter;

crate::def_op! {
    /// A top-level container of functions and globals
    ///
    /// A module holds one block of ops (functions, globals) and a symbol table: symbol names
    /// inside are unique. Printed as `module @name attributes {...} { ... }`.
    pub Module = "builtin.module" {
        attrs {
            /// optional module name
            sym_name: Option<Str>,
            /// symbol visibility (as MLIR's module has)
            sym_visibility: Option<Str>,
        },
        regions {
            /// the module's ops
            body,
        },
        // As in MLIR: ops of a module may use values defined after them.
        traits [IsolatedFromAbove, SymbolTable, NoTerminator, SingleBlock, GraphRegion],
        syntax: CustomSyntax { parse: parse_module, print: print_module },
    }
}

fn parse_module(p: &mut OpParser<'_, '_, '_>) -> PResult<()> {
    if p.peek_symbol() {
        let (name, span) = p.parse_symbol_name()?;
        p.add_attr(
            "sym_name",
            crate::attributes::Attribute::string(&name),
            span,
        )?;
    }
    p.parse_optional_attr_dict_with_keyword()?;
    let r = p.parse_region(&[])?;
    // `module {}` has one (empty) block, as in MLIR.
    p.ensure_entry_block(r);
    p.result_types = Some(vec![]);
    Ok(())
}

fn print_module(pr: &mut OpPrinter<'_, '_>, op: OpId) {
    if let Some(n) = Module::attrs(pr.body.op(op)).sym_name() {
        pr.write(" ");
        pr.symbol_name(n);
    }
    pr.attr_dict(op, &["sym_name"], true);
    pr.write(" ");
    let r = pr.body.op(op).regions()[0];
    pr.region(op, r, false);
}

pub static BUILTIN: Dialect = Dialect {
    name: "builtin",
    summary: "Core ops every tool knows",
    groups: &[&[&MODULE]],
};
