//! Property: the printer is the exact inverse of the parser.
//!
//! Random valid modules (random types with symbolic dims and encodings,
//! random attributes of every kind, nested regions with several blocks,
//! block arguments and successors, multi-result ops, nested isolated
//! modules, locations) are generated as text in MLIR's generic form, with
//! unregistered dialects allowed. For each, in the custom and the generic
//! form, with and without debug info:
//! - `print(parse(x))` is stable: printing, parsing and printing again gives
//!   the same text;
//! - `parse(print(x))` equals the IR: every op has the same name, the same
//!   (interned, so exactly equal) attributes, operand and result types,
//!   regions, blocks, block-argument types and — with debug info — locations;
//! - the generic and the custom form denote the same IR.
//!
//! `PROPTEST_CASES=2000 cargo test -p ge-ir --test roundtrip_prop` runs longer;
//! `GE_PROP_DUMP=1` prints every generated module.

use ge_ir::attributes::{AttrDict, Attribute};
use ge_ir::body::{Body, OpId, WalkOrder};
use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::verifier::verify_module;
use ge_ir::{Context, Ident, Location, Module, Type};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::collections::BTreeMap;
use std::fmt::Write;

// ---- types ----------------------------------------------------------------

const ELEMS: &[&str] = &[
    "f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "i1", "ui8", "ui16", "ui32", "ui64",
    "index",
];

fn elem() -> impl Strategy<Value = &'static str> {
    prop::sample::select(ELEMS)
}

fn dim() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0i64..9).prop_map(|d| d.to_string()),
        1 => Just("?".to_string()),
        2 => prop::sample::select(&["B", "S", "N2", "SEQ_LEN"][..]).prop_map(str::to_string),
        1 => prop::sample::select(
            &["(2*B+1)", "(B/2)", "(B-1)", "(S+B)", "(3*(B+1))", "(B+B)", "((S))", "(4*S/2)"][..]
        )
        .prop_map(str::to_string),
    ]
}

fn encoding() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just(String::new()),
        1 => Just(", #ge.format<ND>".to_string()),
        1 => Just(", #ge.format<NC1HWC0, origin = NCHW>".to_string()),
        1 => Just(", #ge.format<FRACTAL_Z, origin = NCHW, origin_shape = [16, 16, 1, 1]>".to_string()),
        1 => Just(", #foo.layout<\"row\">".to_string()),
    ]
}

fn tensor_type() -> impl Strategy<Value = String> {
    prop_oneof![
        5 => (prop::collection::vec(dim(), 0..4), elem(), encoding()).prop_map(|(ds, e, enc)| {
            let mut s = String::from("tensor<");
            for d in ds {
                s.push_str(&d);
                s.push('x');
            }
            format!("{s}{e}{enc}>")
        }),
        1 => elem().prop_map(|e| format!("tensor<*x{e}>")),
    ]
}

fn value_type() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => tensor_type(),
        2 => elem().prop_map(str::to_string),
        1 => prop::sample::select(&["none", "!foo.tok", "!foo.pair<i32, <f32>>", "!bar<\"raw\">"][..])
            .prop_map(str::to_string),
    ]
}

// ---- attributes -------------------------------------------------------------

/// Quote `s` as an .air string literal (independently of the printer's escaping).
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:02x}");
            }
        }
    }
    out.push('"');
    out
}

