//! Loading and running compiled models, as ACL does (`aclmdlLoadFromFile`,
//! `aclmdlExecute`): a `ge_model` is loaded once and shared by any number
//! of `ge_session`s and threads; a run takes tensor descriptors by input
//! name and returns the outputs, read in place.

use crate::args::{self, Out};
use crate::bytes::ge_bytes;
use crate::dtype::{from_dtype, ge_dtype, shape_bytes, to_dtype};
use crate::status::{entry, entry_value, ge_status, Error, Result, GE_ERROR_LOAD, GE_ERROR_RUN};
use ge_runtime::{HostTensor, LoadOptions, Model, RunOptions, Session, Trace};
use std::ffi::{c_char, c_void, CString};

/// A tensor as C sees it: an input of `ge_session_run`, or an output read
/// with `ge_outputs_get` (then every pointer points into the outputs and
/// stays valid until `ge_outputs_free`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ge_tensor_desc {
    /// The input's name in the model (NULL for every input: by position).
    pub name: *const c_char,
    /// A `GE_DTYPE_*` constant.
    pub dtype: ge_dtype,
    /// `rank` dims.
    pub shape: *const i64,
    pub rank: usize,
    /// Little-endian elements, row-major, `size` bytes
    /// (`ge_dtype_size(dtype)` times the product of the dims).
    pub data: *const c_void,
    pub size: usize,
}

/// Names and types of a model's inputs or outputs, as C strings.
struct Io {
    names: Vec<CString>,
    types: Vec<CString>,
}

impl Io {
    fn new(list: Vec<(String, String)>) -> Io {
        let c = |s: String| CString::new(s.replace('\0', "")).unwrap_or_default();
        let (names, types) = list.into_iter().map(|(n, t)| (c(n), c(t))).unzip();
        Io { names, types }
    }
}

/// A loaded model. Thread-safe: sessions and runs may use it from any
/// thread; it must outlive its sessions.
pub struct ge_model {
    model: Model,
    inputs: Io,
    outputs: Io,
}

/// A session runs a model; `ge_session_run` may be called from several
/// threads at once on one session.
pub struct ge_session {
    session: Session,
    model: Model,
}

/// The outputs of one run, in the model's output order (and its trace, for
/// `ge_session_run_traced`).
pub struct ge_outputs {
    names: Vec<CString>,
    tensors: Vec<HostTensor>,
    shapes: Vec<Vec<i64>>,
    trace: Option<TraceRecord>,
}

/// A run's trace with each task's name and engine as C strings.
struct TraceRecord {
    trace: Trace,
    names: Vec<CString>,
    engines: Vec<CString>,
}

impl TraceRecord {
    fn new(trace: Trace) -> TraceRecord {
        let c =
            |s: Option<&str>| CString::new(s.unwrap_or("?").replace('\0', "")).unwrap_or_default();
        let (names, engines) = trace
            .events
            .iter()
            .map(|e| (c(trace.name(e.task)), c(trace.engine(e.task))))
            .unzip();
        TraceRecord {
            trace,
            names,
            engines,
        }
    }
}

/// One executed task of a traced run (`ge_outputs_trace_event`); the strings
/// stay valid until `ge_outputs_free`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ge_trace_event {
    /// The kernel's name, or `memcpy`, `record e3`, `wait e3`, ...
    pub name: *const c_char,
    /// The engine it ran on: `AICore`, `AICPU`, `DMA`, `event`, `control`.
    pub engine: *const c_char,
    /// Its index in the model's task list.
    pub task: usize,
    pub stream: usize,
    /// Microseconds since the run started.
    pub start_us: f64,
    pub end_us: f64,
}

// What ge.h promises: models and sessions may be used from any thread.
const _: fn() = || {
    fn thread_safe<T: Send + Sync>() {}
    thread_safe::<ge_model>();
    thread_safe::<ge_session>();
};

fn load_options(threads: u32) -> LoadOptions {
    LoadOptions {
        threads: (threads as usize).max(1),
        ..Default::default()
    }
}

fn new_model(model: Model) -> *mut ge_model {
    Box::into_raw(Box::new(ge_model {
        inputs: Io::new(model.inputs()),
        outputs: Io::new(model.outputs()),
        model,
    }))
}

