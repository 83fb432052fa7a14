//! Writing an output the user named, without ever replacing what the path names.
//!
//! Every tool and library entry point that writes a user-named path (`-o`, `--emit-om`,
//! `--output`, `--trace`, `write-om{file=…}`, the compile cache, …) goes through
//! [`write`] or [`write_with`]; `ir/tests/suite/output_writers.rs` fails if other code writes
//! files. What happens depends on what the path names when the write starts:
//!
//! - `-`: the process's stdout.
//! - nothing yet, or a regular file: a temporary file in the same directory (its name unique
//!   per process and per call), filled, given the old file's permission bits (and owner,
//!   where the process may), fsynced and renamed over the path (unsynced: exchanged
//!   with the old file, which is then unlinked — [`Durability::Unsynced`]). Readers see
//!   the old contents or the new, never half of them. (A hard link to the old file keeps
//!   the old contents.)
//! - a character or block device or a FIFO (`/dev/null`, a pipe): opened and written in
//!   place — no rename, no truncation. A FIFO blocks until someone reads it, as with a
//!   shell's `>`. A Unix socket is connected to and written.
//! - a symbolic link: followed to its final target, and these rules apply to the target, so
//!   a link to a regular file stays a link and its target is replaced atomically. A
//!   dangling link creates its target (as a shell's `>` does; an error if the target's
//!   directory is missing). Links into the process's own `/proc/self/fd/N` (`/dev/stdout`,
//!   `/dev/stderr`, `/dev/fd/N`) write to the open descriptor N at its offset (appending if
//!   it was opened to append); other `/proc` links are opened through the kernel.
//! - a directory: an error.
//!
//! Errors are `std::io::Error`s; callers print them on one line with the path they were
//! given.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::{BorrowedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Write `bytes` to `path` (see the module docs for what each kind of path gets).
pub fn write(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Like [`write`], with the contents produced by `fill` into a buffered writer, for
/// outputs too large to build in memory first.
pub fn write_with(
    path: impl AsRef<Path>,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write_with_sync(path, Durability::Synced, fill)
}

/// Whether a replaced file's data reaches the disk before the rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` the temporary file before renaming it (what [`write`] and
    /// [`write_with`] do): after a system crash the path holds the old
    /// contents or the new.
    Synced,
    /// Replace without `fsync`, and without the flush ext4 makes a `rename` over a
    /// file do (see `swap_in`): other processes still see the old contents or the
    /// new, never half of them; only a system crash right after the write may leave
    /// a truncated file. For outputs that carry their own checksums (an `.om`), so
    /// a torn file is refused when read, and that a tool regenerates, as a
    /// compiler's outputs are: the flush would cost the disk's write time of the
    /// whole file (hundreds of MB of weights) and buy nothing.
    Unsynced,
}

/// [`write_with`], choosing whether a replaced file is flushed before the rename.
pub fn write_with_sync(
    path: impl AsRef<Path>,
    sync: Durability,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let path = path.as_ref();
    let dest = resolve(path)?;
    match (write_to(&dest, sync, fill), dest.path()) {
        // Through a link, say where the write went.
        (Err(e), Some(target)) if target != path => Err(io::Error::new(
            e.kind(),
            format!("{e} (the link's target '{}')", target.display()),
        )),
        (res, _) => res,
    }
}

fn write_to(
    dest: &Dest,
    sync: Durability,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    match dest {
        Dest::Fd(1) => stream(io::stdout().lock(), fill),
        Dest::Fd(2) => stream(io::stderr().lock(), fill),
        Dest::Fd(n) => stream(File::from(dup(*n)?), fill),
        Dest::InPlace { path, truncate } => stream(
            OpenOptions::new()
                .write(true)
                .truncate(*truncate)
                .open(path)?,
            fill,
        ),
        Dest::Socket(p) => {
            let s = UnixStream::connect(p)?;
            stream(&s, fill)?;
            s.shutdown(std::net::Shutdown::Write)
        }
        Dest::Replace { path, old } => replace(path, old.as_ref(), sync, fill),
    }
}

