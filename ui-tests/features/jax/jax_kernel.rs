// Rule: a JAX kernel's arrays are immutable, so `#[jax]` refuses a view the body reads and writes
// (at its name); its attribute takes `strict` only; its kernel reads some view; its scalars are
// numbers or bools (rules X1).
use dlspan::kernel::Float;

dlspan::elementwise! {
    #[jax]
    fn scale_<T: Float>(x: &mut T, s: T) {
        *x = *x * s;
    }
}

dlspan::elementwise! {
    #[jax(broadcast)]
    fn twice<T: Float>(x: &T, out: &mut T) {
        *out = *x + *x;
    }
}

dlspan::elementwise! {
    #[jax]
    fn fill<T: Float>(value: T, out: &mut T) {
        *out = value;
    }
}

dlspan::elementwise! {
    #[jax]
    #[jax]
    fn double<T: Float>(x: &T, out: &mut T) {
        *out = *x + *x;
    }
}

fn main() {}
