//! The event a [`ManagedTensor`] of CUDA device memory keeps for the device views it lends
//! ([rule C6](crate::rules#c6)): launches on those views wait for it and record it, and the tensor
//! waits for its last record before its deleter frees the memory or it is handed on.

use super::ManagedTensor;
use crate::ffi::{DLDevice, DLDeviceType};
use crate::space::OrderEvent;
use cudarc::driver::CudaEvent;
use std::sync::OnceLock;

/// The lending event's slot: empty until the first device view.
pub(super) type Lending = OnceLock<Option<CudaEvent>>;

/// The event for the device views of a tensor on `device`, made on the first one: `None` for memory
/// that is not a CUDA device's, or where no event can be made (no driver: then no launch can run
/// either).
pub(super) fn lent_order(cell: &Lending, device: DLDevice) -> Option<OrderEvent> {
    if device.device_type != DLDeviceType::kDLCUDA {
        return None;
    }
    let event = cell.get_or_init(|| {
        let ordinal = usize::try_from(device.device_id).ok()?;
        // The process's shared primary context (retaining one per tensor costs microseconds).
        crate::cuda::library::primary_context(ordinal)?.new_event(None).ok()
    });
    // The event lives in the tensor, unmoved, while a view borrows the tensor.
    event.as_ref().map(OrderEvent::of)
}

/// Waits for the last record of the lending event (the launches on the device views the tensor
/// lent), and destroys it. A failed wait leaves nothing to do: the device's work is lost with the
/// error.
pub(super) fn settle(cell: &mut Lending) {
    if let Some(Some(event)) = cell.take() {
        let _ = event.synchronize();
    }
}

/// Makes `stream` wait for the last record of the lending event, and destroys it: the work
/// enqueued on `stream` from now on follows the launches on the device views the tensor lent, and
/// the host waits for nothing. Where the wait cannot be enqueued, the host waits ([`settle`]).
pub(super) fn settle_on(cell: &mut Lending, stream: cudarc::driver::sys::CUstream) {
    if let Some(Some(event)) = cell.take() {
        // SAFETY: `stream` is a live stream of the event's device (the caller's contract); the
        // event is live until dropped below, after the wait captured its last record.
        let waited = unsafe {
            cudarc::driver::result::stream::wait_event(
                stream,
                event.cu_event(),
                cudarc::driver::sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        };
        if waited.is_err() {
            let _ = event.synchronize();
        }
    }
}

impl ManagedTensor {
    /// Orders the work launched on the device views this tensor lent before the work enqueued on
    /// `stream` from now on, with no wait on the host: for a tensor handed on to an owner that
    /// uses and releases its memory on `stream` (a framework's allocation made on the caller's
    /// stream, handed back). Handing the tensor on or dropping it then waits for nothing; a
    /// device view lent afterwards is ordered by a new event.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of the tensor's device (or one of the driver's default streams).
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) unsafe fn settle_on(&mut self, stream: cudarc::driver::sys::CUstream) {
        settle_on(&mut self.order, stream);
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
