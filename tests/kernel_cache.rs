//! The on-disk PTX cache (NVRTC tier: needs NVRTC, not a GPU): a module compiled by one process is
//! loaded by the next; the key follows the NVRTC version, the options, the architecture and the
//! source; damaged entries are recompiled; `DLSPAN_CACHE_DIR=off` and unwritable directories
//! only cost compilations; compile errors name the kernel's Rust lines. "Processes" here are this
//! test binary run again as a child (`child_process`, which does nothing unless asked).
#![cfg(feature = "cuda")]

#[macro_use]
mod cuda_support;

use dlspan::cuda::kernel::{
    CACHE_ENV, CacheKey, CompileInput, DiskCache, ModuleKey, Origin, compile_ptx_with, compile_source, fnv1a_128,
    nvrtc_version,
};
use dlspan::cuda::{CudaError, CudaLibrary, KernelKind};
use dlspan::kernel::{Declared, Scalar};
use std::path::{Path, PathBuf};
use std::process::Command;

dlspan::elementwise! {
    /// `a·x + out`, the kernel these tests compile.
    pub fn saxpy<T: Scalar>(a: T, x: &T, out: &mut T) {
        *out = a * *x + *out;
    }
}

/// The module the tests cache.
fn saxpy_key() -> ModuleKey {
    ModuleKey::elementwise(saxpy::instance::<f32>()).expect("a module")
}

/// A fresh, empty directory of this test's own under the build's temporary folder.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel-cache").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test directory");
    dir
}

/// The files in `dir` (none when it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.map(|e| e.expect("a directory entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// The environment variable that makes this binary's `child_process` run.
const CHILD: &str = "DLSPAN_CACHE_TEST_CHILD";

/// This test binary run as a child: `child_process` with `role`, the cache setting `setting`
/// (`None`: unset), `$XDG_CACHE_HOME` at `xdg`; returns its report line (`child: ...`).
fn spawn(role: &str, setting: Option<&Path>, xdg: &Path, nvrtc_path: bool) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["--exact", "child_process", "--nocapture", "--test-threads=1"])
        .env(CHILD, role)
        .env("XDG_CACHE_HOME", xdg)
        .stdout(std::process::Stdio::piped());
    match setting {
        Some(value) => command.env(CACHE_ENV, value),
        None => command.env_remove(CACHE_ENV),
    };
    if !nvrtc_path {
        command.env("LD_LIBRARY_PATH", "");
    }
    command.spawn().expect("run the test binary again")
}

/// The report of a finished child (after `child: `; the test harness prints its own words first).
fn report(child: std::process::Child) -> String {
    let out = child.wait_with_output().expect("the child's output");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "the child failed: {stdout}");
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("child: ").map(|(_, report)| report))
        .unwrap_or_else(|| panic!("no report in {stdout}"));
    line.to_owned()
}

/// One child run to its end.
fn run_child(role: &str, setting: Option<&Path>, xdg: &Path) -> String {
    report(spawn(role, setting, xdg, true))
}

/// Run as a child by the tests below (does nothing in a plain run): `compile` compiles the saxpy
/// module through the process's cache (`DiskCache::global()`, from the environment) and reports
/// where it came from; `no-nvrtc` reports what compiling does without NVRTC.
#[test]
fn child_process() {
    let Ok(role) = std::env::var(CHILD) else { return };
    match role.as_str() {
        "compile" => {
            let cache = DiskCache::global();
            assert!(nvrtc_version().is_some(), "NVRTC's version");
            let compiled = compile_ptx_with(&saxpy_key(), "compute_90", cache).expect("the module compiles");
            println!(
                "child: origin={:?} ptx={:032x} dir={}",
                compiled.origin,
                fnv1a_128(compiled.ptx.as_bytes()),
                cache.dir().map_or("none".to_owned(), |d| d.display().to_string()),
            );
        }
        "no-nvrtc" => {
            let result = compile_ptx_with(&saxpy_key(), "compute_90", DiskCache::global());
            let present = dlspan::cuda::nvrtc_present();
            match result {
                Err(CudaError::LibraryMissing { library: CudaLibrary::Nvrtc }) if !present => {
                    println!("child: nvrtc=absent error=LibraryMissing")
                }
                Ok(_) if present => println!("child: nvrtc=present"),
                other => panic!("NVRTC present: {present}, compile: {:?}", other.map(|c| c.origin)),
            }
        }
        other => panic!("unknown child role {other}"),
    }
}

