//! The event a [`ManagedTensor`] of CUDA device memory keeps for the device views it lends
//! ([rule C6](crate::rules#c6)): launches on those views wait for it and record it, and the tensor
//! waits for its last record before its deleter frees the memory or it is handed on.

use super::ManagedTensor;
use crate::ffi::{DLDevice, DLDeviceType, DLManagedTensorVersioned};
use crate::space::OrderEvent;
use cudarc::driver::{CudaContext, CudaEvent, result, sys};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The lending event's slot: empty until the first device view; `Some(None)` when views were lent
/// with no event (none could be made).
pub(super) type Lending = OnceLock<Option<CudaEvent>>;

/// The primary context of device `ordinal` as the lending events use it, retained once for the
/// process (retaining one per tensor costs microseconds a tensor). A cudarc context object of
/// their own: cudarc keeps an error in each context object for its next call to return, and
/// `cuda::Gpu`'s operations leave theirs there, which an object shared with them would hand to the
/// events' calls (and theirs to `Gpu`'s).
fn lending_context(ordinal: usize) -> Option<Arc<CudaContext>> {
    static CONTEXTS: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    if !crate::cuda::driver_present() {
        return None;
    }
    let contexts = CONTEXTS.get_or_init(Default::default);
    let mut contexts = contexts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(context) = contexts.get(&ordinal) {
        return Some(Arc::clone(context));
    }
    // A refused ordinal is not kept (the driver is present: no panic).
    let context = CudaContext::new(ordinal).ok()?;
    contexts.insert(ordinal, Arc::clone(&context));
    Some(context)
}

/// The event for the device views of a tensor on `device`, made on the first one: `None` for memory
/// that is not a CUDA device's, or where no event can be made (no driver: then no launch can run
/// either; a driver that refuses one: then releasing the tensor waits for the whole device).
pub(super) fn lent_order(cell: &Lending, device: DLDevice) -> Option<OrderEvent> {
    if device.device_type != DLDeviceType::kDLCUDA {
        return None;
    }
    let event = cell.get_or_init(|| {
        // No driver: no launch can run either (and `Restore` would call it).
        if !crate::cuda::driver_present() {
            return None;
        }
        // Before the context is made: making it binds it to the thread.
        let _current = Restore::current();
        let context = lending_context(usize::try_from(device.device_id).ok()?)?;
        // An error cudarc kept from an earlier event's call (another thread's, even between the
        // two calls here) belongs to no one waiting for it: it must not cost this tensor its
        // event, so a failure is tried once more.
        let _ = context.check_err();
        context.new_event(None).ok().or_else(|| {
            let _ = context.check_err();
            context.new_event(None).ok()
        })
    });
    // The event lives in the tensor, unmoved, while a view borrows the tensor.
    event.as_ref().map(OrderEvent::of)
}

/// Puts the thread's current context back when dropped: making another device's context current
/// for a wait would change the device the caller's framework (PyTorch, CuPy) takes as current, as a
/// tensor of another device released during garbage collection would.
struct Restore(Option<sys::CUcontext>);

impl Restore {
    /// The thread's current context, put back on drop. Only with a driver present (a driver call).
    fn current() -> Self {
        Self(result::ctx::get_current().ok().flatten())
    }

    /// `f`'s result, the thread's current context put back after it.
    fn around<T>(f: impl FnOnce() -> T) -> T {
        let _current = Self::current();
        f()
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(context) = self.0 {
            // SAFETY: the context was current on this thread a moment ago, held by its owner
            // (a primary context stays retained by whoever made it current).
            let _ = unsafe { result::ctx::set_current(context) };
        }
    }
}

/// Makes the event's context current on the thread with the driver's own call (cudarc's binding
/// first returns an error it kept for a later call, and the wait would not happen).
fn bind(event: &CudaEvent) -> bool {
    // SAFETY: the context is live: the event holds it.
    unsafe { result::ctx::set_current(event.context().cu_ctx()) }.is_ok()
}

/// Blocks the host until the event's last record; `false` when it could not wait.
fn wait_host(event: &CudaEvent) -> bool {
    // SAFETY: the event is live, its context current.
    bind(event) && unsafe { result::event::synchronize(event.cu_event()) }.is_ok()
}

/// Blocks the host until all the work of `device`'s primary context has run: where the views'
/// event cannot be waited for, or views were lent without one.
fn wait_device(device: DLDevice) {
    // No driver: no launch ran on the views.
    if !crate::cuda::driver_present() {
        return;
    }
    // Before the context is looked up: making it binds it to the thread.
    let _current = Restore::current();
    // Without a context here no launch ran on the views: `Gpu::new` makes its context as
    // `lending_context` does (`CudaContext::new`), so a device that refuses one had no launch.
    let Some(context) = usize::try_from(device.device_id).ok().and_then(lending_context) else {
        return;
    };
    // SAFETY: the context is live (held above).
    if unsafe { result::ctx::set_current(context.cu_ctx()) }.is_ok() {
        let _ = result::ctx::synchronize();
    }
}

