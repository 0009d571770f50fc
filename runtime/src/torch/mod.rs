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
//! The dispatcher resolves negative and conjugate views before a custom kernel runs (its
//! fallbacks hand the kernel materialised values), so the memory a view reads holds the values.
mod error;
mod op;
mod shim;
mod tensor;

pub use error::TorchError;
#[doc(hidden)]
pub use op::register_at_load;
pub use op::{Call, MAX_ARGS, Operator, Registration, op, register};
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
