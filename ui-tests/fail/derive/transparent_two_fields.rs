// Rule: a repr(transparent) element has exactly one field; several lanes need repr(C).
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(transparent)]
struct Tagged(f32, ());

fn main() {}