/// Load an `.om` file (memory-mapped; weights used in place) with `threads`
/// compute threads (0: 1).
#[no_mangle]
pub unsafe extern "C" fn ge_model_load_file(
    path: *const c_char,
    threads: u32,
    out: *mut *mut ge_model,
) -> ge_status {
    entry("ge_model_load_file", || {
        // SAFETY: the ge.h contract: a C string and a writable pointer.
        let (path, out) = unsafe { (args::cstr(path, "path")?, Out::new(out, "out")?) };
        let m = Model::load_with(path, &load_options(threads))
            .map_err(|e| Error::new(GE_ERROR_LOAD, e.to_string()))?;
        out.set(new_model(m));
        Ok(())
    })
}

/// Load an `.om` image of `size` bytes (copied once; the caller's buffer
/// may be freed afterwards).
#[no_mangle]
pub unsafe extern "C" fn ge_model_load_bytes(
    data: *const u8,
    size: usize,
    threads: u32,
    out: *mut *mut ge_model,
) -> ge_status {
    entry("ge_model_load_bytes", || {
        // SAFETY: the ge.h contract: `size` readable bytes and a writable pointer.
        let (bytes, out) = unsafe { (args::slice(data, size, "data")?, Out::new(out, "out")?) };
        let m = Model::from_bytes(bytes, &load_options(threads))
            .map_err(|e| Error::new(GE_ERROR_LOAD, e.to_string()))?;
        out.set(new_model(m));
        Ok(())
    })
}

/// Free a model (NULL is ignored). Its sessions must be freed first.
#[no_mangle]
pub unsafe extern "C" fn ge_model_free(model: *mut ge_model) {
    entry("ge_model_free", || {
        // SAFETY: NULL or a live model, not used afterwards.
        unsafe { args::free(model) };
        Ok(())
    });
}

fn io_of<'a>(model: *const ge_model, outputs: bool) -> Result<&'a Io> {
    // SAFETY: NULL or a live model (the ge.h contract); the reference is
    // used only while the caller's call runs.
    let m = unsafe { args::handle(model, "model")? };
    Ok(if outputs { &m.outputs } else { &m.inputs })
}

fn io_str(func: &str, model: *const ge_model, outputs: bool, i: usize, ty: bool) -> *const c_char {
    entry_value(func, std::ptr::null(), || {
        let io = io_of(model, outputs)?;
        let list = if ty { &io.types } else { &io.names };
        list.get(i).map(|s| s.as_ptr()).ok_or_else(|| {
            Error::arg(format!(
                "index {i} is out of range (the model has {})",
                list.len()
            ))
        })
    })
}

/// Number of inputs (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn ge_model_num_inputs(model: *const ge_model) -> usize {
    entry_value("ge_model_num_inputs", 0, || {
        Ok(io_of(model, false)?.names.len())
    })
}

/// Number of outputs (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn ge_model_num_outputs(model: *const ge_model) -> usize {
    entry_value("ge_model_num_outputs", 0, || {
        Ok(io_of(model, true)?.names.len())
    })
}

/// Name of input `i` (valid while the model lives); NULL when out of range.
#[no_mangle]
pub unsafe extern "C" fn ge_model_input_name(model: *const ge_model, i: usize) -> *const c_char {
    io_str("ge_model_input_name", model, false, i, false)
}

/// Type of input `i` in `.air` syntax (`"tensor<Bx4xf32>"`; a symbolic dim
/// is bound from the input's shape at run time); NULL when out of range.
#[no_mangle]
pub unsafe extern "C" fn ge_model_input_type(model: *const ge_model, i: usize) -> *const c_char {
    io_str("ge_model_input_type", model, false, i, true)
}

/// Name of output `i`; NULL when out of range.
#[no_mangle]
pub unsafe extern "C" fn ge_model_output_name(model: *const ge_model, i: usize) -> *const c_char {
    io_str("ge_model_output_name", model, true, i, false)
}

/// Type of output `i` in `.air` syntax; NULL when out of range.
#[no_mangle]
pub unsafe extern "C" fn ge_model_output_type(model: *const ge_model, i: usize) -> *const c_char {
    io_str("ge_model_output_type", model, true, i, true)
}

/// A new session of `model`.
#[no_mangle]
pub unsafe extern "C" fn ge_session_new(
    model: *const ge_model,
    out: *mut *mut ge_session,
) -> ge_status {
    entry("ge_session_new", || {
        // SAFETY: the ge.h contract: a live model and a writable pointer.
        let (m, out) = unsafe { (args::handle(model, "model")?, Out::new(out, "out")?) };
        out.set(Box::into_raw(Box::new(ge_session {
            session: m.model.session(),
            model: m.model.clone(),
        })));
        Ok(())
    })
}

