//! Living with the GIL: process-wide state guarded by it ([`Shared`]), the size from which
//! dlspan's loops release it ([`DETACH_ELEMENTS`]), and drops that may run Python code while an
//! exception is pending ([`drop_keeping_exception`]).
//!
//! With a GIL, a thread attached to the interpreter holds it, so a `Python` token is a lock: no
//! atomic operation is needed. Free-threaded builds (`Py_GIL_DISABLED`) take a real mutex.

use pyo3::Python;

/// A value shared by every thread of the interpreter, reached only while attached.
pub(crate) struct Shared<T> {
    #[cfg(not(Py_GIL_DISABLED))]
    value: core::cell::UnsafeCell<T>,
    #[cfg(Py_GIL_DISABLED)]
    value: std::sync::Mutex<T>,
}

// SAFETY: the value is only reached through `with`, which requires a `Python` token: with a GIL the
// token proves this thread holds it (one thread at a time), and without one a mutex serialises
// access. `T: Send` because different threads take turns with the value.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// A shared value.
    pub(crate) const fn new(value: T) -> Self {
        #[cfg(not(Py_GIL_DISABLED))]
        let value = core::cell::UnsafeCell::new(value);
        #[cfg(Py_GIL_DISABLED)]
        let value = std::sync::Mutex::new(value);
        Self { value }
    }

    /// Runs `f` with exclusive access to the value.
    ///
    /// `f` must not call into Python (no Python API, no dropping of Python objects): that could
    /// release the GIL and let another thread reach the value while `f` holds it. Values that
    /// need dropping are returned out of `f` and dropped after it.
    #[inline]
    pub(crate) fn with<R>(&self, _py: Python<'_>, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            // SAFETY: `_py` proves this thread holds the GIL, so no other thread is inside `with`;
            // `f` does not call into Python (this function's contract), so the GIL is held
            // throughout and this thread does not re-enter `with` either.
            f(unsafe { &mut *self.value.get() })
        }
        #[cfg(Py_GIL_DISABLED)]
        {
            // A panic inside `f` leaves the value consistent (every update is a single push or
            // removal), so a poisoned lock is taken as it is.
            f(&mut self.value.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
        }
    }
}

/// Element count from which dlspan's own loops (copies, the `dlspan` module's kernels) release the
/// GIL: below it, detaching costs more than it frees. A kernel over view arguments may do the same:
///
/// ```
/// use dlspan::python::{DETACH_ELEMENTS, PyViewMut};
/// use dlspan::pyo3::prelude::*;
/// /// Doubles a vector, with the GIL released when it is large.
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn double(py: Python<'_>, mut x: PyViewMut<'_, f32, 1>) {
///     let mut x = x.view_mut();
///     let large = x.size() >= DETACH_ELEMENTS;
///     let mut run = move || x.for_each_unordered(|v| *v *= 2.0);
///     if large { py.detach(run) } else { run() }
/// }
/// # assert_eq!(DETACH_ELEMENTS, 1 << 16);
/// ```
pub const DETACH_ELEMENTS: usize = 1 << 16;

/// Drops `value` — a managed tensor, or an owner of one, whose deleter may run Python code (a
/// NumPy array's, a ctypes callback) — with the thread's pending exception set aside meanwhile:
/// deallocation can happen while an exception propagates, and Python code must neither see nor
/// clobber it. The GIL must be held.
// PyErr_Fetch and PyErr_Restore: their successors (PyErr_GetRaisedException) are 3.12+, and this
// builds for 3.11 too.
#[allow(deprecated)]
pub(crate) fn drop_keeping_exception<T>(value: T) {
    let (mut kind, mut exception, mut traceback) =
        (core::ptr::null_mut(), core::ptr::null_mut(), core::ptr::null_mut());
    // SAFETY: the GIL is held (caller); three writable slots, receiving new references.
    unsafe { pyo3::ffi::PyErr_Fetch(&mut kind, &mut exception, &mut traceback) };
    drop(value);
    // SAFETY: restores (and gives back the references of) what `PyErr_Fetch` took, GIL held.
    unsafe { pyo3::ffi::PyErr_Restore(kind, exception, traceback) };
}
