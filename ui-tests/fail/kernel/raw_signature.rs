// Rule: a raw kernel's views are `&[T; R]` and `&mut [T; R]` with a literal rank, and its body is
// one string of CUDA C++ (or `include_str!`).
dlspan::kernel! {
    fn slice(x: &[f32], out: &mut [f32; 1]) {
        r#"out(0) = 1.0f;"#
    }
}

dlspan::kernel! {
    fn rust_body(out: &mut [f32; 1]) {
        let x = 1.0;
    }
}

dlspan::kernel! {
    fn too_many_axes(out: &mut [f32; 17]) {
        r#""#
    }
}

dlspan::kernel! {
    fn keyword(new: &mut [f32; 1], blockDim: u32) {
        r#""#
    }
}

fn main() {}
