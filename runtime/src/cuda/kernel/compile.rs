//! NVRTC: a module's source compiled to PTX for a device's virtual architecture, with the options
//! that keep results identical to the CPU.

use super::cast;
use super::disk::{CacheKey, DiskCache};
use super::module::ModuleKey;
use super::source::PREAMBLE;
use crate::cuda::abi::{IndexWidth, KernelShape};
use crate::cuda::error::{CudaError, CudaLibrary};
use crate::kernel::Declared;
use core::fmt::Write as _;

/// The preamble every module starts with.
///
/// ```
/// assert!(dlspan::cuda::kernel::preamble().contains("struct alignas(16) dl_params"));
/// ```
pub fn preamble() -> &'static str {
    PREAMBLE
}

/// The NVRTC options of a module: no fused multiply-add (results match the CPU bit for bit),
/// C++17, the virtual architecture `arch` (`compute_90` for an H100), and 128-bit integers where
/// the module has them.
pub(crate) fn compile_options(key: &ModuleKey, arch: &str) -> Vec<String> {
    let mut options = vec!["--fmad=false".to_owned(), "--std=c++17".to_owned(), format!("--gpu-architecture={arch}")];
    if uses_int128(key) {
        options.push("--device-int128".to_owned());
    }
    options
}

/// Compiles a module to PTX for the virtual architecture `arch` (such as `compute_90`) with NVRTC,
/// always (the test tiers check that NVRTC accepts every module; the runtime goes through the
/// disk cache: [`compile_ptx_with`]); needs NVRTC, not a GPU.
///
/// # Errors
///
/// [`CudaError::LibraryMissing`] without NVRTC; [`CudaError::Compile`] with NVRTC's log when it
/// refuses the source.
///
/// ```no_run
/// use dlspan::cuda::KernelKind;
/// use dlspan::cuda::kernel::{ModuleKey, compile_ptx};
/// let ptx = compile_ptx(&ModuleKey::new::<f32, f32>(KernelKind::Axpy)?, "compute_90")?;
/// assert!(ptx.contains(".entry dlspan_axpy_float32_flat4_i32"));
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub fn compile_ptx(key: &ModuleKey, arch: &str) -> Result<String, CudaError> {
    compile_ptx_with(key, arch, &DiskCache::off()).map(|compiled| compiled.ptx)
}

/// The PTX an element-wise kernel's instantiation (`my_kernel::instance::<f32>()`, made by
/// [`elementwise!`](crate::elementwise!)) becomes for the virtual architecture `arch` (such as
/// `"compute_90"`), compiled by NVRTC as a launch compiles it: with NVRTC and no GPU, a test can
/// check that every kernel a crate ships compiles for the GPU ([rule K6](crate::rules#k6)).
///
/// # Errors
///
/// [`CudaError::LibraryMissing`] without NVRTC; [`CudaError::Compile`] with NVRTC's log when it
/// refuses the source; [`CudaError::ScalarTooLarge`] when the scalar arguments do not fit a launch.
///
/// ```
/// use dlspan::cuda::{CudaError, elementwise_ptx};
/// use dlspan::kernel::Float;
/// dlspan::elementwise! {
///     /// y = a·x + b, element by element.
///     pub fn affine<T: Float>(a: T, x: &T, b: &T, y: &mut T) { *y = a * *x + *b }
/// }
/// match elementwise_ptx(affine::instance::<f32>(), "compute_90") {
///     Ok(ptx) => assert!(ptx.contains(".entry dlspan_affine_float32")),
///     Err(CudaError::LibraryMissing { .. }) => {} // no NVRTC here
///     Err(other) => panic!("{other}"),
/// }
/// ```
pub fn elementwise_ptx(instance: crate::kernel::Instance, arch: &str) -> Result<String, CudaError> {
    compile_ptx(&ModuleKey::elementwise(instance)?, arch)
}

