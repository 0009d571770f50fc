// Rule: records need #[repr(C)].
use dlspan::DlRecord;

#[derive(Clone, Copy, DlRecord)]
struct Sample {
    value: f32,
    count: u32,
}

fn main() {}
