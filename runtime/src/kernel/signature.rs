//! What a framework entry point reads of an element-wise kernel's signature: each view's role
//! (read, updated in place, a new result) and element type, each scalar's kind, the dtypes the type
//! parameter may take. `elementwise!` writes one [`Spec`] per framework attribute
//! (`#[torch("ns::name")]`, `#[jax]`); PyTorch's operators and JAX's FFI handlers read their
//! arguments by it, and convert scalars with [`Spec::scalar`], so that both frameworks accept and
//! refuse the same values.

use crate::dtype::{DlElement, Numeric};
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDataTypeCode};
use crate::kernel::{Cpu, Executor, Float, FloatVisitor, Read, Scalar, ScalarVisitor, Write};
use crate::{FromDlTensor, HostMdspan, HostMdspanMut, LayoutStrideRelaxed};

/// What a view parameter of the kernel is to its caller.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `x: &T`: an argument, read.
    Input,
    /// `x: &mut T` read by the body: an argument written in place.
    InPlace,
    /// `out: &mut T` only written: a new array, returned.
    Output,
}

/// One view parameter: its name, its role, and its dtype (`None`: the kernel's type parameter,
/// the same for every such view; `Some`: a fixed element type's).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ViewSpec {
    /// The parameter's (and argument's) name.
    pub name: &'static str,
    /// Its role.
    pub role: Role,
    /// Its fixed dtype, or `None` for the type parameter's.
    pub dtype: Option<DLDataType>,
}

/// The type of a scalar parameter, as the caller passes it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    /// A float: a `double`.
    Float,
    /// An integer: an `int64_t`.
    Int,
    /// `bool`.
    Bool,
}

/// One scalar parameter.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ScalarSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// How the caller passes it.
    pub kind: ScalarKind,
}

/// What the dtype of the kernel's type parameter may be.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `T: Float`: `float16`, `bfloat16`, `float32`, `float64`.
    Float,
    /// `T: Scalar`: the integers and the floats.
    Scalar,
    /// No type parameter: every view has a fixed element type.
    Fixed,
}

/// An element-wise kernel as a framework entry point declares it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The entry point's name (a PyTorch operator's qualified name, a JAX kernel's name).
    pub name: &'static str,
    /// The view parameters, in declaration order.
    pub views: &'static [ViewSpec],
    /// The scalar parameters, in declaration order.
    pub scalars: &'static [ScalarSpec],
    /// The type parameter's bound.
    pub bound: Bound,
    /// Whether every argument has the result's shape (`strict`: no broadcasting).
    pub strict: bool,
}

impl Spec {
    /// Scalar `k` (declaration order among the scalars), passed as `bits` (a `float`'s `f64`
    /// bits, an `int`'s `i64` bits, a `bool` as 0 or 1), as the kernel's type `T`: a float
    /// converted as `as` converts, an integer kernel taking whole values in its range only, an
    /// integer taken when it fits `T` exactly.
    ///
    /// # Errors
    ///
    /// A message naming the argument when the value is not one of `T`.
    ///
    /// ```
    /// use dlspan::kernel::signature::{Bound, ScalarKind, ScalarSpec, Spec};
    /// const SPEC: Spec = Spec {
    ///     name: "shift",
    ///     views: &[],
    ///     scalars: &[ScalarSpec { name: "s", kind: ScalarKind::Float }, ScalarSpec { name: "n", kind: ScalarKind::Int }],
    ///     bound: Bound::Scalar,
    ///     strict: false,
    /// };
    /// assert_eq!(SPEC.scalar::<f32>(0, 2.5f64.to_bits()), Ok(2.5));
    /// assert!(SPEC.scalar::<i32>(0, 2.5f64.to_bits()).unwrap_err().contains("`s` = 2.5"));
    /// assert_eq!(SPEC.scalar::<u8>(1, 200), Ok(200));
    /// assert!(SPEC.scalar::<u8>(1, (-1i64) as u64).unwrap_err().contains("does not fit"));
    /// ```
    pub fn scalar<T: DlElement + Numeric>(&self, k: usize, bits: u64) -> Result<T, String> {
        let spec = self.scalars[k];
        let integer = [DLDataTypeCode::kDLInt.0, DLDataTypeCode::kDLUInt.0].contains(&T::DTYPE.code);
        Ok(match spec.kind {
            ScalarKind::Float => {
                let value = f64::from_bits(bits);
                let converted = crate::dtype::cast::<f64, T>(value);
                // An integer kernel takes whole values in its range only (`2.5`, NaN, `1e30`
                // would be changed by the conversion).
                if integer && crate::dtype::cast::<T, f64>(converted) != value {
                    return Err(format!(
                        "argument `{}` = {value} is not a value of the kernel's {}",
                        spec.name,
                        T::DTYPE
                    ));
                }
                converted
            }
            ScalarKind::Bool => crate::dtype::cast::<bool, T>(bits as u8 != 0),
            ScalarKind::Int => {
                let value = bits as i64;
                let converted = crate::dtype::cast::<i64, T>(value);
                // Compared in 128 bits: a wrapped negative (`-1` as `u64`) or a rounded one
                // (`i64::MAX` as `f64`) differs there.
                if crate::dtype::cast::<T, i128>(converted) != i128::from(value) {
                    return Err(format!("argument `{}` = {value} does not fit the kernel's {}", spec.name, T::DTYPE));
                }
                converted
            }
        })
    }

