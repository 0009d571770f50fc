// Rule: the fields of a lanes element share one data type and size.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Mixed {
    x: f32,
    y: f64,
}

fn main() {}
