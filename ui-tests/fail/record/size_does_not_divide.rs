// Rule: a member view needs the member's size to divide the record's size.
use dlspan::DlRecord;

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct Sample {
    value: f32,
    rgb: [u8; 3],
    alpha: u8,
}

fn main() {}
