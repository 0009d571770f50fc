// Rule: device views do not index on the host.
use dlspan::{to_device_mdspan, ffi::DLTensor, LayoutRight};

fn main() {
    let tensor = DLTensor::default();
    let md = unsafe { to_device_mdspan::<f32, 2, LayoutRight>(&tensor) }.unwrap();
    println!("{}", md[[0, 0]]);
}
