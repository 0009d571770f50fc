// Rule: a kernel's written views are `&mut` arguments: the same mutable view twice does not compile.
use dlspan::HostMdspanMut;
use dlspan::kernel::{Cpu, Scalar};

dlspan::elementwise! {
    fn split<T: Scalar>(x: &T, low: &mut T, high: &mut T) {
        *low = *x;
        *high = *x;
    }
}

fn main() {
    let x = [1u8; 4];
    let mut out = [0u8; 4];
    let mut view = HostMdspanMut::<u8, 1>::from_slice(&mut out, [4]).unwrap();
    let input = dlspan::HostMdspan::<u8, 1>::from_slice(&x, [4]).unwrap();
    split.run(Cpu, &input, &mut view, &mut view).unwrap();
}
