// Rule: elements are Copy: tensors hold plain values without drop glue.
use dlspan::DlElement;

#[derive(DlElement)]
#[repr(transparent)]
struct Meters(f32);

fn main() {}
