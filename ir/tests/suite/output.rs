//! `ge_ir::output`: what each kind of path gets (regular file, nothing yet, links,
//! FIFO, device, socket, `-`, `/proc/self/fd`).
//!
//! With the old writer's behaviour (always a temporary file renamed over the path)
//! forced for paths under the temporary directory, the device, FIFO, socket, link and
//! loop tests fail (tried once).

use ge_ir::output;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory for one test, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("ge-output-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// The directory's entries, sorted (no temporary file may be left behind).
    fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

#[test]
fn a_new_file_is_created_without_leaving_a_temporary_file() {
    let s = Scratch::new("new");
    output::write(s.path("out.txt"), b"hello").unwrap();
    assert_eq!(read(&s.path("out.txt")), "hello");
    assert_eq!(s.entries(), ["out.txt"]);
}

#[test]
fn a_regular_file_is_replaced_by_rename_keeping_its_permissions() {
    let s = Scratch::new("regular");
    let p = s.path("out.txt");
    std::fs::write(&p, "old contents, longer").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let inode = std::fs::metadata(&p).unwrap().ino();
    output::write_with(&p, |w| w.write_all(b"new")).unwrap();
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!(read(&p), "new");
    assert_ne!(
        m.ino(),
        inode,
        "replaced by a new file (rename), not written in place"
    );
    assert_eq!(m.permissions().mode() & 0o7777, 0o640);
    assert_eq!(s.entries(), ["out.txt"]);
}

#[test]
fn an_unsynced_write_still_replaces_the_file_by_rename() {
    let s = Scratch::new("unsynced");
    let p = s.path("out.om");
    std::fs::write(&p, "old contents, longer").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let inode = std::fs::metadata(&p).unwrap().ino();
    output::write_with_sync(&p, output::Durability::Unsynced, |w| w.write_all(b"new")).unwrap();
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!(read(&p), "new");
    assert_ne!(m.ino(), inode, "a new file renamed over the old one");
    assert_eq!(m.permissions().mode() & 0o7777, 0o600);
    assert_eq!(s.entries(), ["out.om"]);
    // A new path, and a failed fill, behave as with the flush.
    let q = s.path("new.om");
    output::write_with_sync(&q, output::Durability::Unsynced, |w| w.write_all(b"x")).unwrap();
    assert_eq!(read(&q), "x");
    let e = output::write_with_sync(&p, output::Durability::Unsynced, |_| {
        Err(std::io::Error::other("fill failed"))
    });
    assert!(e.is_err());
    assert_eq!(read(&p), "new");
    assert_eq!(s.entries(), ["new.om", "out.om"]);
}

#[test]
fn an_unsynced_replace_leaves_hard_links_and_open_readers_the_old_contents() {
    // The unsynced replace exchanges the names and unlinks the old file: to a hard
    // link or an open descriptor the old file stays as it was, as with a rename.
    let s = Scratch::new("unsynced-links");
    let p = s.path("out.om");
    std::fs::write(&p, "old").unwrap();
    std::fs::hard_link(&p, s.path("kept.om")).unwrap();
    let mut reader = std::fs::File::open(&p).unwrap();
    for new in ["new", "newer"] {
        output::write_with_sync(&p, output::Durability::Unsynced, |w| {
            w.write_all(new.as_bytes())
        })
        .unwrap();
        assert_eq!(read(&p), new);
        assert_eq!(s.entries(), ["kept.om", "out.om"]);
    }
    assert_eq!(read(&s.path("kept.om")), "old");
    let mut text = String::new();
    reader.read_to_string(&mut text).unwrap();
    assert_eq!(text, "old");
}

#[test]
fn a_failed_fill_leaves_the_old_file_and_no_temporary_file() {
    let s = Scratch::new("failed");
    let p = s.path("out.txt");
    std::fs::write(&p, "old").unwrap();
    let e = output::write_with(&p, |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("printer failed"))
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "printer failed");
    assert_eq!(read(&p), "old");
    assert_eq!(s.entries(), ["out.txt"]);
}