/// Free a session (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn ge_session_free(session: *mut ge_session) {
    entry("ge_session_free", || {
        // SAFETY: NULL or a live session, not used afterwards.
        unsafe { args::free(session) };
        Ok(())
    });
}

/// A host tensor from a descriptor: over the caller's bytes (no copy) when
/// they are 8-byte aligned, else a copy.
///
/// # Safety
/// The descriptor's pointers are valid as `ge_tensor_desc` documents.
unsafe fn host_tensor(d: &ge_tensor_desc, what: &str) -> Result<HostTensor> {
    let dtype = to_dtype(d.dtype).map_err(|e| Error::arg(format!("{what}: {}", e.msg)))?;
    // SAFETY: forwarded contract.
    let shape = unsafe { args::slice(d.shape, d.rank, &format!("{what}.shape"))? };
    let (dims, want) =
        shape_bytes(shape, dtype).map_err(|e| Error::arg(format!("{what}: {}", e.msg)))?;
    if d.size != want {
        return Err(Error::arg(format!(
            "{what}: {} bytes given, but a {shape:?} {dtype} tensor has {want}",
            d.size
        )));
    }
    // SAFETY: forwarded contract: `size` readable bytes.
    let bytes = unsafe { args::slice(d.data.cast::<u8>(), d.size, &format!("{what}.data"))? };
    // Read in place when aligned (ge.h: the data is not written during the
    // call, which is as long as the tensor lives); else copied.
    // SAFETY: `bytes` is valid and unwritten for the whole call (the
    // contract above), and the tensor is dropped before the call returns.
    match unsafe { HostTensor::borrowed(dtype, &dims, bytes.as_ptr(), bytes.len()) } {
        Ok(t) => Ok(t),
        Err(_) => HostTensor::from_bytes(dtype, &dims, bytes)
            .map_err(|e| Error::arg(format!("{what}: {e}"))),
    }
}

/// A tensor whose memory ge owns: 64-byte aligned, filled by the caller
/// through `ge_tensor_data` and read by `ge_session_run_tensors` in place
/// (no copy). Not to be used by two calls at the same time.
pub struct ge_tensor {
    t: HostTensor,
}

/// A new zero-filled tensor of `dtype` and `shape` (`rank` dims).
#[no_mangle]
pub unsafe extern "C" fn ge_tensor_new(
    dtype: ge_dtype,
    shape: *const i64,
    rank: usize,
    out: *mut *mut ge_tensor,
) -> ge_status {
    entry("ge_tensor_new", || {
        // SAFETY: the ge.h contract: `rank` dims and a writable pointer.
        let (dims, out) = unsafe { (args::slice(shape, rank, "shape")?, Out::new(out, "out")?) };
        let dtype = to_dtype(dtype)?;
        let (us, bytes) = shape_bytes(dims, dtype)?;
        ge_ir::budget::check(Some(bytes as u64), &"the tensor").map_err(Error::arg)?;
        out.set(Box::into_raw(Box::new(ge_tensor {
            t: HostTensor::zeros(dtype, &us),
        })));
        Ok(())
    })
}

/// The tensor's bytes, writable (64-byte aligned; `ge_tensor_size` of them);
/// NULL for a NULL handle.
#[no_mangle]
pub unsafe extern "C" fn ge_tensor_data(tensor: *mut ge_tensor) -> *mut c_void {
    entry_value("ge_tensor_data", std::ptr::null_mut(), || {
        // SAFETY: NULL or a live tensor, used by this call only (the ge.h contract).
        let t = unsafe { args::handle_mut(tensor, "tensor")? };
        Ok(t.t.bytes_mut().as_mut_ptr().cast())
    })
}

/// The tensor's size in bytes (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn ge_tensor_size(tensor: *const ge_tensor) -> usize {
    entry_value("ge_tensor_size", 0, || {
        // SAFETY: NULL or a live tensor (the ge.h contract).
        Ok(unsafe { args::handle(tensor, "tensor")? }.t.bytes().len())
    })
}

