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
        if !crate::cuda::driver_present() {
            return None;
        }
        let ordinal = usize::try_from(device.device_id).ok()?;
        cudarc::driver::CudaContext::new(ordinal).ok()?.new_event(None).ok()
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

impl ManagedTensor {
    /// `view`, its device memory (if any) ordered by this tensor's lending event, which it borrows.
    #[inline]
    pub(super) fn lend<'s, V: crate::dlpack::FromDlTensor<'s>>(&'s self, view: V) -> V {
        match lent_order(&self.order, self.device()) {
            Some(order) => view.with_order(order),
            None => view,
        }
    }
}
