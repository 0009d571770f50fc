//! The CPU's cache of raw kernels on disk (rules K9 and K11): another local user cannot put code
//! into a process through it, a damaged entry is rebuilt, a link is never followed, and an
//! unusable directory only costs the build. Each case runs this test binary again as a child with
//! the environment it needs (`child`, which does nothing unless asked) and reads its result and
//! its standard error. Needs a host C++ compiler (`c++`, `g++` or `$CXX`) and, for the planted
//! library, `cc`.
#![allow(missing_docs)]
#![cfg(unix)]

use dlspan::kernel::{Cpu, LaunchConfig, fnv1a_128};
use dlspan::{HostMdspan, HostMdspanMut};
use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

dlspan::kernel! {
    /// `out(i) = 3·x(i) + 1`, the kernel these tests build and cache.
    pub fn affine(x: &[f64; 1], out: &mut [f64; 1]) {
        r#"
        const dl::index_t i = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < out.extent(0)) out(i) = 3.0 * x(i) + 1.0;
        "#
    }
}

/// Set in a child: it runs the kernel and checks its result.
const CHILD: &str = "DLSPAN_CPU_CACHE_TEST_CHILD";

/// Run as a child by the tests below (does nothing in a plain run): builds or loads `affine` and
/// checks what it computed.
#[test]
fn child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let x = [1.0, 2.0, 3.0, 4.0];
    let mut out = [0.0f64; 4];
    let xv = HostMdspan::<f64, 1>::from_slice(&x, [4]).unwrap();
    let mut ov = HostMdspanMut::<f64, 1>::from_slice(&mut out, [4]).unwrap();
    // SAFETY: each of the 4 threads writes its own element of `out` and reads `x` within its extent.
    unsafe { affine.launch(Cpu, LaunchConfig::new([1, 1, 1], [4, 1, 1]), &xv, &mut ov) }.unwrap();
    assert_eq!(out, [4.0, 7.0, 10.0, 13.0], "the kernel's own results");
    println!("child: ran");
}

/// A fresh directory of this test's own, `0700`, under the build's temporary folder.
fn fresh(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpu-kernel-cache").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

/// This binary run as a child in the environment given: `set` added, `unset` removed.
fn run(set: &[(&str, &Path)], unset: &[&str]) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "child", "--nocapture", "--test-threads=1"]).env(CHILD, "1");
    for (name, value) in set {
        command.env(name, value);
    }
    for name in unset {
        command.env_remove(name);
    }
    command.output().unwrap()
}

/// Runs a child with its caches under `root` and checks that the kernel computed its own results.
fn run_in(root: &Path) -> Output {
    let output = run(&[("DLSPAN_CACHE_DIR", root)], &[]);
    assert_ran(&output);
    output
}

fn assert_ran(output: &Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && stdout.contains("child: ran"), "the child failed: {stdout}\n{stderr}");
}

/// The cache's entry after one build: its library and its key file.
fn entry(cpu: &Path) -> (PathBuf, PathBuf) {
    let mut files: Vec<PathBuf> = fs::read_dir(cpu).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(files.len(), 2, "a library and its key, no source, build directory or temporary file: {names:?}");
    let (key, library) = (files[0].clone(), files[1].clone());
    assert_eq!(key.extension().unwrap(), "key");
    assert_eq!(library.extension().unwrap(), "so");
    assert_eq!(key.file_stem(), library.file_stem());
    (library, key)
}

