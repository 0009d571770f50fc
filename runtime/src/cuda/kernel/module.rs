//! [`ModuleKey`]: one NVRTC program, an operation on element types, and which operations have
//! kernels for which element types.

use super::element::ElementType;
use crate::cuda::abi::KernelKind;
use crate::cuda::error::CudaError;
use crate::dtype::DlElement;

/// One NVRTC program: an operation on element types (`input` equals `out` except for casts).
///
/// ```
/// use dlspan::cuda::KernelKind;
/// use dlspan::cuda::kernel::ModuleKey;
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
    /// use dlspan::cuda::{CudaError, KernelKind};
    /// use dlspan::cuda::kernel::ModuleKey;
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
    /// use dlspan::cuda::KernelKind;
    /// use dlspan::cuda::kernel::{ElementType, ModuleKey};
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
                out == input && out.scalar_type().is_some_and(|s| s.is_arithmetic())
            }
            KernelKind::Cast => out.scalar_type().is_some() && input.scalar_type().is_some(),
        };
        if !supported {
            return Err(unsupported());
        }
        if kind.scalars() > 0 && out.size > 64 {
            return Err(CudaError::ScalarTooLarge { size: out.size, max: 64 });
        }
        Ok(Self { kind, out, input })
    }
}
