// Rule: a first field that is not an element is reported once, at that field, not again at each
// later field compared with it.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Sample {
    label: char,
    x: f32,
    y: f32,
}

fn main() {}