fn int_lit(ty: &'static str) -> BoxedStrategy<String> {
    match ty {
        "i1" => prop_oneof![Just("true"), Just("false"), Just("0 : i1"), Just("1 : i1")]
            .prop_map(str::to_string)
            .boxed(),
        "i8" => any::<i8>().prop_map(|v| format!("{v} : i8")).boxed(),
        "i16" => any::<i16>().prop_map(|v| format!("{v} : i16")).boxed(),
        "i32" => any::<i32>().prop_map(|v| format!("{v} : i32")).boxed(),
        "ui8" => any::<u8>().prop_map(|v| format!("{v} : ui8")).boxed(),
        "ui16" => any::<u16>().prop_map(|v| format!("{v} : ui16")).boxed(),
        "ui32" => any::<u32>().prop_map(|v| format!("{v} : ui32")).boxed(),
        "ui64" => any::<u64>().prop_map(|v| format!("{v} : ui64")).boxed(),
        "index" => (0i64..1 << 40).prop_map(|v| format!("{v} : index")).boxed(),
        // i64: with or without the (default) type.
        _ => prop_oneof![
            any::<i64>().prop_map(|v| format!("{v} : i64")),
            any::<i64>().prop_map(|v| v.to_string()),
            any::<u32>().prop_map(|v| format!("0x{v:X}")),
        ]
        .boxed(),
    }
}

fn float_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => prop::sample::select(&[0.0, -0.0, 1.0, -2.5, 0.1, 1e-3, 65504.0, 1e10, 3.4e38, 1e-40, 7.0][..]),
        2 => any::<f64>().prop_filter("finite", |v| v.is_finite()),
        1 => (-1000i32..1000).prop_map(|v| v as f64 / 8.0),
    ]
}

/// A float literal the parser reads (always with a '.' or an exponent).
fn float_text(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains("inf") || s.contains("NaN") {
        s
    } else if let Some(i) = s.find('e') {
        format!("{}.0{}", &s[..i], &s[i..])
    } else {
        format!("{s}.0")
    }
}

fn float_lit() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (float_value(), prop::sample::select(&["f64", "f32", "f16", "bf16"][..]))
            .prop_map(|(v, t)| format!("{} : {t}", float_text(v))),
        1 => float_value().prop_map(float_text),
        1 => prop::sample::select(
            &["0x7F800000 : f32", "0xFF800000 : f32", "0x7FC00000 : f32", "0x7C00 : f16", "0x7F80 : bf16"][..]
        )
        .prop_map(str::to_string),
    ]
}

/// One element of a dense literal of element type `ty`.
fn dense_elem(ty: &'static str) -> BoxedStrategy<String> {
    match ty {
        "i1" => prop_oneof![Just("true"), Just("false")]
            .prop_map(str::to_string)
            .boxed(),
        "f64" | "f32" | "f16" | "bf16" => prop_oneof![
            4 => float_value().prop_map(float_text),
            1 => Just(match ty { "f32" => "0x7F800000", "f16" => "0x7C00", "bf16" => "0xFF80", _ => "0x7FF0000000000000" }.to_string()),
        ]
        .boxed(),
        "i8" => any::<i8>().prop_map(|v| v.to_string()).boxed(),
        "ui8" => any::<u8>().prop_map(|v| v.to_string()).boxed(),
        "i16" => any::<i16>().prop_map(|v| v.to_string()).boxed(),
        "i32" => any::<i32>().prop_map(|v| v.to_string()).boxed(),
        _ => any::<i64>().prop_map(|v| v.to_string()).boxed(),
    }
}

fn dense_attr() -> impl Strategy<Value = String> {
    let ty = prop::sample::select(
        &[
            "f32", "f16", "bf16", "f64", "i1", "i8", "ui8", "i16", "i32", "i64",
        ][..],
    );
    (ty, prop::collection::vec(0usize..4, 0..3)).prop_flat_map(|(ty, shape)| {
        let n: usize = shape.iter().product();
        let tensor = format!(
            "tensor<{}{ty}>",
            shape.iter().map(|d| format!("{d}x")).collect::<String>()
        );
        let list = prop::collection::vec(dense_elem(ty), n..=n).prop_map({
            let shape = shape.clone();
            let tensor = tensor.clone();
            move |elems| format!("dense<{}> : {tensor}", nest(&elems, &shape))
        });
        let splat = dense_elem(ty).prop_map({
            let tensor = tensor.clone();
            move |e| format!("dense<{e}> : {tensor}")
        });
        let empty = Just(format!("dense<> : tensor<0x{ty}>"));
        prop_oneof![3 => list, 2 => splat, 1 => empty]
    })
}

