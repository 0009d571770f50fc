// Rule: a raw kernel's written views are `&mut` arguments: the same mutable view twice does not compile.
use dlspan::HostMdspanMut;
use dlspan::kernel::{Cpu, LaunchConfig};

dlspan::kernel! {
    fn split(low: &mut [u8; 1], high: &mut [u8; 1]) {
        r#"low(0) = 1; high(0) = 2;"#
    }
}

fn main() {
    let mut out = [0u8; 4];
    let mut view = HostMdspanMut::<u8, 1>::from_slice(&mut out, [4]).unwrap();
    // SAFETY: the body writes index 0 of views of four elements.
    unsafe { split.launch(Cpu, LaunchConfig::new([1, 1, 1], [1, 1, 1]), &mut view, &mut view) }.unwrap();
}
