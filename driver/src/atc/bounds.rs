//! The entry inputs' dynamic dims, for ge-atc. A symbolic dim needs no
//! bound (without one, memory is planned per concrete shape at run time);
//! a dim of unknown size (`?`) cannot be bound from the inputs, so such a
//! model is refused before compiling, with a message that names the
//! model's input (its ONNX / TensorFlow name) and the ge-atc flag that
//! fixes it — never an internal attribute.

use ge_ir::{Dim, Module, Type};

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

/// The error for the first input with a dim of unknown size (`?`: no
/// `dim_param` names it, so it is not a symbol the runtime can bind), if
/// any. Symbolic dims need no bound: without one, memory is planned per
/// shape at run time.
pub fn unknown_dims(m: &Module) -> Option<String> {
    for (name, t) in entry_inputs(m) {
        let Some(dims) = t.as_tensor().and_then(|t| t.dims.clone()) else {
            continue;
        };
        if dims.contains(&Dim::Unknown) {
            let shape: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    Dim::Static(n) => n.to_string(),
                    _ => "-1".to_string(),
                })
                .collect();
            return Some(format!(
                "input '{name}' ({t}) has dims of unknown size ('?', no dim_param names them); give them with --input_shape \"{name}:{}\" (-1 for a dynamic dim) or --input_shape_range",
                shape.join(",")
            ));
        }
    }
    None
}