/// Nest flat `elems` as lists of `shape` (`[[1, 2], [3, 4]]`).
fn nest(elems: &[String], shape: &[usize]) -> String {
    if shape.is_empty() {
        return elems.first().cloned().unwrap_or_default();
    }
    if shape.iter().product::<usize>() == 0 {
        return String::new(); // `dense<>`
    }
    let inner: usize = shape[1..].iter().product();
    let parts: Vec<String> = (0..shape[0])
        .map(|i| {
            let chunk = &elems[i * inner..(i + 1) * inner];
            if shape.len() == 1 {
                chunk[0].clone()
            } else {
                nest(chunk, &shape[1..])
            }
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

fn dense_array() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<i64>(), 0..5).prop_map(|v| {
            if v.is_empty() {
                "array<i64>".to_string()
            } else {
                format!(
                    "array<i64: {}>",
                    v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                )
            }
        }),
        prop::collection::vec(any::<i8>(), 1..4).prop_map(|v| format!(
            "array<i8: {}>",
            v.iter().map(i8::to_string).collect::<Vec<_>>().join(", ")
        )),
        prop::collection::vec(float_value(), 1..4).prop_map(|v| format!(
            "array<f32: {}>",
            v.iter()
                .map(|x| float_text(*x))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        prop::collection::vec(any::<bool>(), 1..4).prop_map(|v| format!(
            "array<i1: {}>",
            v.iter().map(bool::to_string).collect::<Vec<_>>().join(", ")
        )),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z][a-z0-9_]{0,5}",
        1 => "[a-z]{1,3}\\.[a-z]{1,3}",
        1 => "[ -~]{1,6}",
    ]
}

/// A dictionary key as written: bare when it is an identifier, else quoted.
fn key_text(k: &str) -> String {
    let bare = k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_$.".contains(c));
    if bare {
        k.to_string()
    } else {
        quote(k)
    }
}

fn symbol() -> impl Strategy<Value = String> {
    prop_oneof![
        "@[a-z][a-z0-9_]{0,5}",
        "@[a-z]{1,3}::@[a-z]{1,3}(::@[a-z]{1,3})?",
        "[ -~]{1,6}".prop_map(|s| format!("@{}", quote(&s))),
    ]
}

fn attr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => elem().prop_flat_map(|e| match e {
            "f64" | "f32" | "f16" | "bf16" => float_lit().boxed(),
            e => int_lit(e),
        }),
        2 => "(\\PC|[\n\t\"\\\\]){0,10}".prop_map(|s| quote(&s)),
        1 => prop_oneof![Just("true"), Just("false"), Just("unit")].prop_map(str::to_string),
        1 => symbol(),
        1 => value_type(),
        1 => (prop::collection::vec(value_type(), 0..3), prop::collection::vec(value_type(), 0..3))
            .prop_map(|(i, o)| {
                let outs = if o.len() == 1 { o[0].clone() } else { format!("({})", o.join(", ")) };
                format!("({}) -> {outs}", i.join(", "))
            }),
        3 => dense_attr(),
        2 => dense_array(),
        1 => prop::sample::select(&["dense_resource<blob0> : tensor<2xf32>", "dense_resource<blob1> : tensor<3xi8>"][..])
            .prop_map(str::to_string),
        1 => (0u64..1 << 40, 0u64..4096, tensor_type()).prop_map(|(o, l, t)| {
            format!("#ge.external<\"weights/w.bin\", offset = {o}, length = {l}, type = {t}>")
        }),
        1 => prop::sample::select(&[
            "#ge.format<NCHW>", "#ge.format<FRACTAL_NZ, origin = ND>", "#foo.bar<\"x\", [1, {y}]>",
            "#foo<\"raw<>\">", "#foo.plain", "#ge.other<1>",
        ][..])
        .prop_map(str::to_string),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|xs| format!("[{}]", xs.join(", "))),
            prop::collection::btree_map(key(), prop::option::of(inner), 0..4).prop_map(dict_text),
        ]
    })
}

