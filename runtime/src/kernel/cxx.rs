//! Raw kernels on the CPU: each instantiation's C++ (`RawInstance::source_cpu`) built by the host
//! C++ compiler into a shared library (`-DDLSPAN_CPU -ffp-contract=off`), cached in memory for the
//! process and on disk by the hash of source, compiler and flags, loaded, and run: the grid's
//! blocks in parallel on OS threads, a block's threads as fibers that switch at `__syncthreads()`
//! (`dlspan.cuh`, `dl_cpu_run_kernel`).

use super::cachedir::{cache_root, fnv1a_128, open_cache};
use super::private::{TempDir, publish, read_private, write_new};
use super::raw::{KernelError, LaunchConfig, RawInstance};
use super::stacks::{CpuStacks, Lease};
use core::fmt::Write as _;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The flags every CPU build gets: optimised, position-independent, exact floating point (no
/// contraction, as NVRTC's `--fmad=false`), no C++ exceptions (device code has none: a `throw` is
/// a compile error, as under NVRTC), and stack probes (a frame larger than a thread's stack faults
/// at its guard page rather than jumping it into another thread's stack).
const FLAGS: &[&str] = &[
    "-std=c++17",
    "-O2",
    "-fPIC",
    "-shared",
    "-pthread",
    "-DDLSPAN_CPU",
    "-ffp-contract=off",
    "-fno-fast-math",
    "-fno-exceptions",
    "-fstack-clash-protection",
];

/// The stack of each thread of a block (a fiber), in bytes: what a GPU gives a thread's local
/// memory at most (512 KiB), so a kernel whose frame fits on the GPU fits on the CPU. Mapped
/// without reserving: only the pages a thread touches cost memory ([`Lease`]).
const STACK_BYTES: usize = 512 * 1024;

/// What ended a launch early, as `dl_cpu_report` (dlspan.cuh) fills it.
#[repr(C)]
#[derive(Default)]
struct CpuReport {
    code: u32,
    block: [u32; 3],
    threads: [[u32; 3]; 2],
    lines: [u32; 2],
}

/// The launch as `dl_cpu_launch` (dlspan.cuh) reads it.
#[repr(C)]
pub(crate) struct CpuLaunch {
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u64,
    /// One set of stacks per worker.
    stacks: *const CpuStacks,
    workers: u32,
    reserved: u32,
    report: *mut CpuReport,
}

/// `extern "C" int dlspan_raw_launch(const dl_cpu_launch*, const void*)`.
type LaunchFn = unsafe extern "C" fn(*const CpuLaunch, *const u8) -> i32;

/// `extern "C" int <entry>(const dl_cpu_launch*, const void*)`: runs one kernel of a library over a
/// grid (`dl_cpu_run_kernel`), its parameters at the pointer; what [`run_entry`] calls.
pub(crate) type EntryFn = LaunchFn;

/// A loaded library of one instantiation.
struct Built {
    /// Kept loaded while the function may be called: for the whole process.
    _library: Library,
    launch: LaunchFn,
}

/// A library built by the host C++ compiler and loaded: kept loaded for as long as it lives (the
/// callers keep theirs for the process).
pub(crate) struct Library {
    library: libloading::Library,
    path: String,
}

impl Library {
    /// The launch entry `symbol` (a NUL-terminated name) of the library.
    ///
    /// # Errors
    ///
    /// [`KernelError::Load`] when the library has no such symbol.
    ///
    /// # Safety
    ///
    /// The library's `symbol`, when there is one, is a function with the [`EntryFn`] signature.
    pub(crate) unsafe fn entry(&self, symbol: &[u8]) -> Result<EntryFn, KernelError> {
        // SAFETY: the caller's contract: `symbol` has exactly this C signature.
        let entry = unsafe { self.library.get::<EntryFn>(symbol) }
            .map_err(|e| KernelError::Load { library: self.path.clone(), message: e.to_string() })?;
        Ok(*entry)
    }
}

/// What a library is built from, for its compile errors: the kernel (as errors name it, with its
/// declaration), the file its `#line` directives name for the user's lines, and the text of each
/// of those lines (the compiler runs where it cannot read the user's files).
pub(crate) struct Origin<'a> {
    /// The kernel and where it is declared (`name<types> (file:line)`).
    pub kernel: String,
    /// The file of the user's lines, as the source's `#line` directives spell it.
    pub file: String,
    /// The text of line `n` of `file`, when the source holds it.
    pub text: &'a dyn Fn(u32) -> Option<&'a str>,
}

