// Rule: a mutable device view needs the allocation borrowed uniquely: no shared view beside it.
use dlspan::{DeviceMdspan, DeviceMdspanMut};

fn main() {
    let stream = dlspan::cuda::Gpu::new(0).unwrap().new_stream().unwrap();
    let mut buffer = stream.alloc_zeros::<f32>(6).unwrap();
    let shared = DeviceMdspan::<f32, 1>::from_cuda(&buffer, [6]).unwrap();
    let mut unique = DeviceMdspanMut::<f32, 1>::from_cuda(&mut buffer, [6]).unwrap();
    stream.copy(&shared, &mut unique).unwrap();
}
