//! The generator of the C API's generated parts (the `ge-capi-gen` binary
//! and the up-to-date test call it):
//!
//! - `src/es_ops.rs`: one `ge_es_<op>` function per op that has an ES
//!   method, from the op's declaration — the `EsOp` interface `def_op!`
//!   attaches (operands with their arity, attributes that are arguments or
//!   fields of the attributes struct, with their Rust types) and the
//!   `OpDef` (summary, attribute docs and defaults). Required attributes
//!   are plain C parameters; attributes with a default (or optional ones)
//!   are pointers, NULL taking the default.
//! - `include/ge/ge.h`: cbindgen over the crate's sources, with
//!   `cbindgen.toml`.

use ge_dialects::es::{EsAttrInfo, EsOp, EsResults};
use ge_ir::opdef::{Arity, OpDef};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    let capi = Path::new(env!("CARGO_MANIFEST_DIR"));
    capi.parent().unwrap_or(capi).to_path_buf()
}

/// The crate root cbindgen reads; it follows the `mod` declarations.
const SOURCE: &str = "lib.rs";

/// Names a generated parameter may not have: C, C++ and Rust keywords and
/// the names the generated code uses itself.
const RESERVED: &[&str] = &[
    // C / C++
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "class",
    "delete",
    "new",
    "operator",
    "private",
    "protected",
    "public",
    "template",
    "this",
    "throw",
    "try",
    "catch",
    "typename",
    "virtual",
    "namespace",
    "using",
    "and",
    "or",
    "not",
    "xor",
    "bitand",
    "bitor",
    "compl",
    "friend",
    "mutable",
    "explicit",
    "export",
    "final",
    "override",
    // Rust
    "as",
    "fn",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "ref",
    "self",
    "super",
    "trait",
    "type",
    "unsafe",
    "use",
    "where",
    "crate",
    "dyn",
    "async",
    "await",
    "box",
    "priv",
    "macro",
    "yield",
    "abstract",
    "become",
    "typeof",
    "unsized",
    "gen",
    // the generated code's own names
    "graph",
    "out",
    "outs",
    "capacity",
    "num_outs",
    "call_",
];