/// The compiler: `$CXX`, else the first of `c++` and `g++` that runs; with its `--version` line
/// (part of the cache key).
fn compiler() -> Result<&'static (String, String), KernelError> {
    static COMPILER: OnceLock<Result<(String, String), KernelError>> = OnceLock::new();
    COMPILER
        .get_or_init(|| {
            let mut candidates: Vec<String> = Vec::new();
            if let Ok(cxx) = std::env::var("CXX")
                && !cxx.trim().is_empty()
            {
                candidates.push(cxx);
            }
            candidates.extend(["c++".to_owned(), "g++".to_owned()]);
            for c in &candidates {
                if let Ok(out) = Command::new(c).arg("--version").output()
                    && out.status.success()
                {
                    let version = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_owned();
                    return Ok((c.clone(), version));
                }
            }
            Err(KernelError::CompilerMissing { tried: candidates.join(", ") })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The first line of an entry's key file: the format's name and version.
const MAGIC: &[u8] = b"dlspan-cpu-entry 1\n";

/// The largest library an entry may hold (a larger file is not read: it is not one of ours).
const MAX_LIBRARY: u64 = 1 << 28;

/// The target the process was built for: a library is loaded only by the target it was built for.
const TARGET: &str = env!("DLSPAN_TARGET");

/// The directory of built libraries, checked to be the user's own (rule K11): `cpu` under the
/// caches' root ([`cache_root`]: `$DLSPAN_CACHE_DIR`, else the user's cache directory); `None` when
/// there is none, the cache is `off`, or the directory is refused (one warning). Opened once per
/// process, which then removes the build directories of processes that ended mid-build.
fn cache_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = open_cache(&cache_root()?.join("cpu"), "the cache of raw kernels built for the CPU")?;
        remove_stale_builds(&dir);
        Some(dir)
    })
    .clone()
}

/// How old a build directory is when no process can still be using it.
const STALE_BUILD: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// Removes the build directories in the cache `dir` (the user's own) untouched for [`STALE_BUILD`]:
/// those of processes that ended mid-build (a build takes seconds).
fn remove_stale_builds(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let stale = entry.file_name().to_string_lossy().starts_with(".build-")
            && entry.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok()) > Some(STALE_BUILD);
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Everything a built library depends on, as one text stored beside it and compared before it is
/// loaded: dlspan's version, the target, the compiler and its version, the flags and the source
/// (each field length-prefixed, so that no two keys write the same text).
fn key_text(source: &str, compiler: &(String, String)) -> String {
    let mut text = String::with_capacity(source.len() + 512);
    let _ = writeln!(text, "dlspan {}\ntarget {TARGET}", env!("CARGO_PKG_VERSION"));
    for (field, value) in
        [("compiler", &*compiler.0), ("version", &compiler.1), ("flags", &FLAGS.join(" ")), ("source", source)]
    {
        let _ = writeln!(text, "{field} {} {value}", value.len());
    }
    text
}

/// The bytes of the key file of an entry whose library is `library`: [`MAGIC`], the library's
/// length and [`fnv1a_128`], then the key's full text.
fn key_file(key: &str, library: &[u8]) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(format!("{} {:032x}\n", library.len(), fnv1a_128(library)).as_bytes());
    bytes.extend_from_slice(key.as_bytes());
    bytes
}

