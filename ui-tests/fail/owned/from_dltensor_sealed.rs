// Rule: only dlspan's view types implement FromDlTensor, whose MUTABLE constant decides whether a
// read-only managed tensor is refused: a foreign impl claiming `false` for a view that writes
// would write to read-only memory through `ManagedTensor::view_as`.
use dlspan::ffi::DLTensor;
use dlspan::{DlpackError, FromDlTensor, HostMdspanMut, ImportOptions};

struct Sneaky<'a>(HostMdspanMut<'a, u8, 1>);

impl<'a> FromDlTensor<'a> for Sneaky<'a> {
    const MUTABLE: bool = false;

    unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        unsafe { HostMdspanMut::from_dltensor_with(tensor, options) }.map(Sneaky)
    }

    fn with_order(self, _: dlspan::space::OrderEvent) -> Self {
        self
    }
}

fn main() {}
