// Rule: repr(packed) is refused: an element keeps the alignment its lanes need.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(C, packed)]
struct Pair {
    a: u32,
    b: u32,
}

fn main() {}
