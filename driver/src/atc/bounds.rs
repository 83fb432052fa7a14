//! Inputs whose symbolic dims have no upper bound. ge plans memory for
//! bounded shapes, so such a model is refused before compiling, with a
//! message that names the model's input (its ONNX / TensorFlow name, and the
//! model's own dim names) and the ge-atc flag that bounds it — never the
//! internal `ge.symbol_bounds` attribute.

use ge_ir::{Dim, Ident, Module, Type};
use std::collections::HashMap;

/// `(name, type)` of the entry (first public) function's inputs.
pub fn entry_inputs(m: &Module) -> Vec<(String, Type)> {
    let b = m.body();
    let Some(f) = m.top_ops().into_iter().find(|&o| {
        let d = b.op(o);
        ge_dialects::graph::func::Func::is(d)
            && d.attr("sym_visibility").and_then(|a| a.as_str()) != Some("private")
    }) else {
        return vec![];
    };
    let d = b.op(f);
    let (names, _) = ge_dialects::graph::func::io_names_or_default(d);
    let types: Vec<Type> = d
        .attr("function_type")
        .and_then(|a| a.as_type())
        .and_then(|t| t.as_function().map(|(i, _)| i.to_vec()))
        .unwrap_or_default();
    types
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let n = names.get(i).cloned().unwrap_or_else(|| format!("arg{i}"));
            (n, t)
        })
        .collect()
}

/// A module attribute `{SYM = value}` as a map (`ge.symbol_bounds`,
/// `ge.onnx_dim_params`).
fn dict_attr<T>(
    m: &Module,
    name: &str,
    f: impl Fn(ge_ir::Attribute) -> Option<T>,
) -> HashMap<Ident, T> {
    m.outer
        .op(m.op)
        .attr(name)
        .and_then(|a| a.as_dict())
        .map(|d| {
            d.entries()
                .iter()
                .filter_map(|(k, v)| Some((*k, f(*v)?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The error for the first input with an unbounded symbolic dim, if any.
pub fn missing_bounds(m: &Module) -> Option<String> {
    let bounds = dict_attr(m, "ge.symbol_bounds", |a| a.as_int());
    let params = dict_attr(m, "ge.onnx_dim_params", |a| a.as_str().map(String::from));
    for (name, t) in entry_inputs(m) {
        let Some(dims) = t.as_tensor().and_then(|t| t.dims.clone()) else {
            continue;
        };
        let mut unbounded = vec![];
        let mut range = vec![];
        for d in dims.iter() {
            let mut syms = vec![];
            if let Some(e) = d.expr() {
                e.symbols(&mut syms);
            }
            let free: Vec<Ident> = syms
                .into_iter()
                .filter(|s| !bounds.contains_key(s))
                .collect();
            range.push(match (d, free.is_empty()) {
                (Dim::Static(n), _) => n.to_string(),
                (Dim::Unknown, _) => "1~N".to_string(),
                (_, false) => "1~N".to_string(),
                (d, true) => format!("1~{}", d.upper_bound(&bounds).unwrap_or(1)),
            });
            if *d == Dim::Unknown {
                unbounded.push("?".to_string());
            }
            for s in free {
                let shown = params.get(&s).map_or(s.to_string(), |p| format!("'{p}'"));
                if !unbounded.contains(&shown) {
                    unbounded.push(shown);
                }
            }
        }
        if !unbounded.is_empty() {
            return Some(format!(
                "input '{name}' ({t}) has dynamic dims without an upper bound ({}); ge plans memory for bounded shapes: give the bounds with --input_shape_range \"{name}:[{}]\" (or --input_shape with LOW~HIGH dims, --dynamic_batch_size, --dynamic_image_size, --dynamic_dims)",
                unbounded.join(", "),
                range.join(",")
            ));
        }
    }
    None
}
