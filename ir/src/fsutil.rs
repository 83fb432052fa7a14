//! Writing files safely: a temporary file in the same directory, then rename.

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically: readers see the old file or the new one, never half of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, &mut |w| w.write_all(bytes))
}

/// Like [`write_atomic`], with the contents produced by `fill` into a buffered
/// writer (for outputs too large to build in memory first).
pub fn write_atomic_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let res = (|| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        fill(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}
