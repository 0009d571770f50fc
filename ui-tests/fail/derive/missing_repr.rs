// Rule: a derived element needs #[repr(transparent)] or #[repr(C)]: Rust's default layout is unspecified.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

fn main() {}
