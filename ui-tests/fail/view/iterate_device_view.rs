// Rule: device views have no host iteration (or any other host read).
use dlspan::{to_device_mdspan, ffi::DLTensor, LayoutRight};

fn main() {
    let tensor = DLTensor::default();
    let md = unsafe { to_device_mdspan::<f32, 1, LayoutRight>(&tensor) }.unwrap();
    let total: f32 = md.iter().sum();
    println!("{total}");
}