/// `{a = 1, flag}`: entries without a value are unit attributes.
fn dict_text(entries: BTreeMap<String, Option<String>>) -> String {
    let parts: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{} = {v}", key_text(&k)),
            None => key_text(&k),
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn attr_dict() -> impl Strategy<Value = String> {
    prop::collection::btree_map(key(), prop::option::of(attr()), 0..4).prop_map(|m| {
        if m.is_empty() {
            String::new()
        } else {
            format!(" {}", dict_text(m))
        }
    })
}

fn location() -> impl Strategy<Value = String> {
    let file = "[a-z]{1,6}\\.py".prop_map(|f| quote(&f));
    let file_loc = (file, 1u32..500, 1u32..80).prop_map(|(f, l, c)| format!("{f}:{l}:{c}"));
    let inner = prop_oneof![
        4 => file_loc,
        1 => Just("unknown".to_string()),
        1 => "[a-z_]{1,8}".prop_map(|n| quote(&n)),
    ];
    let loc = inner.prop_recursive(2, 6, 3, |inner| {
        prop_oneof![
            ("[a-z_]{1,8}", inner.clone()).prop_map(|(n, c)| format!("{}({c})", quote(&n))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("callsite({a} at {b})")),
            (prop::option::of(attr()), prop::collection::vec(inner, 0..3)).prop_map(|(m, ls)| {
                let meta = m.map(|m| format!("<{m}>")).unwrap_or_default();
                format!("fused{meta}[{}]", ls.join(", "))
            }),
        ]
    });
    prop_oneof![
        2 => Just(String::new()),
        1 => loc.prop_map(|l| format!(" loc({l})")),
    ]
}

// ---- ops, blocks, regions -----------------------------------------------------

#[derive(Clone, Debug)]
struct OpGen {
    dialect_op: String,
    /// Picks among the values in scope (modulo their number).
    operands: Vec<usize>,
    results: Vec<String>,
    attrs: String,
    /// Properties (`<...>`): any attribute, usually a dictionary.
    props: Option<String>,
    loc: String,
    regions: Vec<RegionGen>,
    /// Name the results as one group (`%v:N`).
    group: bool,
    /// A nested `module` (isolated from above) instead of a generic op.
    module: Option<String>,
}

#[derive(Clone, Debug)]
struct BlockGen {
    args: Vec<(String, String)>,
    ops: Vec<OpGen>,
    /// Successors of the block's last op (indices of later blocks, modulo).
    successors: Vec<usize>,
}

#[derive(Clone, Debug)]
struct RegionGen {
    blocks: Vec<BlockGen>,
}

fn op_leaf() -> impl Strategy<Value = OpGen> {
    (
        "[a-z]{1,3}\\.[a-z_]{1,6}",
        prop::collection::vec(any::<usize>(), 0..4),
        prop::collection::vec(value_type(), 0..4),
        attr_dict(),
        location(),
        any::<bool>(),
        prop::option::weighted(0.3, prop_oneof![3 => attr_dict(), 1 => attr()]),
    )
        .prop_map(
            |(dialect_op, operands, results, attrs, loc, group, props)| OpGen {
                dialect_op,
                operands,
                results,
                attrs,
                props,
                loc,
                regions: vec![],
                group,
                module: None,
            },
        )
}

fn block(op: BoxedStrategy<OpGen>) -> impl Strategy<Value = BlockGen> {
    (
        prop::collection::vec((value_type(), location()), 0..3),
        prop::collection::vec(op, 0..4),
        prop::collection::vec(any::<usize>(), 0..3),
    )
        .prop_map(|(args, ops, successors)| BlockGen {
            args,
            ops,
            successors,
        })
}

fn op() -> impl Strategy<Value = OpGen> {
    op_leaf().prop_recursive(3, 40, 3, |inner| {
        let region = prop::collection::vec(block(inner.clone().boxed()), 1..4)
            .prop_map(|blocks| RegionGen { blocks });
        prop_oneof![
            3 => (op_leaf(), prop::collection::vec(region, 1..3)).prop_map(|(mut op, regions)| {
                op.regions = regions;
                op
            }),
            1 => (
                prop::option::of("[a-z]{1,5}"),
                attr_dict(),
                prop::collection::vec(inner, 0..3),
                location()
            )
                .prop_map(|(name, attrs, ops, loc)| {
                    let head = match name {
                        Some(n) => format!("module @{n}"),
                        None => "module".to_string(),
                    };
                    let head = if attrs.is_empty() {
                        head
                    } else {
                        format!("{head} attributes{attrs}")
                    };
                    OpGen {
                        dialect_op: String::new(),
                        operands: vec![],
                        results: vec![],
                        attrs: String::new(),
                        props: None,
                        loc,
                        regions: vec![RegionGen {
                            blocks: vec![BlockGen { args: vec![], ops, successors: vec![] }],
                        }],
                        group: false,
                        module: Some(head),
                    }
                }),
        ]
    })
}

/// Renders generated ops as text, keeping SSA names unique and every use
/// dominated by its definition.
struct Render {
    out: String,
    next: usize,
    modules: usize,
}

impl Render {
    fn indent(&mut self, depth: usize) {
        self.out.push_str(&"  ".repeat(depth));
    }

    /// `scope`: values visible here (name, type).
    fn op(&mut self, op: &OpGen, scope: &mut Vec<(String, String)>, depth: usize, succ: &[String]) {
        self.indent(depth);
        if let Some(head) = &op.module {
            // Module names must be unique within the enclosing symbol table.
            let head = head.replacen("module @", &format!("module @m{}_", self.modules), 1);
            self.modules += 1;
            self.out.push_str(&head);
            self.out.push_str(" {\n");
            let mut inner_scope = vec![];
            for o in &op.regions[0].blocks[0].ops {
                self.op(o, &mut inner_scope, depth + 1, &[]);
            }
            self.indent(depth);
            self.out.push('}');
            self.out.push_str(&op.loc);
            self.out.push('\n');
            return;
        }
        let operands: Vec<(String, String)> = if scope.is_empty() {
            vec![]
        } else {
            op.operands
                .iter()
                .map(|&i| scope[i % scope.len()].clone())
                .collect()
        };
        // Results as one group `%v:N` (used as `%v#i`), or one name each.
        let group = op.group && op.results.len() > 1;
        let results: Vec<(String, String)> = if group {
            self.next += 1;
            let _ = write!(self.out, "%v{}:{} = ", self.next, op.results.len());
            op.results
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("%v{}#{i}", self.next), t.clone()))
                .collect()
        } else {
            op.results
                .iter()
                .map(|t| {
                    self.next += 1;
                    (format!("%v{}", self.next), t.clone())
                })
                .collect()
        };
        if !group && !results.is_empty() {
            let names: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
            let _ = write!(self.out, "{} = ", names.join(", "));
        }
        let _ = write!(
            self.out,
            "{}({})",
            quote(&op.dialect_op),
            operands
                .iter()
                .map(|o| o.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !succ.is_empty() {
            let _ = write!(self.out, "[{}]", succ.join(", "));
        }
        if let Some(p) = &op.props {
            // An empty dictionary reads `{}`: still properties.
            let p = if p.is_empty() { "{}" } else { p.trim() };
            let _ = write!(self.out, " <{p}>");
        }
        if !op.regions.is_empty() {
            self.out.push_str(" (");
            for (ri, r) in op.regions.iter().enumerate() {
                if ri > 0 {
                    self.out.push_str(", ");
                }
                self.region(r, scope, depth);
            }
            self.out.push(')');
        }
        self.out.push_str(&op.attrs);
        let tys = |v: &[(String, String)]| {
            v.iter()
                .map(|x| x.1.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let outs = if results.len() == 1 {
            results[0].1.clone()
        } else {
            format!("({})", tys(&results))
        };
        let _ = writeln!(self.out, " : ({}) -> {outs}{}", tys(&operands), op.loc);
        scope.extend(results);
    }

    fn region(&mut self, r: &RegionGen, outer: &[(String, String)], depth: usize) {
        self.out.push_str("{\n");
        let labels: Vec<String> = (0..r.blocks.len())
            .map(|_| {
                self.next += 1;
                format!("^b{}", self.next)
            })
            .collect();
        let mut entry_scope: Vec<(String, String)> = vec![];
        for (bi, b) in r.blocks.iter().enumerate() {
            // Entry-block values dominate the other blocks of the region.
            let mut scope: Vec<(String, String)> = outer.to_vec();
            if bi > 0 {
                scope.extend(entry_scope.iter().cloned());
            }
            let args: Vec<(String, String, String)> = b
                .args
                .iter()
                .map(|(t, l)| {
                    self.next += 1;
                    (format!("%a{}", self.next), t.clone(), l.clone())
                })
                .collect();
            // An empty entry block needs its label to exist at all.
            if bi > 0 || !args.is_empty() || b.ops.is_empty() {
                self.indent(depth);
                let _ = write!(self.out, "{}", labels[bi]);
                if !args.is_empty() {
                    let decls: Vec<String> = args
                        .iter()
                        .map(|(n, t, l)| format!("{n}: {t}{l}"))
                        .collect();
                    let _ = write!(self.out, "({})", decls.join(", "));
                }
                self.out.push_str(":\n");
            }
            for (n, t, _) in &args {
                scope.push((n.clone(), t.clone()));
            }
            let later: Vec<String> = labels.iter().skip(1).cloned().collect();
            let n_ops = b.ops.len();
            for (oi, o) in b.ops.iter().enumerate() {
                // Only a block's last op branches, and never to the entry block.
                let succ: Vec<String> =
                    if oi + 1 == n_ops && !later.is_empty() && o.module.is_none() {
                        b.successors
                            .iter()
                            .map(|&s| later[s % later.len()].clone())
                            .collect()
                    } else {
                        vec![]
                    };
                self.op(o, &mut scope, depth + 1, &succ);
            }
            if bi == 0 {
                entry_scope = scope[outer.len()..].to_vec();
            }
        }
        self.indent(depth);
        self.out.push('}');
    }
}

fn module_text() -> impl Strategy<Value = String> {
    prop::collection::vec(op(), 1..5).prop_map(|ops| {
        let mut r = Render {
            out: String::new(),
            next: 0,
            modules: 0,
        };
        let mut scope = vec![];
        for o in &ops {
            r.op(o, &mut scope, 0, &[]);
        }
        r.out.push_str(
            "{-#\n  dialect_resources: {\n    builtin: {\n      blob0: \"0x040000000000803F00000040\",\n      blob1: \"0x01000000010203\"\n    }\n  }\n#-}\n",
        );
        r.out
    })
}

// ---- checking -------------------------------------------------------------------

fn ctx() -> Context {
    let mut c = Context::new();
    c.allow_unregistered = true;
    c
}

fn parse(ctx: &Context, name: &str, text: &str) -> Result<Module, String> {
    let m = parse_module(ctx, name, text, ParseOptions::default())
        .map_err(|d| format!("{name}: parse error: {}\n{text}", d.message))?;
    let diags = verify_module(&m);
    if let Some(d) = diags.first() {
        return Err(format!("{name}: verifier error: {}\n{text}", d.message));
    }
    Ok(m)
}

/// A block argument's type and (when compared) location.
type BlockArgShape = (Type, Option<Location>);

/// What an op is, minus how its values are named.
#[derive(Debug, PartialEq)]
struct OpShape {
    name: Ident,
    attrs: AttrDict,
    props: Option<Attribute>,
    operands: Vec<Type>,
    results: Vec<Type>,
    /// Per region, per block: argument types (and locations).
    blocks: Vec<Vec<Vec<BlockArgShape>>>,
    successors: usize,
    loc: Option<Location>,
}

fn shapes(m: &Module, with_locs: bool) -> Vec<OpShape> {
    let shape = |b: &Body, o: OpId| {
        let d = b.op(o);
        let rb = d.region_body(b);
        OpShape {
            name: d.name,
            attrs: d.attrs,
            props: d.props,
            operands: b.operand_types(o),
            results: b.result_types(o),
            blocks: d
                .regions()
                .iter()
                .map(|&r| {
                    rb.region(r)
                        .blocks
                        .iter()
                        .map(|&blk| {
                            rb.block(blk)
                                .args
                                .iter()
                                .map(|&a| (rb.value_type(a), with_locs.then(|| rb.value(a).loc)))
                                .collect()
                        })
                        .collect()
                })
                .collect(),
            successors: d.successors().len(),
            loc: with_locs.then_some(d.loc),
        }
    };
    let mut out = vec![shape(&m.outer, m.op)];
    m.body()
        .walk_deep(WalkOrder::Pre, &mut |b, o| out.push(shape(b, o)));
    out
}

fn check(text: &str) -> Result<(), TestCaseError> {
    if std::env::var("GE_PROP_DUMP").is_ok() {
        eprintln!("=====\n{text}");
    }
    let ctx = ctx();
    let m = parse(&ctx, "gen.air", text).map_err(TestCaseError::fail)?;
    let mut printed = vec![];
    for generic in [false, true] {
        for debuginfo in [false, true] {
            let opts = PrintOptions {
                generic,
                debuginfo,
                ..Default::default()
            };
            let t1 = print_module(&m, opts);
            let m2 = parse(&ctx, "printed.air", &t1).map_err(TestCaseError::fail)?;
            let t2 = print_module(&m2, opts);
            prop_assert_eq!(
                &t1,
                &t2,
                "print(parse(print(x))) differs (generic={}, debuginfo={})",
                generic,
                debuginfo
            );
            // Locations of ops without loc(...) are their position in the text
            // read, so they are only comparable when they were printed.
            let a = shapes(&m, debuginfo);
            let b = shapes(&m2, debuginfo);
            prop_assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                prop_assert_eq!(
                    x,
                    y,
                    "IR differs after a round trip (generic={}, debuginfo={})",
                    generic,
                    debuginfo
                );
            }
            printed.push((generic, debuginfo, t1));
        }
    }
    // The generic and the custom form denote the same IR.
    for debuginfo in [false, true] {
        let custom = &printed
            .iter()
            .find(|p| !p.0 && p.1 == debuginfo)
            .map(|p| p.2.clone())
            .unwrap_or_default();
        let generic = &printed
            .iter()
            .find(|p| p.0 && p.1 == debuginfo)
            .map(|p| p.2.clone())
            .unwrap_or_default();
        let from_generic = parse(&ctx, "generic.air", generic).map_err(TestCaseError::fail)?;
        let opts = PrintOptions {
            debuginfo,
            ..Default::default()
        };
        prop_assert_eq!(&print_module(&from_generic, opts), custom);
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: 96,
        max_shrink_iters: 2000,
        ..Config::default()
    })]

    #[test]
    fn print_parse_round_trip(text in module_text()) {
        check(&text)?;
    }

    #[test]
    fn attributes_round_trip(attrs in prop::collection::vec(attr(), 1..6)) {
        let mut text = String::new();
        for (i, a) in attrs.iter().enumerate() {
            let _ = writeln!(text, "\"x.a{i}\"() {{v = {a}}} : () -> ()");
        }
        text.push_str("{-#\n  dialect_resources: {\n    builtin: {\n      blob0: \"0x0400000000000000\",\n      blob1: \"0x01000000AB\"\n    }\n  }\n#-}\n");
        check(&text)?;
    }

    #[test]
    fn types_round_trip(tys in prop::collection::vec(value_type(), 1..6)) {
        let text = format!("\"x.t\"() : () -> ({})\n", tys.join(", "));
        check(&text)?;
    }
}