/// The library of the entry `name` in `dir`, when it is whole: a key file of this very key, and a
/// library of the length and checksum it records (a truncated, empty or replaced file is not).
fn cached(dir: &Path, name: &str, key: &str) -> Option<PathBuf> {
    let stored = read_private(&dir.join(format!("{name}.key")), (MAGIC.len() + key.len() + 64) as u64)?;
    let rest = stored.strip_prefix(MAGIC)?;
    let newline = rest.iter().position(|&b| b == b'\n')?;
    let (header, text) = (core::str::from_utf8(&rest[..newline]).ok()?, &rest[newline + 1..]);
    let (len, checksum) = header.split_once(' ')?;
    if text != key.as_bytes() {
        return None;
    }
    let path = dir.join(format!("{name}.so"));
    let library = read_private(&path, MAX_LIBRARY)?;
    let whole =
        len.parse::<usize>().ok()? == library.len() && u128::from_str_radix(checksum, 16).ok()? == fnv1a_128(&library);
    whole.then_some(path)
}

/// Compiles `source` into `kernel.so` in the fresh private directory `dir` (the compiler runs
/// there, so nothing it reads or writes is named by another user).
fn compile(origin: &Origin<'_>, source: &str, compiler: &str, dir: &Path) -> Result<PathBuf, KernelError> {
    let load_error = |path: &Path, e: std::io::Error| KernelError::Load {
        library: path.display().to_string(),
        message: e.to_string(),
    };
    let cpp = dir.join("kernel.cpp");
    write_new(&cpp, source.as_bytes()).map_err(|e| load_error(&cpp, e))?;
    // A compiler named by a relative path is found from the process's directory, not the build's.
    let program = match Path::new(compiler) {
        path if path.components().count() > 1 && path.is_relative() => {
            std::env::current_dir().map(|cwd| cwd.join(path).into_os_string()).unwrap_or_else(|_| compiler.into())
        }
        _ => compiler.into(),
    };
    let output = Command::new(&program)
        .current_dir(dir)
        .args(FLAGS)
        .args(["-o", "kernel.so", "kernel.cpp"])
        .output()
        .map_err(|e| load_error(Path::new(compiler), e))?;
    if !output.status.success() {
        let mut log = String::from_utf8_lossy(&output.stderr).into_owned();
        log.push_str(&String::from_utf8_lossy(&output.stdout));
        let log = quote_body(&log, &origin.file, origin.text);
        return Err(KernelError::Compile { kernel: origin.kernel.clone(), log });
    }
    Ok(dir.join("kernel.so"))
}

/// The compiler's `log` with, after each diagnostic at a line of the body's `file`, that line's
/// text from the body itself (`text`): the compiler runs where it cannot read the user's files,
/// so it names their lines without quoting them (it used to quote whatever file of that name the
/// process's directory held).
fn quote_body<'a>(log: &str, file: &str, text: &dyn Fn(u32) -> Option<&'a str>) -> String {
    let prefix = format!("{file}:");
    let mut quoted = String::with_capacity(log.len() + 256);
    for line in log.lines() {
        quoted.push_str(line);
        quoted.push('\n');
        let number = line.strip_prefix(&prefix).and_then(|rest| rest.split(':').next()?.parse::<u32>().ok());
        if let Some(line) = number.and_then(text) {
            let _ = writeln!(quoted, "    {} | {}", number.unwrap_or_default(), line.trim());
        }
    }
    quoted
}

