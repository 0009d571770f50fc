//! Typed kernels: CUDA C++ generated from the operation and the element types, compiled by NVRTC
//! once per (operation, element types) and context, launched on a stream.
//!
//! A module (one NVRTC program) holds the operation's kernels for every [`Shape`] and
//! [`IndexWidth`]; [`plan`] picks one for a launch. [`module_source`] and [`compile_ptx`] are the
//! exact steps the runtime takes, open to tests and to readers of the generated code.

mod cast;
mod element;
mod plan;
mod source;

pub use element::{ElementType, Scalar};
pub use plan::{MAX_GRID, Operand, Plan, TILE_MIN_EXTENT, plan};

use super::abi::{IndexWidth, KernelKind, Shape};
use super::error::{CudaError, CudaLibrary};
use crate::dtype::DlElement;

/// One NVRTC program: an operation on element types (`input` equals `out` except for casts).
///
/// ```
/// use dlspan::cuda::{KernelKind, ModuleKey};
/// let key = ModuleKey::new::<f32, f32>(KernelKind::Scale)?;
/// assert!(key.source().contains("dl_mul(s0, in0[o1])"));
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModuleKey {
    /// The operation.
    pub kind: KernelKind,
    /// The output's element type.
    pub out: ElementType,
    /// The inputs' element type.
    pub input: ElementType,
}

impl ModuleKey {
    /// The module of `kind` writing `Out` from `In` (`In` = `Out` except for casts).
    ///
    /// # Errors
    ///
    /// [`CudaError::Unsupported`] when the operation has no kernel for these types (arithmetic on a
    /// type that is not an integer or IEEE-like float; a cast from or to a type with no scalar
    /// format; a copy between different types).
    ///
    /// ```
    /// use dlspan::cuda::{CudaError, KernelKind, ModuleKey};
    /// use dlspan::dtype::{F32x4, Float8E4m3fn};
    /// assert!(ModuleKey::new::<f32, f32>(KernelKind::Axpy).is_ok());
    /// assert!(matches!(ModuleKey::new::<bool, bool>(KernelKind::Add), Err(CudaError::Unsupported { .. })));
    /// assert!(ModuleKey::new::<Float8E4m3fn, i128>(KernelKind::Cast).is_ok());
    /// assert!(matches!(ModuleKey::new::<F32x4, f32>(KernelKind::Cast), Err(CudaError::Unsupported { .. })));
    /// ```
    pub fn new<Out: DlElement, In: DlElement>(kind: KernelKind) -> Result<Self, CudaError> {
        Self::from_types(kind, ElementType::of::<Out>(), ElementType::of::<In>())
    }

    /// As [`new`](Self::new), from element types known at run time.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    ///
    /// ```
    /// use dlspan::cuda::{ElementType, KernelKind, ModuleKey};
    /// let t = ElementType::of::<u8>();
    /// assert_eq!(ModuleKey::from_types(KernelKind::Fill, t, t)?.out, t);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn from_types(kind: KernelKind, out: ElementType, input: ElementType) -> Result<Self, CudaError> {
        let unsupported = || CudaError::Unsupported {
            kernel: kind,
            output: out.dtype,
            input: (kind.inputs() > 0).then_some(input.dtype),
        };
        let supported = match kind {
            KernelKind::Copy | KernelKind::Fill => out == input,
            KernelKind::Add | KernelKind::Scale | KernelKind::Axpy => {
                out == input && out.scalar().is_some_and(|s| s.is_arithmetic())
            }
            KernelKind::Cast => out.scalar().is_some() && input.scalar().is_some(),
        };
        if !supported {
            return Err(unsupported());
        }
        if kind.scalars() > 0 && out.size > 64 {
            return Err(CudaError::ScalarTooLarge { size: out.size, max: 64 });
        }
        Ok(Self { kind, out, input })
    }

    /// The CUDA C++ source of the module (the preamble and every kernel shape).
    ///
    /// ```
    /// use dlspan::cuda::{KernelKind, ModuleKey};
    /// let src = ModuleKey::new::<u8, u8>(KernelKind::Copy)?.source();
    /// assert!(src.contains("dlspan_copy_uint8_flat16_i32"));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn source(&self) -> String {
        source::module_source(self)
    }

    /// The module's source without the shared preamble.
    #[doc(hidden)]
    pub fn body(&self) -> String {
        source::module_body(self, &self.shapes())
    }

    /// The module's kernels of `shapes` only, without the preamble (the host tests build thousands
    /// of conversions and need one kernel of each).
    #[doc(hidden)]
    pub fn body_of(&self, shapes: &[Shape]) -> String {
        source::module_body(self, shapes)
    }

    /// Whether the module uses 128-bit integers (NVRTC needs `--device-int128`, on Linux only).
    fn uses_int128(&self) -> bool {
        [self.out, self.input].iter().any(|t| t.lane_scalar().is_some_and(cast::is_int128))
    }

    /// The name of the kernel of `shape` and `index` in this module.
    ///
    /// ```
    /// use dlspan::cuda::{IndexWidth, KernelKind, ModuleKey, Shape};
    /// let key = ModuleKey::new::<f32, f32>(KernelKind::Add)?;
    /// assert_eq!(key.entry(Shape::Strided { rank: 2 }, IndexWidth::U64), "dlspan_add_float32_rank2_i64");
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn entry(&self, shape: Shape, index: IndexWidth) -> String {
        source::entry_name(self, shape, index)
    }

    /// Every kernel shape the module holds.
    ///
    /// ```
    /// use dlspan::cuda::{KernelKind, ModuleKey, Shape};
    /// let shapes = ModuleKey::new::<f64, f64>(KernelKind::Copy)?.shapes();
    /// assert!(shapes.contains(&Shape::Flat { vector: 2 }) && shapes.contains(&Shape::General));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn shapes(&self) -> Vec<Shape> {
        source::shapes(self)
    }
}

/// The preamble every module starts with.
///
/// ```
/// assert!(dlspan::cuda::preamble().contains("struct alignas(16) dl_params"));
/// ```
pub fn preamble() -> &'static str {
    source::PREAMBLE
}

/// The NVRTC options of a module: no fused multiply-add (results match the CPU bit for bit),
/// C++17, the virtual architecture `arch` (`compute_90` for an H100), and 128-bit integers where
/// the module has them.
pub(crate) fn compile_options(key: &ModuleKey, arch: &str) -> Vec<String> {
    let mut options = vec!["--fmad=false".to_owned(), "--std=c++17".to_owned(), format!("--gpu-architecture={arch}")];
    if key.uses_int128() {
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
/// use dlspan::cuda::{compile_ptx, KernelKind, ModuleKey};
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
    let name = format!("{}.cu", key.entry(Shape::General, IndexWidth::U64));
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
        CudaError::Compile { kernel: name, result, log }
    })
}
