// Rule: `align` is a byte alignment, a power of two.
use dlspan::mdspan;

type Simd<'a> = mdspan!(&'a f32; dyn, 12; align = 48);

fn main() {
    let _: Option<Simd<'_>> = None;
}
