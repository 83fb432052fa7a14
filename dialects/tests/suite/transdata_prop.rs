//! Property: data.transdata to any storage format and back is the identity,
//! on random shapes and dtypes, and the padding is all zeros.

use ge_dialects::data::layout::{family, storage_dims, transdata, transdata_type, Family, Layout};
use ge_dialects::data::movement::transpose;
use ge_ir::attributes::Format;
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};
use proptest::prelude::*;

const DTYPES: [DType; 8] = [
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::I8,
    DType::U8,
    DType::I32,
    DType::I64,
];

const IMAGE: [Format; 6] = [
    Format::NCHW,
    Format::NHWC,
    Format::HWCN,
    Format::CHWN,
    Format::NC1HWC0,
    Format::FRACTAL_Z,
];

/// Non-zero values (so padding zeros can be counted), exact in every dtype.
fn tensor(shape: Vec<usize>, dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_i64(shape, dtype, (0..n as i64).map(|i| i % 97 + 1).collect())
}

fn zeros(t: &Tensor) -> usize {
    (0..t.len()).filter(|&i| t.get_f(i) == 0.0).count()
}

fn image_shape() -> impl Strategy<Value = Vec<usize>> {
    (1usize..20, 1usize..40, 1usize..4, 1usize..4).prop_map(|(n, c, h, w)| vec![n, c, h, w])
}

fn matrix_shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..40, 1..4)
}

/// `x` (logical NCHW) stored in plain format `f`.
fn stored_plain(x: &Tensor, f: Format) -> Tensor {
    match f {
        Format::NHWC => transpose(x, &[0, 2, 3, 1]),
        Format::HWCN => transpose(x, &[2, 3, 1, 0]),
        Format::CHWN => transpose(x, &[1, 2, 3, 0]),
        _ => x.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn image_formats_round_trip(
        shape in image_shape(),
        dt in prop::sample::select(DTYPES.to_vec()),
        src in prop::sample::select(vec![Format::NCHW, Format::NHWC, Format::HWCN, Format::CHWN]),
        dst in prop::sample::select(IMAGE.to_vec()),
    ) {
        prop_assume!(src != dst);
        let logical = shape.clone();
        let x = stored_plain(&tensor(shape, dt), src);
        let y = transdata(&x, src, dst, &logical).unwrap();
        let layout = Layout::new(dst, &logical, dt).unwrap();
        prop_assert_eq!(&y.shape, &layout.storage);
        // Every real element survives; everything else is zero padding.
        prop_assert_eq!(zeros(&y), y.len() - x.len());
        let back = transdata(&y, dst, src, &logical).unwrap();
        prop_assert_eq!(back, x);
    }

    #[test]
    fn matrix_formats_round_trip(
        shape in matrix_shape(),
        dt in prop::sample::select(DTYPES.to_vec()),
    ) {
        let x = tensor(shape.clone(), dt);
        let y = transdata(&x, Format::ND, Format::FRACTAL_NZ, &shape).unwrap();
        prop_assert_eq!(zeros(&y), y.len() - x.len());
        let back = transdata(&y, Format::FRACTAL_NZ, Format::ND, &shape).unwrap();
        prop_assert_eq!(back, x);
    }

    /// Padded to padded: NCHW -> NC1HWC0 -> FRACTAL_Z -> NHWC is a transpose.
    #[test]
    fn padded_chains_compose(
        shape in image_shape(),
        dt in prop::sample::select(DTYPES.to_vec()),
    ) {
        let x = tensor(shape.clone(), dt);
        let a = transdata(&x, Format::NCHW, Format::NC1HWC0, &shape).unwrap();
        let b = transdata(&a, Format::NC1HWC0, Format::FRACTAL_Z, &shape).unwrap();
        let c = transdata(&b, Format::FRACTAL_Z, Format::NHWC, &shape).unwrap();
        prop_assert_eq!(c, transpose(&x, &[0, 2, 3, 1]));
    }

    /// Inferred result types agree with the storage the kernel produces.
    #[test]
    fn inferred_types_match_storage(
        shape in image_shape(),
        dt in prop::sample::select(DTYPES.to_vec()),
        dst in prop::sample::select(IMAGE.to_vec()),
    ) {
        prop_assume!(dst != Format::NCHW);
        let t = Type::tensor_static(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>(), dt);
        let r = transdata_type(t, Format::NCHW, dst).unwrap();
        let y = transdata(&tensor(shape.clone(), dt), Format::NCHW, dst, &shape).unwrap();
        let dims: Vec<usize> = r
            .as_tensor()
            .unwrap()
            .shape()
            .iter()
            .map(|d| d.as_static().unwrap() as usize)
            .collect();
        prop_assert_eq!(dims, y.shape);
        prop_assert_eq!(family(dst), Some(Family::Image));
    }
}

/// The whole op path (parse, verify with inference, interpret) with a
/// symbolic batch: NCHW -> dst -> NCHW returns the input.
#[test]
fn op_round_trip_through_the_interpreter() {
    let ctx = ge_dialects::context();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(48));
    let strategy = (
        image_shape(),
        prop::sample::select(DTYPES.to_vec()),
        prop::sample::select(vec![
            Format::NC1HWC0,
            Format::FRACTAL_Z,
            Format::NHWC,
            Format::HWCN,
        ]),
    );
    runner
        .run(&strategy, |(shape, dt, dst)| {
            let b = Dim::sym("B");
            let logical = [
                b,
                Dim::Static(shape[1] as i64),
                Dim::Static(shape[2] as i64),
                Dim::Static(shape[3] as i64),
            ];
            let src_t = Type::tensor(&logical, dt);
            let mid = transdata_type(src_t, Format::NCHW, dst).unwrap();
            // FRACTAL_Z merges C1*H*W: with a symbolic N it is still static here.
            prop_assert!(storage_dims(dst, &logical, dt).is_ok());
            let text = format!(
                "graph.func @main(%x: {src_t}) -> {src_t} {{\n\
                   %0 = data.transdata %x {{src_format = \"NCHW\", dst_format = \"{dst}\"}} : ({src_t}) -> {mid}\n\
                   %1 = data.transdata %0 {{src_format = \"{dst}\", dst_format = \"NCHW\"}} : ({mid}) -> {src_t}\n\
                   graph.return %1 : {src_t}\n\
                 }}\n"
            );
            let m = ge_ir::parser::parse_module(&ctx, "prop.air", &text, ge_ir::parser::ParseOptions::default())
                .map_err(|d| TestCaseError::fail(format!("{text}\n{}", d.message)))?;
            let diags = ge_ir::verifier::verify_module(&m);
            prop_assert!(diags.is_empty(), "{text}\n{:?}", diags.iter().map(|d| &d.message).collect::<Vec<_>>());
            let x = tensor(shape, dt);
            let out = Interpreter::new(&m)
                .run_function("main", vec![x.clone()])
                .map_err(|e| TestCaseError::fail(e.msg))?;
            prop_assert_eq!(&out[0], &x);
            Ok(())
        })
        .unwrap();
}
