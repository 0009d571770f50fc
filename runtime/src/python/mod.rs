//! Python exchange through PyO3 (feature `python`): NumPy arrays, PyTorch tensors, JAX arrays and
//! any DLPack producer in, as typed views or managed tensors; Rust memory out, as capsules,
//! through the C exchange API and the buffer protocol — without copying.
//!
//! - **Consumer**: [`from_dlpack`] turns any object with `__dlpack__` (or a bare capsule) into a
//!   [`ManagedTensor`](crate::ManagedTensor), speaking each producer's dialect.
//! - **Typed arguments**: [`PyView`] and [`PyViewMut`] are `#[pyfunction]` arguments that check
//!   dtype, rank, layout, extents and device, read PyTorch tensors through their C exchange table
//!   and NumPy arrays through NumPy's struct (no capsule on either path), and borrow-check memory
//!   by address range.
//! - **Producer**: [`Tensor`] (`dlspan.Tensor`) owns memory of any dtype and implements
//!   `__dlpack__` ([`ExportRequest`] lists its rules), `__dlpack_device__`, the C exchange API
//!   ([`exchange_api`]) and the buffer protocol; [`into_capsule`] / [`take_capsule`] are the raw
//!   capsule doors.
//! - **Results**: [`into_tensor`] makes a `dlspan.Tensor` of the process's one class (the installed
//!   `dlspan` package's, whose borrow registry an extension built on the crate shares too:
//!   [`export_c_api`], rule Y18); [`Output`] allocates a result and hands it to Python as the
//!   caller's type — a NumPy array, a `torch.Tensor`, a JAX array — without copying (rule Y19).
//! - **Errors**: every [`DlpackError`](crate::DlpackError) and [`ExchangeError`] converts into the
//!   exception the array API names (`PyErr::from`, so `?` raises it in a `#[pyfunction]`), with
//!   `kind`, `expected` and `found` attributes and a message in Python's words; [`InArgument`] names
//!   the argument of an error raised in a function's body, and [`extract_argument`] names an
//!   argument in the borrow conflicts it takes part in.
//!
//! # The rules of the Python exchange
//!
//! **Dialects.** NumPy's `from_dlpack` calls `__dlpack__(dl_device=None, copy=None,
//! max_version=(1, 0))` only; PyTorch calls `__dlpack_device__()` then `__dlpack__(max_version=(1,
//! 0))`; JAX calls `__dlpack_device__()` then `__dlpack__(stream=None)` and accepts only legacy
//! capsules with a deleter, copying unless the data is 64-byte aligned. dlspan's `__dlpack__` serves
//! all three ([`ExportRequest`]); its buffers are 64-byte aligned. As a consumer, dlspan calls
//! `__dlpack_device__` when present and `__dlpack__(max_version=(1, 3))`, adding `copy`,
//! `dl_device` and `stream` only when they mean something, and retries with fewer keywords on
//! `TypeError` ([`from_dlpack`]).
//!
//! **Flags are not trusted where a framework gets them wrong.** PyTorch never sets `IS_COPIED` and
//! JAX's legacy capsules cannot say it: for `copy=True` of host memory dlspan imports without a
//! copy and copies once itself. PyTorch ignores `READ_ONLY` when it imports (it writes through): dlspan
//! sets the flag on read-only exports, and cannot stop PyTorch from writing — do not hand
//! read-only dlspan tensors to PyTorch expecting protection. PyTorch's exchange table hands out
//! tensors with the lazy conjugate or negation bit unresolved (`__dlpack__` refuses the
//! conjugate bit and exports the negation bit unresolved): dlspan refuses both
//! ([`ExchangeError::ConjugateBit`],
//! [`ExchangeError::NegativeBit`]).
//!
//! **Gradients.** The exchange table also hands out tensors that `__dlpack__` refuses: those that
//! require grad, and `nn.Parameter`s. dlspan reads them as shared views (a detached read, as
//! `tensor.detach()` would give) and refuses them as mutable views while gradients are recorded
//! ([`ExchangeError::RequiresGrad`]): writes through dlspan are
//! invisible to autograd. Under `torch.no_grad()` — an optimiser's in-place update — they are
//! allowed, as PyTorch allows in-place updates of leaves there. Subclasses that override
//! `__dlpack__` or `__torch_function__` are read through `__dlpack__`, which honours the override.
//!
//! **Borrows.** Every view argument registers the bytes it spans while it lives; a view that
//! would overlap another live view is refused when either is mutable
//! ([`ExchangeError::BorrowConflict`]): the same tensor as input
//! and output, or a NumPy array and a torch tensor sharing its memory. Interleaved views
//! (`x[::2]`, `x[1::2]`) do not conflict. Read-only memory (`READ_ONLY` exports, non-writeable
//! NumPy arrays, which include NumPy's imports of legacy capsules) never yields a mutable view. The
//! registry only knows dlspan's views: other code writing the same memory concurrently (another
//! thread with the GIL released) is not seen. The views themselves are plain Rust values: a kernel
//! may use them inside `py.detach` with the GIL released; the registry and the per-type cache are
//! guarded by the GIL, or by a mutex on free-threaded Python.
//!
//! **Devices.** A view argument's memory space is part of its type: [`PyDeviceView`] and
//! [`PyDeviceViewMut`] take CUDA device memory, [`PyManagedView`] and [`PyManagedViewMut`] CUDA
//! managed memory, from every framework, and another space is a `TypeError` naming the argument.
//! Each device argument carries the caller's stream ([`CallerStream`], rule Y21): PyTorch's
//! current stream through its exchange table, CuPy's current stream, or, for other producers,
//! dlspan's own (the per-thread default stream), which their `__dlpack__(stream=…)` orders their
//! work before. [`common_stream`] checks that a call's device arguments share one device.

// The files' layer order, bottom to top, is DESIGN.md's ("Layers"): `python::gil` to
// `python::tensor_methods`.
mod arg;
mod borrow;
mod capi;
mod capsule;
mod consumer;
mod copy;
mod device;
#[cfg(feature = "cuda")]
mod device_memory;
mod dialect;
mod dtype;
mod error;
mod exchange;
mod gil;
mod meta;
mod numpy;
mod output;
mod package;
mod producer;
mod stream;
mod tensor;
mod tensor_methods;
mod torch;
mod values;

pub use arg::{
    NamedArgument, OffHost, OffHostMut, PyDeviceView, PyDeviceViewMut, PyDynView, PyDynViewMut, PyManagedView,
    PyManagedViewMut, PyView, PyViewMut, extract_argument,
};
pub use borrow::live_borrows;
pub use capsule::{EXCHANGE_API_CAPSULE, LEGACY, USED_LEGACY, USED_VERSIONED, VERSIONED, into_capsule, take_capsule};
pub use consumer::{ImportRequest, from_dlpack};
pub use dialect::Framework;
pub use dtype::{DTYPES, dtype_from_name, dtype_from_py};
pub use error::{ExchangeError, InArgument, invalid_stream_error};
pub use exchange::exchange_api;
pub use gil::DETACH_ELEMENTS;
pub use meta::MAX_TENSOR_RANK;
pub use output::{Argument, Output};
pub use package::into_tensor;
pub use producer::ExportRequest;
pub use stream::{CallerStream, StreamSource, common_stream};
pub use tensor::Tensor;
pub use tensor_methods::export_c_api;
