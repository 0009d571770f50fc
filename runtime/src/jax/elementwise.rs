//! JAX kernels made from element-wise kernels: `elementwise!`'s `#[jax]` derives an XLA FFI
//! handler from the kernel's signature, and the code it generates calls the functions here. What
//! follows from the declaration alone is done here, once for every such kernel:
//!
//! - the arguments: each `&T` parameter a buffer argument, in declaration order; each
//!   `&mut T` the body only writes a result buffer, in order; each scalar an attribute of its name
//!   (a float as `float64`, an integer as `int64`, a `bool`);
//! - the checks, with the parameter's name: the counts, one dtype for every view of the kernel's
//!   type parameter (the fixed dtype for the others), shapes broadcasting NumPy's way to the
//!   results' shape, which every result must have, results overlapping no other buffer;
//! - the CPU handler (the body's Rust, on host views) and, with feature `cuda`, the CUDA handler
//!   (the body's CUDA translation, launched on XLA's stream, returning before the GPU runs it).

use super::error::JaxError;
use super::ffi::{Handler, XlaFfiCallFrame, XlaFfiError};
use super::frame::{Buffer, CallFrame, Traits, handle, overlap};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice, DLDeviceType};
use crate::kernel::Cpu;
use crate::kernel::signature::{Role, Spec, Views};

/// The kernel a JAX handler runs, for each executor: what `elementwise!` generates (a dispatch on
/// the dtype and rank of [`Args`], then the kernel's `run` on typed views of its buffers).
#[doc(hidden)]
pub trait Kernel: 'static {
    /// The declaration.
    const SPEC: Spec;

    /// The parameters' order: `true` for a view, `false` for a scalar (the Python function takes
    /// them as the kernel declares them).
    const ORDER: &'static [bool];

    /// The derived backward's entry, for a `#[differentiable]` kernel.
    const BACKWARD: Option<Entry> = None;

    /// Runs the kernel on `on` over `args` (buffers of the executor's memory, checked).
    ///
    /// # Errors
    ///
    /// A view, dtype or kernel error, naming the argument.
    fn run<E: Exec>(on: E, args: &mut Args<'_>) -> Result<(), JaxError>;
}

/// The arguments of one call, checked: the buffers in the order of the view parameters, the
/// scalars' raw values, the dtype of the type parameter and the broadcast rank.
#[doc(hidden)]
#[derive(Debug)]
pub struct Args<'a> {
    buffers: Vec<Arg<'a>>,
    scalars: Vec<u64>,
    dtype: DLDataType,
    rank: usize,
    spec: &'static Spec,
}

/// One buffer of a call, as the generated code hands it to [`Exec`].
#[doc(hidden)]
#[derive(Debug)]
pub struct Arg<'a>(Buffer<'a>);

