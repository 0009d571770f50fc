// Rule G1: the backward of a `#[differentiable]` kernel takes a derived-type input field by field
// (`p.x`), so that each field read gets its gradient and the others zero; a use of the whole
// value is an error at it, and so is a derived-type output written as a whole.

#[derive(Clone, Copy, dlspan::DlElement)]
#[repr(C)]
struct Pair {
    a: f32,
    b: f32,
}

dlspan::elementwise! {
    #[differentiable]
    fn whole(p: &Pair, out: &mut f32) {
        let q = *p;
        *out = q.a * q.b;
    }
}

dlspan::elementwise! {
    #[differentiable]
    fn copied(p: &Pair, x: &f32, out: &mut Pair) {
        *out = *p;
    }
}

fn main() {}