/// The field `name=` of a child's report.
fn field<'a>(report: &'a str, name: &str) -> &'a str {
    report
        .split(' ')
        .find_map(|f| f.strip_prefix(name).and_then(|f| f.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

/// The cache crosses processes: the first compiles and stores, the second loads the same PTX, and
/// neither is told more than `DLSPAN_CACHE_DIR` (whose `kernels/` holds the PTX).
#[test]
fn a_second_process_loads_the_module_from_disk() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("processes");
    let xdg = fresh_dir("processes-xdg");
    let first = run_child("compile", Some(&dir), &xdg);
    let second = run_child("compile", Some(&dir), &xdg);
    assert_eq!(field(&first, "origin"), "Nvrtc", "{first}");
    assert_eq!(field(&second, "origin"), "Disk", "{second}");
    assert_eq!(field(&first, "ptx"), field(&second, "ptx"));
    let kernels = dir.join("kernels");
    assert_eq!(field(&first, "dir"), kernels.display().to_string());
    assert_eq!(files(&kernels).len(), 1, "one entry, no temporary file left: {:?}", files(&kernels));
    assert_eq!(files(&dir), [kernels], "nothing else under the root");
    assert!(files(&xdg).is_empty(), "the setting moved the cache away from the default");
}

/// Unset, the cache lives under `$XDG_CACHE_HOME/dlspan/kernels`; `off` disables it.
#[test]
fn the_default_directory_and_off() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let xdg = fresh_dir("default-xdg");
    let default = xdg.join("dlspan").join("kernels");
    let first = run_child("compile", None, &xdg);
    let second = run_child("compile", None, &xdg);
    assert_eq!(field(&first, "dir"), default.display().to_string());
    assert_eq!((field(&first, "origin"), field(&second, "origin")), ("Nvrtc", "Disk"));
    assert_eq!(files(&default).len(), 1);

    let xdg = fresh_dir("off-xdg");
    let off = Path::new("off");
    let first = run_child("compile", Some(off), &xdg);
    let second = run_child("compile", Some(off), &xdg);
    assert_eq!(field(&first, "dir"), "none");
    assert_eq!((field(&first, "origin"), field(&second, "origin")), ("Nvrtc", "Nvrtc"));
    assert!(files(&xdg).is_empty(), "off writes nothing: {:?}", files(&xdg));
}

/// Processes compiling one module at once all succeed, and leave one whole entry (each writes a
/// temporary file of its own and renames it into place).
#[test]
fn concurrent_processes_leave_one_whole_entry() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("concurrent");
    let xdg = fresh_dir("concurrent-xdg");
    let children: Vec<_> = (0..4).map(|_| spawn("compile", Some(&dir), &xdg, true)).collect();
    let reports: Vec<String> = children.into_iter().map(report).collect();
    let ptx = field(&reports[0], "ptx");
    assert!(reports.iter().all(|r| field(r, "ptx") == ptx), "{reports:?}");
    assert_eq!(files(&dir.join("kernels")).len(), 1, "{:?}", files(&dir.join("kernels")));
    assert_eq!(field(&run_child("compile", Some(&dir), &xdg), "origin"), "Disk");
}

/// Without NVRTC, compiling is the typed error it always was, even when the cache has the module
/// (its key needs NVRTC's version).
#[test]
fn without_nvrtc_the_cache_does_not_hide_the_missing_library() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("no-nvrtc");
    let xdg = fresh_dir("no-nvrtc-xdg");
    assert_eq!(field(&run_child("compile", Some(&dir), &xdg), "origin"), "Nvrtc");
    let line = report(spawn("no-nvrtc", Some(&dir), &xdg, false));
    // Where NVRTC is installed system-wide the child finds it anyway; here it comes from
    // LD_LIBRARY_PATH only.
    assert!(line == "nvrtc=absent error=LibraryMissing" || line == "nvrtc=present", "{line}");
    println!("without LD_LIBRARY_PATH: {line}");
}

