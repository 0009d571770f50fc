// Rule: only dlspan's view types implement FromDlTensor, whose MUTABLE constant decides whether a
// read-only managed tensor is refused: a foreign impl claiming `false` for a view that writes
// would write to read-only memory through `ManagedTensor::view_as`.
use dlspan::ffi::DLTensor;
use dlspan::{DlpackError, FromDlTensor, HostMdspanMut, ImportOptions};

struct Sneaky<'a>(HostMdspanMut<'a, u8, 1>);

impl<'a> FromDlTensor<'a> for Sneaky<'a> {
    const MUTABLE: bool = false;

    unsafe fn view_dltensor(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        unsafe { HostMdspanMut::view_dltensor(tensor, options) }.map(Sneaky)
    }
}

fn main() {}
