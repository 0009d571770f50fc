// Rule: a kernel is called with its own parameter list: a missing argument does not compile.
use dlspan::kernel::{Cpu, Scalar};
use dlspan::{HostMdspan, HostMdspanMut};

dlspan::elementwise! {
    fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
        *out = a * *x + b * *y;
    }
}

fn main() {
    let data = [1.0f32; 4];
    let mut out = [0.0f32; 4];
    let x = HostMdspan::<f32, 1>::from_slice(&data, [4]).unwrap();
    axpby.run(Cpu, 2.0, &x, &x, &mut HostMdspanMut::<f32, 1>::from_slice(&mut out, [4]).unwrap()).unwrap();
}