/// Two caches on one directory (as two processes would have): the second loads what the first
/// compiled, byte for byte, and much faster.
#[test]
fn a_fresh_cache_on_the_same_directory_hits() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("fresh");
    let first = DiskCache::at(&dir);
    let compiled = compile_ptx_with(&saxpy_key(), "compute_90", &first).expect("compiles");
    assert_eq!(compiled.origin, Origin::Nvrtc);
    assert_eq!((first.misses(), first.stores()), (1, 1));

    let second = DiskCache::at(&dir);
    let loaded = compile_ptx_with(&saxpy_key(), "compute_90", &second).expect("loads");
    assert_eq!(loaded, dlspan::cuda::kernel::Compiled { ptx: compiled.ptx, origin: Origin::Disk });
    assert_eq!((second.hits(), second.stores()), (1, 0));
}

/// A change of architecture, options or source is another entry; each is then a hit.
#[test]
fn the_key_follows_architecture_options_and_source() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("key");
    let cache = DiskCache::at(&dir);
    let source = "extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }";
    let other_source = "extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= 3.0f; }";
    let options = |arch: &str, fmad: bool| vec![format!("--gpu-architecture={arch}"), format!("--fmad={fmad}")];
    let variants = [
        (source, options("compute_90", false)),
        (source, options("compute_80", false)),
        (source, options("compute_90", true)),
        (other_source, options("compute_90", false)),
    ];
    let compile = |(source, options): &(&str, Vec<String>)| {
        let input = CompileInput { source, name: "k.cu", options, declared: None, instance: "" };
        compile_source(&input, &cache).expect("compiles")
    };
    let compiled: Vec<_> = variants.iter().map(compile).collect();
    assert!(compiled.iter().all(|c| c.origin == Origin::Nvrtc));
    assert!(compiled[1].ptx.contains(".target sm_80") && compiled[0].ptx.contains(".target sm_90"));
    assert_eq!(files(&dir).len(), variants.len());
    for (variant, first) in variants.iter().zip(&compiled) {
        let again = compile(variant);
        assert_eq!((again.origin, &again.ptx), (Origin::Disk, &first.ptx));
    }
    // And the NVRTC version is part of the key.
    let version = nvrtc_version().expect("NVRTC's version");
    let key = CacheKey::new(version, "k.cu", &variants[0].1, source);
    let older = CacheKey::new((version.0 - 1, version.1), "k.cu", &variants[0].1, source);
    assert!(dir.join(key.file_name()).is_file() && !dir.join(older.file_name()).exists());
}

/// A truncated, corrupt or foreign entry is refused and compiled again, and the entry repaired.
#[test]
fn a_damaged_entry_is_recompiled() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("damaged");
    let good = compile_ptx_with(&saxpy_key(), "compute_90", &DiskCache::at(&dir)).expect("compiles");
    let [entry] = files(&dir).try_into().expect("one entry");
    let bytes = std::fs::read(&entry).expect("read the entry");
    // An entry of another module under this one's name: the same format, another key.
    let other = DiskCache::at(fresh_dir("damaged-other"));
    compile_ptx_with(&ModuleKey::new::<f32, f32>(KernelKind::Add).expect("a module"), "compute_90", &other)
        .expect("compiles");
    let [foreign] = files(other.dir().expect("a directory")).try_into().expect("one entry");
    let foreign = std::fs::read(foreign).expect("read the entry");
    let mut flipped = bytes.clone();
    let last = flipped.len() - 2;
    flipped[last] ^= 0x20;
    let damages: [(&str, Vec<u8>); 5] = [
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("a flipped PTX byte", flipped),
        ("another key's entry", foreign),
        ("not an entry", b"garbage\n".to_vec()),
    ];
    for (damage, content) in damages {
        std::fs::write(&entry, &content).expect("damage the entry");
        let cache = DiskCache::at(&dir);
        let compiled = compile_ptx_with(&saxpy_key(), "compute_90", &cache).expect("compiles");
        assert_eq!((compiled.origin, cache.rejected(), cache.stores()), (Origin::Nvrtc, 1, 1), "{damage}");
        assert_eq!(compiled.ptx, good.ptx, "{damage}");
        assert_eq!(std::fs::read(&entry).expect("the repaired entry"), bytes, "{damage}: repaired");
        let again = compile_ptx_with(&saxpy_key(), "compute_90", &DiskCache::at(&dir)).expect("loads");
        assert_eq!(again.origin, Origin::Disk, "{damage}");
    }
}

