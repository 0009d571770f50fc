// Rule: a kernel's scalar parameters are element types (they are copied into the launch as bytes).
dlspan::elementwise! {
    fn label(name: String, out: &mut f32) {
        *out = 1.0;
    }
}

fn main() {}
