//! Raw kernels on the CPU: each instantiation's C++ (`RawInstance::source_cpu`) built by the host
//! C++ compiler into a shared library (`-DDLSPAN_CPU -ffp-contract=off`), cached in memory for the
//! process and on disk by the hash of source, compiler and flags, loaded, and run: the grid's
//! blocks in parallel on OS threads, a block's threads as fibers that switch at `__syncthreads()`
//! (`dlspan.cuh`, `dl_cpu_run_kernel`).

use super::cachedir::{fnv1a_128, user_cache_in};
use super::raw::{KernelError, LaunchConfig, RawInstance};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The flags every CPU build gets: optimised, position-independent, exact floating point (no
/// contraction, as NVRTC's `--fmad=false`).
const FLAGS: &[&str] =
    &["-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-DDLSPAN_CPU", "-ffp-contract=off", "-fno-fast-math"];

/// The stack of each thread of a block (a fiber), in bytes.
const STACK_BYTES: u64 = 128 * 1024;

/// The launch as `dl_cpu_launch` (dlspan.cuh) reads it.
#[repr(C)]
struct CpuLaunch {
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u64,
    stack_bytes: u64,
    workers: u32,
    reserved: u32,
}

/// `extern "C" int dlspan_raw_launch(const dl_cpu_launch*, const void*)`.
type LaunchFn = unsafe extern "C" fn(*const CpuLaunch, *const u8) -> i32;

/// A loaded library of one instantiation.
struct Built {
    /// Kept loaded while the function may be called: for the whole process.
    _library: libloading::Library,
    launch: LaunchFn,
}

/// The compiler: `$CXX`, else the first of `c++` and `g++` that runs; with its `--version` line
/// (part of the cache key).
fn compiler() -> Result<&'static (String, String), KernelError> {
    static COMPILER: OnceLock<Result<(String, String), KernelError>> = OnceLock::new();
    COMPILER
        .get_or_init(|| {
            let mut candidates: Vec<String> = Vec::new();
            if let Ok(cxx) = std::env::var("CXX") {
                if !cxx.trim().is_empty() {
                    candidates.push(cxx);
                }
            }
            candidates.extend(["c++".to_owned(), "g++".to_owned()]);
            for c in &candidates {
                if let Ok(out) = Command::new(c).arg("--version").output() {
                    if out.status.success() {
                        let version = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_owned();
                        return Ok((c.clone(), version));
                    }
                }
            }
            Err(KernelError::CompilerMissing { tried: candidates.join(", ") })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The directory of built libraries: `$DLSPAN_CACHE_DIR/cpu`, else `cpu` in dlspan's directory of
/// the user's cache (as the PTX cache's, [`user_cache_in`]), else the temporary directory's
/// `dlspan-cpu`.
fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DLSPAN_CACHE_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("cpu");
    }
    user_cache_in(|name| std::env::var_os(name))
        .map_or_else(|| std::env::temp_dir().join("dlspan-cpu"), |dlspan| dlspan.join("cpu"))
}

/// A hash of the source, the compiler and its version, and the flags (each ended by a NUL, so that
/// no two keys run together), as a file name: [`fnv1a_128`], stable across Rust versions and
/// processes.
fn key(source: &str, compiler: &(String, String)) -> String {
    let mut text = Vec::with_capacity(source.len() + 256);
    for part in [source, &compiler.0, &compiler.1, &FLAGS.join(" ")] {
        text.extend_from_slice(part.as_bytes());
        text.push(0);
    }
    format!("{:032x}", fnv1a_128(&text))
}

/// Builds `source` into a library under the cache directory, unless it is there already.
fn build(instance: &RawInstance, source: &str) -> Result<PathBuf, KernelError> {
    let compiler = compiler()?;
    let dir = cache_dir();
    let name = key(source, compiler);
    let library = dir.join(format!("{name}.so"));
    if library.is_file() {
        return Ok(library);
    }
    let load_error = |path: &Path, e: std::io::Error| KernelError::Load {
        library: path.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(|e| load_error(&dir, e))?;
    // Written under names of this process, then renamed: concurrent builders never see half a file.
    let unique = format!("{name}.{}.{:?}", std::process::id(), std::thread::current().id())
        .replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', "_");
    let cpp = dir.join(format!("{unique}.cpp"));
    let tmp = dir.join(format!("{unique}.so"));
    std::fs::write(&cpp, source).map_err(|e| load_error(&cpp, e))?;
    let output = Command::new(&compiler.0).args(FLAGS).arg("-o").arg(&tmp).arg(&cpp).output();
    let _ = std::fs::remove_file(&cpp);
    let output = output.map_err(|e| load_error(Path::new(&compiler.0), e))?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let mut log = String::from_utf8_lossy(&output.stderr).into_owned();
        log.push_str(&String::from_utf8_lossy(&output.stdout));
        let def = instance.def();
        return Err(KernelError::Compile { kernel: format!("{instance} ({}:{})", def.file, def.line), log });
    }
    std::fs::rename(&tmp, &library).map_err(|e| load_error(&library, e))?;
    Ok(library)
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
    let path = build(instance, &instance.source_cpu())?;
    let load_error = |message: String| KernelError::Load { library: path.display().to_string(), message };
    // SAFETY: the library is dlspan's build of the generated source, whose only initialisers are
    // those of the C and C++ runtimes; loading it runs nothing else.
    let library = unsafe { libloading::Library::new(&path) }.map_err(|e| load_error(e.to_string()))?;
    // SAFETY: the generated source defines `dlspan_raw_launch` with exactly this C signature.
    let launch: LaunchFn =
        *unsafe { library.get::<LaunchFn>(b"dlspan_raw_launch\0") }.map_err(|e| load_error(e.to_string()))?;
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
/// [`KernelError::OutOfMemory`] when stacks or shared memory cannot be allocated.
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
    if config.blocks() == 0 {
        return Ok(());
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(64) as u32;
    let launch = CpuLaunch {
        grid: config.grid,
        block: config.block,
        shared_bytes: u64::from(config.shared_bytes),
        stack_bytes: STACK_BYTES,
        workers,
        reserved: 0,
    };
    // SAFETY: `launch` and `args` live for the call; `built.launch` is the library's entry of this
    // instantiation, reading `args` at the offsets `argument_layout` gave; the caller's contract
    // covers the memory the kernel reaches.
    let code = unsafe { (built.launch)(&launch, args.as_ptr()) };
    match code {
        0 => Ok(()),
        _ => Err(KernelError::OutOfMemory),
    }
}
