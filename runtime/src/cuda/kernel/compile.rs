//! NVRTC: a module's source compiled to PTX for a device's virtual architecture, with the options
//! that keep results identical to the CPU.

use super::cast;
use super::module::ModuleKey;
use super::source::PREAMBLE;
use crate::cuda::abi::{IndexWidth, KernelShape};
use crate::cuda::error::{CudaError, CudaLibrary};
use crate::kernel::Instance;
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

/// Compiles a module to PTX for the virtual architecture `arch` (such as `compute_90`), as the
/// runtime does before loading it; needs NVRTC, not a GPU.
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
    compile(key, arch).map(|ptx| ptx.to_src())
}

/// The compiled module, for loading.
pub(crate) fn compile(key: &ModuleKey, arch: &str) -> Result<cudarc::nvrtc::Ptx, CudaError> {
    CudaLibrary::Nvrtc.require()?;
    let name = format!("{}.cu", key.entry(KernelShape::General, IndexWidth::I64));
    let options = cudarc::nvrtc::CompileOptions {
        options: compile_options(key, arch),
        name: Some(name.clone()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(key.source(), options).map_err(|error| {
        use cudarc::nvrtc::CompileError;
        let (result, log) = match error {
            CompileError::CompileError { nvrtc, log, .. } => (nvrtc.0, log.to_string_lossy().into_owned()),
            CompileError::CreationError(e)
            | CompileError::GetLogError(e)
            | CompileError::GetPtxError(e)
            | CompileError::DestroyError(e) => (e.0, String::new()),
        };
        let (kernel, log) = match key {
            ModuleKey::Elementwise(instance) if key.kind().is_none() => {
                let def = instance.def();
                (format!("{instance} ({}:{})", def.file, def.line), user_log(instance, &log))
            }
            _ => (name, log),
        };
        CudaError::Compile { kernel, result, log }
    })
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

/// NVRTC's log of an element-wise kernel, as the user wrote the kernel: each diagnostic at a line
/// of the kernel's Rust file is shown with that line's Rust text; diagnostics elsewhere (the
/// generated code: a bug of dlspan's) are kept as NVRTC wrote them, after the user's.
fn user_log(instance: &Instance, log: &str) -> String {
    let def = instance.def();
    let prefix = format!("{}(", def.file);
    let mut ours = String::new();
    let mut generated = String::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let at_user_line = line
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split_once("): "))
            .and_then(|(number, message)| Some((number.parse::<u32>().ok()?, message)));
        match at_user_line {
            Some((number, message)) => {
                let text = def.lines.iter().find(|(l, _)| *l == number).map_or("", |(_, text)| *text);
                let _ = writeln!(ours, "{}:{number}: {message}\n    {number} | {text}", def.file);
            }
            // NVRTC's closing count ("1 error detected in the compilation of ...") says nothing new.
            None if line.contains("detected in the compilation of") => {}
            None if line.contains("error") || line.contains("warning") => {
                let _ = writeln!(generated, "    {line}");
            }
            None => {}
        }
    }
    let mut report = format!(
        "element-wise kernel `{}` declared at {}:{} did not compile for {instance}:\n{ours}",
        def.name, def.file, def.line
    );
    if !generated.is_empty() {
        let _ = write!(report, "in dlspan's generated code (please report):\n{generated}");
    }
    report
}
