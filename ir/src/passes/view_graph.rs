//! `view-graph`: the dataflow of every function as Graphviz DOT (on stderr or a file).

use crate::body::{Body, OpData, OpId, ValueDef, WalkOrder};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use petgraph::dot::{Config, Dot};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "view-graph",
    summary: "Print the dataflow graph as Graphviz DOT",
    description:
        "For the anchor op and every isolated op nested in it, writes one `digraph` whose \
                  nodes are ops and block arguments and whose edges are SSA uses (labelled with \
                  the value's type). Render with `dot -Tsvg`.",
    anchor: None,
    options: ViewGraph::DEFS,
};

#[derive(crate::PassOptions)]
struct ViewGraph {
    /// where to write the DOT text ('-' for stderr)
    #[option("filename", default = "-")]
    filename: String,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(ViewGraph::from_options(o)))
}

/// DOT text for the dataflow of one body.
pub fn body_to_dot(body: &Body, title: &str) -> String {
    let mut g: DiGraph<String, String> = DiGraph::new();
    let mut node_of: HashMap<OpId, NodeIndex> = HashMap::new();
    let mut arg_nodes: HashMap<(u32, u32), NodeIndex> = HashMap::new();
    let ops = body.all_ops(WalkOrder::Pre);
    for &o in &ops {
        let label = body.op(o).name.to_string();
        node_of.insert(o, g.add_node(label));
    }
    for &o in &ops {
        let to = node_of[&o];
        for &v in body.op(o).operands() {
            let from = match body.value(v).def {
                ValueDef::Result { op, .. } => match node_of.get(&op) {
                    Some(&n) => n,
                    None => continue,
                },
                ValueDef::BlockArg { block, index } => *arg_nodes
                    .entry((block.0, index))
                    .or_insert_with(|| g.add_node(format!("arg{index}"))),
            };
            g.add_edge(from, to, body.value_type(v).to_string());
        }
    }
    let dot = format!("{}", Dot::with_config(&g, &[Config::GraphContentOnly]));
    format!(
        "digraph \"{}\" {{\n{dot}}}\n",
        crate::printer::escape(title)
    )
}

fn collect(body: &Body, title: &str, out: &mut String) {
    out.push_str(&body_to_dot(body, title));
    for o in body.all_ops(WalkOrder::Pre) {
        if let Some(inner) = body.inner(o) {
            let name = body
                .op(o)
                .attr("sym_name")
                .and_then(|a| a.as_str())
                .unwrap_or(body.op(o).name.as_str());
            // Bodies nest as deep as the text: grow the stack, not overflow it.
            stacker::maybe_grow(64 * 1024, 1024 * 1024, || collect(inner, name, out));
        }
    }
}

impl Pass for ViewGraph {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _cx: &PassContext) -> PassResult {
        let mut out = String::new();
        if let Some(b) = op.inner.as_deref() {
            let name = op
                .attr("sym_name")
                .and_then(|a| a.as_str())
                .unwrap_or(op.name.as_str())
                .to_string();
            collect(b, &name, &mut out);
        }
        if self.filename == "-" {
            eprint!("{out}");
            Ok(())
        } else {
            crate::output::write(&self.filename, out.as_bytes()).map_err(|e| {
                vec![crate::diagnostics::Diagnostic::error(
                    format!("cannot write '{}': {e}", self.filename),
                    crate::diagnostics::Pos::Loc(op.loc),
                )]
            })
        }
    }
}
