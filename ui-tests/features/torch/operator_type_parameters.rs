// Rule: a kernel that is a PyTorch operator dispatches on one dtype: at most one type parameter,
// bounded by `Float` or `Scalar`.
use dlspan::kernel::Float;

dlspan::elementwise! {
    #[torch("demo::mixed")]
    fn mixed<T: Float, U: Float>(x: &T, y: &U, out: &mut T) {
        *out = *x + *y as T;
    }
}

dlspan::elementwise! {
    #[torch("demo::untyped")]
    fn untyped<T: Copy>(x: &T, out: &mut T) where T: dlspan::DlElement {
        *out = *x;
    }
}

fn main() {}
