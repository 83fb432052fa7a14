//! The compatibility promise as a test: `capi/abi-<MAJOR>.txt` lists every
//! declaration of `ge.h` (functions, structs, constants) that major version
//! <MAJOR> has promised, each tagged with the minor version that added it.
//! A declaration removed or changed (its normalised text differs) fails:
//! restore it or bump `GE_API_VERSION_MAJOR` (and start a new file). A new
//! declaration fails until it is added to the file, tagged with a minor
//! version, and `GE_API_VERSION_MINOR` is that version.

#[cfg(test)]
use crate::{GE_API_VERSION_MAJOR, GE_API_VERSION_MINOR};
use std::collections::BTreeSet;

/// The declarations of a header, each on one line with single spaces.
pub fn declarations(header: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut code = String::new();
    for line in header.lines() {
        let l = line.trim();
        if l.starts_with("#define GE_API_VERSION")
            || l == "extern \"C\" {"
            || l.starts_with("}  // extern")
        {
            // The version itself, and C++'s extern "C" block around everything.
            continue;
        }
        if l.starts_with("#define GE_") && l != "#define GE_GE_H" {
            out.insert(l.split_whitespace().collect::<Vec<_>>().join(" "));
        } else if !l.starts_with("//") && !l.starts_with('#') {
            code.push_str(l);
            code.push(' ');
        }
    }
    // Drop the block comment at the top (the header's preamble).
    while let (Some(a), Some(b)) = (code.find("/*"), code.find("*/")) {
        if b < a {
            break;
        }
        code.replace_range(a..b + 2, " ");
    }
    let (mut depth, mut cur) = (0i32, String::new());
    for ch in code.chars() {
        cur.push(ch);
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ';' if depth == 0 => {
                let item = cur.split_whitespace().collect::<Vec<_>>().join(" ");
                if item.contains("ge_") {
                    out.insert(item);
                }
                cur.clear();
            }
            _ => {}
        }
    }
    out
}

/// The lines of `capi/abi-<MAJOR>.txt`: `(minor, declaration)`.
pub fn promised(text: &str) -> Result<Vec<(u32, String)>, String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (minor, decl) = l
                .split_once(": ")
                .ok_or_else(|| format!("expected a 'MINOR: declaration' line, got '{l}'"))?;
            let minor = minor
                .trim()
                .parse()
                .map_err(|_| format!("'{minor}' is not a minor version in '{l}'"))?;
            Ok((minor, decl.to_string()))
        })
        .collect()
}

/// The declarations of `header` that `promised` does not list (in order).
pub fn unlisted(header: &str, promised: &[(u32, String)]) -> Vec<String> {
    let listed: BTreeSet<&str> = promised.iter().map(|(_, d)| d.as_str()).collect();
    declarations(header)
        .into_iter()
        .filter(|d| !listed.contains(d.as_str()))
        .collect()
}

/// The promised declarations `header` no longer has (removed or changed):
/// these are never fixed by regenerating, only by restoring them or by a
/// new major version.
pub fn broken(header: &str, promised: &[(u32, String)]) -> Vec<String> {
    let now = declarations(header);
    promised
        .iter()
        .filter(|(_, d)| !now.contains(d))
        .map(|(_, d)| d.clone())
        .collect()
}

#[test]
fn the_header_keeps_the_promise_of_its_major_version() {
    let root = crate::gen::root();
    let file = root.join(format!("capi/abi-{GE_API_VERSION_MAJOR}.txt"));
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let promised = promised(&text).expect("'MINOR: declaration' lines");
    let header = std::fs::read_to_string(crate::gen::header_path()).unwrap();
    let broken = broken(&header, &promised);
    assert!(
        broken.is_empty(),
        "ge.h no longer declares what major version {GE_API_VERSION_MAJOR} promised \
         (restore it, or bump GE_API_VERSION_MAJOR and start capi/abi-N.txt):\n{}",
        broken.join("\n")
    );
    let new = unlisted(&header, &promised);
    assert!(
        new.is_empty(),
        "new declarations in ge.h: run tools/regen.sh (it adds them to {} as '{}: …' lines \
         and sets GE_API_VERSION_MINOR to {}):\n{}",
        file.display(),
        GE_API_VERSION_MINOR + 1,
        GE_API_VERSION_MINOR + 1,
        new.join("\n")
    );
    let newest = promised.iter().map(|(m, _)| *m).max().unwrap_or(0);
    assert_eq!(
        newest,
        GE_API_VERSION_MINOR,
        "{} lists additions of minor version {newest}: GE_API_VERSION_MINOR must be that",
        file.display()
    );
}

#[test]
fn declarations_are_read_whole() {
    let h = "// doc\n#define GE_OK 0\ntypedef struct ge_x {\n    int a;\n    int b;\n} ge_x;\n\
             ge_status ge_f(int a,\n              int b);\n";
    let d = declarations(h);
    assert!(d.contains("#define GE_OK 0"));
    assert!(d.contains("typedef struct ge_x { int a; int b; } ge_x;"));
    assert!(d.contains("ge_status ge_f(int a, int b);"));
    assert_eq!(d.len(), 3);
}