/// The PTX a raw kernel's instantiation (`my_kernel::instance::<f32>(&view_types)`, made by
/// [`kernel!`](crate::kernel!)) becomes for the virtual architecture `arch`, compiled by NVRTC as a
/// launch compiles it: its CUDA C++ checked with no GPU ([rule K7](crate::rules#k7)). NVRTC's errors
/// point at the body's lines in the Rust file.
///
/// # Errors
///
/// [`CudaError::LibraryMissing`] without NVRTC; [`CudaError::Compile`] with NVRTC's log when it
/// refuses the source; [`CudaError::Kernel`] when the arguments do not fit a launch.
///
/// ```
/// use dlspan::cuda::{CudaError, raw_ptx};
/// use dlspan::kernel::ViewType;
/// use dlspan::{DeviceMdspan, DeviceMdspanMut};
/// dlspan::kernel! {
///     /// Each row's sum.
///     pub fn row_sums<T>(x: &[T; 2], out: &mut [T; 1]) {
///         r#"
///         const dl::index_t i = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < x.extent(0)) {
///             T total = 0;
///             for (dl::index_t j = 0; j < x.extent(1); ++j) total += x(i, j);
///             out(i) = total;
///         }
///         "#
///     }
/// }
/// const VIEWS: &[ViewType] =
///     &[ViewType::of::<DeviceMdspan<'static, f32, 2>, 2>(), ViewType::of::<DeviceMdspanMut<'static, f32, 1>, 1>()];
/// match raw_ptx(row_sums::instance::<f32>(VIEWS), "compute_90") {
///     Ok(ptx) => assert!(ptx.contains(".entry")),
///     Err(CudaError::LibraryMissing { .. }) => {} // no NVRTC here
///     Err(other) => panic!("{other}"),
/// }
/// ```
pub fn raw_ptx(instance: crate::kernel::RawInstance, arch: &str) -> Result<String, CudaError> {
    compile_ptx(&ModuleKey::raw(instance)?, arch)
}

/// Compiles a module to PTX for `arch` as the runtime does: loaded from `disk` when a process
/// compiled it before with this NVRTC and these options, else compiled by NVRTC and stored there.
///
/// # Errors
///
/// As [`compile_ptx`].
///
/// ```no_run
/// use dlspan::cuda::KernelKind;
/// use dlspan::cuda::kernel::{DiskCache, ModuleKey, Origin, compile_ptx_with};
/// let disk = DiskCache::at(std::env::temp_dir().join("dlspan-doc-kernels"));
/// let key = ModuleKey::new::<f32, f32>(KernelKind::Add)?;
/// compile_ptx_with(&key, "compute_90", &disk)?;
/// assert_eq!(compile_ptx_with(&key, "compute_90", &disk)?.origin, Origin::Disk);
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub fn compile_ptx_with(key: &ModuleKey, arch: &str, disk: &DiskCache) -> Result<Compiled, CudaError> {
    let source = key.source();
    let name = format!("{}.cu", key.entry(KernelShape::General, IndexWidth::I64));
    let options = compile_options(key, arch);
    let (declared, instance) = match key {
        ModuleKey::Elementwise(instance) if key.kind().is_none() => {
            (Some(instance.def().declared()), instance.to_string())
        }
        _ => (None, String::new()),
    };
    let compiled = compile_source(
        &CompileInput { source: &source, name: &name, options: &options, declared, instance: &instance },
        disk,
    );
    match (key, compiled) {
        // A raw kernel's body is C++ the user wrote: NVRTC's diagnostics in it are shown at the
        // body's lines (of the Rust file, or of the `.cu` file it includes), with their text.
        (ModuleKey::Raw(raw), Err(CudaError::Compile { result, nvrtc_log, .. })) => {
            let def = raw.def();
            let body = def.body_path().replace('\\', "/");
            let text = |n: u32| n.checked_sub(def.body_line).and_then(|k| def.source.lines().nth(k as usize));
            let header = format!("raw kernel `{}` declared at {}:{}", def.name, def.file, def.line);
            let log = user_log(
                &header,
                &body,
                &text,
                &raw.to_string(),
                &nvrtc_log,
                "elsewhere in the module (dlspan's header and the code around the body)",
            );
            Err(CudaError::Compile { kernel: format!("{raw} ({}:{})", def.file, def.line), result, log, nvrtc_log })
        }
        (_, compiled) => compiled,
    }
}

/// The compiled module, for loading: through the process's disk cache ([`DiskCache::global`]).
pub(crate) fn compile(key: &ModuleKey, arch: &str) -> Result<cudarc::nvrtc::Ptx, CudaError> {
    compile_ptx_with(key, arch, DiskCache::global()).map(|compiled| cudarc::nvrtc::Ptx::from_src(compiled.ptx))
}

