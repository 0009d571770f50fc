// Rule: #[dl(skip)] leaves a field out; constants follow the fields' visibility; tuple fields are FIELD_n.
mod inner {
    #[derive(Clone, Copy, dlspan::DlRecord)]
    #[repr(C)]
    pub struct Sample {
        pub value: f32,
        #[dl(skip)]
        pub rgb: [u8; 3],
        pub alpha: u8,
        hidden: u32,
    }

    #[derive(Clone, Copy, dlspan::DlRecord)]
    #[repr(C)]
    pub struct Pair(pub f64, pub f64);

    pub fn hidden_offset() -> usize {
        Sample::HIDDEN.offset()
    }
}

fn main() {
    let _ = inner::Sample::VALUE;
    let _ = inner::Sample::ALPHA;
    assert_eq!(inner::hidden_offset(), 2);
    assert_eq!(inner::Pair::FIELD_1.offset(), 1);
}
