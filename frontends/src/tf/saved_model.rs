//! SavedModel directories: `saved_model.pb` + the variables checkpoint.
//!
//! The signature (`--signature`, default `serving_default`) names the graph's
//! input placeholders and output tensors by key. The graph calls the
//! signature's function (`StatefulPartitionedCall`) with the variables'
//! resource handles (`VarHandleOp`) as its last inputs; which variable each
//! handle is comes from the concrete function's `bound_inputs` — node ids of
//! the SavedModel's object graph, the same ids as the checkpoint's object
//! graph (`_CHECKPOINTABLE_OBJECT_GRAPH`), whose `VARIABLE_VALUE` attribute
//! names the checkpoint key. Those tensors are read from the bundle
//! ([`super::bundle`]) and become the handles' values: reading a variable is
//! a constant, i.e. the model is frozen on import.

use super::bundle::Bundle;
use super::graph::{parse_graph_input, Graph};
use super::{build, dtype_from_tf, InputSpec, OutputSpec, Res, TfOptions};
use crate::error::ImportError;
use crate::proto::tensorflow::{attr_value, SavedModel, TensorInfo, TrackableObjectGraph};
use ge_ir::attributes::{Attribute, DenseElements};
use ge_ir::{Context, Module, Type};
use prost::Message;
use std::collections::HashMap;
use std::path::Path;

