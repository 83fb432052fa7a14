//! The builtin dialect: `builtin.module` (printed as `module`).

use crate::body::OpId;
use crate::opdef::{AttrDef, AttrKind, CustomSyntax, Dialect, OpDef, RegionDef, Trait};
use crate::parser::{OpParser, PResult};
use crate::printer::OpPrinter;

pub static MODULE: OpDef = OpDef {
    name: "builtin.module",
    summary: "A top-level container of functions and globals",
    description: "A module holds one block of ops (functions, globals) and a symbol table: \
                  symbol names inside are unique. Printed as `module @name attributes {...} { ... }`.",
    attrs: &[
        AttrDef::optional("sym_name", AttrKind::Str, "optional module name"),
        AttrDef::optional("sym_visibility", AttrKind::Str, "symbol visibility (as MLIR's module has)"),
    ],
    regions: &[RegionDef { name: "body", doc: "the module's ops" }],
    traits: &[
        Trait::IsolatedFromAbove,
        Trait::SymbolTable,
        Trait::NoTerminator,
        Trait::SingleBlock,
        // As in MLIR: ops of a module may use values defined after them.
        Trait::GraphRegion,
    ],
    syntax: Some(CustomSyntax { parse: parse_module, print: print_module }),
    ..OpDef::DEFAULT
};

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
    if let Some(n) = pr.body.op(op).attr("sym_name").and_then(|a| a.as_str()) {
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
