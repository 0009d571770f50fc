// Rule: unions cannot be elements.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