/// Free a tensor (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn ge_tensor_free(tensor: *mut ge_tensor) {
    entry("ge_tensor_free", || {
        // SAFETY: NULL or a live tensor, not used afterwards.
        unsafe { args::free(tensor) };
        Ok(())
    });
}

/// Run on tensors ge owns, without copying them: `names[i]` names
/// `inputs[i]` (`names` NULL: by position). The tensors are lent to the run
/// and hold their data again when it returns. Outputs as `ge_session_run`.
#[no_mangle]
pub unsafe extern "C" fn ge_session_run_tensors(
    session: *const ge_session,
    names: *const *const c_char,
    inputs: *const *mut ge_tensor,
    num_inputs: usize,
    out: *mut *mut ge_outputs,
) -> ge_status {
    entry("ge_session_run_tensors", || {
        // SAFETY: the ge.h contract: a live session, `num_inputs` names
        // (or NULL) and tensor handles, a writable pointer.
        let (s, names, handles, out) = unsafe {
            (
                args::handle(session, "session")?,
                match names.is_null() {
                    true => None,
                    false => Some(args::strs(names, num_inputs, "names")?),
                },
                args::slice(inputs, num_inputs, "inputs")?,
                Out::new(out, "out")?,
            )
        };
        // The model's position of each given tensor.
        let n_model = s.model.inputs().len();
        let mut slot_of = Vec::with_capacity(handles.len());
        for i in 0..handles.len() {
            let slot = match &names {
                None => i,
                Some(ns) => s.model.input_index(ns[i]).ok_or_else(|| {
                    Error::new(
                        GE_ERROR_RUN,
                        format!(
                            "the model has no input '{}' (inputs: {})",
                            ns[i],
                            s.model.io_name_list(false)
                        ),
                    )
                })?,
            };
            if slot_of.contains(&slot) {
                return Err(Error::new(
                    GE_ERROR_RUN,
                    format!("input #{slot} is given twice"),
                ));
            }
            slot_of.push(slot);
        }
        if slot_of.len() != n_model {
            return Err(Error::new(
                GE_ERROR_RUN,
                format!(
                    "{} inputs given, the model takes {n_model} ({})",
                    slot_of.len(),
                    s.model.io_name_list(false)
                ),
            ));
        }
        let mut tensors: Vec<&mut ge_tensor> = Vec::with_capacity(handles.len());
        for (i, &h) in handles.iter().enumerate() {
            if handles[..i].contains(&h) {
                return Err(Error::arg(format!(
                    "inputs[{i}] is the same tensor as an earlier one"
                )));
            }
            // SAFETY: a live tensor used by this call only, distinct from the others (checked above).
            tensors.push(unsafe { args::handle_mut(h, &format!("inputs[{i}]"))? });
        }
        // Lend the buffers to the run in the model's order, then give them back.
        let mut ordered: Vec<HostTensor> = (0..n_model)
            .map(|_| HostTensor::zeros(ge_ir::DType::U8, &[0]))
            .collect();
        for (t, &slot) in tensors.iter_mut().zip(&slot_of) {
            std::mem::swap(&mut ordered[slot], &mut t.t);
        }
        let result = s.session.run(&ordered);
        for (t, &slot) in tensors.iter_mut().zip(&slot_of) {
            std::mem::swap(&mut ordered[slot], &mut t.t);
        }
        let outs = result.map_err(|e| Error::new(GE_ERROR_RUN, e.to_string()))?;
        out.set(new_outputs(&s.model, outs, None));
        Ok(())
    })
}

/// Run: `inputs` are the model's inputs by name in any order (or, with
/// every name NULL, by position); the outputs go to a new `ge_outputs`
/// (free it with `ge_outputs_free`). An unknown, missing or repeated name,
/// or a shape or dtype the model does not take, is an error. Input data
/// that is 8-byte aligned is read in place (no copy; any other is copied
/// once): it must not be written until the call returns.
#[no_mangle]
pub unsafe extern "C" fn ge_session_run(
    session: *const ge_session,
    inputs: *const ge_tensor_desc,
    num_inputs: usize,
    out: *mut *mut ge_outputs,
) -> ge_status {
    entry("ge_session_run", || {
        // SAFETY: forwarded ge.h contract.
        unsafe { run_descs(session, inputs, num_inputs, out, false) }
    })
}

