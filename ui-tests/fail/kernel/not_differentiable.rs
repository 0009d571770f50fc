// Rule G2: in a `#[differentiable]` kernel, a value without a derivative (a comparison, `floor`,
// `ceil`, `round`, `trunc`, a cast to an integer or `bool`) that reaches a differentiated output
// is an error at the token that made it, saying how to mark it; never a silent zero gradient.
use dlspan::kernel::Float;

dlspan::elementwise! {
    #[differentiable]
    fn stairs<T: Float>(x: &T, out: &mut T) {
        *out = x.floor() * *x;
    }
}

dlspan::elementwise! {
    #[differentiable]
    fn through_an_integer(x: &f32, out: &mut f32) {
        let n = *x as i32;
        let back = n as f32;
        *out = back + *x;
    }
}

dlspan::elementwise! {
    #[differentiable]
    fn step<T: Float>(x: &T, out: &mut T) {
        let up = *x > 0.0;
        *out = (up as u8) as T;
    }
}

dlspan::elementwise! {
    // As a condition, and marked `.detach()`, the same values are fine.
    #[differentiable]
    fn fine<T: Float>(x: &T, out: &mut T) {
        if *x > 0.0 {
            *out = *x * x.floor().detach();
        } else {
            *out = x.round().detach() + *x;
        }
    }
}

fn main() {
    let _ = (fine_backward, fine_tangent);
}
