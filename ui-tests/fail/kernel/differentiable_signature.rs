// Rule G1: a `#[differentiable]` kernel writes its outputs (never reads them), reads a float view,
// and its derived kernels fit the views a kernel takes; each is an error saying what to change.
use dlspan::kernel::Float;

dlspan::elementwise! {
    #[differentiable]
    fn accumulates<T: Float>(x: &T, out: &mut T) {
        *out += *x;
    }
}

dlspan::elementwise! {
    #[differentiable]
    fn maybe<T: Float>(x: &T, out: &mut T) {
        if *x > 0.0 {
            *out = *x;
        }
    }
}

dlspan::elementwise! {
    #[differentiable]
    fn integers(x: &i32, out: &mut f32) {
        *out = *x as f32;
    }
}

dlspan::elementwise! {
    #[differentiable]
    fn wide<T: Float>(a: &T, b: &T, c: &T, d: &T, out: &mut T) {
        *out = *a + *b + *c + *d;
    }
}

dlspan::elementwise! {
    #[differentiable(x)]
    fn arguments<T: Float>(x: &T, out: &mut T) {
        *out = *x;
    }
}

fn main() {}
