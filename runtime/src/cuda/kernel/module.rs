//! [`ModuleKey`]: one NVRTC program — a copy or cast between element types, or an element-wise
//! kernel's instantiation (a user's, or the built-in `fill`, `add`, `mul`, `scale`, `axpy`) — and which
//! operations have kernels for which element types.

use crate::cuda::abi::{KernelKind, SCALAR_BYTES};
use crate::cuda::error::CudaError;
use crate::dtype::DlElement;
use crate::kernel::builtin;
use crate::kernel::{ElementType, ElementwiseDef, Instance, ParamKind, RawInstance, RawKind, TypeInfo};

/// One NVRTC program.
///
/// ```
/// use dlspan::cuda::KernelKind;
/// use dlspan::cuda::kernel::ModuleKey;
/// let key = ModuleKey::new::<f32, f32>(KernelKind::Scale)?;
/// assert!(key.source().contains("dl_mul(v_alpha, dl_load(v_x))"));
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModuleKey {
    /// A copy or a cast, generated from the operation (with shared-memory tiles for transposes).
    Builtin {
        /// The operation: [`KernelKind::Copy`] or [`KernelKind::Cast`].
        kind: KernelKind,
        /// The output's element type.
        out: ElementType,
        /// The input's element type (the output's for copies).
        input: ElementType,
    },
    /// An element-wise kernel instantiated with element types: one declared with `elementwise!`,
    /// or the built-in `fill`, `add`, `mul`, `scale`, `axpy` (`dlspan::kernel::builtin`).
    Elementwise(Instance),
    /// A raw kernel (`dlspan::kernel!`) instantiated with element types and view types: one kernel,
    /// [`RawInstance::entry`](crate::kernel::RawInstance::entry).
    Raw(RawInstance),
}

/// The built-in element-wise kernel of an operation.
fn builtin_def(kind: KernelKind) -> Option<&'static ElementwiseDef> {
    Some(match kind {
        KernelKind::Fill => builtin::fill::def(),
        KernelKind::Add => builtin::add::def(),
        KernelKind::Mul => builtin::mul::def(),
        KernelKind::Scale => builtin::scale::def(),
        KernelKind::Axpy => builtin::axpy::def(),
        KernelKind::Copy | KernelKind::Cast | KernelKind::Sum => return None,
    })
}

