// Rule: an element has no padding: align(N) must not grow it past the sum of its fields.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(C, align(16))]
struct Float3 {
    x: f32,
    y: f32,
    z: f32,
}

fn main() {}
