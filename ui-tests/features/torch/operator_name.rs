// Rule: an operator's name is `namespace::name`, and a kernel is one operator.
use dlspan::kernel::Float;

dlspan::elementwise! {
    #[torch("gelu")]
    fn gelu<T: Float>(x: &T, out: &mut T) {
        *out = *x;
    }
}

dlspan::elementwise! {
    #[torch("demo::twice")]
    #[torch("demo::again")]
    fn twice<T: Float>(x: &T, out: &mut T) {
        *out = *x + *x;
    }
}

fn main() {}