/// Puts the library `built` (in a build directory inside `cache`) into the cache as entry `name`:
/// library first, then its key file, each synced and renamed into place (a reader sees a whole
/// entry, or a key its library does not match, never half a file). The cached library's path;
/// an error only when the library did not move (then it is still at `built`).
fn store(cache: &Path, name: &str, key: &str, built: &Path) -> std::io::Result<PathBuf> {
    let bytes = read_private(built, MAX_LIBRARY).ok_or_else(|| std::io::Error::other("the built library"))?;
    // The compiler made it with the umask's mode: for this user only, as the cache's own files.
    #[cfg(unix)]
    std::fs::set_permissions(built, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    std::fs::File::open(built)?.sync_all()?;
    let staged = built.with_file_name("kernel.key");
    write_new(&staged, &key_file(key, &bytes))?;
    let library = cache.join(format!("{name}.so"));
    publish(built, &library, cache)?;
    // The library is in place: a key file that does not follow only costs the next process a
    // build (a library without its key is never loaded from the cache).
    let _ = publish(&staged, &cache.join(format!("{name}.key")), cache);
    Ok(library)
}

/// Loads the library at `path`, which must define `symbol` (NUL-terminated).
fn load(path: &Path, symbol: &[u8]) -> Result<Library, KernelError> {
    let load_error = |message: String| KernelError::Load { library: path.display().to_string(), message };
    // SAFETY: the library is dlspan's build of the generated source, in a directory only this user
    // can write (rule K11), checked against its key and checksum when it comes from the cache; its
    // only initialisers are those of the C and C++ runtimes, and loading it runs nothing else.
    let library = unsafe { libloading::Library::new(path) }.map_err(|e| load_error(e.to_string()))?;
    // SAFETY: only looked up, not called: a library without it is not one of this source's.
    unsafe { library.get::<*const u8>(symbol) }.map_err(|e| load_error(e.to_string()))?;
    Ok(Library { library, path: path.display().to_string() })
}

/// Builds `source` and loads it (it must define `symbol`, NUL-terminated): from the cache when a
/// whole entry of its key is there and loads; else built in a fresh private directory (in the
/// cache, else in the temporary directory), stored in the cache when it can be (a full or
/// unwritable cache only costs the next process a build), and loaded. A cached library that does
/// not load is built again, once.
///
/// # Errors
///
/// [`KernelError::CompilerMissing`], [`KernelError::Compile`] (with `origin`'s lines quoted),
/// [`KernelError::Load`].
pub(crate) fn build(origin: &Origin<'_>, source: &str, symbol: &[u8]) -> Result<Library, KernelError> {
    let compiler = compiler()?;
    let key = key_text(source, compiler);
    let name = format!("{:032x}", fnv1a_128(key.as_bytes()));
    let cache = cache_dir();
    if let Some(path) = cache.as_deref().and_then(|dir| cached(dir, &name, &key))
        && let Ok(built) = load(&path, symbol)
    {
        return Ok(built);
    }
    let scratch = cache
        .as_deref()
        .and_then(|dir| TempDir::new_in(dir, ".build-").ok())
        .map_or_else(|| TempDir::new_in(&std::env::temp_dir(), "dlspan-build-"), Ok)
        .map_err(|refused| KernelError::Load {
            library: refused.path.display().to_string(),
            message: format!("no private directory to build a raw kernel in: {}", refused.reason),
        })?;
    let built = compile(origin, source, &compiler.0, scratch.path())?;
    let stored = cache
        .as_deref()
        .filter(|dir| scratch.path().starts_with(dir))
        .and_then(|dir| store(dir, &name, &key, &built).ok());
    // The library stays mapped once loaded: the build directory is removed when `scratch` drops.
    load(stored.as_deref().unwrap_or(&built), symbol)
}

/// The loaded library of `instance`, built on first use in the process.
fn library(instance: &RawInstance) -> Result<Arc<Built>, KernelError> {
    static LIBRARIES: OnceLock<Mutex<HashMap<RawInstance, Arc<Built>>>> = OnceLock::new();
    let libraries = LIBRARIES.get_or_init(Default::default);
    // Held while building: one build per instantiation, the others wait for it.
    let mut map = libraries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(built) = map.get(instance) {
        return Ok(built.clone());
    }
    // Arguments that do not fit a launch have no library (nor a source).
    instance.argument_layout()?;
    let def = instance.def();
    let text = |n: u32| def.source.lines().nth(n.checked_sub(def.body_line)? as usize);
    let origin = Origin {
        kernel: format!("{instance} ({}:{})", def.file, def.line),
        file: def.body_path().replace('\\', "/"),
        text: &text,
    };
    let library = build(&origin, &instance.source_cpu(), b"dlspan_raw_launch\0")?;
    // SAFETY: the generated source defines `dlspan_raw_launch` with exactly the entry signature.
    let launch = unsafe { library.entry(b"dlspan_raw_launch\0") }?;
    let built = Arc::new(Built { _library: library, launch });
    map.insert(*instance, built.clone());
    Ok(built)
}

/// Builds (once) and loads the library of `instance`, without running it: the compile check of
/// the CPU tier.
///
/// # Errors
///
/// [`KernelError::ArgumentsTooLarge`], [`KernelError::CompilerMissing`], [`KernelError::Compile`],
/// [`KernelError::Load`].
#[doc(hidden)]
pub fn prepare(instance: &RawInstance) -> Result<(), KernelError> {
    library(instance).map(drop)
}

/// Runs `instance` with the argument block `args` over the grid of `config`, returning when every
/// block has finished.
///
/// # Errors
///
/// As [`prepare`]; [`KernelError::InvalidLaunch`] for a configuration CUDA would refuse;
/// [`KernelError::OutOfMemory`] when stacks, their guard pages or shared memory cannot be
/// allocated; [`KernelError::DivergentBarrier`] when threads of a block wait at different
/// `__syncthreads()`.
///
/// # Safety
///
/// Every address in `args` is a view's first element whose extents and strides (also in `args`)
/// reach only memory valid for the kernel's accesses for the duration of the call, written views
/// borrowed uniquely; the kernel's body accesses only elements of its views within their extents,
/// writes only views declared `&mut`, and its threads do not race (but through atomics).
pub(crate) unsafe fn run(instance: &RawInstance, config: &LaunchConfig, args: &[u8]) -> Result<(), KernelError> {
    config.check()?;
    let built = library(instance)?;
    let def = instance.def();
    let names = || (format!("{instance} ({}:{})", def.file, def.line), def.body_path());
    // SAFETY: `built.launch` is the library's entry of this instantiation, reading `args` at the
    // offsets `argument_layout` gave; the caller's contract covers the memory the kernel reaches.
    unsafe { run_entry(built.launch, config, args.as_ptr(), &names) }
}

/// Runs the kernel entry `entry` of a loaded [`Library`] over the grid of `config` (checked by the
/// caller), its parameters at `args`, returning when every block has finished: the grid's blocks
/// in parallel on up to one worker thread per core, a block's threads as fibers on guarded stacks.
/// `names` gives the kernel and its body's file for a [`KernelError::DivergentBarrier`].
///
/// # Errors
///
/// [`KernelError::OutOfMemory`] when stacks, their guard pages or shared memory cannot be
/// allocated; [`KernelError::DivergentBarrier`] when threads of a block wait at different
/// `__syncthreads()`.
///
/// # Safety
///
/// `entry` runs `dl_cpu_run_kernel` (dlspan.cuh) over a kernel that reads its parameters from
/// `args`, which are valid for the call; every address the parameters hold reaches only memory
/// valid for the kernel's accesses for the duration of the call (written memory borrowed
/// uniquely), and the kernel's threads do not race but through atomics.
pub(crate) unsafe fn run_entry(
    entry: EntryFn,
    config: &LaunchConfig,
    args: *const u8,
    names: &dyn Fn() -> (String, String),
) -> Result<(), KernelError> {
    if config.blocks() == 0 {
        return Ok(());
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(64);
    let workers = usize::try_from(config.blocks()).map_or(workers, |blocks| workers.min(blocks));
    let threads = config.block.iter().product::<u32>();
    // Every stack guarded, or no worker for it: fewer workers when guards run out.
    let lease = Lease::take(workers, threads, STACK_BYTES).ok_or(KernelError::OutOfMemory)?;
    let stacks = lease.c();
    let mut report = CpuReport::default();
    let launch = CpuLaunch {
        grid: config.grid,
        block: config.block,
        shared_bytes: u64::from(config.shared_bytes),
        stacks: stacks.as_ptr(),
        workers: stacks.len() as u32,
        reserved: 0,
        report: &mut report,
    };
    // SAFETY: `launch`, `stacks` and `report` live for the call, and the leased stacks are this
    // launch's alone until `lease` drops after it; `entry` runs each worker on its set (at least
    // `threads` stacks each) and writes only `report`; the caller's contract covers `args` and
    // the memory the kernel reaches.
    let code = unsafe { entry(&launch, args) };
    drop(lease);
    match code {
        0 => Ok(()),
        5 => {
            let (kernel, file) = names();
            Err(KernelError::DivergentBarrier {
                kernel,
                file,
                block: report.block,
                threads: report.threads,
                lines: report.lines,
            })
        }
        _ => Err(KernelError::OutOfMemory),
    }
}
