// Rule: raw kernels on a stream take device and managed views; a host view does not compile.
use dlspan::kernel::LaunchConfig;
use dlspan::{DeviceMdspanMut, HostMdspan};

dlspan::kernel! {
    fn copy(x: &[f32; 1], out: &mut [f32; 1]) {
        r#"if (threadIdx.x < out.extent(0)) out(threadIdx.x) = x(threadIdx.x);"#
    }
}

fn main() {
    let stream = dlspan::cuda::Gpu::new(0).unwrap().new_stream().unwrap();
    let mut buffer = stream.alloc_zeros::<f32>(4).unwrap();
    let host = [1.0f32; 4];
    let x = HostMdspan::<f32, 1>::from_slice(&host, [4]).unwrap();
    let mut out = DeviceMdspanMut::<f32, 1>::from_cuda(&mut buffer, [4]).unwrap();
    // SAFETY: the body stays within the extents.
    unsafe { copy.launch(&stream, LaunchConfig::for_elements(4, 32).unwrap(), &x, &mut out) }.unwrap();
}
