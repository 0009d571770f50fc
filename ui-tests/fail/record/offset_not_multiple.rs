// Rule: a member view needs the member's offset to be a whole number of members.
use dlspan::DlRecord;

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct Sample {
    a: u16,
    pair: [u16; 2],
    b: u16,
}

fn main() {}
