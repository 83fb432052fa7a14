//! Every field of every registered op definition, printed in full and pinned
//! by a snapshot: the parser, printer, verifier, interpreter and docs read
//! these fields, so a change in how ops are declared must leave them
//! byte-for-byte equal (hooks are compared by presence).

use ge_ir::opdef::OpDef;

fn describe(d: &OpDef) -> String {
    let mut s = format!("{}\n", d.name);
    s.push_str(&format!("  summary: {:?}\n", d.summary));
    s.push_str(&format!("  description: {:?}\n", d.description));
    for (what, groups) in [("operand", d.operands), ("result", d.results)] {
        for g in groups {
            s.push_str(&format!(
                "  {what} {}: {:?} {:?}\n",
                g.name, g.arity, g.constraint
            ));
        }
    }
    for a in d.attrs {
        s.push_str(&format!(
            "  attr {}: {:?} default={:?} optional={} doc={:?}\n",
            a.name, a.kind, a.default, a.optional, a.doc
        ));
    }
    for r in d.regions {
        s.push_str(&format!("  region {}: {:?}\n", r.name, r.doc));
    }
    s.push_str(&format!("  traits: {:?}\n", d.traits));
    s.push_str(&format!("  format: {:?}\n", d.format));
    let hooks: Vec<&str> = [
        (d.syntax.is_some(), "syntax"),
        (d.verify.is_some(), "verify"),
        (d.infer.is_some(), "infer"),
        (d.fold.is_some(), "fold"),
        (d.semantics.is_some(), "semantics"),
    ]
    .iter()
    .filter(|(b, _)| *b)
    .map(|(_, n)| *n)
    .collect();
    s.push_str(&format!("  hooks: {}\n", hooks.join(", ")));
    s
}

#[test]
fn op_definitions_are_unchanged() {
    let mut ctx = ge_ir::Context::new();
    ge_dialects::register(&mut ctx);
    let text: String = ctx.ops().into_iter().map(describe).collect();
    insta::assert_snapshot!(text);
}