/// Where a write goes, decided by what the path names now.
enum Dest {
    /// One of this process's open descriptors (`-` is 1).
    Fd(RawFd),
    /// A device, a FIFO, or a `/proc` link of another process: written where it is.
    InPlace {
        path: PathBuf,
        truncate: bool,
    },
    Socket(PathBuf),
    /// A regular file (`old` is its metadata) or nothing yet: a new file renamed over it.
    Replace {
        path: PathBuf,
        old: Option<Metadata>,
    },
}

impl Dest {
    fn path(&self) -> Option<&Path> {
        match self {
            Dest::Fd(_) => None,
            Dest::InPlace { path, .. } | Dest::Socket(path) | Dest::Replace { path, .. } => {
                Some(path)
            }
        }
    }
}

/// Linux gives up after 40 links in one lookup; so do we.
const MAX_LINKS: usize = 40;

fn resolve(path: &Path) -> io::Result<Dest> {
    if path.as_os_str() == "-" {
        return Ok(Dest::Fd(1));
    }
    let mut p = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let m = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Dest::Replace { path: p, old: None })
            }
            Err(e) => return Err(e),
        };
        let t = m.file_type();
        if t.is_symlink() {
            if let Some(d) = proc_link(&p)? {
                return Ok(d);
            }
            let target = std::fs::read_link(&p)?;
            // A relative target is relative to the link's directory (an absolute one
            // replaces the whole path in `join`).
            p = match p.parent() {
                Some(dir) => dir.join(target),
                None => target,
            };
        } else if t.is_file() {
            return Ok(Dest::Replace {
                path: p,
                old: Some(m),
            });
        } else if t.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        } else if t.is_socket() {
            return Ok(Dest::Socket(p));
        } else {
            // Character and block devices, FIFOs.
            return Ok(Dest::InPlace {
                path: p,
                truncate: false,
            });
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Symbolic links under `/proc` are the kernel's: their text (`pipe:[1234]`) is not a
/// path, so they are not followed by name. `None` for a link elsewhere.
fn proc_link(link: &Path) -> io::Result<Option<Dest>> {
    let (Some(dir), Some(name)) = (link.parent(), link.file_name()) else {
        return Ok(None);
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return Ok(None);
    };
    if !dir.starts_with("/proc") {
        return Ok(None);
    }
    if is_own_fd_dir(&dir) {
        if let Some(n) = name.to_str().and_then(|s| s.parse::<RawFd>().ok()) {
            return Ok(Some(Dest::Fd(n)));
        }
    }
    // Another process's descriptor: the kernel opens the file it names.
    let m = std::fs::metadata(link)?;
    if m.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    Ok(Some(Dest::InPlace {
        path: link.to_path_buf(),
        truncate: m.is_file(),
    }))
}

/// `/proc/PID/fd` or `/proc/PID/task/TID/fd` of this process (what `/proc/self/fd`,
/// `/proc/thread-self/fd` and `/dev/fd` resolve to).
fn is_own_fd_dir(dir: &Path) -> bool {
    let pid = std::process::id().to_string();
    let parts: Vec<&str> = dir
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    match parts.as_slice() {
        ["proc", p, "fd"] | ["proc", p, "task", _, "fd"] => *p == pid,
        _ => false,
    }
}

/// A new descriptor for this process's open descriptor `n`.
fn dup(n: RawFd) -> io::Result<std::os::fd::OwnedFd> {
    // SAFETY: `n` named an open descriptor of this process a moment ago (its
    // `/proc/self/fd` entry exists), and the borrow lives only for the duplication,
    // which the kernel checks: a descriptor closed meanwhile gives EBADF, not
    // undefined behaviour in this process.
    unsafe { BorrowedFd::borrow_raw(n) }.try_clone_to_owned()
}

const BUFFER: usize = 1 << 16;

/// Write in place through a buffer.
fn stream<W: Write>(w: W, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(BUFFER, w);
    fill(&mut w)?;
    w.flush()
}

/// Fill a new file beside `path` and rename it over `path` (a regular file or nothing).
fn replace(
    path: &Path,
    old: Option<&Metadata>,
    sync: Durability,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let (tmp, file) = create_temp(path)?;
    let res = (|| {
        let mut w = BufWriter::with_capacity(BUFFER, file);
        fill(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        if let Some(old) = old {
            let new = f.metadata()?;
            if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
                // Only root may give a file away; anyone else keeps owning the new file,
                // as an editor saving by rename does. (Before chmod: chown clears set-id bits.)
                let _ = std::os::unix::fs::fchown(&f, Some(old.uid()), Some(old.gid()));
            }
            f.set_permissions(old.permissions())?;
        }
        match (sync, old) {
            (Durability::Synced, _) => {
                f.sync_all()?;
                std::fs::rename(&tmp, path)
            }
            (Durability::Unsynced, Some(_)) => swap_in(&tmp, path),
            (Durability::Unsynced, None) => std::fs::rename(&tmp, path),
        }
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// Put the unsynced temporary file `tmp` in the place of the file at `path` as
/// `rename` would, without ext4's flush. Renaming over an existing file makes ext4
/// (`auto_da_alloc`, its default) write the new file's delayed-allocation pages out in
/// the `rename` call — what [`Durability::Unsynced`] means not to wait for: 0.2-0.9 s
/// for a 240 MB `.om` here, plus discarding the blocks that flush allocated when the
/// next compile replaces the file. Exchanging the two names (`renameat2` with
/// `RENAME_EXCHANGE`, as atomic as `rename` for readers of `path`) and unlinking the
/// old file under the temporary name has no such flush; an old file never written out
/// is dropped from the page cache without touching the disk. Where the exchange is
/// refused (another file system, an older kernel, `path` removed meanwhile) this is
/// `rename`. A process killed between the exchange and the unlink leaves the old
/// contents under the temporary name, as one killed while filling it leaves a part of
/// the new.
fn swap_in(tmp: &Path, path: &Path) -> io::Result<()> {
    if !exchange(tmp, path) {
        return std::fs::rename(tmp, path);
    }
    // `tmp` names what `path` named. `rename` refuses to replace a directory (one put
    // there since `resolve` looked): swap back and let it say so.
    if std::fs::symlink_metadata(tmp).is_ok_and(|m| m.is_dir()) {
        if !exchange(tmp, path) {
            return Err(io::Error::other(format!(
                "a directory appeared at the path; it is now at '{}'",
                tmp.display()
            )));
        }
        return std::fs::rename(tmp, path);
    }
    // The new contents are in place; anything else `rename` would have unlinked.
    // Failing to remove it (the directory made read-only meanwhile) leaves the old
    // contents under the temporary name, as a crash would.
    let _ = std::fs::remove_file(tmp);
    Ok(())
}

/// Exchange the directory entries `a` and `b` atomically (both must exist); false
/// where the system refuses (then nothing changed).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> bool {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let (Ok(a), Ok(b)) = (
        CString::new(a.as_os_str().as_bytes()),
        CString::new(b.as_os_str().as_bytes()),
    ) else {
        return false;
    };
    // SAFETY: both pointers are to NUL-terminated strings (`CString`) that live across
    // the call; `renameat2` only reads them, and relative paths resolve against the
    // working directory (`AT_FDCWD`).
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    r == 0
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> bool {
    false
}

/// A new, empty file in `path`'s directory, named `.NAME.PID.N.tmp` with N counting
/// this process's calls, so threads writing the same path never share one.
fn create_temp(path: &Path) -> io::Result<(PathBuf, File)> {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?
        .to_string_lossy();
    // Room for the suffix within a file name's 255 bytes.
    let mut end = name.len().min(200);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    loop {
        let n = CALLS.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{}.{}.{n}.tmp", &name[..end], std::process::id()));
        // `create_new` never follows a link or reuses a file left by a crashed run.
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}
