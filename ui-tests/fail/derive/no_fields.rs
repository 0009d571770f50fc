// Rule: an element needs at least one field.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Nothing {}

fn main() {}
