//! `ge_module`: a module of the `graph` dialect — imported from ONNX or
//! TensorFlow, parsed
//! from `.air` text or built with ES — that can be printed and compiled.

use crate::args::{self, Out};
use crate::bytes::ge_bytes;
use crate::compile::ge_compile_options;
use crate::status::{
    entry, ge_status, Error, Result, GE_ERROR_IMPORT, GE_ERROR_IO, GE_ERROR_PARSE,
};
use ge_frontends::tf::TfOptions;
use ge_ir::Module;
use std::ffi::c_char;
use std::path::Path;

/// A module (one or more `graph.func`s). Not thread-safe: one thread at a
/// time.
pub struct ge_module {
    pub(crate) module: Module,
}

fn verified(module: Module) -> Result<*mut ge_module> {
    let errors: Vec<String> = ge_ir::verifier::verify_module(&module)
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect();
    if !errors.is_empty() {
        return Err(Error::new(GE_ERROR_PARSE, errors.join("; ")));
    }
    Ok(Box::into_raw(Box::new(ge_module { module })))
}

/// Parse (and verify) a module from `.air` text (custom or generic form).
#[no_mangle]
pub unsafe extern "C" fn ge_module_parse(
    text: *const c_char,
    out: *mut *mut ge_module,
) -> ge_status {
    entry("ge_module_parse", || {
        // SAFETY: the ge.h contract: a C string and a writable pointer.
        let (text, out) = unsafe { (args::cstr(text, "text")?, Out::new(out, "out")?) };
        let ctx = ge_compile::context();
        let name = "<ge_module_parse>";
        let mut sm = ge_ir::diagnostics::SourceMap::new();
        let file = sm.add(name, std::sync::Arc::from(text));
        let opts = ge_ir::parser::ParseOptions::file(file);
        let m = ge_ir::parser::parse_module(&ctx, name, text, opts)
            .map_err(|d| Error::new(GE_ERROR_PARSE, sm.render(&d).trim_end()))?;
        out.set(verified(m)?);
        Ok(())
    })
}

fn import_error(e: ge_frontends::error::ImportError) -> Error {
    Error::new(GE_ERROR_IMPORT, e.message)
}

/// Import an ONNX model file into a module (function `@main`). External
/// data files are read from the model's folder.
#[no_mangle]
pub unsafe extern "C" fn ge_import_onnx_file(
    path: *const c_char,
    out: *mut *mut ge_module,
) -> ge_status {
    entry("ge_import_onnx_file", || {
        // SAFETY: the ge.h contract: a C string and a writable pointer.
        let (path, out) = unsafe { (args::cstr(path, "path")?, Out::new(out, "out")?) };
        if !Path::new(path).is_file() {
            return Err(Error::new(
                GE_ERROR_IO,
                format!("cannot read '{path}': not a file"),
            ));
        }
        let ctx = ge_compile::context();
        let m = ge_frontends::onnx::import_file(&ctx, Path::new(path), &Default::default())
            .map_err(import_error)?;
        out.set(verified(m)?);
        Ok(())
    })
}

/// Import an ONNX model from `size` bytes at `data` (a model with external
/// data files must be imported with `ge_import_onnx_file`).
#[no_mangle]
pub unsafe extern "C" fn ge_import_onnx_bytes(
    data: *const u8,
    size: usize,
    out: *mut *mut ge_module,
) -> ge_status {
    entry("ge_import_onnx_bytes", || {
        // SAFETY: the ge.h contract: `size` readable bytes and a writable pointer.
        let (bytes, out) = unsafe { (args::slice(data, size, "data")?, Out::new(out, "out")?) };
        let ctx = ge_compile::context();
        // External data is looked up in (confined to) an empty scratch folder:
        // a model from bytes has none.
        let empty = tempfile::Builder::new()
            .prefix("ge-capi-onnx-")
            .tempdir()
            .map_err(|e| Error::new(GE_ERROR_IO, format!("cannot create a scratch folder: {e}")))?;
        let m = ge_frontends::onnx::import_bytes(
            &ctx,
            bytes,
            "<onnx bytes>",
            empty.path(),
            &Default::default(),
        )
        .map_err(import_error)?;
        out.set(verified(m)?);
        Ok(())
    })
}

