// Rule: a view of a DLTensor cannot outlive the DLTensor it was validated from.
use dlspan::{ffi::DLTensor, to_host_mdspan, HostMdspan, LayoutRight};

fn view_of(tensor: DLTensor) -> HostMdspan<'static, f32, 1> {
    unsafe { to_host_mdspan::<f32, 1, LayoutRight>(&tensor) }.unwrap()
}

fn main() {
    let _ = view_of(DLTensor::default());
}
