//! Operators made from element-wise kernels: `elementwise!`'s `#[torch("ns::name")]` derives an
//! [`Operator`](super::Operator) from the kernel's signature, and the code it generates calls the
//! functions here. What follows from the declaration alone is done here, once for every such
//! operator:
//!
//! - the schema: each `&T` parameter a `Tensor`, each `&mut T` the body reads a `Tensor(a!)`
//!   (written in place), each `&mut T` it only writes a new result (returned, in order), each
//!   scalar a `float`, `int` or `bool`;
//! - the checks, with the argument's name: one dtype for every view of the kernel's type
//!   parameter (the fixed dtype for the others), one device, shapes broadcasting NumPy's way to
//!   the result's shape, which in-place arguments must have already (as `Tensor.add_` requires);
//! - the results: new compact tensors of the broadcast shape, on the arguments' device;
//! - the Meta kernel: the same checks and results with no data (what `torch.compile`, `export`
//!   and `opcheck` trace);
//! - the CPU kernel (the body's Rust, on host views) and, with feature `cuda`, the CUDA kernel
//!   (the body's CUDA translation, launched on PyTorch's current stream of the tensors' device).

use super::error::TorchError;
use super::op::Call;
use super::tensor::{Device, Tensor};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::DLDataType;
use crate::kernel::Cpu;
use crate::kernel::signature::Views;

#[doc(hidden)]
pub use crate::kernel::signature::{Bound, Role, ScalarKind, ScalarSpec, Spec, ViewSpec};

/// The kernel an operator runs, for each executor: what `elementwise!` generates (a dispatch on
/// the dtype and rank of [`Args`], then the kernel's `run` on typed views of its tensors).
#[doc(hidden)]
pub trait Kernel: 'static {
    /// The declaration.
    const SPEC: Spec;

    /// Runs the kernel on `on` over `args` (tensors of the executor's memory, checked).
    ///
    /// # Errors
    ///
    /// A view, dtype or kernel error, naming the argument.
    fn run<E: Exec>(on: E, args: &mut Args) -> Result<(), TorchError>;
}

/// The arguments of one call, checked: the tensors in the order of the view parameters (results
/// allocated), the scalars' raw values, the dtype of the type parameter, the broadcast shape and
/// the device.
#[doc(hidden)]
#[derive(Debug)]
pub struct Args {
    tensors: Vec<Tensor>,
    scalars: Vec<u64>,
    dtype: DLDataType,
    shape: Vec<i64>,
    device: Device,
    spec: &'static Spec,
}

impl Args {
    /// The tensors, in the order of the view parameters, as an array of `N`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the kernel has not `N` views (a generated-code bug).
    pub fn tensors<const N: usize>(&mut self) -> Result<&mut [Tensor; N], TorchError> {
        let name = self.spec.name;
        <&mut [Tensor; N]>::try_from(self.tensors.as_mut_slice())
            .map_err(|_| TorchError::Schema { operator: name.to_owned(), reason: format!("not {N} views") })
    }

    /// The dtype of the kernel's type parameter (of its views of that type).
    pub fn dtype(&self) -> DLDataType {
        self.dtype
    }

    /// The device of the tensors.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The result's shape: the arguments' broadcast.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// The rank of the result (the broadcast shape's).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Scalar `k` (declaration order among the scalars) as the kernel's type `T`: a `float` or
    /// `int` converted as `as` converts, a `bool` as itself.
    ///
    /// # Errors
    ///
    /// [`TorchError::Kernel`] when an `int` does not fit `T` exactly.
    pub fn scalar<T: DlElement + crate::dtype::Numeric>(&self, k: usize) -> Result<T, TorchError> {
        self.spec.scalar::<T>(k, self.scalars[k]).map_err(TorchError::Kernel)
    }
}

/// Which kernel of the operator is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Cpu,
    Meta,
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Cuda,
}

/// A dtype, for messages.
fn dtype_name(tensor: &Tensor) -> String {
    tensor.dtype().map_or_else(|| format!("torch dtype {}", tensor.dtype_code()), |d| d.to_string())
}

