// Rule: a record field takes only #[dl(skip)].
use dlspan::DlRecord;

#[derive(Clone, Copy, DlRecord)]
#[repr(C)]
struct Sample {
    #[dl(rename = "v")]
    value: f32,
}

fn main() {}
