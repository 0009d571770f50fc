// Rule: a raw kernel's launch takes the executor, the configuration and the kernel's own arguments.
use dlspan::HostMdspanMut;
use dlspan::kernel::{Cpu, LaunchConfig};

dlspan::kernel! {
    fn fill(value: f32, out: &mut [f32; 1]) {
        r#"if (threadIdx.x < out.extent(0)) out(threadIdx.x) = value;"#
    }
}

fn main() {
    let mut out = [0.0f32; 4];
    let mut view = HostMdspanMut::<f32, 1>::from_slice(&mut out, [4]).unwrap();
    // SAFETY: the body stays within the extent.
    unsafe { fill.launch(Cpu, LaunchConfig::for_elements(4, 32).unwrap(), &mut view) }.unwrap();
}