/// `ge_session_run`, recording a trace of the run (ge-run's `--trace`): one
/// record per executed task with its stream and start/end times, read with
/// `ge_outputs_trace_count`/`ge_outputs_trace_event`, and the Chrome/Perfetto
/// trace JSON ge-run writes, with `ge_outputs_trace_json`.
#[no_mangle]
pub unsafe extern "C" fn ge_session_run_traced(
    session: *const ge_session,
    inputs: *const ge_tensor_desc,
    num_inputs: usize,
    out: *mut *mut ge_outputs,
) -> ge_status {
    entry("ge_session_run_traced", || {
        // SAFETY: forwarded ge.h contract.
        unsafe { run_descs(session, inputs, num_inputs, out, true) }
    })
}

/// The body of `ge_session_run` and `ge_session_run_traced`.
///
/// # Safety
/// The ge.h contract of `ge_session_run`.
unsafe fn run_descs(
    session: *const ge_session,
    inputs: *const ge_tensor_desc,
    num_inputs: usize,
    out: *mut *mut ge_outputs,
    trace: bool,
) -> Result<()> {
    // SAFETY: the ge.h contract: a live session, `num_inputs`
    // descriptors, a writable pointer.
    let (s, descs, out) = unsafe {
        (
            args::handle(session, "session")?,
            args::slice(inputs, num_inputs, "inputs")?,
            Out::new(out, "out")?,
        )
    };
    let mut names = Vec::with_capacity(descs.len());
    let mut tensors = Vec::with_capacity(descs.len());
    for (i, d) in descs.iter().enumerate() {
        // SAFETY: the descriptor's contract (ge.h).
        let name = unsafe { args::opt_cstr(d.name, &format!("inputs[{i}].name"))? };
        let what = name.map_or_else(|| format!("inputs[{i}]"), |n| format!("input '{n}'"));
        // SAFETY: the descriptor's contract (ge.h).
        tensors.push(unsafe { host_tensor(d, &what)? });
        names.push(name);
    }
    let run_err = |e: ge_runtime::Error| Error::new(GE_ERROR_RUN, e.to_string());
    let ordered = if names.iter().all(Option::is_none) {
        tensors
    } else if let Some(i) = names.iter().position(Option::is_none) {
        return Err(Error::arg(format!(
            "inputs[{i}] has no name but others do: name every input or none"
        )));
    } else {
        let named = names.iter().flatten().copied().zip(tensors);
        s.model.order_inputs(named).map_err(run_err)?
    };
    let r = s
        .session
        .run_with(&ordered, &RunOptions { trace })
        .map_err(run_err)?;
    out.set(new_outputs(&s.model, r.outputs, r.trace));
    Ok(())
}

fn new_outputs(model: &Model, outs: Vec<HostTensor>, trace: Option<Trace>) -> *mut ge_outputs {
    let names = model
        .outputs()
        .into_iter()
        .map(|(n, _)| CString::new(n.replace('\0', "")).unwrap_or_default())
        .collect();
    let shapes = outs
        .iter()
        .map(|t| t.shape.iter().map(|&d| d as i64).collect())
        .collect();
    Box::into_raw(Box::new(ge_outputs {
        names,
        tensors: outs,
        shapes,
        trace: trace.map(TraceRecord::new),
    }))
}

/// Number of outputs (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn ge_outputs_count(outputs: *const ge_outputs) -> usize {
    entry_value("ge_outputs_count", 0, || {
        // SAFETY: NULL or a live ge_outputs (the ge.h contract).
        Ok(unsafe { args::handle(outputs, "outputs")? }.tensors.len())
    })
}

/// Describe output `i` in `*out`: name, dtype, shape and data point into
/// `outputs` (no copy) and stay valid until `ge_outputs_free`.
#[no_mangle]
pub unsafe extern "C" fn ge_outputs_get(
    outputs: *const ge_outputs,
    i: usize,
    out: *mut ge_tensor_desc,
) -> ge_status {
    entry("ge_outputs_get", || {
        // SAFETY: the ge.h contract: a live ge_outputs and a writable pointer.
        let (o, out) = unsafe { (args::handle(outputs, "outputs")?, Out::new(out, "out")?) };
        let t = o.tensors.get(i).ok_or_else(|| {
            Error::arg(format!(
                "index {i} is out of range (the run has {} outputs)",
                o.tensors.len()
            ))
        })?;
        let shape = &o.shapes[i];
        let bytes = t.bytes();
        out.set(ge_tensor_desc {
            name: o.names.get(i).map_or(std::ptr::null(), |n| n.as_ptr()),
            dtype: from_dtype(t.dtype)?,
            shape: shape.as_ptr(),
            rank: shape.len(),
            data: bytes.as_ptr().cast(),
            size: bytes.len(),
        });
        Ok(())
    })
}