/// The TensorFlow import options of `options` (NULL: defaults): ge-atc's
/// `input_shape` (with its dynamic gears), `out_nodes` and `signature`.
fn tf_options(options: *const ge_compile_options) -> Result<TfOptions> {
    // SAFETY: the ge.h contract: NULL or a live options handle.
    let args = crate::compile::atc_args(unsafe { options.as_ref() })?;
    ge_driver::atc::tf_import_options(&args).map_err(Error::arg)
}

/// Import a TensorFlow model into a module (function `@main`): a frozen
/// `GraphDef` (`.pb`) or a SavedModel folder, as `ge-atc --framework=3`
/// imports it. `options` (NULL: defaults) are ge-atc's: `input_shape`
/// (`"x:1,224,224,3;y:B,10"`, with `dynamic_batch_size`/`dynamic_dims`),
/// `out_nodes` (`"node:0;other:1"`) and, for a SavedModel, `signature`
/// (default `serving_default`); the others are the compile's and unused here.
#[no_mangle]
pub unsafe extern "C" fn ge_import_tf(
    path: *const c_char,
    options: *const ge_compile_options,
    out: *mut *mut ge_module,
) -> ge_status {
    entry("ge_import_tf", || {
        // SAFETY: the ge.h contract: a C string and a writable pointer.
        let (path, out) = unsafe { (args::cstr(path, "path")?, Out::new(out, "out")?) };
        let opts = tf_options(options)?;
        let p = Path::new(path);
        if !p.is_file() && !p.is_dir() {
            return Err(Error::new(
                GE_ERROR_IO,
                format!("cannot read '{path}': not a file or a SavedModel folder"),
            ));
        }
        let ctx = ge_compile::context();
        let m = ge_frontends::tf::import_file(&ctx, p, &opts).map_err(import_error)?;
        out.set(verified(m)?);
        Ok(())
    })
}

/// Import a frozen TensorFlow `GraphDef` from `size` bytes at `data` (options
/// as `ge_import_tf`).
#[no_mangle]
pub unsafe extern "C" fn ge_import_tf_bytes(
    data: *const u8,
    size: usize,
    options: *const ge_compile_options,
    out: *mut *mut ge_module,
) -> ge_status {
    entry("ge_import_tf_bytes", || {
        // SAFETY: the ge.h contract: `size` readable bytes and a writable pointer.
        let (bytes, out) = unsafe { (args::slice(data, size, "data")?, Out::new(out, "out")?) };
        let opts = tf_options(options)?;
        let ctx = ge_compile::context();
        let m = ge_frontends::tf::import_bytes(&ctx, bytes, "<tf bytes>", &opts)
            .map_err(import_error)?;
        out.set(verified(m)?);
        Ok(())
    })
}

/// Print a module as `.air` text (`generic`: MLIR's generic form) into a new
/// `ge_bytes` (free it with `ge_bytes_free`).
#[no_mangle]
pub unsafe extern "C" fn ge_module_print(
    module: *const ge_module,
    generic: bool,
    out: *mut *mut ge_bytes,
) -> ge_status {
    entry("ge_module_print", || {
        // SAFETY: the ge.h contract: a live module and a writable pointer.
        let (m, out) = unsafe { (args::handle(module, "module")?, Out::new(out, "out")?) };
        let text = ge_ir::printer::print_module(
            &m.module,
            ge_ir::printer::PrintOptions {
                generic,
                ..Default::default()
            },
        );
        out.set(Box::into_raw(Box::new(ge_bytes::new(text.into_bytes()))));
        Ok(())
    })
}

/// Free a module (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn ge_module_free(module: *mut ge_module) {
    entry("ge_module_free", || {
        // SAFETY: NULL or a live module, not used afterwards.
        unsafe { args::free(module) };
        Ok(())
    });
}