/// `output_2` before `output_10`: keys compared with their digit runs as numbers.
fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = vec![];
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(num.unwrap_or(0).saturating_mul(10).saturating_add(d as u64));
        } else {
            if let Some(v) = num.take() {
                out.push((std::mem::take(&mut text), v));
            }
            text.push(c);
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

fn tensor_node(g: &Graph, info: &TensorInfo, key: &str) -> Res<(usize, usize)> {
    let name = match &info.encoding {
        Some(crate::proto::tensorflow::tensor_info::Encoding::Name(n)) => n.as_str(),
        None => {
            return Err(ImportError::unsupported(format!(
                "signature tensor '{key}' is not a plain tensor (sparse and composite tensors are not supported)"
            )))
        }
    };
    let (_, node, port) = parse_graph_input(name);
    let &n = g.by_name.get(node).ok_or_else(|| {
        ImportError::invalid(format!(
            "signature tensor '{key}' names '{name}', which is not in the graph"
        ))
    })?;
    Ok((n, port))
}

pub fn import_dir(ctx: &Context, dir: &Path, opts: &TfOptions) -> Result<Module, ImportError> {
    let pb = dir.join("saved_model.pb");
    let bytes = std::fs::read(&pb).map_err(|e| {
        ImportError::io(format!(
            "'{}' is a directory but not a SavedModel: cannot read '{}': {e}",
            dir.display(),
            pb.display()
        ))
    })?;
    let name = pb.display().to_string();
    let sm = SavedModel::decode(bytes.as_slice()).map_err(|e| {
        ImportError::malformed(format!(
            "'{name}' is not a SavedModel or is truncated ({e})"
        ))
    })?;
    let mg = sm
        .meta_graphs
        .iter()
        .find(|m| {
            m.meta_info_def
                .as_ref()
                .is_some_and(|i| i.tags.iter().any(|t| t == "serve"))
        })
        .or(sm.meta_graphs.first())
        .ok_or_else(|| ImportError::malformed(format!("'{name}' has no meta graph")))?;
    let sig_name = opts.signature.as_deref().unwrap_or("serving_default");
    let sig = mg.signature_def.get(sig_name).ok_or_else(|| {
        let mut have: Vec<&str> = mg
            .signature_def
            .keys()
            .map(|k| k.as_str())
            .filter(|k| !k.starts_with("__"))
            .collect();
        have.sort_unstable();
        ImportError::invalid(format!(
            "'{name}' has no signature '{sig_name}' (signatures: {})",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ))
    })?;
    let gd = mg
        .graph_def
        .clone()
        .ok_or_else(|| ImportError::malformed(format!("'{name}' has no graph")))?;
    let main = Graph::from_nodes(&format!("'{name}'"), &gd.node)?;
    // Inputs in the order of their keys: TensorFlow flattens a signature's
    // keyword arguments sorted by key (ge-run feeds them by position).
    let mut inputs = vec![];
    for (key, info) in &sig.inputs {
        let (n, _) = tensor_node(&main, info, key)?;
        let node = &main.nodes[n];
        if node.op != "Placeholder" {
            return Err(ImportError::unsupported(format!(
                "signature input '{key}' is node '{}' ({}), not a placeholder",
                node.name, node.op
            )));
        }
        let shape = info.tensor_shape.as_ref().and_then(super::shape_dims);
        inputs.push(InputSpec {
            node: n,
            name: key.clone(),
            aliases: vec![key.clone(), node.name.clone()],
            dtype: info.dtype,
            shape: shape.or_else(|| super::shape_attr(node.attrs.get("shape"))),
        });
    }
    inputs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut keys: Vec<&String> = sig.outputs.keys().collect();
    keys.sort_by_key(|k| natural_key(k));
    if let Some(want) = &opts.outputs {
        keys.retain(|k| want.iter().any(|w| w == *k));
        if keys.len() != want.len() {
            return Err(ImportError::invalid(format!(
                "--outputs names a key that signature '{sig_name}' does not have (outputs: {})",
                sig.outputs.keys().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let mut outputs = vec![];
    for key in keys {
        let (n, port) = tensor_node(&main, &sig.outputs[key], key)?;
        outputs.push(OutputSpec {
            node: n,
            port,
            name: key.clone(),
            listed: key.clone(),
        });
    }
    let variables = bind_variables(dir, mg, &main, &outputs)?;
    let library = gd.library.map(|l| l.function).unwrap_or_default();
    build(ctx, &name, main, library, opts, inputs, outputs, variables)
}

/// The values of the `VarHandleOp`s the signature's calls capture.
fn bind_variables(
    dir: &Path,
    mg: &crate::proto::tensorflow::MetaGraphDef,
    g: &Graph,
    outputs: &[OutputSpec],
) -> Res<HashMap<String, Attribute>> {
    // The call nodes the outputs depend on.
    let mut seen = vec![false; g.nodes.len()];
    let mut stack: Vec<usize> = outputs.iter().map(|o| o.node).collect();
    let mut calls = vec![];
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        if matches!(
            g.nodes[n].op.as_str(),
            "StatefulPartitionedCall" | "PartitionedCall"
        ) {
            calls.push(n);
        }
        stack.extend(g.nodes[n].inputs.iter().map(|x| x.0));
    }
    let needs_vars = calls.iter().any(|&c| {
        g.nodes[c]
            .inputs
            .iter()
            .any(|&(s, _)| g.nodes[s].op == "VarHandleOp")
    });
    let mut out = HashMap::new();
    if !needs_vars {
        return Ok(out);
    }
    let objects = mg.object_graph_def.as_ref().ok_or_else(|| {
        ImportError::unsupported("the SavedModel has no object graph (a TF1 SavedModel: freeze it to a GraphDef instead)")
    })?;
    let bundle = Bundle::open(&dir.join("variables").join("variables"))?;
    let ckpt = TrackableObjectGraph::decode(
        bundle
            .string_scalar("_CHECKPOINTABLE_OBJECT_GRAPH")?
            .as_slice(),
    )
    .map_err(|e| ImportError::malformed(format!("the checkpoint's object graph: {e}")))?;
    for c in calls {
        let node = &g.nodes[c];
        let f = match node.attrs.get("f").and_then(|a| a.value.as_ref()) {
            Some(attr_value::Value::Func(f)) => f.name.clone(),
            _ => continue,
        };
        let Some(cf) = objects.concrete_functions.get(&f) else {
            continue;
        };
        let bound = &cf.bound_inputs;
        if bound.len() > node.inputs.len() {
            return Err(ImportError::invalid(format!(
                "call '{}' has fewer inputs than function '{f}' captures",
                node.name
            )));
        }
        let first = node.inputs.len() - bound.len();
        for (k, &obj) in bound.iter().enumerate() {
            let (h, _) = node.inputs[first + k];
            let hn = &g.nodes[h];
            if hn.op != "VarHandleOp" || out.contains_key(&hn.name) {
                continue;
            }
            let key = usize::try_from(obj)
                .ok()
                .and_then(|i| ckpt.nodes.get(i))
                .and_then(|t| t.attributes.iter().find(|a| a.name == "VARIABLE_VALUE"))
                .map(|a| a.checkpoint_key.clone())
                .ok_or_else(|| {
                    ImportError::invalid(format!(
                        "variable '{}' (object {obj}) has no value in the checkpoint",
                        hn.name
                    ))
                })?;
            out.insert(hn.name.clone(), read_tensor(&bundle, &key)?);
        }
    }
    Ok(out)
}

/// A checkpoint tensor as a dense elements attribute.
fn read_tensor(bundle: &Bundle, key: &str) -> Res<Attribute> {
    let e = bundle
        .entry(key)
        .ok_or_else(|| ImportError::invalid(format!("the checkpoint has no tensor '{key}'")))?;
    let dt =
        dtype_from_tf(e.dtype).map_err(|err| err.context(format!("checkpoint tensor '{key}'")))?;
    let shape: Vec<i64> = e
        .shape
        .as_ref()
        .map(|s| s.dim.iter().map(|d| d.size).collect())
        .unwrap_or_default();
    if shape.iter().any(|&d| d < 0) {
        return Err(ImportError::malformed(format!(
            "checkpoint tensor '{key}' has a negative dim"
        )));
    }
    let want = ge_ir::budget::bytes_of(shape.iter().map(|&d| d as u64), dt.byte_size() as u64)
        .ok_or_else(|| ImportError::invalid(format!("checkpoint tensor '{key}' is too large")))?;
    if e.size as u64 != want {
        return Err(ImportError::malformed(format!(
            "checkpoint tensor '{key}' has {} bytes, but its shape {shape:?} needs {want}",
            e.size
        )));
    }
    let bytes = bundle.bytes(key)?;
    Ok(Attribute::dense(DenseElements {
        ty: Type::tensor_static(&shape, dt),
        splat: false,
        bytes: bytes.into(),
    }))
}