/// Describe the output called `name` (as `ge_outputs_get`).
#[no_mangle]
pub unsafe extern "C" fn ge_outputs_find(
    outputs: *const ge_outputs,
    name: *const c_char,
    out: *mut ge_tensor_desc,
) -> ge_status {
    let mut index = None;
    let st = entry("ge_outputs_find", || {
        // SAFETY: the ge.h contract: a live ge_outputs and a C string.
        let (o, name) = unsafe { (args::handle(outputs, "outputs")?, args::cstr(name, "name")?) };
        let i = o.names.iter().position(|n| n.to_bytes() == name.as_bytes());
        index = Some(i.ok_or_else(|| {
            let all: Vec<_> = o.names.iter().map(|n| n.to_string_lossy()).collect();
            Error::new(
                GE_ERROR_RUN,
                format!("no output '{name}' (the outputs: {})", all.join(", ")),
            )
        })?);
        Ok(())
    });
    match index {
        // SAFETY: forwarded contract.
        Some(i) => unsafe { ge_outputs_get(outputs, i, out) },
        None => st,
    }
}

fn trace_of<'a>(outputs: *const ge_outputs) -> Result<&'a TraceRecord> {
    // SAFETY: NULL or a live ge_outputs (the ge.h contract), used while the
    // caller's call runs.
    let o = unsafe { args::handle(outputs, "outputs")? };
    o.trace
        .as_ref()
        .ok_or_else(|| Error::arg("the run was not traced (run it with ge_session_run_traced)"))
}

/// Number of task records of a traced run, in start order (0 for NULL or a
/// run that was not traced).
#[no_mangle]
pub unsafe extern "C" fn ge_outputs_trace_count(outputs: *const ge_outputs) -> usize {
    entry_value("ge_outputs_trace_count", 0, || {
        // SAFETY: NULL or a live ge_outputs (the ge.h contract).
        let o = unsafe { args::handle(outputs, "outputs")? };
        Ok(o.trace.as_ref().map_or(0, |t| t.trace.events.len()))
    })
}

/// Task record `i` of a traced run in `*out`.
#[no_mangle]
pub unsafe extern "C" fn ge_outputs_trace_event(
    outputs: *const ge_outputs,
    i: usize,
    out: *mut ge_trace_event,
) -> ge_status {
    entry("ge_outputs_trace_event", || {
        let t = trace_of(outputs)?;
        // SAFETY: the ge.h contract: a writable pointer.
        let out = unsafe { Out::new(out, "out")? };
        let n = t.trace.events.len();
        let (e, name, engine) = match (t.trace.events.get(i), t.names.get(i), t.engines.get(i)) {
            (Some(e), Some(n), Some(g)) => (e, n, g),
            _ => {
                return Err(Error::arg(format!(
                    "index {i} is out of range (the trace has {n} records)"
                )))
            }
        };
        out.set(ge_trace_event {
            name: name.as_ptr(),
            engine: engine.as_ptr(),
            task: e.task,
            stream: e.stream,
            start_us: e.start_us,
            end_us: e.end_us,
        });
        Ok(())
    })
}

/// The Chrome/Perfetto trace JSON of a traced run (what `ge-run --trace`
/// writes; open it in ui.perfetto.dev) into a new `ge_bytes`.
#[no_mangle]
pub unsafe extern "C" fn ge_outputs_trace_json(
    outputs: *const ge_outputs,
    out: *mut *mut ge_bytes,
) -> ge_status {
    entry("ge_outputs_trace_json", || {
        let t = trace_of(outputs)?;
        // SAFETY: the ge.h contract: a writable pointer.
        let out = unsafe { Out::new(out, "out")? };
        let json = t.trace.to_json().into_bytes();
        out.set(Box::into_raw(Box::new(ge_bytes::new(json))));
        Ok(())
    })
}

/// Free run outputs (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn ge_outputs_free(outputs: *mut ge_outputs) {
    entry("ge_outputs_free", || {
        // SAFETY: NULL or a live ge_outputs, not used afterwards.
        unsafe { args::free(outputs) };
        Ok(())
    });
}
