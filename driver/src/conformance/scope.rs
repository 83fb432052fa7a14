//! Which conformance cases are out of ge's scope, and why: ge compiles
//! inference graphs of tensors, so training operators (the
//! `ai.onnx.preview.training` domain and `Gradient`) and values that are not
//! tensors of numbers — sequences, optionals, maps, strings — are left out.
//! Such cases still run and are counted; the report gives the rate over the
//! cases in scope beside the rate over all of them (docs/conformance.md).

use ge_frontends::onnx::graph::walk_nodes;
use ge_frontends::proto::onnx::{tensor_proto::DataType, type_proto, ModelProto, TypeProto};

/// Operators on sequences, optionals or strings, and training operators.
const OUT_OF_SCOPE_OPS: &[(&str, &str)] = &[
    ("Adagrad", "a training operator"),
    ("Adam", "a training operator"),
    ("Momentum", "a training operator"),
    ("Gradient", "a training operator"),
    ("ConcatFromSequence", "a sequence operator"),
    ("SequenceAt", "a sequence operator"),
    ("SequenceConstruct", "a sequence operator"),
    ("SequenceEmpty", "a sequence operator"),
    ("SequenceErase", "a sequence operator"),
    ("SequenceInsert", "a sequence operator"),
    ("SequenceLength", "a sequence operator"),
    ("SequenceMap", "a sequence operator"),
    ("SplitToSequence", "a sequence operator"),
    ("Optional", "an optional operator"),
    ("OptionalGetElement", "an optional operator"),
    ("OptionalHasElement", "an optional operator"),
    ("StringConcat", "a string operator"),
    ("StringNormalizer", "a string operator"),
    ("StringSplit", "a string operator"),
    ("RegexFullMatch", "a string operator"),
];

/// What a value of type `t` is when it is not a tensor (a sequence, an
/// optional or a map): its test data is not a `TensorProto`.
fn container_reason(t: &TypeProto) -> Option<&'static str> {
    match &t.value {
        Some(type_proto::Value::SequenceType(_)) => Some("a sequence value"),
        Some(type_proto::Value::OptionalType(_)) => Some("an optional value"),
        Some(type_proto::Value::MapType(_)) => Some("a map value"),
        _ => None,
    }
}

/// Per fed input (the graph's inputs without initializers, as the test data's
/// `input_K.pb` follow them) and per output: `'name' is a sequence value`
/// (optional, map) for a value that is not a tensor, else `None`.
pub fn non_tensor_io(m: &ModelProto) -> (Vec<Option<String>>, Vec<Option<String>>) {
    let Some(g) = m.graph.as_ref() else {
        return (vec![], vec![]);
    };
    let inits: std::collections::HashSet<&str> = g
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    let why = |vi: &ge_frontends::proto::onnx::ValueInfoProto| {
        let r = vi.r#type.as_ref().and_then(container_reason)?;
        Some(format!("'{}' is {r}", vi.name.as_deref().unwrap_or("")))
    };
    let ins = g
        .input
        .iter()
        .filter(|vi| !inits.contains(vi.name.as_deref().unwrap_or("")))
        .map(why)
        .collect();
    (ins, g.output.iter().map(why).collect())
}

fn type_reason(t: &TypeProto) -> Option<&'static str> {
    if let Some(r) = container_reason(t) {
        return Some(r);
    }
    match &t.value {
        Some(type_proto::Value::TensorType(tt))
            if tt.elem_type == Some(DataType::String as i32) =>
        {
            Some("a string tensor")
        }
        _ => None,
    }
}

/// Why a model is out of scope (`None`: in scope).
pub fn out_of_scope(m: &ModelProto) -> Option<String> {
    let g = m.graph.as_ref()?;
    for vi in g.input.iter().chain(&g.output) {
        if let Some(why) = vi.r#type.as_ref().and_then(type_reason) {
            let name = vi.name.clone().unwrap_or_default();
            return Some(format!("'{name}' is {why}"));
        }
    }
    if m.opset_import
        .iter()
        .any(|o| o.domain.as_deref() == Some("ai.onnx.preview.training"))
    {
        return Some("ai.onnx.preview.training is the training domain".into());
    }
    let mut why = None;
    walk_nodes(g, &mut |n| {
        if why.is_some() {
            return;
        }
        let op = n.op_type.as_deref().unwrap_or("");
        if let Some((_, w)) = OUT_OF_SCOPE_OPS.iter().find(|(o, _)| *o == op) {
            why = Some(format!("{op} is {w}"));
        }
    });
    why
}
