//! Differential tests: every zoo model (tiny config), compiled with the atc
//! pipeline and run by the runtime, equals the reference interpreter on the
//! source `.air` within dtype tolerances — with Ascend formats and without,
//! fused and unfused, multi-stream and single-stream.

use crate::common;
use common::*;
use ge_compile::CompileOptions;

/// The ops a zoo model still runs on the interpreter (every other kernel
/// must be native, or the test fails).
fn interpreted(name: &str) -> &'static [&'static str] {
    match name {
        "demo_block" => DEMO_BLOCK_INTERPRETED,
        _ => &[],
    }
}

fn check(name: &str, opts: &CompileOptions, batches: &[i64]) {
    let text = read(&format!("testdata/models/{name}.air"));
    let om = om_bytes(name, &text, opts);
    let model = load_allowing(&om, 2, interpreted(name));
    let (types, m) = signature(&text, "main");
    for &b in batches {
        let ins = random_inputs(&types, &[("B", b)], 11 + b as u64);
        let want = interpret(&m, "main", &ins);
        let got = run(&model, &ins);
        assert_close(&got, &want, &format!("{name} B={b} {opts:?}"));
    }
}

macro_rules! zoo {
    ($($f:ident: $name:literal),* $(,)?) => {$(
        #[test]
        fn $f() {
            check($name, &CompileOptions::default(), &[1, 2]);
        }
    )*};
}

zoo! {
    resnet50: "resnet50",
    mobilenet_v2: "mobilenet_v2",
    inception_v3: "inception_v3",
    vgg19: "vgg19",
    squeezenet: "squeezenet",
    resnext50: "resnext50",
    bert_base: "bert_base",
    gpt2_small: "gpt2_small",
    nasnet_a: "nasnet_a",
    nasrnn: "nasrnn",
    demo_block: "demo_block",
}

#[test]
fn variants_of_resnet50_and_bert_agree() {
    for name in ["resnet50", "bert_base"] {
        for opts in [
            CompileOptions {
                formats: false,
                ..Default::default()
            },
            CompileOptions {
                fuse: false,
                ..Default::default()
            },
            CompileOptions {
                single_stream: true,
                ..Default::default()
            },
        ] {
            check(name, &opts, &[1]);
        }
    }
}

/// Activations kept NCHW between convolutions and ND between matrix products
/// (`LoadOptions::plain_layouts`) change no output bit, on the zoo's
/// convolution networks and transformers, and happen.
#[test]
fn plain_layouts_between_kernels_change_no_output() {
    use ge_runtime::{LoadOptions, Model};
    for name in [
        "mobilenet_v2",
        "resnet50",
        "squeezenet",
        "bert_base",
        "gpt2_small",
    ] {
        let text = read(&format!("testdata/models/{name}.air"));
        let om = om_bytes(name, &text, &CompileOptions::default());
        let load = |plain| {
            let opts = LoadOptions {
                threads: 2,
                plain_layouts: plain,
                ..Default::default()
            };
            let m = Model::from_bytes(&om, &opts).unwrap_or_else(|e| panic!("load: {e}"));
            assert_native(&m, &[]);
            m
        };
        let (plain, blocked) = (load(true), load(false));
        assert!(plain.plain_buffers() > 0, "{name}: nothing kept plain");
        assert_eq!(blocked.plain_buffers(), 0);
        let (types, _) = signature(&text, "main");
        for b in [1, 2] {
            let ins = random_inputs(&types, &[("B", b)], 5 + b as u64);
            let (p, k) = (run(&plain, &ins), run(&blocked, &ins));
            for (i, (p, k)) in p.iter().zip(&k).enumerate() {
                assert_eq!(p.to_f64(), k.to_f64(), "{name} B={b} output #{i}");
            }
        }
    }
}
