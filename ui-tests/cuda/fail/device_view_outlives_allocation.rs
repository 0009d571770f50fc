// Rule: a device view of cudarc memory cannot outlive the allocation it borrows.
use dlspan::DeviceMdspan;

fn main() {
    let stream = dlspan::cuda::Gpu::new(0).unwrap().new_stream().unwrap();
    let view;
    {
        let buffer = stream.alloc_zeros::<f32>(6).unwrap();
        view = DeviceMdspan::<f32, 2>::from_cuda(&buffer, [2, 3]).unwrap();
    }
    println!("{:?}", view.extents());
}
