//! The API's error paths, called as C calls them: every bad argument is a
//! status with a message, never a crash.

use crate::bytes::*;
use crate::compile::*;
use crate::dtype::*;
use crate::es::*;
use crate::es_ops::*;
use crate::module::*;
use crate::runtime::*;
use crate::status::*;
use std::ffi::{c_char, CStr};
use std::ptr::{null, null_mut};

pub(crate) fn c(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).unwrap()
}

#[track_caller]
pub(crate) fn ok(st: ge_status) {
    assert_eq!(st, GE_OK, "{}", last_error());
}

/// `st` is `want` and the message mentions every piece of `says`.
#[track_caller]
pub(crate) fn fails(st: ge_status, want: ge_status, says: &[&str]) {
    let msg = last_error();
    assert_eq!(st, want, "status of a call that said: {msg}");
    for s in says {
        assert!(msg.contains(s), "'{msg}' does not mention '{s}'");
    }
}

/// A graph `y = relu(x * s)` over `x: tensor<Bx4xf32>`, compiled to `.om` bytes.
fn small_model() -> Vec<u8> {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut g = null_mut();
        ok(ge_graph_new(c("main").as_ptr(), &mut g));
        ok(ge_graph_symbol_bound(g, c("B").as_ptr(), 4));
        let (mut x, mut s, mut y) = Default::default();
        ok(ge_graph_input(
            g,
            c("x").as_ptr(),
            c("tensor<Bx4xf32>").as_ptr(),
            &mut x,
        ));
        let sv = [1.0f32, -2.0, 3.0, 0.5];
        let shape = [4i64];
        ok(ge_graph_constant(
            g,
            GE_DTYPE_F32,
            shape.as_ptr(),
            1,
            sv.as_ptr().cast(),
            16,
            &mut s,
        ));
        ok(ge_es_mul(g, x, s, &mut y));
        ok(ge_es_relu(g, y, &mut y));
        let names = [c("y")];
        let np = [names[0].as_ptr()];
        ok(ge_graph_output(g, &y, np.as_ptr(), 1));
        let mut m = null_mut();
        ok(ge_graph_finish(g, &mut m));
        ge_graph_free(g);
        let mut opts = null_mut();
        ok(ge_compile_options_new(&mut opts));
        ok(ge_compile_options_set(
            opts,
            c("op_compiler_cache_mode").as_ptr(),
            c("disable").as_ptr(),
        ));
        let mut om = null_mut();
        ok(ge_compile_module(m, opts, null(), &mut om));
        let bytes = (*om).as_slice().to_vec();
        ge_bytes_free(om);
        ge_compile_options_free(opts);
        ge_module_free(m);
        bytes
    }
}

fn load(bytes: &[u8]) -> *mut ge_model {
    let mut m = null_mut();
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    ok(unsafe { ge_model_load_bytes(bytes.as_ptr(), bytes.len(), 1, &mut m) });
    m
}

/// The small model, loaded, and a session of it.
pub(crate) fn model_and_session() -> (*mut ge_model, *mut ge_session) {
    let model = load(&small_model());
    let mut s = null_mut();
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    ok(unsafe { ge_session_new(model, &mut s) });
    (model, s)
}

pub(crate) fn desc(name: *const c_char, shape: &[i64], data: &[f32]) -> ge_tensor_desc {
    ge_tensor_desc {
        name,
        dtype: GE_DTYPE_F32,
        shape: shape.as_ptr(),
        rank: shape.len(),
        data: data.as_ptr().cast(),
        size: std::mem::size_of_val(data),
    }
}

