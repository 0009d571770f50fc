// Rule: a zero-sized member has no view.
use dlspan::DlRecord;

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct Tagged {
    value: f32,
    marker: (),
}

fn main() {}
