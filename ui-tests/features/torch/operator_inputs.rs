// Rule: an operator's results take the shape, device and dtype of its inputs: its kernel reads a
// view, and one of the type parameter's element type.
use dlspan::kernel::Float;

dlspan::elementwise! {
    #[torch("demo::fill")]
    fn fill<T: Float>(value: T, out: &mut T) {
        *out = value;
    }
}

dlspan::elementwise! {
    #[torch("demo::widen")]
    fn widen<T: Float>(x: &f32, out: &mut T) {
        *out = *x as T;
    }
}

fn main() {}