#[test]
fn builds_compiles_and_runs_by_name() {
    let model = load(&small_model());
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        assert_eq!(ge_model_num_inputs(model), 1);
        assert_eq!(
            CStr::from_ptr(ge_model_input_name(model, 0)).to_str(),
            Ok("x")
        );
        assert_eq!(
            CStr::from_ptr(ge_model_output_type(model, 0)).to_str(),
            Ok("tensor<Bx4xf32>")
        );
        let mut s = null_mut();
        ok(ge_session_new(model, &mut s));
        let x = [1.0f32, 1.0, 1.0, 1.0, -1.0, 2.0, 0.5, 4.0];
        let name = c("x");
        let d = desc(name.as_ptr(), &[2, 4], &x);
        let mut out = null_mut();
        ok(ge_session_run(s, &d, 1, &mut out));
        assert_eq!(ge_outputs_count(out), 1);
        let mut y = std::mem::zeroed::<ge_tensor_desc>();
        ok(ge_outputs_find(out, c("y").as_ptr(), &mut y));
        assert_eq!(std::slice::from_raw_parts(y.shape, y.rank), &[2, 4]);
        let v = std::slice::from_raw_parts(y.data.cast::<f32>(), 8);
        assert_eq!(v, &[1.0, 0.0, 3.0, 0.5, 0.0, 0.0, 1.5, 2.0]);
        fails(
            ge_outputs_find(out, c("z").as_ptr(), &mut y),
            GE_ERROR_RUN,
            &["no output 'z'", "y"],
        );
        fails(
            ge_outputs_get(out, 1, &mut y),
            GE_ERROR_INVALID_ARGUMENT,
            &["out of range"],
        );
        ge_outputs_free(out);
        ge_session_free(s);
        ge_model_free(model);
    }
}

#[test]
fn runs_on_owned_tensors_without_copying_them() {
    let (model, s) = model_and_session();
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut t = null_mut();
        ok(ge_tensor_new(GE_DTYPE_F32, [2i64, 4].as_ptr(), 2, &mut t));
        assert_eq!(ge_tensor_size(t), 32);
        let data = ge_tensor_data(t);
        assert_eq!(data as usize % 64, 0);
        let x = [1.0f32, 1.0, 1.0, 1.0, -1.0, 2.0, 0.5, 4.0];
        std::ptr::copy_nonoverlapping(x.as_ptr(), data.cast::<f32>(), 8);
        let name = c("x");
        let names = [name.as_ptr()];
        let mut out = null_mut();
        ok(ge_session_run_tensors(s, names.as_ptr(), &t, 1, &mut out));
        // The tensor has its buffer back: same address, same data.
        assert_eq!(ge_tensor_data(t), data);
        assert_eq!(std::slice::from_raw_parts(data.cast::<f32>(), 8), &x);
        let mut y = std::mem::zeroed::<ge_tensor_desc>();
        ok(ge_outputs_get(out, 0, &mut y));
        let v = std::slice::from_raw_parts(y.data.cast::<f32>(), 8);
        assert_eq!(v, &[1.0, 0.0, 3.0, 0.5, 0.0, 0.0, 1.5, 2.0]);
        ge_outputs_free(out);
        // By position, and the errors.
        ok(ge_session_run_tensors(s, null(), &t, 1, &mut out));
        ge_outputs_free(out);
        let bad = c("q");
        fails(
            ge_session_run_tensors(s, [bad.as_ptr()].as_ptr(), &t, 1, &mut out),
            GE_ERROR_RUN,
            &["no input 'q'", "x"],
        );
        fails(
            ge_session_run_tensors(s, null(), [t, t].as_ptr(), 2, &mut out),
            GE_ERROR_RUN,
            &["2 inputs given"],
        );
        fails(
            ge_session_run_tensors(s, null(), null(), 0, &mut out),
            GE_ERROR_RUN,
            &["0 inputs given"],
        );
        fails(
            ge_session_run_tensors(s, null(), [null_mut()].as_ptr(), 1, &mut out),
            GE_ERROR_INVALID_ARGUMENT,
            &["'inputs[0]' is NULL"],
        );
        let mut small = null_mut();
        ok(ge_tensor_new(GE_DTYPE_F32, [3i64].as_ptr(), 1, &mut small));
        fails(
            ge_session_run_tensors(s, null(), &small, 1, &mut out),
            GE_ERROR_RUN,
            &["shape [3]"],
        );
        fails(
            ge_tensor_new(GE_DTYPE_F32, [-1i64].as_ptr(), 1, &mut small),
            GE_ERROR_INVALID_ARGUMENT,
            &["negative"],
        );
        fails(
            ge_tensor_new(GE_DTYPE_F32, [i64::MAX, 4].as_ptr(), 2, &mut small),
            GE_ERROR_INVALID_ARGUMENT,
            &["too large"],
        );
        assert!(ge_tensor_data(null_mut()).is_null());
        ge_tensor_free(small);
        ge_tensor_free(t);
        ge_tensor_free(null_mut());
        ge_session_free(s);
        ge_model_free(model);
    }
}

