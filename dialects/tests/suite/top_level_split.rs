//! Cutting module text into top-level ops (`ge_ir::parser::split_module_text`,
//! used by incremental compilation): the pieces are whole lines, each parses
//! as exactly the op the whole-module parse has at that place, and re-cutting
//! after an edit (`resplit_module_text`) equals cutting from scratch.

use ge_ir::parser::{parse_module, resplit_module_text, split_module_text, ParseOptions, TopLevel};
use ge_ir::printer::{print_op, PrintOptions};
use ge_ir::Context;
use proptest::prelude::*;

fn context() -> Context {
    ge_dialects::context()
}

fn function(i: usize) -> String {
    format!(
        "  graph.func @f{i}(%x: !t) -> !t attributes {{doc = \"{{ not a region }} // nor a comment\"}} {{\n\
         \x20   // a comment with }} and {{ and \"\n\
         \x20   %0 = graph.relu %x : (!t) -> !t\n\
         \x20   %1 = graph.call @f{j}(%0) : (!t) -> !t\n\
         \x20   graph.return %1 : !t\n\
         \x20 }}\n\
         \x20 // between functions\n\n",
        j = (i + 1) % 7
    )
}

fn module(n: usize, wrapped: bool) -> String {
    let mut s = String::from("// header\n!t = tensor<4xf32>\n");
    if wrapped {
        s += "module @m attributes {doc = \"} {\"} {\n";
    }
    for i in 0..n {
        s += &function(i);
    }
    if wrapped {
        s += "}\n";
    }
    s
}

fn pieces<'a>(src: &'a str, t: &TopLevel) -> Vec<&'a str> {
    t.ops.iter().map(|r| &src[r.clone()]).collect()
}

#[test]
fn every_piece_is_the_op_the_whole_parse_has_there() {
    let ctx = context();
    for wrapped in [true, false] {
        let src = module(7, wrapped);
        let t = split_module_text(&ctx, &src).expect("cut");
        assert_eq!(t.ops.len(), 7);
        assert_eq!(t.prefix.start, 0);
        assert_eq!(t.suffix.end, src.len());
        let whole = parse_module(&ctx, "m.air", &src, ParseOptions::default()).expect("parse");
        let opts = PrintOptions::default();
        for (piece, &o) in pieces(&src, &t).iter().zip(&whole.top_ops()) {
            let text = format!(
                "{}{piece}{}",
                &src[t.prefix.clone()],
                &src[t.suffix.clone()]
            );
            let alone = parse_module(&ctx, "piece.air", &text, ParseOptions::default())
                .expect("piece parses");
            let &[a] = alone.top_ops().as_slice() else {
                panic!("one op per piece: {piece}");
            };
            assert_eq!(
                print_op(alone.body(), a, opts),
                print_op(whole.body(), o, opts)
            );
        }
    }
}

#[test]
fn texts_that_are_not_a_list_of_functions_are_not_cut() {
    let ctx = context();
    let src = module(3, true);
    // Two ops on one line, a module end shared with a function's, an op with results.
    let joined = src.replacen(
        "  }\n  // between functions\n\n  graph.func @f1",
        "  } graph.func @f1",
        1,
    );
    assert_eq!(split_module_text(&ctx, &joined), None);
    assert_eq!(
        split_module_text(
            &ctx,
            &src.replace("  }\n  // between functions\n\n}", "  }}")
        ),
        None
    );
    let with_value = src.replacen(
        "  graph.func @f0",
        "  %c = data.constant dense<1.0> : tensor<4xf32>\n  graph.func @f0",
        1,
    );
    assert_eq!(split_module_text(&ctx, &with_value), None);
}

#[test]
fn an_edit_inside_one_function_moves_only_the_pieces_after_it() {
    let ctx = context();
    let old = module(9, true);
    let old_top = split_module_text(&ctx, &old).expect("cut");
    let new = old.replacen(
        "graph.relu %x : (!t) -> !t\n    %1 = graph.call @f5",
        "graph.relu %x : (!t) -> !t\n    %9 = graph.neg %x : (!t) -> !t\n    %1 = graph.call @f5",
        1,
    );
    let new_top = resplit_module_text(&ctx, &old, &old_top, &new).expect("cut");
    assert_eq!(Some(&new_top), split_module_text(&ctx, &new).as_ref());
    let grown = new.len() - old.len();
    assert_eq!(new_top.ops[..4], old_top.ops[..4]);
    assert_eq!(new_top.ops[4].end, old_top.ops[4].end + grown);
    for (a, b) in new_top.ops[5..].iter().zip(&old_top.ops[5..]) {
        assert_eq!((a.start, a.end), (b.start + grown, b.end + grown));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random edits anywhere (text inserted, text deleted), re-cut from the
    /// old cut: the same as cutting the new text from scratch.
    #[test]
    fn recutting_after_an_edit_equals_cutting_from_scratch(
        wrapped in any::<bool>(),
        at in 0.0f64..1.0,
        del in 0usize..80,
        insert in prop::sample::select(vec![
            "", "\n", "}", "{", "\"", "// c\n", "  graph.func @g() {\n  graph.return\n  }\n",
            "    %9 = graph.neg %x : (!t) -> !t\n", "xx", "  }\n", "\n\n\n",
        ]),
    ) {
        let ctx = context();
        let old = module(9, wrapped);
        let old_top = split_module_text(&ctx, &old).expect("cut");
        let mut start = (at * old.len() as f64) as usize;
        while !old.is_char_boundary(start) {
            start -= 1;
        }
        let end = (start + del).min(old.len());
        let new = format!("{}{insert}{}", &old[..start], &old[end..]);
        prop_assert_eq!(
            resplit_module_text(&ctx, &old, &old_top, &new),
            split_module_text(&ctx, &new)
        );
    }
}