fn param(name: &str) -> String {
    if RESERVED.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// Text fit for a `//` doc comment line.
fn doc_text(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn op_def(name: &str) -> Result<&'static OpDef, String> {
    [&ge_dialects::graph::DIALECT, &ge_dialects::data::DIALECT]
        .into_iter()
        .flat_map(|d| d.ops())
        .find(|d| d.name == name)
        .ok_or_else(|| format!("no definition of '{name}'"))
}

/// One generated function: (signature parameters, body statements, docs).
struct Func {
    params: Vec<String>,
    body: Vec<String>,
    docs: Vec<String>,
}

impl Func {
    fn attr(&mut self, def: &OpDef, a: &EsAttrInfo, required: bool) -> Result<(), String> {
        let p = param(a.rust_name);
        let n = a.name;
        let ad = def.attr_def(n);
        let doc = ad.map(|d| doc_text(d.doc)).unwrap_or_default();
        let default = match (required, ad.and_then(|d| d.default)) {
            (true, _) => String::new(),
            (false, Some(d)) => format!(" (NULL: `{d}`)"),
            (false, None) => " (NULL: absent)".to_string(),
        };
        let ty = a
            .rust_type
            .strip_prefix("Option<")
            .and_then(|t| t.strip_suffix('>'))
            .unwrap_or(a.rust_type);
        let (params, stmt, shape) = match (required, ty) {
            (true, "i64" | "f64" | "bool") => {
                (vec![format!("{p}: {ty}")], format!("call_.attr({n:?}, {p});"), "")
            }
            (false, "i64" | "f64" | "bool") => (
                vec![format!("{p}: *const {ty}")],
                format!("call_.attr_ptr({n:?}, {p})?;"),
                "",
            ),
            (_, "&str" | "String") => (
                vec![format!("{p}: *const c_char")],
                format!("call_.str({n:?}, {p}, {required})?;"),
                "",
            ),
            (_, "&[i64]" | "Vec<i64>" | "&[f64]" | "Vec<f64>") => {
                let elem = if ty.contains("i64") { "i64" } else { "f64" };
                (
                    vec![format!("{p}: *const {elem}"), format!("{p}_len: usize")],
                    format!("call_.array({n:?}, {p}, {p}_len, {required})?;"),
                    "",
                )
            }
            (_, "&[&str]" | "Vec<String>") => (
                vec![format!("{p}: *const *const c_char"), format!("{p}_len: usize")],
                format!("call_.strs({n:?}, {p}, {p}_len, {required})?;"),
                "",
            ),
            (true, "DType") => (
                vec![format!("{p}: ge_dtype")],
                format!("call_.dtype({n:?}, {p})?;"),
                "",
            ),
            (false, "DType") => (
                vec![format!("{p}: *const ge_dtype")],
                format!("call_.dtype_ptr({n:?}, {p})?;"),
                "",
            ),
            (_, "Attribute") => (
                vec![format!("{p}: *const c_char")],
                format!("call_.attr_text({n:?}, {p}, {required})?;"),
                " in `.air` syntax",
            ),
            (_, t) => {
                return Err(format!(
                    "{}: attribute '{n}' has Rust type '{t}', which the C generator does not map yet (capi/src/gen.rs)",
                    def.name
                ))
            }
        };
        self.body.push(stmt);
        let len = match params.len() {
            2 => format!(", `{p}_len`"),
            _ => String::new(),
        };
        self.params.extend(params);
        self.docs
            .push(format!("- `{p}`{len}{shape}{default}: {doc}"));
        Ok(())
    }
}

/// The generated function of one ES op.
/// Ops whose declaration gained attributes after their C function was
/// promised (docs/c-api.md, "Versions": the op keeps its old function and
/// gets a new one): `ge_es_<method>` keeps the first `n` attribute fields,
/// the others taking their defaults, and `ge_es_<method>_v2` takes them all.
const GROWN: &[(&str, usize)] = &[("resize", 5), ("pad", 2), ("cast", 0)];

/// The C functions of an ES op: (name, attribute fields it takes).
pub fn c_functions(es: &EsOp) -> Vec<(String, Option<usize>)> {
    let base = format!("ge_es_{}", es.method.trim_end_matches('_'));
    match GROWN.iter().find(|(m, _)| *m == es.method) {
        Some(&(_, n)) => vec![(base.clone(), Some(n)), (format!("{base}_v2"), None)],
        None => vec![(base, None)],
    }
}

fn function(es: &EsOp, fname: &str, max_fields: Option<usize>) -> Result<String, String> {
    let def = op_def(es.op)?;
    let mut f = Func {
        params: vec!["graph: *mut ge_graph".into()],
        body: vec![],
        docs: vec![],
    };
    for (name, arity) in es.operands {
        let p = param(name);
        match arity {
            Arity::One => {
                f.params.push(format!("{p}: ge_es_tensor"));
                f.body.push(format!("call_.one({name:?}, {p})?;"));
                f.docs.push(format!("- `{p}`: operand"));
            }
            Arity::Optional => {
                f.params.push(format!("{p}: *const ge_es_tensor"));
                f.body.push(format!("call_.opt({name:?}, {p})?;"));
                f.docs
                    .push(format!("- `{p}`: optional operand (NULL: absent)"));
            }
            Arity::Variadic => {
                f.params.push(format!("{p}: *const ge_es_tensor"));
                f.params.push(format!("num_{p}: usize"));
                f.body.push(format!("call_.many({name:?}, {p}, num_{p})?;"));
                f.docs.push(format!("- `{p}`, `num_{p}`: variadic operand"));
            }
        }
    }
    for a in es.positional {
        f.attr(def, a, true)?;
    }
    for a in es.fields.iter().take(max_fields.unwrap_or(usize::MAX)) {
        f.attr(def, a, false)?;
    }
    let finish = match es.results {
        EsResults::One => {
            f.params.push("out: *mut ge_es_tensor".into());
            f.docs.push("- `out`: the result".into());
            "call_.finish_one(out)".to_string()
        }
        EsResults::Many => {
            f.params.push("outs: *mut ge_es_tensor".into());
            f.params.push("capacity: usize".into());
            f.params.push("num_outs: *mut usize".into());
            f.docs.push(
                "- `outs`, `capacity`, `num_outs`: the results (their number goes to `*num_outs`)"
                    .into(),
            );
            "call_.finish_many(outs, capacity, num_outs)".to_string()
        }
        EsResults::Struct { fields, .. } => {
            let mut list = vec![];
            for r in fields {
                let p = param(r);
                f.params.push(format!("{p}: *mut ge_es_tensor"));
                f.docs.push(format!("- `{p}`: result `{r}`"));
                list.push(format!("({r:?}, {p})"));
            }
            format!("call_.finish_fields(&[{}])", list.join(", "))
        }
    };
    let mut s = String::new();
    let _ = writeln!(s, "/// `{}`: {}", def.name, doc_text(def.summary));
    let _ = writeln!(s, "///");
    for d in &f.docs {
        let _ = writeln!(s, "/// {d}");
    }
    let _ = writeln!(s, "#[no_mangle]");
    let _ = writeln!(
        s,
        "pub unsafe extern \"C\" fn {fname}({}) -> ge_status {{",
        f.params.join(", ")
    );
    let _ = writeln!(s, "    entry({fname:?}, || {{");
    let _ = writeln!(
        s,
        "        // SAFETY: the pointers are NULL or valid as ge.h documents for this function."
    );
    let _ = writeln!(s, "        unsafe {{");
    let _ = writeln!(
        s,
        "            let mut call_ = Call::new(graph, {:?})?;",
        def.name
    );
    for b in &f.body {
        let _ = writeln!(s, "            {b}");
    }
    let _ = writeln!(s, "            {finish}");
    let _ = writeln!(s, "        }}");
    let _ = writeln!(s, "    }})");
    let _ = writeln!(s, "}}");
    Ok(s)
}

/// The text of `src/es_ops.rs` (rustfmt'ed).
pub fn es_source() -> Result<String, String> {
    let mut s = String::from(
        "//! One C function per op with an ES method, generated by `ge-capi-gen`\n\
         //! (capi/src/gen.rs) from the op declarations: do not edit; rerun\n\
         //! `cargo run -p ge-capi --features generate --bin ge-capi-gen`.\n\n\
         use crate::dtype::ge_dtype;\n\
         use crate::es::{ge_es_tensor, ge_graph, Call};\n\
         use crate::status::{entry, ge_status};\n\
         use std::ffi::c_char;\n\n",
    );
    let ops = ge_dialects::es::es_ops();
    for es in &ops {
        for (fname, max_fields) in c_functions(es) {
            s.push_str(&function(es, &fname, max_fields)?);
            s.push('\n');
        }
    }
    rustfmt(&s)
}

fn rustfmt(text: &str) -> Result<String, String> {
    let mut child = std::process::Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("rustfmt has no stdin")?
        .write_all(text.as_bytes())
        .map_err(|e| format!("rustfmt: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt: {e}"))?;
    if !out.status.success() {
        return Err("rustfmt failed on the generated source".into());
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

/// The text of `include/ge/ge.h`: cbindgen over the crate's sources as they
/// are on disk.
pub fn header() -> Result<String, String> {
    let capi = root().join("capi");
    let config = cbindgen::Config::from_file(capi.join("cbindgen.toml"))?;
    let b = cbindgen::Builder::new()
        .with_config(config)
        .with_src(capi.join("src").join(SOURCE));
    let bindings = b.generate().map_err(|e| format!("cbindgen: {e}"))?;
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).map_err(|e| e.to_string())
}

pub fn es_ops_path() -> PathBuf {
    root().join("capi/src/es_ops.rs")
}

pub fn header_path() -> PathBuf {
    root().join("include/ge/ge.h")
}

/// `capi/abi-<MAJOR>.txt`, the declarations the major version promises.
pub fn abi_path() -> PathBuf {
    root().join(format!("capi/abi-{}.txt", crate::GE_API_VERSION_MAJOR))
}

fn lib_path() -> PathBuf {
    root().join("capi/src/lib.rs")
}

const MINOR_DECL: &str = "pub const GE_API_VERSION_MINOR: u32 = ";

/// `GE_API_VERSION_MINOR` as `capi/src/lib.rs` declares it on disk (which
/// the generator may have bumped since it was built).
fn minor_on_disk(lib: &str) -> Result<u32, String> {
    lib.lines()
        .find_map(|l| l.strip_prefix(MINOR_DECL))
        .and_then(|v| v.trim_end_matches(';').trim().parse().ok())
        .ok_or_else(|| format!("no '{MINOR_DECL}N;' line in capi/src/lib.rs"))
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    ge_ir::output::write(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// What the ABI file says about `header`: the declarations it does not list
/// yet, once the promised ones are known to be all there.
fn abi_additions(header: &str) -> Result<(String, Vec<String>), String> {
    let abi = read(&abi_path())?;
    let promised = crate::abi::promised(&abi)?;
    let broken = crate::abi::broken(header, &promised);
    if !broken.is_empty() {
        return Err(format!(
            "ge.h no longer declares what {} promises (restore it, or bump \
             GE_API_VERSION_MAJOR and start a new file):\n{}",
            abi_path().display(),
            broken.join("\n")
        ));
    }
    let new = crate::abi::unlisted(header, &promised);
    Ok((abi, new))
}

/// Regenerate the generated files: es_ops.rs first (the header is made from
/// it), then the header; new declarations in it are promised in the ABI file
/// under the next minor version, which `GE_API_VERSION_MINOR` becomes (and
/// the header is made again with it). Returns the files written.
pub fn write_all() -> Result<Vec<PathBuf>, String> {
    let es = es_source()?;
    write(&es_ops_path(), &es)?;
    let mut h = header()?;
    let mut written = vec![es_ops_path()];
    let (abi, new) = abi_additions(&h)?;
    if !new.is_empty() {
        let lib = read(&lib_path())?;
        let minor = minor_on_disk(&lib)? + 1;
        let mut abi = abi;
        if !abi.ends_with('\n') {
            abi.push('\n');
        }
        for d in &new {
            abi.push_str(&format!("{minor}: {d}\n"));
        }
        write(&abi_path(), &abi)?;
        let lib: String = lib
            .lines()
            .map(|l| match l.strip_prefix(MINOR_DECL) {
                Some(_) => format!("{MINOR_DECL}{minor};\n"),
                None => format!("{l}\n"),
            })
            .collect();
        write(&lib_path(), &lib)?;
        written.extend([abi_path(), lib_path()]);
        h = header()?;
    }
    if let Some(d) = header_path().parent() {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    write(&header_path(), &h)?;
    written.push(header_path());
    Ok(written)
}

/// The generated files that are not what [`write_all`] would write (each
/// with the reason); empty when all are current. Writes nothing.
pub fn stale() -> Result<Vec<String>, String> {
    let mut out = vec![];
    if es_source()? != std::fs::read_to_string(es_ops_path()).unwrap_or_default() {
        out.push(format!("{}", es_ops_path().display()));
    }
    let h = header()?;
    if h != std::fs::read_to_string(header_path()).unwrap_or_default() {
        out.push(format!("{}", header_path().display()));
    }
    let (abi, new) = abi_additions(&h)?;
    if !new.is_empty() {
        out.push(format!(
            "{} (does not list {})",
            abi_path().display(),
            new.join("; ")
        ));
    }
    let newest = crate::abi::promised(&abi)?
        .iter()
        .map(|(m, _)| *m)
        .max()
        .unwrap_or(0);
    let minor = minor_on_disk(&read(&lib_path())?)?;
    if new.is_empty() && newest != minor {
        out.push(format!(
            "{} (GE_API_VERSION_MINOR is {minor}, the ABI file's newest minor is {newest})",
            lib_path().display()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in es_ops.rs and ge.h are what the generator writes now
    /// (a new op, attribute or entry point without regenerating fails here;
    /// checked by adding a stray line to each file once).
    #[test]
    fn generated_files_are_up_to_date() {
        let hint = "run tools/regen.sh";
        let es = es_source().unwrap();
        let on_disk = std::fs::read_to_string(es_ops_path()).unwrap_or_default();
        assert!(es == on_disk, "capi/src/es_ops.rs is stale: {hint}");
        let h = header().unwrap();
        let on_disk = std::fs::read_to_string(header_path()).unwrap_or_default();
        assert!(h == on_disk, "include/ge/ge.h is stale: {hint}");
    }

    /// Every op with an ES method has its C function, and no other op does.
    #[test]
    fn one_function_per_es_op() {
        let src = std::fs::read_to_string(es_ops_path()).unwrap();
        let ops = ge_dialects::es::es_ops();
        let mut n = 0;
        for es in &ops {
            for (name, _) in c_functions(es) {
                let f = format!("fn {name}(");
                assert!(src.contains(&f), "no {f} for {}", es.op);
                n += 1;
            }
        }
        assert_eq!(src.matches("pub unsafe extern \"C\" fn ge_es_").count(), n);
    }
}
