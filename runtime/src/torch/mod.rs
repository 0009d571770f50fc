//! PyTorch operators in Rust (feature `torch`): kernels registered with PyTorch's dispatcher
//! through LibTorch's stable C ABI — no Python per call, no Python glue, one build for every
//! torch from [`OLDEST`] on.
//!
//! - The shim is resolved at run time from the libtorch already in the process
//!   (`dlopen(RTLD_NOLOAD)` + `dlsym`): an extension links nothing of PyTorch and builds with no
//!   torch installed.
//! - An [`Operator`] declares its name, schema and kernels; [`torch_library!`](crate::torch_library)
//!   registers a crate's operators when its library is loaded (`torch.ops.load_library` in
//!   Python, or a C++ program linking it), [`register`] from code (a PyO3 module's init).
//! - A kernel gets a [`Call`]: its tensor arguments as owned [`Tensor`] handles, read as typed
//!   views with every DLPack rule ([`Tensor::view`]), `Tensor(a!)` arguments writable when they
//!   share memory with no other argument; scalars by name. Results are [`Tensor::empty`]s.
//! - An error (or a panic, caught) becomes PyTorch's exception for the call (`RuntimeError` in
//!   Python) with dlspan's message, naming the argument; nothing unwinds through Rust frames that
//!   hold values.
//!
//! An element-wise kernel becomes an operator with one attribute: `#[torch("ns::name")]` derives
//! its schema, its checks (one dtype, one device, shapes broadcasting NumPy's way, each error
//! naming the argument), its Meta kernel and its CPU and (with feature `cuda`) CUDA kernels from
//! the signature ([rules T7–T9](crate::rules#t7)); `backward = kernel` names the operator of its
//! gradients, which dlspan wires into autograd ([rule T10](crate::rules#t10)):
//!
//! ```no_run
//! use dlspan::kernel::Float;
//!
//! dlspan::elementwise! {
//!     /// GELU (tanh form) of `x + b`, `b` broadcast: `(Tensor x, Tensor b) -> Tensor`.
//!     #[torch("my_ops::gelu_bias", backward = gelu_bias_backward)]
//!     fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
//!         let v = *x + *b;
//!         *out = 0.5 * v * (1.0 + (0.7978845608 * (v + 0.044715 * v * v * v)).tanh());
//!     }
//! }
//!
//! dlspan::elementwise! {
//!     /// Its gradients: `(Tensor x, Tensor b, Tensor grad) -> (Tensor, Tensor)`.
//!     #[torch("my_ops::gelu_bias_backward")]
//!     fn gelu_bias_backward<T: Float>(x: &T, b: &T, grad: &T, grad_x: &mut T, grad_b: &mut T) {
//!         let v = *x + *b;
//!         let k: T = 0.7978845608;
//!         let t = (k * (v + 0.044715 * v * v * v)).tanh();
//!         let d = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k * (1.0 + 0.134145 * v * v);
//!         *grad_x = *grad * d;
//!         *grad_b = *grad * d;
//!     }
//! }
//!
//! dlspan::elementwise! {
//!     /// `y += a * x` in place: `(Tensor(a!) y, Tensor x, float a) -> ()`.
//!     #[torch("my_ops::axpy_")]
//!     fn axpy_<T: Float>(y: &mut T, x: &T, a: T) {
//!         *y = *y + a * *x;
//!     }
//! }
//!
//! // Registered when the library is loaded: `torch.ops.load_library(...)`, then
//! // `torch.ops.my_ops.gelu_bias(x, b)`.
//! dlspan::torch_library!("my_ops", [gelu_bias, gelu_bias_backward, axpy_]);
//! ```
//!
//! The dispatcher resolves negative and conjugate views before a custom kernel runs (its
//! fallbacks hand the kernel materialised values), so the memory a view reads holds the values.
mod autograd;
// A kernel's error is a C++ exception thrown through its frame (`aoti_torch_check`): with
// `panic = "abort"` every such error would abort the process.
#[cfg(panic = "abort")]
compile_error!(
    "dlspan's `torch` feature needs `panic = \"unwind\"` (the default): PyTorch raises a kernel's error as a C++ exception through the kernel's frame, which aborts the process under `panic = \"abort\"`; remove `panic = \"abort\"` from the profile"
);

#[doc(hidden)]
pub mod elementwise;
mod error;
mod op;
#[cfg(feature = "python")]
mod python;
mod schema;
mod shim;
#[cfg(feature = "cuda")]
mod stream;
mod tensor;

pub use error::TorchError;
#[doc(hidden)]
pub use op::register_at_load;
pub use op::{Call, MAX_ARGS, Operator, Registration, op, register};
#[cfg(feature = "python")]
pub use python::register_module;
pub use shim::OLDEST;
pub use tensor::{Device, Tensor};

/// The torch version of the process, `(major, minor)`.
///
/// # Errors
///
/// [`TorchError::NotLoaded`] without a libtorch; [`TorchError::TooOld`] for one older than
/// [`OLDEST`].
///
/// ```no_run
/// let (major, minor) = dlspan::torch::version()?;
/// assert!((major, minor) >= dlspan::torch::OLDEST);
/// # Ok::<(), dlspan::torch::TorchError>(())
/// ```
pub fn version() -> Result<(u8, u8), TorchError> {
    Ok(shim::shim()?.version())
}