    /// Whether the kernel takes `dtype` for its type parameter at `rank` (the bound's dtypes, and
    /// a rank the dispatch reaches): what its dispatch accepts, checked before any view is made, so
    /// that a refusal names the argument.
    ///
    /// # Errors
    ///
    /// The dispatch's error: a dtype the bound does not take, a rank above the most.
    ///
    /// ```
    /// use dlspan::kernel::signature::{Bound, Spec};
    /// let spec = Spec { name: "k", views: &[], scalars: &[], bound: Bound::Float, strict: false };
    /// assert!(spec.accepts(dlspan::dtype::dtype_of::<f32>(), 2).is_ok());
    /// assert!(spec.accepts(dlspan::dtype::dtype_of::<i32>(), 2).is_err());
    /// ```
    pub fn accepts(&self, dtype: DLDataType, rank: usize) -> Result<(), DlpackError> {
        match self.bound {
            Bound::Float => crate::kernel::dispatch_float(dtype, rank, Accept),
            Bound::Scalar => crate::kernel::dispatch_scalar(dtype, rank, Accept),
            Bound::Fixed => crate::dtype::dispatch_rank(rank, Accept),
        }
    }

    /// The first argument of the kernel's type parameter (whose dtype is the call's), for errors;
    /// `"result"` when only results have it.
    pub fn typed_argument(&self) -> &'static str {
        self.views.iter().find(|v| v.dtype.is_none() && v.role != Role::Output).map_or("result", |v| v.name)
    }
}

/// The visitor [`Spec::accepts`] dispatches to: it does nothing, so that the dispatch itself is the
/// check.
struct Accept;

impl FloatVisitor for Accept {
    type Output = ();
    fn visit<T: Float, const R: usize>(self) {}
}

impl ScalarVisitor for Accept {
    type Output = ();
    fn visit<T: Scalar, const R: usize>(self) {}
}

impl crate::dtype::RankVisitor for Accept {
    type Output = ();
    fn visit<const R: usize>(self) {}
}

/// An executor framework entry points run element-wise kernels on, with the view types of its
/// memory they make of their arguments: [`Cpu`] (host views) and, with feature `cuda`,
/// `&cuda::Stream` (device views). Both of rank `R`, any strides (a broadcast argument's leading
/// axes of extent 1).
#[doc(hidden)]
pub trait Views: Executor {
    /// A shared view of rank `R`.
    type In<'a, T: DlElement, const R: usize>: Read<Self, R, Elem = T> + FromDlTensor<'a>;
    /// A mutable view of rank `R`.
    type Out<'a, T: DlElement, const R: usize>: Write<Self, R, Elem = T> + FromDlTensor<'a>;
}

impl Views for Cpu {
    type In<'a, T: DlElement, const R: usize> = HostMdspan<'a, T, R, LayoutStrideRelaxed>;
    type Out<'a, T: DlElement, const R: usize> = HostMdspanMut<'a, T, R, LayoutStrideRelaxed>;
}

#[cfg(feature = "cuda")]
impl Views for &crate::cuda::Stream {
    type In<'a, T: DlElement, const R: usize> = crate::DeviceMdspan<'a, T, R, LayoutStrideRelaxed>;
    type Out<'a, T: DlElement, const R: usize> = crate::DeviceMdspanMut<'a, T, R, LayoutStrideRelaxed>;
}