/// Takes and checks the arguments of `K`'s call for `target`, and allocates the results.
fn prepare<K: Kernel>(call: &mut Call, target: Target) -> Result<Args, TorchError> {
    let spec = &K::SPEC;
    let mut tensors = Vec::with_capacity(spec.views.len());
    let mut inputs = Vec::with_capacity(spec.views.len());
    for (k, view) in spec.views.iter().enumerate() {
        if view.role != Role::Output {
            tensors.push(Some(call.take(view.name)?));
            inputs.push(k);
        } else {
            tensors.push(None);
        }
    }
    let scalars = spec
        .scalars
        .iter()
        .map(|s| match s.kind {
            ScalarKind::Float => call.float(s.name).map(f64::to_bits),
            ScalarKind::Int => call.int(s.name).map(|v| v as u64),
            ScalarKind::Bool => call.bool(s.name).map(u64::from),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let arg = |k: usize| tensors[k].as_ref().expect("an argument");
    // One dtype per type: the first view of the type parameter sets it.
    let mut dtype: Option<(DLDataType, &'static str)> = None;
    for &k in &inputs {
        let (view, tensor) = (spec.views[k], arg(k));
        let found =
            tensor.dtype().ok_or_else(|| TorchError::Dtype { name: view.name.into(), code: tensor.dtype_code() })?;
        let expected = match (view.dtype, dtype) {
            (Some(fixed), _) => Some((fixed, "the kernel's")),
            (None, Some((d, first))) => Some((d, first)),
            (None, None) => {
                dtype = Some((found, view.name));
                None
            }
        };
        if let Some((expected, by)) = expected.filter(|(d, _)| *d != found) {
            let by = if by == "the kernel's" { "the kernel takes".to_owned() } else { format!("argument `{by}` has") };
            return Err(TorchError::Kernel(format!(
                "argument `{}` has dtype {}; {by} {expected}: they must match",
                view.name,
                dtype_name(tensor)
            )));
        }
    }
    let dtype = dtype.map_or(DLDataType::default(), |(d, _)| d);
    // One device.
    let device = inputs.first().map_or(Device::Cpu, |&k| arg(k).device());
    for &k in &inputs {
        let found = arg(k).device();
        if found != device {
            return Err(TorchError::Kernel(format!(
                "argument `{}` is on {found}, argument `{}` on {device}: they must be on one device",
                spec.views[k].name, spec.views[inputs[0]].name
            )));
        }
    }
    let device_ok = match target {
        Target::Cpu => device == Device::Cpu,
        Target::Meta => device == Device::Meta,
        Target::Cuda => matches!(device, Device::Cuda(_)),
    };
    if !device_ok {
        return Err(TorchError::Kernel(format!(
            "the arguments are on {device}, but the {target:?} kernel was called (operator `{}`)",
            spec.name
        )));
    }
    // The broadcast shape, right-aligned (NumPy's rule).
    let rank = inputs.iter().map(|&k| arg(k).dim()).max().unwrap_or(0);
    let mut shape = vec![1i64; rank];
    for &k in &inputs {
        let sizes = arg(k).sizes();
        for (axis, &size) in sizes.iter().enumerate() {
            let target = &mut shape[rank - sizes.len() + axis];
            if size != *target && size != 1 && *target != 1 {
                return Err(TorchError::Kernel(format!(
                    "argument `{}` has shape {sizes:?}, which does not broadcast with the other arguments' (axis {axis} is {size}, another is {target})",
                    spec.views[k].name
                )));
            }
            if *target == 1 {
                *target = size;
            }
        }
    }
    if spec.strict {
        let first = inputs[0];
        if let Some(&k) = inputs.iter().find(|&&k| arg(k).sizes() != arg(first).sizes()) {
            return Err(TorchError::Kernel(format!(
                "argument `{}` has shape {:?} and argument `{}` {:?}: operator `{}` takes tensors of one shape (it does not broadcast)",
                spec.views[k].name,
                arg(k).sizes(),
                spec.views[first].name,
                arg(first).sizes(),
                spec.name
            )));
        }
    }
    for &k in &inputs {
        if spec.views[k].role == Role::InPlace && arg(k).sizes() != shape.as_slice() {
            return Err(TorchError::Kernel(format!(
                "argument `{}` is written in place and has shape {:?}: the arguments broadcast to {shape:?}, which it must have",
                spec.views[k].name,
                arg(k).sizes()
            )));
        }
    }
    // The dtype is one the kernel takes, at this rank.
    let accepted = spec.accepts(dtype, rank);
    if let Err(error) = accepted {
        return Err(TorchError::Argument { name: spec.typed_argument().into(), error });
    }
    // The results.
    let mut all = Vec::with_capacity(tensors.len());
    for (view, tensor) in spec.views.iter().zip(tensors) {
        all.push(match tensor {
            Some(mut tensor) => {
                tensor.expand_rank(rank)?;
                tensor
            }
            // A result the body only writes (role `Output`): left uninitialised (rules T4, T8).
            None => Tensor::uninit(&shape, view.dtype.unwrap_or(dtype), device)?,
        });
    }
    Ok(Args { tensors: all, scalars, dtype, shape, device, spec })
}

/// Returns the results of `args` (the views of role `Output`, in order).
fn finish(call: &mut Call, args: Args) {
    for (view, tensor) in args.spec.views.iter().zip(args.tensors) {
        if view.role == Role::Output {
            call.ret(tensor);
        }
    }
}

/// The CPU kernel of `K`.
///
/// # Errors
///
/// The checks' errors, naming the argument, and the kernel's.
#[doc(hidden)]
pub fn cpu<K: Kernel>(call: &mut Call) -> Result<(), TorchError> {
    let mut args = prepare::<K>(call, Target::Cpu)?;
    K::run(Cpu, &mut args)?;
    finish(call, args);
    Ok(())
}

/// The Meta kernel of `K`: the checks and the results' shapes and dtypes.
///
/// # Errors
///
/// The checks' errors, as the CPU kernel's.
#[doc(hidden)]
pub fn meta<K: Kernel>(call: &mut Call) -> Result<(), TorchError> {
    let args = prepare::<K>(call, Target::Meta)?;
    finish(call, args);
    Ok(())
}

/// Whether element-wise operators get a CUDA kernel: dlspan built with feature `cuda`.
#[doc(hidden)]
pub const CUDA: bool = cfg!(feature = "cuda");

/// The CUDA kernel of `K`: launched on PyTorch's current stream of the tensors' device, returning
/// before the GPU runs it (PyTorch orders everything after it on that stream).
///
/// # Errors
///
/// The checks' errors, naming the argument, a CUDA error, and the kernel's.
#[doc(hidden)]
#[cfg(feature = "cuda")]
pub fn cuda<K: Kernel>(call: &mut Call) -> Result<(), TorchError> {
    let mut args = prepare::<K>(call, Target::Cuda)?;
    let Device::Cuda(index) = args.device else { unreachable!("checked by prepare") };
    // SAFETY: the stream is used for this call only (it is dropped before `cuda` returns), while
    // the caller's current stream is alive.
    let stream = unsafe { super::stream::current(index) }?;
    K::run(&stream, &mut args)?;
    drop(stream);
    finish(call, args);
    Ok(())
}

/// The CUDA kernel of `K` without feature `cuda`: never registered ([`CUDA`] is false).
///
/// # Errors
///
/// Always: dlspan was built without CUDA.
#[doc(hidden)]
#[cfg(not(feature = "cuda"))]
pub fn cuda<K: Kernel>(call: &mut Call) -> Result<(), TorchError> {
    Err(TorchError::Kernel(format!("operator `{}`: dlspan was built without feature `cuda`", call.operator())))
}

/// An executor element-wise operators run on, with the view types of its memory: [`Cpu`] (host
/// views) and, with feature `cuda`, `&cuda::Stream` (device views).
#[doc(hidden)]
pub trait Exec: Views {
    /// The shared view of `tensor` (rank `R` after [`Args`]' broadcast).
    ///
    /// # Errors
    ///
    /// The view's rules, naming the argument.
    fn input<T: DlElement, const R: usize>(tensor: &Tensor) -> Result<Self::In<'_, T, R>, TorchError> {
        tensor.view()
    }

    /// The mutable view of `tensor`.
    ///
    /// # Errors
    ///
    /// As [`input`](Self::input).
    fn output<T: DlElement, const R: usize>(tensor: &mut Tensor) -> Result<Self::Out<'_, T, R>, TorchError> {
        tensor.view_mut()
    }

    /// The executor's error as the operator's.
    fn error(error: Self::Error) -> TorchError;
}

impl Exec for Cpu {
    fn error(error: DlpackError) -> TorchError {
        TorchError::from(error)
    }
}

#[cfg(feature = "cuda")]
impl Exec for &crate::cuda::Stream {
    fn error(error: crate::cuda::CudaError) -> TorchError {
        TorchError::from(error)
    }
}

/// A dispatch error of `K` (a dtype its bound does not take, a rank above the most), naming the
/// first argument of its type parameter.
#[doc(hidden)]
pub fn dispatch_error<K: Kernel>(error: DlpackError) -> TorchError {
    TorchError::Argument { name: K::SPEC.typed_argument().into(), error }
}