#[test]
fn one_session_runs_on_several_threads() {
    let (model, s) = model_and_session();
    // Raw pointers are not Send: the threads get the address.
    let addr = s as usize;
    let sums: Vec<f32> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|k| {
                // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
                sc.spawn(move || unsafe {
                    let x = [k as f32; 4];
                    let name = c("x");
                    let d = desc(name.as_ptr(), &[1, 4], &x);
                    let mut out = null_mut();
                    ok(ge_session_run(addr as *const ge_session, &d, 1, &mut out));
                    let mut y = std::mem::zeroed::<ge_tensor_desc>();
                    ok(ge_outputs_get(out, 0, &mut y));
                    let sum = std::slice::from_raw_parts(y.data.cast::<f32>(), 4)
                        .iter()
                        .sum();
                    ge_outputs_free(out);
                    sum
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // relu(k * [1, -2, 3, 0.5]) sums to 4.5 k.
    assert_eq!(sums, vec![0.0, 4.5, 9.0, 13.5]);
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        ge_session_free(s);
        ge_model_free(model);
    }
}

#[test]
fn null_handles_and_outputs_are_errors() {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut t = ge_es_tensor::default();
        fails(
            ge_graph_input(
                null_mut(),
                c("x").as_ptr(),
                c("tensor<2xf32>").as_ptr(),
                &mut t,
            ),
            GE_ERROR_INVALID_ARGUMENT,
            &["ge_graph_input", "'graph' is NULL"],
        );
        fails(
            ge_es_relu(null_mut(), t, &mut t),
            GE_ERROR_INVALID_ARGUMENT,
            &["ge_es_relu", "'graph' is NULL"],
        );
        let mut out = null_mut();
        fails(
            ge_session_run(null(), null(), 0, &mut out),
            GE_ERROR_INVALID_ARGUMENT,
            &["'session' is NULL"],
        );
        fails(
            ge_session_new(null(), &mut null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["'model' is NULL"],
        );
        fails(
            ge_graph_new(c("f").as_ptr(), null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["output pointer 'out' is NULL"],
        );
        fails(
            ge_graph_new(null(), &mut null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["'name' is NULL"],
        );
        fails(
            ge_module_parse(null(), &mut null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["'text' is NULL"],
        );
        fails(
            ge_compile_module(null(), null(), null(), &mut null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["'module' is NULL"],
        );
        // Getters give their neutral value (and a message) for NULL.
        assert_eq!(ge_model_num_inputs(null()), 0);
        assert!(ge_model_input_name(null(), 0).is_null());
        assert_eq!(ge_outputs_count(null()), 0);
        assert!(ge_bytes_data(null()).is_null());
        assert_eq!(ge_bytes_size(null()), 0);
        // Freeing NULL does nothing.
        ge_graph_free(null_mut());
        ge_module_free(null_mut());
        ge_model_free(null_mut());
        ge_session_free(null_mut());
        ge_outputs_free(null_mut());
        ge_bytes_free(null_mut());
        ge_compile_options_free(null_mut());
    }
}

#[test]
fn bad_model_bytes_and_files_fail_to_load() {
    let mut m = null_mut();
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let junk = b"definitely not an om file";
        fails(
            ge_model_load_bytes(junk.as_ptr(), junk.len(), 1, &mut m),
            GE_ERROR_LOAD,
            &["ge_model_load_bytes"],
        );
        fails(
            ge_model_load_bytes(null(), 0, 1, &mut m),
            GE_ERROR_LOAD,
            &[],
        );
        fails(
            ge_model_load_bytes(null(), 8, 1, &mut m),
            GE_ERROR_INVALID_ARGUMENT,
            &["'data' is NULL"],
        );
        // A real model cut short.
        let good = small_model();
        let cut = &good[..good.len() / 2];
        fails(
            ge_model_load_bytes(cut.as_ptr(), cut.len(), 1, &mut m),
            GE_ERROR_LOAD,
            &[],
        );
        fails(
            ge_model_load_file(c("/nonexistent/model.om").as_ptr(), 1, &mut m),
            GE_ERROR_LOAD,
            &["/nonexistent/model.om"],
        );
    }
    assert!(m.is_null());
}

#[test]
fn wrong_input_names_shapes_and_sizes_are_errors() {
    let (model, s) = model_and_session();
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let x = [0.0f32; 8];
        let mut out = null_mut();
        let (xn, yn) = (c("x"), c("y"));
        // Unknown name: the message lists the model's inputs.
        let d = desc(yn.as_ptr(), &[2, 4], &x);
        fails(
            ge_session_run(s, &d, 1, &mut out),
            GE_ERROR_RUN,
            &["no input 'y'", "x"],
        );
        // Repeated and missing inputs.
        let d = desc(xn.as_ptr(), &[2, 4], &x);
        fails(
            ge_session_run(s, [d, d].as_ptr(), 2, &mut out),
            GE_ERROR_RUN,
            &["x"],
        );
        fails(ge_session_run(s, null(), 0, &mut out), GE_ERROR_RUN, &[]);
        // Wrong rank / dims for the model.
        let d = desc(xn.as_ptr(), &[8], &x);
        fails(
            ge_session_run(s, &d, 1, &mut out),
            GE_ERROR_RUN,
            &["shape [8]"],
        );
        let d = desc(xn.as_ptr(), &[4, 2], &x);
        fails(ge_session_run(s, &d, 1, &mut out), GE_ERROR_RUN, &[]);
        // A size that does not match the shape; a negative dim; a bad dtype.
        let mut d = desc(xn.as_ptr(), &[2, 4], &x);
        d.size = 12;
        fails(
            ge_session_run(s, &d, 1, &mut out),
            GE_ERROR_INVALID_ARGUMENT,
            &["12 bytes given"],
        );
        let d = desc(xn.as_ptr(), &[-2, 4], &x);
        fails(
            ge_session_run(s, &d, 1, &mut out),
            GE_ERROR_INVALID_ARGUMENT,
            &["negative"],
        );
        let mut d = desc(xn.as_ptr(), &[2, 4], &x);
        d.dtype = 99;
        fails(
            ge_session_run(s, &d, 1, &mut out),
            GE_ERROR_INVALID_ARGUMENT,
            &["99 is not a GE_DTYPE"],
        );
        d.dtype = GE_DTYPE_I32;
        fails(ge_session_run(s, &d, 1, &mut out), GE_ERROR_RUN, &[]);
        // Named and unnamed inputs mixed.
        let named = desc(xn.as_ptr(), &[2, 4], &x);
        let unnamed = desc(null(), &[2, 4], &x);
        fails(
            ge_session_run(s, [named, unnamed].as_ptr(), 2, &mut out),
            GE_ERROR_INVALID_ARGUMENT,
            &["no name"],
        );
        // By position works.
        ok(ge_session_run(s, &unnamed, 1, &mut out));
        ge_outputs_free(out);
        ge_session_free(s);
        ge_model_free(model);
    }
}

#[test]
fn tensors_are_checked_against_their_graph() {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let (mut g1, mut g2) = (null_mut(), null_mut());
        ok(ge_graph_new(c("a").as_ptr(), &mut g1));
        ok(ge_graph_new(c("b").as_ptr(), &mut g2));
        let (mut x1, mut x2, mut y) = Default::default();
        let ty = c("tensor<2x3xf32>");
        ok(ge_graph_input(g1, c("x").as_ptr(), ty.as_ptr(), &mut x1));
        ok(ge_graph_input(g2, c("x").as_ptr(), ty.as_ptr(), &mut x2));
        fails(
            ge_es_add(g1, x1, x2, &mut y),
            GE_ERROR_INVALID_ARGUMENT,
            &["'rhs' is a tensor of another graph"],
        );
        let forged = ge_es_tensor {
            graph: x1.graph,
            index: 1000,
        };
        fails(
            ge_es_relu(g1, forged, &mut y),
            GE_ERROR_INVALID_ARGUMENT,
            &["not a tensor of this graph"],
        );
        fails(
            ge_es_relu(g1, ge_es_tensor::default(), &mut y),
            GE_ERROR_INVALID_ARGUMENT,
            &["null tensor"],
        );
        // A duplicate input name, a bad type, an output pointer of NULL.
        fails(
            ge_graph_input(g1, c("x").as_ptr(), ty.as_ptr(), &mut y),
            GE_ERROR_INVALID_ARGUMENT,
            &["already"],
        );
        fails(
            ge_graph_input(g1, c("z").as_ptr(), c("tensor<2xf7>").as_ptr(), &mut y),
            GE_ERROR_PARSE,
            &["invalid type"],
        );
        fails(
            ge_es_relu(g1, x1, null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["'out' is NULL"],
        );
        // Shape errors of the op come from its verifier.
        fails(
            ge_es_matmul(g1, x1, x1, &mut y),
            GE_ERROR_BUILD,
            &["graph.matmul", "contracted dims differ"],
        );
        // Required attributes: a required array given as NULL with a length.
        fails(
            ge_es_transpose(g1, x1, null(), 2, &mut y),
            GE_ERROR_INVALID_ARGUMENT,
            &["'perm' is NULL"],
        );
        // After finish nothing builds.
        ok(ge_es_relu(g1, x1, &mut y));
        ok(ge_graph_output(g1, &y, null(), 1));
        fails(
            ge_es_relu(g1, x1, &mut y),
            GE_ERROR_BUILD,
            &["already returned"],
        );
        let mut m = null_mut();
        ok(ge_graph_finish(g1, &mut m));
        fails(ge_es_relu(g1, x1, &mut y), GE_ERROR_BUILD, &["finished"]);
        fails(ge_graph_finish(g1, &mut m), GE_ERROR_BUILD, &["finished"]);
        // A graph without outputs does not finish.
        let mut m2 = null_mut();
        fails(
            ge_graph_finish(g2, &mut m2),
            GE_ERROR_BUILD,
            &["no outputs"],
        );
        // ... and stays usable.
        ok(ge_graph_output(g2, &x2, null(), 1));
        ok(ge_graph_finish(g2, &mut m2));
        ge_module_free(m2);
        ge_module_free(m);
        ge_graph_free(g1);
        ge_graph_free(g2);
    }
}

#[test]
fn generic_op_by_name() {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut g = null_mut();
        ok(ge_graph_new(c("f").as_ptr(), &mut g));
        let mut x = ge_es_tensor::default();
        ok(ge_graph_input(
            g,
            c("x").as_ptr(),
            c("tensor<2x6xf32>").as_ptr(),
            &mut x,
        ));
        let mut outs = [ge_es_tensor::default(); 4];
        let mut n = 0;
        let op = |name: &str,
                  ins: &[ge_es_tensor],
                  attrs: Option<&str>,
                  outs: &mut [ge_es_tensor],
                  n: &mut usize| {
            let a = attrs.map(c);
            ge_es_op(
                g,
                c(name).as_ptr(),
                ins.as_ptr(),
                ins.len(),
                a.as_ref().map_or(null(), |a| a.as_ptr()),
                outs.as_mut_ptr(),
                outs.len(),
                n,
            )
        };
        // A variadic result.
        ok(op(
            "data.split",
            &[x],
            Some("{axis = 1 : i64, num_outputs = 3 : i64}"),
            &mut outs,
            &mut n,
        ));
        assert_eq!(n, 3);
        let mut t = null_mut();
        ok(ge_graph_tensor_type(g, outs[2], &mut t));
        assert_eq!((*t).as_slice(), b"tensor<2x2xf32>");
        ge_bytes_free(t);
        // A variadic operand.
        let parts = [outs[0], outs[1], outs[2]];
        ok(op(
            "data.concat",
            &parts,
            Some("{axis = 0 : i64}"),
            &mut outs,
            &mut n,
        ));
        assert_eq!(n, 1);
        // Too few result slots: the count is still given.
        ok(op(
            "data.split",
            &[x],
            Some("{axis = 1 : i64, num_outputs = 2 : i64}"),
            &mut outs,
            &mut n,
        ));
        fails(
            op(
                "data.split",
                &[x],
                Some("{axis = 1 : i64, num_outputs = 6 : i64}"),
                &mut outs,
                &mut n,
            ),
            GE_ERROR_INVALID_ARGUMENT,
            &["holds 4"],
        );
        assert_eq!(n, 6);
        fails(
            op("graph.nope", &[x], None, &mut outs, &mut n),
            GE_ERROR_INVALID_ARGUMENT,
            &["not an op"],
        );
        fails(
            op("graph.return", &[x], None, &mut outs, &mut n),
            GE_ERROR_INVALID_ARGUMENT,
            &["cannot be built with ES"],
        );
        fails(
            op("graph.relu", &[x, x], None, &mut outs, &mut n),
            GE_ERROR_INVALID_ARGUMENT,
            &["2 operands given"],
        );
        fails(
            op("graph.add", &[x], None, &mut outs, &mut n),
            GE_ERROR_INVALID_ARGUMENT,
            &["'rhs' is missing"],
        );
        fails(
            op("graph.softmax", &[x], Some("{axis = "), &mut outs, &mut n),
            GE_ERROR_PARSE,
            &["invalid attribute"],
        );
        fails(
            op("graph.softmax", &[x], Some("[1]"), &mut outs, &mut n),
            GE_ERROR_INVALID_ARGUMENT,
            &["dictionary"],
        );
        fails(
            op(
                "graph.softmax",
                &[x],
                Some("{axis = \"x\"}"),
                &mut outs,
                &mut n,
            ),
            GE_ERROR_BUILD,
            &["axis"],
        );
        ge_graph_free(g);
    }
}

#[test]
fn compile_options_are_ge_atc_flags() {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut o = null_mut();
        ok(ge_compile_options_new(&mut o));
        ok(ge_compile_options_set(
            o,
            c("soc_version").as_ptr(),
            c("Ascend310P").as_ptr(),
        ));
        ok(ge_compile_options_set(
            o,
            c("--precision_mode").as_ptr(),
            c("force_fp16").as_ptr(),
        ));
        fails(
            ge_compile_options_set(o, c("no_such_option").as_ptr(), c("1").as_ptr()),
            GE_ERROR_INVALID_ARGUMENT,
            &["no_such_option"],
        );
        fails(
            ge_compile_options_set(o, c("precision_mode").as_ptr(), c("fastest").as_ptr()),
            GE_ERROR_INVALID_ARGUMENT,
            &["fastest"],
        );
        fails(
            ge_compile_options_set(o, c("output").as_ptr(), c("x").as_ptr()),
            GE_ERROR_INVALID_ARGUMENT,
            &["set by the compile function"],
        );
        // A SoC ge-atc does not know fails the compile with ge-atc's message.
        ok(ge_compile_options_set(
            o,
            c("soc_version").as_ptr(),
            c("Ascend000").as_ptr(),
        ));
        let air = c("graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n");
        let mut m = null_mut();
        ok(ge_module_parse(air.as_ptr(), &mut m));
        let mut om = null_mut();
        fails(
            ge_compile_module(m, o, null(), &mut om),
            GE_ERROR_COMPILE,
            &["Ascend000"],
        );
        fails(
            ge_compile_module(m, null(), null(), null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &["nowhere"],
        );
        fails(
            ge_compile_module(m, null(), c("/tmp/x.bin").as_ptr(), null_mut()),
            GE_ERROR_INVALID_ARGUMENT,
            &[".om"],
        );
        fails(
            ge_compile_file(c("/nonexistent.onnx").as_ptr(), null(), null(), &mut om),
            GE_ERROR_COMPILE,
            &["framework"],
        );
        assert!(om.is_null());
        ge_module_free(m);
        ge_compile_options_free(o);
    }
}

#[test]
fn bad_text_and_onnx_are_errors() {
    // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
    unsafe {
        let mut m = null_mut();
        let bad = c("graph.func @f(%x: tensor<4xf7>) -> tensor<4xf32>");
        fails(
            ge_module_parse(bad.as_ptr(), &mut m),
            GE_ERROR_PARSE,
            &["<ge_module_parse>:1:"],
        );
        let junk = b"\x08\x07not onnx";
        fails(
            ge_import_onnx_bytes(junk.as_ptr(), junk.len(), &mut m),
            GE_ERROR_IMPORT,
            &[],
        );
        fails(
            ge_import_onnx_file(c("/nonexistent.onnx").as_ptr(), &mut m),
            GE_ERROR_IO,
            &["/nonexistent.onnx"],
        );
        let not_utf8 = [0xffu8, 0xfe, 0];
        fails(
            ge_module_parse(not_utf8.as_ptr().cast(), &mut m),
            GE_ERROR_INVALID_ARGUMENT,
            &["not UTF-8"],
        );
        assert!(m.is_null());
        // From bytes: a model imports; one with external data cannot find it.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/onnx/");
        let cnn = std::fs::read(format!("{dir}small_cnn.onnx")).unwrap();
        ok(ge_import_onnx_bytes(cnn.as_ptr(), cnn.len(), &mut m));
        ge_module_free(m);
        m = null_mut();
        let ext = std::fs::read(format!("{dir}external_data.onnx")).unwrap();
        fails(
            ge_import_onnx_bytes(ext.as_ptr(), ext.len(), &mut m),
            GE_ERROR_IMPORT,
            &["external_data.bin"],
        );
        // A real model imports.
        let path = c(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/onnx/small_cnn.onnx"
        ));
        ok(ge_import_onnx_file(path.as_ptr(), &mut m));
        let mut text = null_mut();
        ok(ge_module_print(m, true, &mut text));
        assert!(std::str::from_utf8((*text).as_slice())
            .unwrap()
            .contains("\"graph.conv2d\""));
        ge_bytes_free(text);
        ge_module_free(m);
    }
}

#[test]
fn a_panic_is_an_internal_error() {
    let st = entry("ge_test", || panic!("boom"));
    fails(
        st,
        GE_ERROR_INTERNAL,
        &["ge_test", "internal error", "boom"],
    );
    let v = entry_value("ge_test", 7usize, || panic!("again"));
    assert_eq!(v, 7);
}

#[test]
fn status_names_versions_and_dtypes() {
    let name = |s| {
        // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
        unsafe { CStr::from_ptr(ge_status_message(s)) }
            .to_str()
            .unwrap()
    };
    assert_eq!(name(GE_OK), "GE_OK");
    assert_eq!(name(GE_ERROR_RUN), "GE_ERROR_RUN");
    assert_eq!(name(12345), "GE_ERROR_UNKNOWN");
    assert_eq!(
        crate::ge_api_version(),
        (crate::GE_API_VERSION_MAJOR << 16) | crate::GE_API_VERSION_MINOR
    );
    assert_eq!(ge_dtype_size(GE_DTYPE_BF16), 2);
    assert_eq!(ge_dtype_size(0), 0);
    assert_eq!(
        // SAFETY: every pointer passed is a live local, NULL on purpose, or a handle made above and not yet freed.
        unsafe { CStr::from_ptr(ge_dtype_name(GE_DTYPE_BOOL)) }.to_str(),
        Ok("i1")
    );
    assert!(ge_dtype_name(-1).is_null());
}
