// Rule: a raw kernel's scalar parameters are element types (they are copied into the launch as bytes).
dlspan::kernel! {
    fn label(name: String, out: &mut [f32; 1]) {
        r#"out(0) = 1.0f;"#
    }
}

fn main() {}
