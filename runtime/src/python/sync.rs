//! [`Shared`]: process-wide state (the borrow registry, the per-type dialect cache) guarded by the
//! GIL where there is one and by a mutex on free-threaded Python.
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