#[test]
fn a_symlink_to_a_regular_file_stays_a_link_and_its_target_is_replaced() {
    let s = Scratch::new("symlink");
    std::fs::create_dir(s.path("sub")).unwrap();
    let target = s.path("sub/target.txt");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    // link -> sub/hop -> target.txt: relative targets, resolved from each link's directory.
    std::os::unix::fs::symlink("target.txt", s.path("sub/hop")).unwrap();
    std::os::unix::fs::symlink("sub/hop", s.path("link")).unwrap();
    output::write(s.path("link"), b"new").unwrap();
    for l in ["link", "sub/hop"] {
        assert!(std::fs::symlink_metadata(s.path(l))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    assert_eq!(read(&target), "new");
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    assert_eq!(s.entries(), ["link", "sub"]);
}

#[test]
fn a_dangling_symlink_creates_its_target() {
    let s = Scratch::new("dangling");
    std::os::unix::fs::symlink("made.txt", s.path("link")).unwrap();
    output::write(s.path("link"), b"x").unwrap();
    assert!(std::fs::symlink_metadata(s.path("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read(&s.path("made.txt")), "x");
}

#[test]
fn a_symlink_into_a_missing_directory_is_an_error_naming_the_target() {
    let s = Scratch::new("missing-dir");
    std::os::unix::fs::symlink("nowhere/made.txt", s.path("link")).unwrap();
    let e = output::write(s.path("link"), b"x").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    assert!(e.to_string().contains("nowhere/made.txt"), "{e}");
    assert!(std::fs::symlink_metadata(s.path("link"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_symlink_loop_is_an_error() {
    let s = Scratch::new("loop");
    std::os::unix::fs::symlink("b", s.path("a")).unwrap();
    std::os::unix::fs::symlink("a", s.path("b")).unwrap();
    let e = output::write(s.path("a"), b"x").unwrap_err();
    assert!(e.to_string().contains("symbolic links"), "{e}");
}

#[test]
fn a_directory_is_an_error() {
    let s = Scratch::new("dir");
    let e = output::write(&s.0, b"x").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory);
}

#[test]
fn a_fifo_is_written_in_place_for_its_reader() {
    let s = Scratch::new("fifo");
    let p = s.path("pipe");
    mkfifo(&p);
    let reader = {
        let p = p.clone();
        std::thread::spawn(move || {
            let mut got = String::new();
            std::fs::File::open(p)
                .unwrap()
                .read_to_string(&mut got)
                .unwrap();
            got
        })
    };
    output::write_with(&p, |w| {
        w.write_all(b"through ")?;
        w.write_all(b"the pipe")
    })
    .unwrap();
    // Checked first: had the FIFO been replaced, its reader would wait forever.
    assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
    assert_eq!(reader.join().unwrap(), "through the pipe");
    assert_eq!(s.entries(), ["pipe"]);
}

#[test]
fn a_symlink_to_a_fifo_writes_into_the_fifo() {
    let s = Scratch::new("fifo-link");
    mkfifo(&s.path("pipe"));
    std::os::unix::fs::symlink("pipe", s.path("link")).unwrap();
    let reader = {
        let p = s.path("pipe");
        std::thread::spawn(move || std::fs::read(p).unwrap())
    };
    output::write(s.path("link"), b"abc").unwrap();
    assert!(std::fs::symlink_metadata(s.path("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::metadata(s.path("pipe"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(reader.join().unwrap(), b"abc");
}

/// A character device made here (`mknod`, root only): the machine's /dev/null is never
/// the test subject, so a regression cannot replace it.
#[test]
fn a_character_device_is_written_in_place() {
    let s = Scratch::new("device");
    let p = s.path("null");
    let made = Command::new("mknod")
        .arg(&p)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !made {
        eprintln!("skipped: mknod needs root");
        return;
    }
    let ino = std::fs::symlink_metadata(&p).unwrap().ino();
    output::write(&p, &[7u8; 100_000]).unwrap();
    let m = std::fs::symlink_metadata(&p).unwrap();
    assert!(m.file_type().is_char_device());
    assert_eq!(m.ino(), ino);
    assert_eq!(s.entries(), ["null"]);
}

#[test]
fn a_unix_socket_is_connected_to() {
    let s = Scratch::new("socket");
    let p = s.path("sock");
    let listener = std::os::unix::net::UnixListener::bind(&p).unwrap();
    let server = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut got = vec![];
        c.read_to_end(&mut got).unwrap();
        got
    });
    output::write(&p, b"over the socket").unwrap();
    // Checked first: had the socket been replaced, its server would wait forever.
    assert!(std::fs::symlink_metadata(&p)
        .unwrap()
        .file_type()
        .is_socket());
    assert_eq!(server.join().unwrap(), b"over the socket");
}

#[test]
fn an_open_descriptor_is_written_at_its_offset_through_proc_self_fd() {
    let s = Scratch::new("fd");
    let p = s.path("log.txt");
    std::fs::write(&p, "first\n").unwrap();
    let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    let ino = std::fs::metadata(&p).unwrap().ino();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    for link in [format!("/proc/self/fd/{fd}"), format!("/dev/fd/{fd}")] {
        output::write(&link, b"appended\n").unwrap();
    }
    drop(f);
    assert_eq!(read(&p), "first\nappended\nappended\n");
    assert_eq!(std::fs::metadata(&p).unwrap().ino(), ino);
}

#[test]
fn threads_writing_one_path_use_temporary_files_of_their_own() {
    let s = Scratch::new("threads");
    let p = s.path("out.txt");
    let texts: Vec<String> = (0..8)
        .map(|i| format!("writer {i} ").repeat(10_000))
        .collect();
    std::thread::scope(|sc| {
        for t in &texts {
            let p = &p;
            sc.spawn(move || output::write(p, t.as_bytes()).unwrap());
        }
    });
    assert!(texts.contains(&read(&p)), "one writer's whole text");
    assert_eq!(s.entries(), ["out.txt"]);
}

/// `-` and `/dev/stdout` in a child process (this test binary again, running only
/// `stdout_child`), whose stdout is a pipe and then a regular file.
#[test]
fn dash_and_dev_stdout_write_to_stdout() {
    let s = Scratch::new("stdout");
    let child = || {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.args([
            "--exact",
            "output::stdout_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("GE_OUTPUT_CHILD", "1");
        c
    };
    let out = child().output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("<dash><dev-stdout><proc-fd-1>"), "{text}");
    // Stdout redirected into a file: written in place, not replaced.
    let p = s.path("captured.txt");
    let f = std::fs::File::create(&p).unwrap();
    let ino = f.metadata().unwrap().ino();
    let st = child().stdout(f).status().unwrap();
    assert!(st.success());
    assert!(read(&p).contains("<dash><dev-stdout><proc-fd-1>"));
    assert_eq!(std::fs::metadata(&p).unwrap().ino(), ino);
}

#[test]
fn stdout_child() {
    if std::env::var_os("GE_OUTPUT_CHILD").is_none() {
        return;
    }
    output::write("-", b"<dash>").unwrap();
    output::write("/dev/stdout", b"<dev-stdout>").unwrap();
    output::write("/proc/self/fd/1", b"<proc-fd-1>").unwrap();
}
