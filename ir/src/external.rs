//! Confined file access for weights stored outside a model: `.air`'s
//! `#ge.external<"path", …>` and ONNX external data. A model is untrusted
//! input, so the files it names are read only inside the model's directory
//! or a directory the user allowed explicitly (`--allow-external-dir DIR` of
//! ge-opt, ge-atc, ge-translate and ge-run).
//!
//! The rule ([`Access::resolve`]): a path with a `..` component is refused;
//! a relative path resolves against the model's directory; the result,
//! after every symbolic link is resolved (`canonicalize`), must lie inside
//! the model's directory or an allowed one (itself canonical). So a
//! symlinked directory (`dir -> /etc`), a file symlink pointing out, and an
//! absolute path elsewhere are all refused, with a one-line error naming the
//! file. An absolute path is accepted when, as written and once resolved,
//! it lies inside the model's directory or an allowed one (the ONNX importer
//! stores canonical absolute paths); one elsewhere is refused before the
//! file system is asked about it.
//!
//! Opening ([`Access::open`]) checks the canonical path is a regular file,
//! opens it, and compares the opened file's device and inode with the
//! checked path's, so a file swapped for a link between the check and the
//! open is refused. (`O_NOFOLLOW` would close the window entirely, but it
//! needs `libc`, which ge does not depend on; canonicalise-and-compare is
//! what we do instead.)
//!
//! The tools set the process's policy once ([`set_policy`]); library users
//! may too. Unset, reads are confined to the current working directory.

use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, RwLock};

/// Where external files may be read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// Relative paths resolve here: the model's directory (canonical).
    base: PathBuf,
    /// Directories reads may reach, canonical: `base`, then the allowed ones.
    roots: Vec<PathBuf>,
    /// The same directories as the user named them (made absolute, links
    /// not resolved), for the check of absolute paths as written.
    named: Vec<PathBuf>,
}

fn canonical_dir(dir: &Path, what: &str) -> Result<PathBuf, String> {
    let c = std::fs::canonicalize(dir).map_err(|e| format!("{what} '{}': {e}", dir.display()))?;
    if !c.is_dir() {
        return Err(format!("{what} '{}' is not a directory", dir.display()));
    }
    Ok(c)
}

impl Access {
    /// Reads confined to `model_dir` and the `allowed` directories.
    pub fn new(model_dir: &Path, allowed: &[PathBuf]) -> Result<Access, String> {
        let base = canonical_dir(model_dir, "model directory")?;
        let mut roots = vec![base.clone()];
        let mut named = vec![absolute(model_dir)];
        for d in allowed {
            roots.push(canonical_dir(d, "--allow-external-dir")?);
            named.push(absolute(d));
        }
        Ok(Access { base, roots, named })
    }

    /// Reads confined to the directory of the model file `model` (the
    /// working directory for stdin, `-`, and for a model whose directory
    /// does not exist — the tool then fails to read the model itself) and
    /// the `allowed` directories.
    pub fn for_model_file(model: &str, allowed: &[PathBuf]) -> Result<Access, String> {
        let dir = match model {
            "-" | "" => Path::new("."),
            m => Path::new(m)
                .parent()
                .filter(|p| !p.as_os_str().is_empty() && p.is_dir())
                .unwrap_or(Path::new(".")),
        };
        Access::new(dir, allowed)
    }

    /// The same allowed directories with another model directory (the ONNX
    /// importer resolves against the ONNX file's directory).
    pub fn with_model_dir(&self, dir: &Path) -> Result<Access, String> {
        let base = canonical_dir(dir, "model directory")?;
        let mut roots = vec![base.clone()];
        roots.extend(self.roots.iter().skip(1).cloned());
        let mut named = vec![absolute(dir)];
        named.extend(self.named.iter().skip(1).cloned());
        Ok(Access { base, roots, named })
    }

    /// The model's directory (canonical).
    pub fn model_dir(&self) -> &Path {
        &self.base
    }

    /// The canonical path of external file `path`, if the policy allows it.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let p = Path::new(path);
        if p.components().any(|c| c == Component::ParentDir) {
            return Err(format!(
                "external file '{path}' is refused: '..' may not leave the model's directory"
            ));
        }
        let dir = self.base.display();
        let outside_abs = || {
            format!(
                "external file '{path}' is refused: an absolute path outside the model's directory '{dir}' (allow a directory with --allow-external-dir)"
            )
        };
        // An absolute path must name an allowed directory as written: one
        // elsewhere is refused without probing the file system for it.
        if p.is_absolute()
            && !self
                .roots
                .iter()
                .chain(&self.named)
                .any(|r| p.starts_with(r))
        {
            return Err(outside_abs());
        }
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        };
        let canon = std::fs::canonicalize(&joined)
            .map_err(|e| format!("cannot open external file '{path}': {e}"))?;
        if self.roots.iter().any(|r| canon.starts_with(r)) {
            return Ok(canon);
        }
        Err(if p.is_absolute() {
            outside_abs()
        } else {
            format!(
                "external file '{path}' is refused: it resolves to '{}', outside the model's directory '{dir}'",
                canon.display()
            )
        })
    }

    /// Open external file `path` for reading, if the policy allows it; also
    /// returns its length in bytes.
    pub fn open(&self, path: &str) -> Result<(File, u64), String> {
        let canon = self.resolve(path)?;
        let meta = std::fs::symlink_metadata(&canon)
            .map_err(|e| format!("cannot open external file '{path}': {e}"))?;
        if !meta.is_file() {
            return Err(format!(
                "external file '{path}' is refused: not a regular file"
            ));
        }
        let f =
            File::open(&canon).map_err(|e| format!("cannot open external file '{path}': {e}"))?;
        let opened = f
            .metadata()
            .map_err(|e| format!("cannot open external file '{path}': {e}"))?;
        if !same_file(&meta, &opened) {
            return Err(format!(
                "external file '{path}' is refused: it changed while it was being opened"
            ));
        }
        Ok((f, opened.len()))
    }
}