/// Waits on the host for the launches on the device views the tensor lent (the last record of the
/// lending event, or the whole device's work when there is no event to wait for), and destroys the
/// event.
pub(super) fn settle(cell: &mut Lending, device: DLDevice) {
    match cell.take() {
        // An event exists: the driver is present (no driver call is made for host memory). Its
        // destruction binds its context: the thread's current one is put back after it too.
        Some(Some(event)) => Restore::around(|| {
            if !wait_host(&event) {
                wait_device(device);
            }
            drop(event);
        }),
        Some(None) => wait_device(device),
        None => {}
    }
}

/// Makes `stream` wait for the last record of the lending event: the work enqueued on `stream`
/// from now on follows the launches on the device views the tensor lent, and the host waits for
/// nothing. Where the wait cannot be enqueued, the host waits ([`settle`]).
///
/// # Safety
///
/// `stream` is a live stream of `device` (or one of the driver's default streams).
unsafe fn order_on(cell: &Lending, stream: sys::CUstream, device: DLDevice) {
    match cell.get() {
        Some(Some(event)) => {
            let _current = Restore::current();
            // The event's context first: a default stream's handle (0, 1, 2) names the current
            // context's stream.
            // SAFETY: `stream` is a live stream of the event's device (the caller's contract); the
            // event is live (the cell holds it).
            let waited = bind(event)
                && unsafe {
                    result::stream::wait_event(stream, event.cu_event(), sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                }
                .is_ok();
            if !waited && !wait_host(event) {
                wait_device(device);
            }
        }
        Some(None) => wait_device(device),
        None => {}
    }
}

/// [`order_on`], then destroys the event: nothing is left to wait for.
///
/// # Safety
///
/// As for [`order_on`].
unsafe fn settle_on(cell: &mut Lending, stream: sys::CUstream, device: DLDevice) {
    // SAFETY: forwarded (the caller's contract).
    unsafe { order_on(cell, stream, device) };
    // The wait captured the event's last record: it may go (its destruction binds its context:
    // the thread's current one is put back after it).
    if let Some(Some(event)) = cell.take() {
        Restore::around(|| drop(event));
    }
}

/// Makes the lending event (made here if it was not) start at the work enqueued so far on `home`,
/// the stream a framework allocated the tensor on: the launches on the views the tensor lends, on
/// any stream, then wait for the allocation, and for the uses of the memory before it that the
/// framework's allocator ordered on `home` (a freed block it reuses). Where the event cannot be
/// recorded, the host waits for `home`, or for the whole device.
///
/// # Safety
///
/// `home` is a live stream of the tensor's device (or one of the driver's default streams), and
/// no device view has been lent yet: the record replaces the event's last one, which a launch on
/// a view would have made.
unsafe fn start_on(cell: &Lending, home: sys::CUstream, device: DLDevice) {
    // Made here (for CUDA memory) if it was not.
    let _ = lent_order(cell, device);
    let event = match cell.get() {
        Some(Some(event)) => event,
        // Views are lent with no event: they are unordered, so the allocation's uses must be over
        // before any of them runs.
        Some(None) => return wait_device(device),
        // Not CUDA device memory: nothing to order.
        None => return,
    };
    let _current = Restore::current();
    // SAFETY: the event is live (the cell holds it) and its context current; `home` is a live
    // stream of its device (the caller's contract).
    let recorded = bind(event) && unsafe { result::event::record(event.cu_event(), home) }.is_ok();
    // SAFETY: as above.
    let waited = || bind(event) && unsafe { result::stream::synchronize(home) }.is_ok();
    if !(recorded || waited()) {
        wait_device(device);
    }
}

impl ManagedTensor {
    /// Gives up ownership as [`into_raw_versioned`](Self::into_raw_versioned) does, for an owner
    /// that uses and releases the memory in `stream`'s order: the work launched on the device views
    /// this tensor lent is ordered before the work enqueued on `stream` from now on, on the device,
    /// and the host waits for nothing.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of the tensor's device (or one of the driver's default streams),
    /// and the owner the tensor goes to frees or reuses its memory only in `stream`'s order (a
    /// framework's allocation made on `stream`, handed back to it): work of other streams is not
    /// ordered before that.
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) unsafe fn into_raw_versioned_on(mut self, stream: sys::CUstream) -> *mut DLManagedTensorVersioned {
        let device = self.device();
        // SAFETY: forwarded (the caller's contract).
        unsafe { settle_on(&mut self.order, stream, device) };
        self.into_raw_versioned()
    }

    /// Orders the launches on the device views this tensor lends after the work enqueued so far on
    /// `home`, the stream its memory was allocated on: they may then run on any stream. Where that
    /// cannot be recorded, the host waits for `home` (or the device) now. The lending event is made
    /// here: releasing the tensor then waits for its last record (on the host, unless it is handed
    /// on or dropped with [`into_raw_versioned_on`](Self::into_raw_versioned_on) or
    /// [`drop_on`](Self::drop_on)).
    ///
    /// # Safety
    ///
    /// `home` is a live stream of the tensor's device (or one of the driver's default streams), and
    /// the tensor has lent no device view yet (the record replaces the event's last one).
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) unsafe fn lend_after(&self, home: sys::CUstream) {
        // SAFETY: forwarded (the caller's contract).
        unsafe { start_on(&self.order, home, self.device()) };
    }

    /// Orders the work enqueued on `stream` from now on after the launches on the device views
    /// this tensor lent so far, on the device (the host waits only where the driver refuses that
    /// wait). The tensor keeps its event: its release still waits for later launches.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of the tensor's device (or one of the driver's default streams).
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) unsafe fn order_before(&self, stream: sys::CUstream) {
        // SAFETY: forwarded (the caller's contract).
        unsafe { order_on(&self.order, stream, self.device()) };
    }

    /// The event the device views of this tensor are ordered by (made now if it was not): for
    /// views of its memory built from other metadata (a byte buffer viewed as typed elements),
    /// which must borrow this tensor.
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) fn lent_order(&self) -> Option<OrderEvent> {
        lent_order(&self.order, self.device())
    }

    /// Drops the tensor as [`into_raw_versioned_on`](Self::into_raw_versioned_on) hands it on: its
    /// deleter runs once `stream` is ordered after the launches on its device views, with no wait
    /// on the host.
    ///
    /// # Safety
    ///
    /// As for [`into_raw_versioned_on`](Self::into_raw_versioned_on): the deleter's owner releases
    /// the memory in `stream`'s order.
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) unsafe fn drop_on(mut self, stream: sys::CUstream) {
        let device = self.device();
        // SAFETY: forwarded (the caller's contract).
        unsafe { settle_on(&mut self.order, stream, device) };
    }

    /// `view`, its device memory (if any) ordered by this tensor's lending event, which it borrows.
    #[inline]
    pub(super) fn lend<'s, V: crate::dlpack::FromDlTensor<'s>>(&'s self, view: V) -> V {
        match lent_order(&self.order, self.device()) {
            Some(order) => view.with_order(order),
            None => view,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{DLDataType, DLDataTypeCode, DLPackVersion, DLTensor};
    use core::sync::atomic::{AtomicUsize, Ordering};

    static DELETED: AtomicUsize = AtomicUsize::new(0);
    static SHAPE: [i64; 1] = [4];

    unsafe extern "C" fn delete(tensor: *mut DLManagedTensorVersioned) {
        DELETED.fetch_add(1, Ordering::SeqCst);
        // SAFETY: made by `Box::into_raw` below, deleted once.
        drop(unsafe { Box::from_raw(tensor) });
    }

    /// Host bytes labelled as CUDA device 0 (none of the calls tested reads them).
    fn labelled_cuda(bytes: &mut [f32; 4]) -> ManagedTensor {
        let raw = Box::into_raw(Box::new(DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 3 },
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(delete),
            flags: 0,
            dl_tensor: DLTensor {
                data: bytes.as_mut_ptr().cast(),
                device: DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 },
                ndim: 1,
                dtype: DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1),
                shape: SHAPE.as_ptr().cast_mut(),
                strides: core::ptr::null_mut(),
                byte_offset: 0,
            },
        }));
        // SAFETY: a well-formed versioned tensor whose ownership passes here; its deleter frees it.
        unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap()
    }

    #[test]
    fn without_a_driver_the_lending_calls_make_no_driver_call_and_delete_once() {
        if crate::cuda::driver_present() {
            eprintln!("skipped: a CUDA driver is installed (the GPU tests cover these calls with one)");
            return;
        }
        let mut bytes = [0f32; 4];
        let before = DELETED.load(Ordering::SeqCst);
        let tensor = labelled_cuda(&mut bytes);
        // SAFETY: the driver's per-thread default stream handle; no view was lent.
        unsafe { tensor.lend_after(2 as sys::CUstream) };
        assert!(tensor.lent_order().is_none(), "no event without a driver");
        // SAFETY: as above.
        unsafe { tensor.order_before(2 as sys::CUstream) };
        // SAFETY: as above.
        unsafe { tensor.drop_on(2 as sys::CUstream) };
        assert_eq!(DELETED.load(Ordering::SeqCst) - before, 1);
        let tensor = labelled_cuda(&mut bytes);
        // SAFETY: as above.
        let raw = unsafe { tensor.into_raw_versioned_on(1 as sys::CUstream) };
        // SAFETY: handed back above, ours to delete.
        drop(unsafe { ManagedTensor::from_raw_versioned(raw) });
        assert_eq!(DELETED.load(Ordering::SeqCst) - before, 2);
    }
}