/// A program for NVRTC: its source, name, options, and where a user declared it (then errors are
/// reported at the user's lines).
///
/// ```
/// use dlspan::cuda::kernel::CompileInput;
/// let options = ["--gpu-architecture=compute_90".to_owned()];
/// let input = CompileInput { source: "__global__ void k() {}", name: "k.cu", options: &options, declared: None, instance: "" };
/// assert_eq!(input.kernel(), "k.cu");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CompileInput<'a> {
    /// The CUDA C++ source, whole.
    pub source: &'a str,
    /// The program's name (NVRTC's file name for it, `something.cu`).
    pub name: &'a str,
    /// Every NVRTC option, the target architecture (`--gpu-architecture=compute_90`) among them.
    pub options: &'a [String],
    /// Where the kernel is declared, for a user's kernel: its `#line` directives name
    /// `declared.file`, and errors are reported at those lines. `None` for dlspan's own modules.
    pub declared: Option<Declared>,
    /// The instantiation, for messages (`scale<float32>`); unused without `declared`.
    pub instance: &'a str,
}

impl CompileInput<'_> {
    /// The kernel's name in errors: the instantiation and its declaration site for a user's
    /// kernel, the program's name otherwise.
    pub fn kernel(&self) -> String {
        match &self.declared {
            Some(at) => format!("{} ({}:{})", self.instance, at.file, at.line),
            None => self.name.to_owned(),
        }
    }
}

/// Where a module's PTX came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// NVRTC compiled it in this call.
    Nvrtc,
    /// A process compiled it before: loaded from the disk cache.
    Disk,
}

/// A module's PTX, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// The PTX text.
    pub ptx: String,
    /// Whether NVRTC made it now or the disk cache kept it.
    pub origin: Origin,
}

/// Compiles `input` to PTX: the one place NVRTC runs, for dlspan's modules, element-wise kernels and
/// any other kernel. Loads the PTX from `disk` when an entry of the same NVRTC version, name,
/// options and source is there; stores what NVRTC makes (best effort: an unwritable cache only
/// costs the next process a compilation).
///
/// # Errors
///
/// [`CudaError::LibraryMissing`] without NVRTC (even when the cache has the module: its key needs
/// NVRTC's version); [`CudaError::Compile`] when NVRTC refuses the source, with its log in the
/// user's terms when `input.declared` is set (and NVRTC's own in `nvrtc_log`), or when the source,
/// the name or an option holds a NUL byte (`NVRTC_ERROR_INVALID_INPUT`).
///
/// ```no_run
/// use dlspan::cuda::kernel::{CompileInput, DiskCache, Origin, compile_source};
/// let options = ["--gpu-architecture=compute_90".to_owned()];
/// let input = CompileInput { source: "extern \"C\" __global__ void k() {}", name: "k.cu", options: &options, declared: None, instance: "" };
/// let compiled = compile_source(&input, &DiskCache::off())?;
/// assert_eq!(compiled.origin, Origin::Nvrtc);
/// assert!(compiled.ptx.contains(".entry k"));
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub fn compile_source(input: &CompileInput<'_>, disk: &DiskCache) -> Result<Compiled, CudaError> {
    CudaLibrary::Nvrtc.require()?;
    // Without NVRTC's version there is no key: compile, uncached.
    let key = match (disk.dir(), nvrtc_version()) {
        (Some(_), Some(version)) => Some(CacheKey::new(version, input.name, input.options, input.source)),
        _ => None,
    };
    if let Some(ptx) = key.as_ref().and_then(|key| disk.load(key)) {
        return Ok(Compiled { ptx, origin: Origin::Disk });
    }
    let ptx = nvrtc(input)?;
    if let Some(key) = &key {
        disk.store(key, &ptx);
    }
    Ok(Compiled { ptx, origin: Origin::Nvrtc })
}

