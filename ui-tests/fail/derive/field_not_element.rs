// Rule: every field of a derived element must itself be an element type.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Sample {
    value: f32,
    label: char,
}

fn main() {}