/// `off` compiles every time; a directory that cannot be created compiles without caching.
#[test]
fn off_and_unwritable_directories_compile_without_caching() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let off = DiskCache::off();
    for _ in 0..2 {
        assert_eq!(compile_ptx_with(&saxpy_key(), "compute_90", &off).expect("compiles").origin, Origin::Nvrtc);
    }
    assert_eq!((off.hits(), off.misses(), off.stores()), (0, 0, 0));
    // Under a regular file no directory can be made, whoever runs the test (root included).
    let blocker = fresh_dir("unwritable").join("a-file");
    std::fs::write(&blocker, b"not a directory").expect("write the file");
    let cache = DiskCache::at(blocker.join("kernels"));
    for _ in 0..2 {
        assert_eq!(compile_ptx_with(&saxpy_key(), "compute_90", &cache).expect("compiles").origin, Origin::Nvrtc);
    }
    assert_eq!((cache.hits(), cache.stores()), (0, 0));
}

/// A kernel NVRTC refuses is reported at its declaration and its own lines, whatever the kernel
/// kind (the entry point raw kernels use too); NVRTC's own log stays reachable; nothing is cached.
#[test]
fn compile_errors_name_the_declaration_and_the_users_lines() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("errors");
    let source = "#line 12 \"src/raw.rs\"\nextern \"C\" __global__ void halve(float* p) {\n#line 13 \"src/raw.rs\"\n  p[threadIdx.x] = p[threadIdx.x] / two;\n}\n";
    let declared = Declared {
        what: "kernel",
        name: "halve",
        file: "src/raw.rs",
        line: 11,
        lines: &[(12, "fn halve(p: &mut [f32]) {"), (13, "p[threadIdx.x] = p[threadIdx.x] / two;")],
    };
    let options = ["--gpu-architecture=compute_90".to_owned()];
    let input = CompileInput {
        source,
        name: "dlspan_halve.cu",
        options: &options,
        declared: Some(declared),
        instance: "halve<float32>",
    };
    let cache = DiskCache::at(&dir);
    let Err(CudaError::Compile { kernel, log, nvrtc_log, .. }) = compile_source(&input, &cache) else {
        panic!("the kernel compiled");
    };
    assert_eq!(kernel, "halve<float32> (src/raw.rs:11)");
    assert!(log.starts_with("kernel `halve` declared at src/raw.rs:11 did not compile for halve<float32>:"), "{log}");
    assert!(log.contains("src/raw.rs:13: error: identifier \"two\" is undefined"), "{log}");
    assert!(log.contains("    13 | p[threadIdx.x] = p[threadIdx.x] / two;"), "{log}");
    assert!(!log.contains("dlspan_halve.cu") && !log.contains("generated code"), "{log}");
    assert!(nvrtc_log.contains("src/raw.rs(13): error"), "{nvrtc_log}");
    assert!(files(&dir).is_empty(), "a failed compilation stores nothing");
    println!("{log}");
}

/// A NUL byte in a program's source, name or options is a typed error (NVRTC reads C strings),
/// not a panic, and nothing is cached.
#[test]
fn a_nul_byte_in_a_program_is_a_typed_error() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let dir = fresh_dir("nul");
    let cache = DiskCache::at(&dir);
    let good = ["--gpu-architecture=compute_90".to_owned()];
    let bad = ["--gpu-architecture=compute_90\0".to_owned()];
    let inputs = [
        ("source", "extern \"C\" __global__ void k() {}\0", "k.cu", &good),
        ("name", "extern \"C\" __global__ void k() {}", "k\0.cu", &good),
        ("an option", "extern \"C\" __global__ void k() {}", "k.cu", &bad),
    ];
    for (what, source, name, options) in inputs {
        let input = CompileInput { source, name, options, declared: None, instance: "" };
        match compile_source(&input, &cache) {
            Err(CudaError::Compile { result, log, .. }) => {
                assert_eq!(result, cudarc::nvrtc::sys::nvrtcResult::NVRTC_ERROR_INVALID_INPUT, "{what}");
                assert!(log.contains(&format!("the program's {what} holds a NUL byte")), "{log}");
            }
            other => panic!("{what}: {:?}", other.map(|c| c.origin)),
        }
    }
    assert!(files(&dir).is_empty());
}
