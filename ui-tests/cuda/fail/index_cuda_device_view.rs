// Rule: a device view of cudarc memory does not index on the host.
use dlspan::DeviceMdspan;

fn main() {
    let stream = dlspan::cuda::Gpu::new(0).unwrap().new_stream().unwrap();
    let buffer = stream.alloc_zeros::<f32>(6).unwrap();
    let view = DeviceMdspan::<f32, 2>::from_cuda(&buffer, [2, 3]).unwrap();
    println!("{}", view[[0, 0]]);
}