impl<'a> Args<'a> {
    /// The buffers, in the order of the view parameters, as an array of `N`.
    ///
    /// # Errors
    ///
    /// [`JaxError::Kernel`] when the kernel has not `N` views (a generated-code bug).
    pub fn buffers<const N: usize>(&mut self) -> Result<&mut [Arg<'a>; N], JaxError> {
        let name = self.spec.name;
        <&mut [Arg<'a>; N]>::try_from(self.buffers.as_mut_slice())
            .map_err(|_| JaxError::Kernel(format!("kernel `{name}`: not {N} views")))
    }

    /// The dtype of the kernel's type parameter (of its views of that type).
    pub fn dtype(&self) -> DLDataType {
        self.dtype
    }

    /// The rank of the results (the broadcast shape's).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Scalar `k` (declaration order among the scalars) as the kernel's type `T`, converted as
    /// [`Spec::scalar`] converts.
    ///
    /// # Errors
    ///
    /// [`JaxError::Attribute`] when the value is not one of `T`.
    pub fn scalar<T: DlElement + crate::dtype::Numeric>(&self, k: usize) -> Result<T, JaxError> {
        self.spec
            .scalar::<T>(k, self.scalars[k])
            .map_err(|reason| JaxError::Attribute { name: self.spec.scalars[k].name.to_owned(), reason })
    }
}

/// Reads and checks the buffers and attributes of `K`'s call on `device`.
fn prepare<'a, K: Kernel>(frame: &CallFrame<'a>, device: DLDevice) -> Result<Args<'a>, JaxError> {
    let spec = &K::SPEC;
    let inputs = spec.views.iter().filter(|v| v.role == Role::Input).count();
    let outputs = spec.views.iter().filter(|v| v.role == Role::Output).count();
    if let Some(view) = spec.views.iter().find(|v| v.role == Role::InPlace) {
        return Err(JaxError::Kernel(format!(
            "argument `{}` is updated in place, which a JAX kernel cannot be (JAX arrays are immutable)",
            view.name
        )));
    }
    let (args, rets) = frame.counts();
    if (args, rets) != (inputs, outputs) {
        return Err(JaxError::Kernel(format!(
            "kernel `{}` takes {inputs} arrays and returns {outputs}; the call passes {args} and expects {rets}",
            spec.name
        )));
    }
    let (mut arg, mut ret) = (0usize, 0usize);
    let mut buffers = Vec::with_capacity(spec.views.len());
    for view in spec.views {
        buffers.push(if view.role == Role::Input {
            arg += 1;
            frame.arg(arg - 1, view.name, device)?
        } else {
            ret += 1;
            frame.ret(ret - 1, view.name, device)?
        });
    }
    let scalars = spec.scalars.iter().map(|s| frame.scalar_bits(s.name, s.kind)).collect::<Result<Vec<_>, _>>()?;
    // One dtype per type: the first view of the type parameter sets it; results are checked too
    // (XLA allocates them as the caller declared).
    let mut dtype: Option<(DLDataType, &'static str)> = None;
    for (view, buffer) in spec.views.iter().zip(&buffers) {
        let found = buffer.dtype().ok_or_else(|| {
            JaxError::Kernel(format!(
                "argument `{}` has {}, which dlspan's kernels do not take",
                view.name,
                buffer.dtype_name()
            ))
        })?;
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
            return Err(JaxError::Kernel(format!(
                "argument `{}` has dtype {}; {by} {expected}: they must match",
                view.name,
                buffer.dtype_name()
            )));
        }
    }
    let dtype = dtype.map_or(DLDataType::default(), |(d, _)| d);
    // The broadcast shape of the arguments, right-aligned (NumPy's rule).
    let rank = buffers.iter().map(|b| b.dims().len()).max().unwrap_or(0);
    let mut shape = vec![1i64; rank];
    for (view, buffer) in spec.views.iter().zip(&buffers).filter(|(v, _)| v.role == Role::Input) {
        let dims = buffer.dims();
        for (axis, &size) in dims.iter().enumerate() {
            let target = &mut shape[rank - dims.len() + axis];
            if size != *target && size != 1 && *target != 1 {
                return Err(JaxError::Kernel(format!(
                    "argument `{}` has shape {dims:?}, which does not broadcast with the other arguments' (axis {axis} is {size}, another is {target})",
                    view.name
                )));
            }
            if *target == 1 {
                *target = size;
            }
        }
        if spec.strict && dims != buffers[0].dims() {
            return Err(JaxError::Kernel(format!(
                "argument `{}` has shape {dims:?} and argument `{}` {:?}: kernel `{}` takes arrays of one shape (it does not broadcast)",
                view.name,
                buffers[0].name(),
                buffers[0].dims(),
                spec.name
            )));
        }
    }
    if inputs == 0 {
        shape = buffers.first().map_or_else(Vec::new, |b| b.dims().to_vec());
    }
    for (view, buffer) in spec.views.iter().zip(&buffers).filter(|(v, _)| v.role == Role::Output) {
        if buffer.dims() != shape.as_slice() {
            return Err(JaxError::Kernel(format!(
                "result `{}` has shape {:?}; the arguments broadcast to {shape:?}, which it must have",
                view.name,
                buffer.dims()
            )));
        }
    }
    // No result shares memory with another buffer of the call (XLA allocates each apart; a call
    // that aliases them, `input_output_aliases`, is refused: the kernel would read what it writes).
    if let Some((k, j)) = overlap(&buffers, |k| spec.views[k].role == Role::Output) {
        return Err(JaxError::Kernel(format!(
            "result `{}` shares memory with `{}`: a kernel cannot read what it writes (XLA passed aliased buffers)",
            buffers[k].name(),
            spec.views[j].name
        )));
    }
    // The dtype is one the kernel takes, at this rank.
    let accepted = spec.accepts(dtype, rank);
    if let Err(error) = accepted {
        return Err(JaxError::Argument { name: spec.typed_argument().into(), error });
    }
    for buffer in &mut buffers {
        buffer.expand_rank(rank);
    }
    Ok(Args { buffers: buffers.into_iter().map(Arg).collect(), scalars, dtype, rank, spec })
}

/// The traits of element-wise handlers: command-buffer compatible (the CUDA handler only enqueues
/// the kernel on XLA's stream; the CPU handler touches no stream).
const TRAITS: Traits = Traits { command_buffer: true };

/// Runs `K` on the CPU over the call's buffers.
fn run_cpu<K: Kernel>(frame: &CallFrame<'_>) -> Result<(), JaxError> {
    let mut args = prepare::<K>(frame, DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 })?;
    K::run(Cpu, &mut args)
}

