// Rule: kernels on a stream take device and managed views; a host view does not compile.
use dlspan::kernel::Scalar;
use dlspan::{DeviceMdspanMut, HostMdspan};

dlspan::elementwise! {
    fn twice<T: Scalar>(x: &T, out: &mut T) {
        *out = *x + *x;
    }
}

fn main() {
    let stream = dlspan::cuda::Gpu::new(0).unwrap().new_stream().unwrap();
    let mut buffer = stream.alloc_zeros::<f32>(4).unwrap();
    let host = [1.0f32; 4];
    let x = HostMdspan::<f32, 1>::from_slice(&host, [4]).unwrap();
    twice.run(&stream, &x, &mut DeviceMdspanMut::<f32, 1>::from_cuda(&mut buffer, [4]).unwrap()).unwrap();
}
