use crate::common;
use common::*;
use ge_compile::CompileOptions;

#[test]
fn demo_block_matches_the_interpreter() {
    let text = read("testdata/models/demo_block.air");
    let om = om_bytes("demo", &text, &CompileOptions::default());
    let model = load_allowing(&om, 1, DEMO_BLOCK_INTERPRETED);
    let (types, m) = signature(&text, "main");
    for b in [1, 3, 64] {
        let ins = random_inputs(&types, &[("B", b)], 7);
        let want = interpret(&m, "main", &ins);
        let got = run(&model, &ins);
        assert_close(&got, &want, &format!("demo B={b}"));
    }
}
