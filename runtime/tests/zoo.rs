//! Differential tests: every zoo model (tiny config), compiled with the atc
//! pipeline and run by the runtime, equals the reference interpreter on the
//! source `.air` within dtype tolerances — with Ascend formats and without,
//! fused and unfused, multi-stream and single-stream.

mod common;
use common::*;
use ge_runtime::compile::CompileOptions;

fn check(name: &str, opts: &CompileOptions, batches: &[i64]) {
    let text = read(&format!("testdata/models/{name}.air"));
    let om = om_bytes(name, &text, opts);
    let model = load(&om, 2);
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
