// Rule: a raw kernel's view parameter takes views of exactly its declared rank (no broadcasting).
use dlspan::kernel::{Cpu, LaunchConfig};
use dlspan::{HostMdspan, HostMdspanMut};

dlspan::kernel! {
    fn rows(x: &[f32; 2], out: &mut [f32; 1]) {
        r#"if (threadIdx.x < out.extent(0)) out(threadIdx.x) = x(threadIdx.x, 0);"#
    }
}

fn main() {
    let data = [1.0f32; 4];
    let mut out = [0.0f32; 4];
    let x = HostMdspan::<f32, 1>::from_slice(&data, [4]).unwrap();
    let mut out = HostMdspanMut::<f32, 1>::from_slice(&mut out, [4]).unwrap();
    // SAFETY: the body stays within the extents.
    unsafe { rows.launch(Cpu, LaunchConfig::for_elements(4, 32).unwrap(), &x, &mut out) }.unwrap();
}