impl ModuleKey {
    /// The module of `kind` writing `Out` from `In` (`In` = `Out` except for casts).
    ///
    /// # Errors
    ///
    /// [`CudaError::Unsupported`] when the operation has no kernel for these types (arithmetic on a
    /// type that is not an integer or IEEE-like float; a cast from or to a type with no scalar
    /// format; a copy between different types); [`CudaError::ScalarTooLarge`] for a scalar argument
    /// above [`SCALAR_BYTES`](crate::cuda::kernel::SCALAR_BYTES).
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
        match builtin_def(kind) {
            Some(def) if ElementType::of::<Out>() == ElementType::of::<In>() => {
                Self::checked(kind, Instance::of_one(def, TypeInfo::of::<Out>()))
            }
            _ => Self::from_types(kind, ElementType::of::<Out>(), ElementType::of::<In>()),
        }
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
    /// assert_eq!(ModuleKey::from_types(KernelKind::Fill, t, t)?.out(), t);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn from_types(kind: KernelKind, out: ElementType, input: ElementType) -> Result<Self, CudaError> {
        let unsupported = || CudaError::Unsupported {
            kernel: kind,
            output: out.dtype,
            input: (kind.inputs() > 0).then_some(input.dtype),
        };
        if let Some(def) = builtin_def(kind) {
            if out != input {
                return Err(unsupported());
            }
            let ty = TypeInfo { dtype: out.dtype, size: out.size, align: out.align, fields: &[] };
            return Self::checked(kind, Instance::of_one(def, ty));
        }
        let supported = match kind {
            KernelKind::Copy => out == input,
            // Into an accumulator that has arithmetic, from any scalar.
            KernelKind::Sum => out.scalar_type().is_some_and(|s| s.is_arithmetic()) && input.scalar_type().is_some(),
            _ => out.scalar_type().is_some() && input.scalar_type().is_some(),
        };
        if !supported {
            return Err(unsupported());
        }
        Ok(Self::Builtin { kind, out, input })
    }

    /// A built-in element-wise kernel's module, after its run-time type rules: arithmetic on the
    /// integers and IEEE-like floats only (the `Scalar` types its Rust declaration names).
    fn checked(kind: KernelKind, instance: Instance) -> Result<Self, CudaError> {
        let out = ElementType::from(instance.ty(0));
        let arithmetic = matches!(kind, KernelKind::Add | KernelKind::Mul | KernelKind::Scale | KernelKind::Axpy);
        if arithmetic && !out.scalar_type().is_some_and(|s| s.is_arithmetic()) {
            return Err(CudaError::Unsupported {
                kernel: kind,
                output: out.dtype,
                input: (kind.inputs() > 0).then_some(out.dtype),
            });
        }
        Self::elementwise(instance)
    }

    /// The module of an element-wise kernel's instantiation.
    ///
    /// # Errors
    ///
    /// [`CudaError::ScalarTooLarge`] when its scalar arguments do not fit the parameter block's
    /// [`SCALAR_BYTES`](crate::cuda::kernel::SCALAR_BYTES).
    ///
    /// ```
    /// use dlspan::kernel::Scalar;
    /// use dlspan::cuda::kernel::ModuleKey;
    /// dlspan::elementwise! {
    ///     fn clamp_to<T: Scalar>(low: T, high: T, x: &mut T) { *x = x.max(low).min(high) }
    /// }
    /// let key = ModuleKey::elementwise(clamp_to::instance::<i16>())?;
    /// assert!(key.source().contains("dlspan_clamp_to_int16_flat8_i32"));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn elementwise(instance: Instance) -> Result<Self, CudaError> {
        scalar_offsets(&instance)?;
        Ok(Self::Elementwise(instance))
    }

    /// The module of a raw kernel's instantiation.
    ///
    /// # Errors
    ///
    /// [`CudaError::Kernel`] when its arguments do not fit
    /// [`MAX_ARGUMENT_BYTES`](crate::kernel::MAX_ARGUMENT_BYTES).
    pub fn raw(instance: RawInstance) -> Result<Self, CudaError> {
        instance.argument_layout()?;
        Ok(Self::Raw(instance))
    }

    /// The operation, for the built-in kernels (copy, fill, add, mul, scale, axpy, cast, sum); `None` for a
    /// user's element-wise kernel.
    ///
    /// ```
    /// use dlspan::cuda::KernelKind;
    /// use dlspan::cuda::kernel::ModuleKey;
    /// assert_eq!(ModuleKey::new::<u8, u8>(KernelKind::Fill)?.kind(), Some(KernelKind::Fill));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn kind(&self) -> Option<KernelKind> {
        match self {
            Self::Builtin { kind, .. } => Some(*kind),
            Self::Elementwise(instance) => {
                KernelKind::ALL.into_iter().find(|&kind| builtin_def(kind) == Some(instance.def()))
            }
            Self::Raw(_) => None,
        }
    }

    /// The output's element type (an element-wise kernel's primary view's).
    pub fn out(&self) -> ElementType {
        match self {
            Self::Builtin { out, .. } => *out,
            Self::Elementwise(instance) => {
                let def = instance.def();
                let primary = def.views().nth(def.primary()).expect("a written view");
                ElementType::from(instance.ty(primary.ty))
            }
            Self::Raw(instance) => raw_type(instance, RawKind::Write),
        }
    }

    /// The (first) input's element type: the output's for kernels without one.
    pub fn input(&self) -> ElementType {
        match self {
            Self::Builtin { input, .. } => *input,
            Self::Elementwise(instance) => instance
                .def()
                .views()
                .find(|p| p.kind == ParamKind::Read)
                .map_or_else(|| self.out(), |p| ElementType::from(instance.ty(p.ty))),
            Self::Raw(instance) => raw_type(instance, RawKind::Read),
        }
    }

    /// The operation's name in kernel names and messages: `copy`, `cast`, or the element-wise
    /// kernel's.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Builtin { kind: KernelKind::Copy, .. } => "copy",
            Self::Builtin { kind: KernelKind::Sum, .. } => "sum",
            Self::Builtin { .. } => "cast",
            Self::Elementwise(instance) => instance.def().name,
            Self::Raw(instance) => instance.def().name,
        }
    }

    /// Whether the module has a tiled kernel (copies and casts).
    pub(crate) fn tiles(&self) -> bool {
        matches!(self, Self::Builtin { kind: KernelKind::Copy | KernelKind::Cast, .. })
    }
}

/// The element type of a raw kernel's first view of `kind` (else of its first view, else its first
/// type).
fn raw_type(instance: &RawInstance, kind: RawKind) -> ElementType {
    let params = instance.def().params;
    let param = params.iter().find(|p| p.kind == kind).or_else(|| params.iter().find(|p| p.kind != RawKind::Scalar));
    let ty = param.map_or(0, |p| p.ty);
    instance.types().get(ty).map_or(ElementType::of::<u8>(), |t| ElementType::from(*t))
}

/// The offset of each scalar argument (declaration order) in the parameter block's scalar bytes:
/// each at the next multiple of its alignment (at most 16).
///
/// # Errors
///
/// [`CudaError::ScalarTooLarge`] when they do not fit [`SCALAR_BYTES`].
pub(crate) fn scalar_offsets(instance: &Instance) -> Result<Vec<usize>, CudaError> {
    let mut end = 0usize;
    let mut offsets = Vec::new();
    for p in instance.def().scalars() {
        let t = instance.ty(p.ty);
        let offset = end.next_multiple_of(t.align.clamp(1, 16));
        end = offset + t.size;
        offsets.push(offset);
    }
    if end > SCALAR_BYTES {
        return Err(CudaError::ScalarTooLarge { size: end, max: SCALAR_BYTES });
    }
    Ok(offsets)
}