/// NVRTC's version (major, minor), or `None` when it does not say.
///
/// ```no_run
/// assert!(dlspan::cuda::kernel::nvrtc_version().is_some_and(|(major, _)| major >= 12));
/// ```
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if CudaLibrary::Nvrtc.require().is_err() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loadable (checked above: cudarc's loader does not panic); `nvrtcVersion`
    // writes two `int`s through the pointers, which point at live locals.
    let result = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (result == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

/// Runs NVRTC on `input`.
fn nvrtc(input: &CompileInput<'_>) -> Result<String, CudaError> {
    // NVRTC takes C strings (and cudarc panics on a NUL inside one): refused as NVRTC would.
    if let Some(what) = [("source", input.source), ("name", input.name)]
        .into_iter()
        .chain(input.options.iter().map(|o| ("an option", o.as_str())))
        .find_map(|(what, text)| text.contains('\0').then_some(what))
    {
        let log = format!("the program's {what} holds a NUL byte: NVRTC reads C strings");
        return Err(CudaError::Compile {
            kernel: input.kernel(),
            result: cudarc::nvrtc::sys::nvrtcResult::NVRTC_ERROR_INVALID_INPUT,
            log: log.clone(),
            nvrtc_log: log,
        });
    }
    let options = cudarc::nvrtc::CompileOptions {
        options: input.options.to_vec(),
        name: Some(input.name.to_owned()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(input.source, options).map_err(|error| {
        use cudarc::nvrtc::CompileError;
        let (result, nvrtc_log) = match error {
            CompileError::CompileError { nvrtc, log, .. } => (nvrtc.0, log.to_string_lossy().into_owned()),
            CompileError::CreationError(e)
            | CompileError::GetLogError(e)
            | CompileError::GetPtxError(e)
            | CompileError::DestroyError(e) => (e.0, String::new()),
        };
        let log = match &input.declared {
            Some(at) => {
                let text = |n: u32| at.lines.iter().find(|(l, _)| *l == n).map(|(_, text)| *text);
                let generated = "in dlspan's generated code (please report)";
                user_log(&at.to_string(), at.file, &text, input.instance, &nvrtc_log, generated)
            }
            None => nvrtc_log.clone(),
        };
        CudaError::Compile { kernel: input.kernel(), result, log, nvrtc_log }
    })?;
    Ok(ptx.to_src())
}

/// Whether the module uses 128-bit integers (NVRTC needs `--device-int128`, on Linux only).
fn uses_int128(key: &ModuleKey) -> bool {
    match key {
        ModuleKey::Builtin { out, input, .. } => {
            [out, input].iter().any(|t| t.lane_scalar_type().is_some_and(cast::is_int128))
        }
        ModuleKey::Elementwise(instance) => super::elementwise::uses_int128(instance),
        ModuleKey::Raw(instance) => instance
            .types()
            .iter()
            .any(|t| crate::kernel::ElementType::from(*t).lane_scalar_type().is_some_and(cast::is_int128)),
    }
}

/// NVRTC's log of a user's kernel, as the user wrote the kernel: each diagnostic at a line of
/// `file` (the kernel's Rust file, or a raw kernel's body file) is shown with that line's text
/// (`text`); diagnostics elsewhere are kept as NVRTC wrote them, after the user's, under
/// `elsewhere`. `declared` says which kernel, `instance` its element types.
fn user_log(
    declared: &str,
    file: &str,
    text: &dyn Fn(u32) -> Option<&'static str>,
    instance: &str,
    log: &str,
    elsewhere: &str,
) -> String {
    let prefix = format!("{file}(");
    let mut ours = String::new();
    let mut generated = String::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let at_user_line = line
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split_once("): "))
            .and_then(|(number, message)| Some((number.parse::<u32>().ok()?, message)));
        match at_user_line {
            Some((number, message)) => {
                let _ =
                    writeln!(ours, "{file}:{number}: {message}\n    {number} | {}", text(number).map_or("", str::trim));
            }
            // NVRTC's closing count ("1 error detected in the compilation of ...") says nothing new.
            None if line.contains("detected in the compilation of") => {}
            None if line.contains("error") || line.contains("warning") => {
                let _ = writeln!(generated, "    {line}");
            }
            None => {}
        }
    }
    let mut report = format!("{declared} did not compile for {instance}:\n{ours}");
    if !generated.is_empty() {
        let _ = write!(report, "{elsewhere}:\n{generated}");
    }
    report
}
