// Rule: enums cannot be elements: foreign bytes would become invalid discriminants.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(u8)]
enum Level {
    Low,
    High,
}

fn main() {}
