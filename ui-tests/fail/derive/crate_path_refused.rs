// Rule: the derive always names the real runtime crate: a user-supplied path could swap out the
// proofs that make the generated `unsafe impl` sound (found by review).
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(crate = my_fake_dlspan)]
#[repr(transparent)]
struct Value(u32);

fn main() {}
