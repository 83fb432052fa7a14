//! TensorFlow import (`ge_import_tf`, `ge_import_tf_bytes`) and traced runs
//! (`ge_session_run_traced` and the `ge_outputs_trace_*` readers), called as
//! C calls them: the results, and every bad argument a status with a message.

use crate::bytes::*;
use crate::compile::*;
use crate::module::*;
use crate::runtime::*;
use crate::status::*;
use crate::tests::{c, desc, fails, model_and_session, ok};
use std::ffi::CStr;
use std::ptr::{null, null_mut};

const TF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/tf/");

/// Options with the given ge-atc flags.
fn options(flags: &[(&str, &str)]) -> *mut ge_compile_options {
    let mut o = null_mut();
    // SAFETY: live locals and the handle just made.
    unsafe {
        ok(ge_compile_options_new(&mut o));
        for (k, v) in flags {
            ok(ge_compile_options_set(o, c(k).as_ptr(), c(v).as_ptr()));
        }
    }
    o
}

/// The module's generic text.
fn text(m: *const ge_module) -> String {
    let mut b = null_mut();
    // SAFETY: a live module and a local out pointer; the bytes freed after the copy.
    unsafe {
        ok(ge_module_print(m, true, &mut b));
        let s = String::from_utf8_lossy((*b).as_slice()).into_owned();
        ge_bytes_free(b);
        s
    }
}

#[test]
fn frozen_graphs_and_saved_models_import_with_ge_atc_options() {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut m = null_mut();
        let pb = c(&format!("{TF}small_cnn.pb"));
        ok(ge_import_tf(pb.as_ptr(), null(), &mut m));
        assert!(text(m).contains("\"graph.conv2d\""));
        ge_module_free(m);
        // ge-atc's --out_nodes: the function returns that node only.
        let o = options(&[("out_nodes", "probs:0")]);
        ok(ge_import_tf(pb.as_ptr(), o, &mut m));
        assert!(text(m).contains("probs"), "{}", text(m));
        ge_module_free(m);
        ge_compile_options_free(o);
        // The same bytes import from memory.
        let bytes = std::fs::read(format!("{TF}small_cnn.pb")).unwrap();
        m = null_mut();
        ok(ge_import_tf_bytes(
            bytes.as_ptr(),
            bytes.len(),
            null(),
            &mut m,
        ));
        assert!(text(m).contains("\"graph.conv2d\""));
        ge_module_free(m);
        // A SavedModel folder, by its signature.
        let sm = c(&format!("{TF}ops/ResourceGather/saved_model"));
        let o = options(&[("signature", "serving_default")]);
        m = null_mut();
        ok(ge_import_tf(sm.as_ptr(), o, &mut m));
        assert!(text(m).contains("graph.gather"), "{}", text(m));
        ge_module_free(m);
        ge_compile_options_free(o);
    }
}

#[test]
fn bad_tensorflow_imports_are_errors() {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut m = null_mut();
        fails(
            ge_import_tf(c("/nonexistent.pb").as_ptr(), null(), &mut m),
            GE_ERROR_IO,
            &["/nonexistent.pb"],
        );
        let junk = b"\xff\xff\xff not a graph";
        fails(
            ge_import_tf_bytes(junk.as_ptr(), junk.len(), null(), &mut m),
            GE_ERROR_IMPORT,
            &["GraphDef"],
        );
        let pb = c(&format!("{TF}small_cnn.pb"));
        let o = options(&[("out_nodes", "nope:0")]);
        fails(
            ge_import_tf(pb.as_ptr(), o, &mut m),
            GE_ERROR_IMPORT,
            &["nope"],
        );
        ge_compile_options_free(o);
        // ge-atc's own checks of the flags' syntax.
        let o = options(&[("input_shape", "input")]);
        fails(
            ge_import_tf(pb.as_ptr(), o, &mut m),
            GE_ERROR_INVALID_ARGUMENT,
            &["input"],
        );
        ge_compile_options_free(o);
        let sm = c(&format!("{TF}ops/ResourceGather/saved_model"));
        let o = options(&[("signature", "nope")]);
        fails(
            ge_import_tf(sm.as_ptr(), o, &mut m),
            GE_ERROR_IMPORT,
            &["nope"],
        );
        ge_compile_options_free(o);
        fails(
            ge_import_tf(null(), null(), &mut m),
            GE_ERROR_INVALID_ARGUMENT,
            &["path"],
        );
        fails(
            ge_import_tf(pb.as_ptr(), null(), null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["out"],
        );
        assert!(m.is_null());
    }
}