/// The CPU handler of `K`: the function XLA calls (`jax.ffi.register_ffi_target(..., platform="cpu")`).
///
/// # Safety
///
/// Called by XLA with its call frame (null or valid for the call).
#[doc(hidden)]
pub unsafe extern "C" fn cpu<K: Kernel>(frame: *mut XlaFfiCallFrame) -> *mut XlaFfiError {
    // SAFETY: forwarded: XLA's frame.
    unsafe { handle(frame, TRAITS, run_cpu::<K>) }
}

/// `K`'s CPU handler as a function pointer.
#[doc(hidden)]
pub const fn cpu_handler<K: Kernel>() -> Handler {
    cpu::<K>
}

/// A kernel's declaration and handlers, what registration needs of it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The declaration.
    pub spec: Spec,
    /// The parameters' order ([`Kernel::ORDER`]).
    pub order: &'static [bool],
    /// The CPU handler.
    pub cpu: Handler,
    /// The CUDA handler, with feature `cuda`.
    pub cuda: Option<Handler>,
}

impl Entry {
    /// `K`'s declaration and handlers.
    pub const fn of<K: Kernel>() -> Self {
        Self { spec: K::SPEC, order: K::ORDER, cpu: cpu_handler::<K>(), cuda: cuda_handler::<K>() }
    }
}

/// Whether element-wise kernels get a CUDA handler: dlspan built with feature `cuda`.
#[doc(hidden)]
pub const CUDA: bool = cfg!(feature = "cuda");

/// Runs `K` on XLA's stream over the call's device buffers.
#[cfg(feature = "cuda")]
fn run_cuda<K: Kernel>(frame: &CallFrame<'_>) -> Result<(), JaxError> {
    let (ordinal, stream) = frame.cuda_stream()?;
    let device_id = i32::try_from(ordinal).map_err(|_| JaxError::Frame(format!("CUDA device {ordinal}")))?;
    let mut args = prepare::<K>(frame, DLDevice { device_type: DLDeviceType::kDLCUDA, device_id })?;
    K::run(&stream, &mut args)
}

/// The CUDA handler of `K` (`platform="CUDA"`): the kernel enqueued on XLA's stream.
///
/// # Safety
///
/// Called by XLA with its call frame (null or valid for the call).
#[doc(hidden)]
#[cfg(feature = "cuda")]
pub unsafe extern "C" fn cuda<K: Kernel>(frame: *mut XlaFfiCallFrame) -> *mut XlaFfiError {
    // SAFETY: forwarded: XLA's frame.
    unsafe { handle(frame, TRAITS, run_cuda::<K>) }
}

/// `K`'s CUDA handler as a function pointer, with feature `cuda`.
#[doc(hidden)]
pub const fn cuda_handler<K: Kernel>() -> Option<Handler> {
    #[cfg(feature = "cuda")]
    {
        Some(cuda::<K>)
    }
    #[cfg(not(feature = "cuda"))]
    {
        None
    }
}

/// An executor JAX kernels run on, with the view types of its memory: [`Cpu`] (host views) and,
/// with feature `cuda`, `&cuda::Stream` (device views).
#[doc(hidden)]
pub trait Exec: Views {
    /// The shared view of an argument (rank `R` after [`Args`]' broadcast).
    ///
    /// # Errors
    ///
    /// The view's rules, naming the argument.
    fn input<'a, T: DlElement, const R: usize>(arg: &'a Arg<'_>) -> Result<Self::In<'a, T, R>, JaxError> {
        arg.0.view()
    }

    /// The mutable view of a result.
    ///
    /// # Errors
    ///
    /// As [`input`](Self::input).
    fn output<'a, T: DlElement, const R: usize>(arg: &'a mut Arg<'_>) -> Result<Self::Out<'a, T, R>, JaxError> {
        arg.0.view_mut()
    }

    /// The executor's error as the handler's.
    fn error(error: Self::Error) -> JaxError;
}

impl Exec for Cpu {
    fn error(error: DlpackError) -> JaxError {
        JaxError::from(error)
    }
}

#[cfg(feature = "cuda")]
impl Exec for &crate::cuda::Stream {
    fn error(error: crate::cuda::CudaError) -> JaxError {
        JaxError::from(error)
    }
}

/// A dispatch error of `K` (a dtype its bound does not take, a rank above the most), naming the
/// first argument of its type parameter.
#[doc(hidden)]
pub fn dispatch_error<K: Kernel>(error: DlpackError) -> JaxError {
    JaxError::Argument { name: K::SPEC.typed_argument().into(), error }
}
