//! The model zoo: ten reference models written with the ES builder API
//! (`ge_dialects::es`), printed as `.air` with a symbolic batch dim `B`
//! (module attribute `ge.symbol_bounds = {B = 64 : i64}`) and seeded random
//! weights.
//!
//! Every model has two configurations with the same layer structure (same
//! depth, blocks, branches — so the same op graph shape):
//! - **tiny** (fewer channels, small inputs): weights are `dense_resource`
//!   blobs inside the file; committed in `testdata/models/` and checked to
//!   regenerate byte for byte and to run in the interpreter;
//! - **full** (the published sizes): weights go to an external file
//!   next to the model (`#ge.external<"<name>.weights", …>`, read relative to
//!   the model's directory), generated on demand into
//!   `target/zoo/` — they are far too large to commit.
//!
//! `cargo run -p ge-driver --bin ge-zoo` regenerates the tiny models;
//! `ge-zoo --full` writes the full ones.

pub mod cli;
pub mod cnn;
pub mod inception;
pub mod nasnet;
pub mod nasrnn;
pub mod net;
pub mod transformer;

use ge_dialects::es::{EsResult, GraphBuilder, Tensor, WeightStorage};
use ge_ir::printer::{print_module, PrintOptions};
use net::Net;

/// Which configuration to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Tiny,
    Full,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Tiny => "tiny",
            Size::Full => "full",
        }
    }
}

/// Builds a model's body: creates its inputs and weights, returns its outputs.
pub type BuildFn = for<'g> fn(&mut Net<'g>, Size) -> EsResult<Vec<Tensor<'g>>>;

/// One model of the zoo.
pub struct ModelDef {
    /// File stem (`resnet50` → `resnet50.air`).
    pub name: &'static str,
    pub title: &'static str,
    pub build: BuildFn,
}

/// Every model, in the order of the issue.
pub static MODELS: &[ModelDef] = &[
    ModelDef {
        name: "resnet50",
        title: "ResNet-50",
        build: cnn::resnet50,
    },
    ModelDef {
        name: "mobilenet_v2",
        title: "MobileNetV2",
        build: cnn::mobilenet_v2,
    },
    ModelDef {
        name: "inception_v3",
        title: "Inception-v3",
        build: inception::inception_v3,
    },
    ModelDef {
        name: "vgg19",
        title: "VGG-19",
        build: cnn::vgg19,
    },
    ModelDef {
        name: "squeezenet",
        title: "SqueezeNet 1.0",
        build: cnn::squeezenet,
    },
    ModelDef {
        name: "resnext50",
        title: "ResNeXt-50 (32x4d)",
        build: cnn::resnext50,
    },
    ModelDef {
        name: "bert_base",
        title: "BERT-base (12 layers, seq 128)",
        build: transformer::bert_base,
    },
    ModelDef {
        name: "gpt2_small",
        title: "GPT-2 small block stack (12 blocks, seq 128)",
        build: transformer::gpt2_small,
    },
    ModelDef {
        name: "nasnet_a",
        title: "NASNet-A Mobile (4 @ 1056)",
        build: nasnet::nasnet_a,
    },
    ModelDef {
        name: "nasrnn",
        title: "NasRNN (5 unrolled cells)",
        build: nasrnn::nasrnn,
    },
];

pub fn model(name: &str) -> Option<&'static ModelDef> {
    MODELS.iter().find(|m| m.name == name)
}

/// The default seed of the weights.
pub const DEFAULT_SEED: u64 = 0;

/// A generated model.
pub struct Generated {
    /// The `.air` text.
    pub text: String,
    /// External weights (full configurations), to be written to the path the
    /// text names.
    pub weights: Vec<u8>,
    /// Ops in the function (constants included, `graph.return` excluded).
    pub ops: usize,
    /// Ops that are not constants.
    pub compute_ops: usize,
    /// Learnable parameters.
    pub params: u64,
}

/// A per-model seed, so models with the same seed get different weights.
fn model_seed(name: &str, seed: u64) -> u64 {
    // FNV-1a of the name, mixed with the seed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Build model `m` in configuration `size`. Full configurations put their
/// weights in `weights_path` (as the text will name it).
pub fn generate(m: &ModelDef, size: Size, seed: u64, weights_path: &str) -> EsResult<Generated> {
    let b = GraphBuilder::new("main");
    b.symbol_bound("B", 64);
    b.set_weight_storage(match size {
        Size::Tiny => WeightStorage::Resource,
        Size::Full => WeightStorage::External {
            path: weights_path.to_string(),
        },
    });
    let mut net = Net::new(&b, model_seed(m.name, seed));
    let outs = (m.build)(&mut net, size)?;
    let params = net.params;
    b.output(&outs)?;
    let (module, weights) = b.finish_with_weights()?;
    let (mut ops, mut consts) = (0, 0);
    if let Some(&f) = module.top_ops().first() {
        if let Some(body) = module.body().inner(f) {
            let r = body.op_regions_root();
            if let Some(entry) = body.entry_block(r) {
                for o in body.block_ops(entry) {
                    match body.op(o).name.as_str() {
                        "graph.return" => {}
                        "data.constant" => {
                            ops += 1;
                            consts += 1
                        }
                        _ => ops += 1,
                    }
                }
            }
        }
    }
    let header = format!(
        "// {} — {} configuration, seed {seed}. {ops} ops ({} compute), {params} parameters.\n\
         // Generated by `cargo run -p ge-driver --bin ge-zoo{}` from driver/src/zoo/; do not edit.\n",
        m.title,
        size.name(),
        ops - consts,
        if size == Size::Full { " -- --full" } else { "" },
    );
    let text = header + &print_module(&module, PrintOptions::default());
    Ok(Generated {
        text,
        weights,
        ops,
        compute_ops: ops - consts,
        params,
    })
}