#[test]
fn a_traced_run_records_every_task() {
    let (model, s) = model_and_session();
    let x = [1.0f32, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0];
    let d = desc(null(), &[2, 4], &x);
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut plain = null_mut();
        ok(ge_session_run(s, &d, 1, &mut plain));
        let mut traced = null_mut();
        ok(ge_session_run_traced(s, &d, 1, &mut traced));
        // Same outputs.
        let mut a = std::mem::zeroed::<ge_tensor_desc>();
        let mut b = std::mem::zeroed::<ge_tensor_desc>();
        ok(ge_outputs_get(plain, 0, &mut a));
        ok(ge_outputs_get(traced, 0, &mut b));
        let bytes = |t: &ge_tensor_desc| std::slice::from_raw_parts(t.data.cast::<u8>(), t.size);
        assert_eq!(bytes(&a), bytes(&b));
        // An untraced run has no records, and says so when asked for them.
        assert_eq!(ge_outputs_trace_count(plain), 0);
        let mut e = std::mem::zeroed::<ge_trace_event>();
        fails(
            ge_outputs_trace_event(plain, 0, &mut e),
            GE_ERROR_INVALID_ARGUMENT,
            &["not traced", "ge_session_run_traced"],
        );
        let n = ge_outputs_trace_count(traced);
        assert!(n > 0);
        let mut kernels = 0;
        for i in 0..n {
            ok(ge_outputs_trace_event(traced, i, &mut e));
            let name = CStr::from_ptr(e.name).to_str().unwrap();
            let engine = CStr::from_ptr(e.engine).to_str().unwrap();
            assert!(!name.is_empty() && !engine.is_empty());
            assert!(e.end_us >= e.start_us && e.start_us >= 0.0, "{e:?}");
            kernels += usize::from(engine.starts_with("AI"));
        }
        assert!(kernels > 0, "no kernel task among {n}");
        fails(
            ge_outputs_trace_event(traced, n, &mut e),
            GE_ERROR_INVALID_ARGUMENT,
            &["out of range", &format!("{n} records")],
        );
        // The JSON ge-run --trace writes: one "X" slice per record.
        let mut json = null_mut();
        ok(ge_outputs_trace_json(traced, &mut json));
        let j = std::str::from_utf8((*json).as_slice()).unwrap();
        assert!(j.contains("\"traceEvents\""));
        assert_eq!(j.matches("\"ph\": \"X\"").count(), n, "{j}");
        ge_bytes_free(json);
        fails(
            ge_outputs_trace_json(plain, &mut json),
            GE_ERROR_INVALID_ARGUMENT,
            &["not traced"],
        );
        fails(
            ge_outputs_trace_json(null(), &mut json),
            GE_ERROR_INVALID_ARGUMENT,
            &["outputs"],
        );
        assert_eq!(ge_outputs_trace_count(null()), 0);
        // Bad inputs fail as in ge_session_run.
        let bad = desc(null(), &[2, 5], &[0.0; 10]);
        let mut none = null_mut();
        fails(
            ge_session_run_traced(s, &bad, 1, &mut none),
            GE_ERROR_RUN,
            &["dim 1 must be 4"],
        );
        ge_outputs_free(plain);
        ge_outputs_free(traced);
        ge_session_free(s);
        ge_model_free(model);
    }
}
