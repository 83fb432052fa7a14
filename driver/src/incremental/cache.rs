//! A content-addressed compile cache on disk.
//!
//! The key is a BLAKE3 hash over everything that determines a compilation's
//! result: the tool version (with the executable's identity, so a rebuilt
//! compiler starts afresh), the input text, the pipeline, the rule files' and
//! SoC profiles' contents and the options that change the output. An entry
//! is one file, `DIR/ab/abcdef…` (the key in hex):
//!
//! ```text
//! "GECACHE1" | key (32 bytes) | payload length (u64 LE) | BLAKE3(payload) (32 bytes) | payload
//! ```
//!
//! A reader checks all four; anything else — a truncated write by a crashed
//! process, a flipped bit, another key's file — is *corrupt*: the entry is
//! removed and the caller compiles again. Writers store an entry with
//! `ge_ir::output::write`: a temporary file of their own (unique per process
//! and call) in the same directory renamed into place, so concurrent writers
//! of one key (who write the same bytes) and readers never see half an entry.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::out_text::OutText;

const MAGIC: &[u8; 8] = b"GECACHE1";
const HEADER: usize = 8 + 32 + 8 + 32;

/// A cache key: build it with [`KeyBuilder`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CacheKey(pub [u8; 32]);

impl CacheKey {
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
    /// The first 16 hex digits, for messages.
    pub fn short(&self) -> String {
        self.hex()[..16].to_string()
    }
}

/// Hashes labelled, length-prefixed fields, so no two different field lists
/// give the same byte stream.
pub struct KeyBuilder(blake3::Hasher);

impl KeyBuilder {
    /// A key for `tool` (use [`tool_version`] in tools).
    pub fn new(tool: &str) -> KeyBuilder {
        let mut k = KeyBuilder(blake3::Hasher::new());
        k.field("ge-compile-cache", b"1");
        k.field("tool", tool.as_bytes());
        k
    }
    pub fn field(&mut self, label: &str, bytes: &[u8]) -> &mut Self {
        self.0.update(&(label.len() as u64).to_le_bytes());
        self.0.update(label.as_bytes());
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }
    /// A field holding a file's contents, streamed through a small buffer: a
    /// cache hit then never touches a fresh input-sized allocation, whose
    /// page faults cost more than hashing it.
    pub fn file_field(
        &mut self,
        label: &str,
        path: impl AsRef<Path>,
    ) -> std::io::Result<&mut Self> {
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        self.0.update(&(label.len() as u64).to_le_bytes());
        self.0.update(label.as_bytes());
        self.0.update(&len.to_le_bytes());
        let mut buf = vec![0u8; 64 << 10];
        let mut seen = 0u64;
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.0.update(&buf[..n]);
            seen += n as u64;
        }
        if seen != len {
            // Written to while we read it: no key is right for it.
            return Err(std::io::Error::other("file changed while it was hashed"));
        }
        Ok(self)
    }
    pub fn finish(&self) -> CacheKey {
        CacheKey(*self.0.finalize().as_bytes())
    }
}

/// The compiler's version: the crate version plus the running executable's
/// size and modification time (a rebuilt tool has a new key space).
pub fn tool_version() -> String {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| {
                let t = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                format!("{}:{t}", m.len())
            })
            .unwrap_or_default();
        format!("ge {} ({exe})", env!("CARGO_PKG_VERSION"))
    })
    .clone()
}

/// The default cache directory: `$GE_CACHE_DIR`, else `$XDG_CACHE_HOME/ge`,
/// else `~/.cache/ge` (`%LOCALAPPDATA%\ge` on Windows).
pub fn default_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("GE_CACHE_DIR") {
        return Some(d);
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return Some(d.join("ge"));
    }
    if cfg!(windows) {
        if let Some(d) = env("LOCALAPPDATA") {
            return Some(d.join("ge"));
        }
    }
    env("HOME").map(|h| h.join(".cache").join("ge"))
}

/// A checked entry's payload. Mapped from disk when it can be, so a hit
/// copies nothing: entries are only ever replaced by rename or removed,
/// never written in place, so the mapping cannot change under us.
pub struct Entry {
    bytes: EntryBytes,
}

enum EntryBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl EntryBytes {
    /// The whole entry, header included.
    fn all(&self) -> &[u8] {
        match self {
            EntryBytes::Mapped(m) => m,
            EntryBytes::Read(v) => v,
        }
    }
}

impl std::ops::Deref for Entry {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes.all()[HEADER..]
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        **self == **other
    }
}
impl Eq for Entry {}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Entry({} bytes)", self.len())
    }
}

/// What a lookup found.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit(Entry),
    Miss,
    /// An entry was there but failed its checks (and was removed).
    Corrupt(String),
}

pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    /// Open (creating) a cache directory.
    pub fn open(dir: impl Into<PathBuf>) -> std::io::Result<CompileCache> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(CompileCache { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `key`'s entry lives.
    pub fn entry_path(&self, key: &CacheKey) -> PathBuf {
        let h = key.hex();
        self.dir.join(&h[..2]).join(&h[2..])
    }

    pub fn get(&self, key: &CacheKey) -> Lookup {
        let path = self.entry_path(key);
        let bytes = match read_entry(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Corrupt(format!("cannot read {}: {e}", path.display())),
        };
        match check(key, bytes.all()) {
            Ok(()) => Lookup::Hit(Entry { bytes }),
            Err(why) => {
                // Never used again; a concurrent writer may already have
                // replaced it with a good entry, which we then remove — the
                // cost is one more compile, not a wrong result.
                let _ = std::fs::remove_file(&path);
                Lookup::Corrupt(why)
            }
        }
    }

    /// Store `payload` under `key` (a new file renamed over the entry).
    pub fn put(&self, key: &CacheKey, payload: &[u8]) -> std::io::Result<()> {
        let path = self.entry_path(key);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let mut bytes = Vec::with_capacity(HEADER + payload.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&key.0);
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(blake3::hash(payload).as_bytes());
        bytes.extend_from_slice(payload);
        ge_ir::output::write(&path, &bytes)
    }
}

/// An entry's bytes: mapped (no fresh buffer to fault in), or read where
/// the file system cannot map files.
fn read_entry(path: &Path) -> std::io::Result<EntryBytes> {
    let f = std::fs::File::open(path)?;
    if f.metadata()?.len() >= HEADER as u64 {
        // SAFETY: entries are never modified in place (writers rename a new
        // file over them, readers of a corrupt one unlink it), so the mapped
        // bytes stay what they are while the mapping lives.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&f) } {
            return Ok(EntryBytes::Mapped(m));
        }
    }
    let mut v = Vec::new();
    (&f).read_to_end(&mut v)?;
    Ok(EntryBytes::Read(v))
}

fn check(key: &CacheKey, bytes: &[u8]) -> Result<(), String> {
    if bytes.len() < HEADER {
        return Err(format!("entry is truncated ({} bytes)", bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return Err("entry has a bad magic number".into());
    }
    if bytes[8..40] != key.0 {
        return Err("entry belongs to another key".into());
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[40..48]);
    let len = u64::from_le_bytes(len);
    if len != (bytes.len() - HEADER) as u64 {
        return Err(format!(
            "entry payload is {} bytes, its header says {len}",
            bytes.len() - HEADER
        ));
    }
    if blake3::hash(&bytes[HEADER..]).as_bytes() != &bytes[48..80] {
        return Err("entry checksum mismatch".into());
    }
    Ok(())
}

/// A ge-opt result as a cache payload: stdout and stderr.
pub fn encode_output(stdout: &str, stderr: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + stdout.len() + stderr.len());
    v.extend_from_slice(&(stdout.len() as u64).to_le_bytes());
    v.extend_from_slice(stdout.as_bytes());
    v.extend_from_slice(stderr.as_bytes());
    v
}

/// The payload of [`encode_output`] back as (stdout, stderr); stdout stays
/// in the entry's mapping.
pub fn decode_output(e: Entry) -> Option<(OutText, String)> {
    let n = u64::from_le_bytes(e.get(..8)?.try_into().ok()?) as usize;
    let end = n.checked_add(8).filter(|&end| end <= e.len())?;
    let err = std::str::from_utf8(&e[end..]).ok()?.to_string();
    Some((OutText::from_entry(e, 8..end)?, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(payload: &[u8]) -> Entry {
        let mut v = vec![0; HEADER];
        v.extend_from_slice(payload);
        Entry {
            bytes: EntryBytes::Read(v),
        }
    }

    #[test]
    fn output_payload_round_trips() {
        let p = encode_output("module {}\n", "warning\n");
        let (out, err) = decode_output(entry(&p)).expect("decodes");
        assert_eq!((&*out, err.as_str()), ("module {}\n", "warning\n"));
        assert!(decode_output(entry(&p[..5])).is_none());
        assert!(decode_output(entry(&p[..12])).is_none());
        let mut bad = p.clone();
        bad[8] = 0xff;
        assert!(decode_output(entry(&bad)).is_none(), "stdout not UTF-8");
    }

    #[test]
    fn hits_are_mapped_and_equal_what_was_put() {
        let dir = std::env::temp_dir().join(format!("ge-cache-unit-{}", std::process::id()));
        let c = CompileCache::open(&dir).expect("open");
        let k = KeyBuilder::new("t").field("x", b"1").finish();
        c.put(&k, b"payload").expect("put");
        match c.get(&k) {
            Lookup::Hit(e) => {
                assert!(matches!(e.bytes, EntryBytes::Mapped(_)));
                assert_eq!(&*e, b"payload");
            }
            other => panic!("{other:?}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn file_fields_hash_like_byte_fields() {
        let dir = std::env::temp_dir().join(format!("ge-cache-field-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("in.air");
        // Longer than the read buffer, so several reads make one field.
        let text: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &text).expect("write");
        let mut a = KeyBuilder::new("t");
        a.file_field("input", &p).expect("hash");
        let b = KeyBuilder::new("t").field("input", &text).finish();
        assert_eq!(a.finish(), b);
        assert!(KeyBuilder::new("t")
            .file_field("input", dir.join("missing"))
            .is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keys_separate_fields() {
        let a = KeyBuilder::new("t").field("a", b"bc").finish();
        let b = KeyBuilder::new("t").field("ab", b"c").finish();
        assert_ne!(a, b);
    }
}
