//! Interpreter results against numpy: every folder of testdata/fixtures
//! (written by tools/fixtures/generate.py) is run and compared.

use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use std::path::Path;

fn read_npy(path: &Path) -> Tensor {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let code = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => panic!("{}: dtype {other:?}", path.display()),
    };
    let code = code.trim_start_matches(['<', '>', '|', '=']).to_string();
    use ge_ir::DType as D;
    match code.as_str() {
        "f8" => Tensor::from_f64(shape, D::F64, npy.into_vec::<f64>().unwrap()),
        "f4" => Tensor::from_f64(
            shape,
            D::F32,
            npy.into_vec::<f32>()
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        "f2" => Tensor::from_f64(
            shape,
            D::F16,
            npy.into_vec::<half::f16>()
                .unwrap()
                .into_iter()
                .map(|x| x.to_f64())
                .collect(),
        ),
        "i8" => Tensor::from_i64(shape, D::I64, npy.into_vec::<i64>().unwrap()),
        "i4" => Tensor::from_i64(
            shape,
            D::I32,
            npy.into_vec::<i32>()
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "i1" => Tensor::from_i64(
            shape,
            D::I8,
            npy.into_vec::<i8>()
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "u1" => Tensor::from_i64(
            shape,
            D::U8,
            npy.into_vec::<u8>()
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "b1" => Tensor::from_i64(
            shape,
            D::I1,
            npy.into_vec::<bool>()
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        c => panic!("{}: unsupported dtype {c}", path.display()),
    }
}

#[test]
fn interpreter_matches_numpy_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures");
    let ctx = ge_dialects::context();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("testdata/fixtures exists")
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no fixtures in {}", root.display());
    let mut failures = vec![];
    for dir in &dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(dir.join("main.air")).expect("main.air");
        let m = match ge_ir::parser::parse_module(
            &ctx,
            "main.air",
            &text,
            ge_ir::parser::ParseOptions::default(),
        ) {
            Ok(m) => m,
            Err(d) => {
                failures.push(format!("{name}: parse error: {}", d.message));
                continue;
            }
        };
        let diags = ge_ir::verifier::verify_module(&m);
        if !diags.is_empty() {
            failures.push(format!(
                "{name}: verify: {:?}",
                diags.iter().map(|d| &d.message).collect::<Vec<_>>()
            ));
            continue;
        }
        let inputs: Vec<Tensor> = (0..)
            .map(|i| dir.join(format!("in{i}.npy")))
            .take_while(|p| p.exists())
            .map(|p| read_npy(&p))
            .collect();
        let want: Vec<Tensor> = (0..)
            .map(|i| dir.join(format!("out{i}.npy")))
            .take_while(|p| p.exists())
            .map(|p| read_npy(&p))
            .collect();
        match Interpreter::new(&m).run_function("main", inputs) {
            Err(e) => failures.push(format!("{name}: {}", e.msg)),
            Ok(got) => {
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    // Element type and shape exactly (no cast to numpy's
                    // dtype), integers exactly, floats within the dtype's
                    // tolerance.
                    let (rtol, atol) = Tensor::default_tolerance(w.dtype);
                    if let Some(why) = g.mismatch(w, rtol, atol) {
                        failures.push(format!(
                            "{name}: output #{i} differs from numpy: {why}\n got  {:?}\n want {:?}",
                            &g.to_f64()[..g.len().min(8)],
                            &w.to_f64()[..w.len().min(8)]
                        ));
                    }
                }
                if got.len() != want.len() {
                    failures.push(format!(
                        "{name}: {} outputs, numpy has {}",
                        got.len(),
                        want.len()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
    eprintln!("{} fixtures match numpy", dirs.len());
}