/// `dir` made absolute against the working directory (links kept).
fn absolute(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    b.is_file() && a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    b.is_file() && a.len() == b.len()
}

static POLICY: RwLock<Option<Arc<Access>>> = RwLock::new(None);

/// Set the process's policy (the tools do, from the model path and flags).
pub fn set_policy(a: Access) {
    if let Ok(mut p) = POLICY.write() {
        *p = Some(Arc::new(a));
    }
}

/// The process's policy; unset, reads are confined to the working directory.
pub fn policy() -> Result<Arc<Access>, String> {
    if let Some(p) = POLICY.read().ok().and_then(|p| p.clone()) {
        return Ok(p);
    }
    Access::new(Path::new("."), &[]).map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ge-external-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("model/sub")).expect("temp dir");
        std::fs::create_dir_all(d.join("outside")).expect("temp dir");
        std::fs::write(d.join("model/w.bin"), [1u8, 2, 3]).expect("write");
        std::fs::write(d.join("model/sub/v.bin"), [4u8]).expect("write");
        std::fs::write(d.join("outside/secret"), [9u8]).expect("write");
        d
    }

    #[cfg(unix)]
    #[test]
    fn reads_stay_inside_the_model_directory() {
        use std::os::unix::fs::symlink;
        let d = tmp("confine");
        let model = d.join("model");
        symlink(d.join("outside"), model.join("dir")).expect("symlink");
        symlink(d.join("outside/secret"), model.join("link.bin")).expect("symlink");
        symlink(model.join("w.bin"), model.join("inner-link.bin")).expect("symlink");
        let a = Access::new(&model, &[]).expect("policy");
        assert_eq!(a.open("w.bin").expect("inside").1, 3);
        assert_eq!(a.open("sub/v.bin").expect("inside").1, 1);
        // A link that stays inside is fine.
        assert_eq!(a.open("inner-link.bin").expect("inside").1, 3);
        let abs_inside = model.join("w.bin");
        assert!(a.open(abs_inside.to_str().expect("utf-8")).is_ok());
        for (p, why) in [
            ("dir/secret", "resolves to"),
            ("link.bin", "resolves to"),
            ("../outside/secret", "'..'"),
            ("sub/../w.bin", "'..'"),
            ("/etc/passwd", "absolute path"),
            ("sub", "not a regular file"),
            ("missing.bin", "cannot open"),
        ] {
            let e = a.open(p).expect_err(p);
            assert!(e.contains(why) && e.contains(p), "{p}: {e}");
        }
        // An allowed directory opens the way out, and only that one.
        let b = Access::new(&model, &[d.join("outside")]).expect("policy");
        assert!(b.open("dir/secret").is_ok());
        assert!(b.open("link.bin").is_ok());
        let secret = d.join("outside/secret");
        assert!(b.open(secret.to_str().expect("utf-8")).is_ok());
        assert!(b.open("/etc/passwd").is_err());
        assert!(b.open("../outside/secret").is_err());
        // A model directory named through a link: absolute paths as the
        // user wrote them (through the link) and canonical ones both work.
        symlink(&model, d.join("via")).expect("symlink");
        let v = Access::new(&d.join("via"), &[]).expect("policy");
        let through = d.join("via/w.bin");
        assert!(v.open(through.to_str().expect("utf-8")).is_ok());
        let canonical = std::fs::canonicalize(model.join("w.bin")).expect("canonical");
        assert!(v.open(canonical.to_str().expect("utf-8")).is_ok());
        assert!(v.open(secret.to_str().expect("utf-8")).is_err());
        // Another model directory keeps the allowed ones.
        let c = b.with_model_dir(&model.join("sub")).expect("policy");
        assert!(c.open("v.bin").is_ok());
        assert!(c.open(secret.to_str().expect("utf-8")).is_ok());
        assert!(c.open(abs_inside.to_str().expect("utf-8")).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_allowed_directory_is_an_error() {
        let e = Access::new(Path::new("."), &[PathBuf::from("/no/such/dir/for/ge")])
            .expect_err("missing");
        assert!(
            e.contains("--allow-external-dir '/no/such/dir/for/ge'"),
            "{e}"
        );
    }
}