/// A library that runs code when loaded, as another user would plant: its constructor creates
/// `marker`, and its launch entry computes nothing.
fn planted_library(dir: &Path, marker: &Path) -> Vec<u8> {
    let source = dir.join("planted.c");
    let library = dir.join("planted.so");
    fs::write(
        &source,
        format!(
            "#include <stdio.h>\n\
             __attribute__((constructor)) static void planted(void) {{\n\
               FILE* f = fopen(\"{}\", \"w\"); if (f) {{ fputs(\"planted code ran\", f); fclose(f); }}\n\
             }}\n\
             int dlspan_raw_launch(const void* launch, const void* args) {{ return 0; }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let status = Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&library).arg(&source).status().unwrap();
    assert!(status.success(), "cc builds the planted library");
    fs::read(library).unwrap()
}

/// A key file naming `library` as the entry of the key in `genuine` (the format is public: anyone
/// who can write the directory can write a matching one).
fn forged_key(genuine: &[u8], library: &[u8]) -> Vec<u8> {
    let mut lines = genuine.splitn(3, |&b| b == b'\n');
    let (magic, _, key) = (lines.next().unwrap(), lines.next().unwrap(), lines.next().unwrap());
    let mut forged = magic.to_vec();
    forged.extend_from_slice(format!("\n{} {:032x}\n", library.len(), fnv1a_128(library)).as_bytes());
    forged.extend_from_slice(key);
    forged
}

/// Plants, in `cpu` (made here), the entry of `affine` with a library whose constructor creates
/// `marker`; `genuine` is a cache that holds the real entry.
fn plant(cpu: &Path, genuine: &Path, marker: &Path, scratch: &Path) {
    let (library, key) = entry(genuine);
    let planted = planted_library(scratch, marker);
    fs::create_dir_all(cpu).unwrap();
    fs::write(cpu.join(library.file_name().unwrap()), &planted).unwrap();
    fs::write(cpu.join(key.file_name().unwrap()), forged_key(&fs::read(key).unwrap(), &planted)).unwrap();
}

/// Whether the kernel cache was refused with its one warning.
fn warned(output: &Output) -> bool {
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr.matches("dlspan: warning: not using").count() == 1
}

#[test]
fn a_library_planted_in_a_directory_others_can_write_never_runs() {
    let genuine = fresh("planted-genuine");
    run_in(&genuine);
    let root = fresh("planted");
    let marker = root.join("marker");
    plant(&root.join("cpu"), &genuine.join("cpu"), &marker, &fresh("planted-scratch"));
    // The planted entry is whole: in a directory of the user's own it would be loaded (the test
    // can fail: the refusal below is what keeps the planted code out).
    let output = run(&[("DLSPAN_CACHE_DIR", &root)], &[]);
    assert!(marker.exists(), "a whole entry of the user's own is loaded: {output:?}");
    fs::remove_file(&marker).unwrap();
    // Another user could have made it: the directory is writable by all.
    fs::set_permissions(root.join("cpu"), fs::Permissions::from_mode(0o777)).unwrap();
    let output = run_in(&root);
    assert!(!marker.exists(), "the planted library was loaded");
    assert!(warned(&output), "{}", String::from_utf8_lossy(&output.stderr));
    // A directory above it writable by all (not sticky): the same.
    fs::set_permissions(root.join("cpu"), fs::Permissions::from_mode(0o700)).unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
    let output = run_in(&root);
    assert!(!marker.exists(), "the planted library was loaded");
    assert!(warned(&output));
    fs::set_permissions(&root, fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn a_library_planted_by_another_user_never_runs() {
    if geteuid() != 0 {
        eprintln!("skipped: a directory of another user needs root to make (chown); the mode cases cover others");
        return;
    }
    let genuine = fresh("foreign-genuine");
    run_in(&genuine);
    let root = fresh("foreign");
    let marker = root.join("marker");
    plant(&root.join("cpu"), &genuine.join("cpu"), &marker, &fresh("foreign-scratch"));
    // Owned by another uid (nobody's), mode 0755: only its owner can write there.
    let cpu = root.join("cpu");
    for path in fs::read_dir(&cpu).unwrap().map(|e| e.unwrap().path()).chain([cpu.clone()]) {
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    }
    fs::set_permissions(&cpu, fs::Permissions::from_mode(0o755)).unwrap();
    let output = run_in(&root);
    assert!(!marker.exists(), "another user's library was loaded");
    assert!(String::from_utf8_lossy(&output.stderr).contains("owned by uid 65534"), "{output:?}");
}

unsafe extern "C" {
    /// The C library's: takes no argument, cannot fail, touches no memory.
    safe fn geteuid() -> u32;
}

#[test]
fn without_a_home_nothing_is_cached_and_the_temporary_directory_is_not_trusted() {
    let tmp = fresh("no-home-tmp");
    // What the cache used to fall back to, planted by another user: never read.
    let shared = tmp.join("dlspan-cpu");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
    let marker = tmp.join("marker");
    let genuine = fresh("no-home-genuine");
    run_in(&genuine);
    let (library, _) = entry(&genuine.join("cpu"));
    fs::write(shared.join(library.file_name().unwrap()), planted_library(&fresh("no-home-scratch"), &marker)).unwrap();
    let before: Vec<_> = fs::read_dir(&shared).unwrap().map(|e| e.unwrap().path()).collect();
    for _ in 0..2 {
        let output = run(&[("TMPDIR", &tmp)], &["HOME", "XDG_CACHE_HOME", "DLSPAN_CACHE_DIR"]);
        assert_ran(&output);
        assert!(!warned(&output), "no cache was asked for: nothing to warn about");
    }
    assert!(!marker.exists());
    // Built in a private directory of the process, removed after loading: nothing left behind.
    let left: Vec<_> = fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["dlspan-cpu"], "only the planted directory: {left:?}");
    assert_eq!(fs::read_dir(&shared).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>(), before);
}

#[test]
fn a_damaged_or_replaced_library_is_rebuilt() {
    let root = fresh("damaged");
    run_in(&root);
    let (library, key) = entry(&root.join("cpu"));
    let good = fs::read(&library).unwrap();
    let key_bytes = fs::read(&key).unwrap();
    // Empty (a crash before the data reached the disk), truncated (loading it was a SIGBUS),
    // another library of the right length: each is built again, and the entry repaired.
    let mut other = good.clone();
    other[good.len() / 2] ^= 0xff;
    for damaged in [Vec::new(), good[..good.len() / 2].to_vec(), other] {
        fs::write(&library, &damaged).unwrap();
        run_in(&root);
        assert_eq!(fs::read(&library).unwrap(), good, "the entry is rebuilt");
        assert_eq!(fs::read(&key).unwrap(), key_bytes);
    }
    // A key file of another key (another target, say) or damaged: rebuilt too.
    let text = String::from_utf8(key_bytes.clone()).unwrap();
    for damaged in
        [text.replacen("target ", "target other-", 1).into_bytes(), key_bytes[..key_bytes.len() / 2].to_vec()]
    {
        fs::write(&key, &damaged).unwrap();
        run_in(&root);
        assert_eq!(fs::read(&key).unwrap(), key_bytes, "the key file is rewritten");
    }
    assert!(text.contains(&format!("target {}", std::env::consts::ARCH)), "the target is in the key: {text}");
    assert!(text.contains(&format!("dlspan {}", env!("CARGO_PKG_VERSION"))), "dlspan's version is in the key");
}

#[test]
fn links_in_the_cache_are_not_followed() {
    let root = fresh("links");
    run_in(&root);
    let (library, key) = entry(&root.join("cpu"));
    let good = fs::read(&library).unwrap();
    let victim = fresh("links-victim").join("victim");
    fs::write(&victim, b"a file of the user's that the cache must not write").unwrap();
    for path in [&library, &key] {
        fs::remove_file(path).unwrap();
        std::os::unix::fs::symlink(&victim, path).unwrap();
        run_in(&root);
        assert!(!fs::symlink_metadata(path).unwrap().file_type().is_symlink(), "the link is replaced");
        assert_eq!(fs::read(&victim).unwrap(), b"a file of the user's that the cache must not write");
    }
    assert_eq!(fs::read(&library).unwrap(), good);
}

#[test]
fn an_unusable_cache_directory_only_costs_the_build() {
    // Under a regular file no directory can be made, whoever runs the test (root included).
    let blocker = fresh("unusable").join("a-file");
    fs::write(&blocker, b"not a directory").unwrap();
    for _ in 0..2 {
        let output = run_in(&blocker.join("cache"));
        assert!(warned(&output), "{}", String::from_utf8_lossy(&output.stderr));
    }
    // `off`: never cached, never warned.
    let output = run(&[("DLSPAN_CACHE_DIR", Path::new("off"))], &[]);
    assert_ran(&output);
    assert!(!warned(&output));
}

#[test]
fn created_directories_are_private() {
    use std::os::unix::fs::MetadataExt as _;
    let root = fresh("modes").join("a").join("b");
    run_in(&root);
    for dir in [root.parent().unwrap().to_owned(), root.clone(), root.join("cpu")] {
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700, "{}", dir.display());
    }
    let (library, key) = entry(&root.join("cpu"));
    for file in [library, key] {
        assert_eq!(fs::metadata(&file).unwrap().mode() & 0o077, 0, "{}: no access for others", file.display());
    }
}

#[test]
fn build_directories_left_by_ended_processes_are_removed_after_a_day() {
    let root = fresh("stale");
    run_in(&root);
    let cpu = root.join("cpu");
    let (old, recent) = (cpu.join(".build-0123456789abcdef"), cpu.join(".build-fedcba9876543210"));
    for dir in [&old, &recent] {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("kernel.cpp"), b"left by a process that ended").unwrap();
    }
    let two_days = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 24 * 60 * 60);
    fs::File::open(&old).unwrap().set_modified(two_days).unwrap();
    run_in(&root);
    assert!(!old.exists(), "a day-old build directory is removed");
    assert!(recent.exists(), "a recent one may belong to a running build");
}
