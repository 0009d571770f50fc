// Rule: an unsuffixed literal takes the type of the operand it meets, in generic bodies as in
// concrete ones; a float literal meeting an operand that may be an integer is an error at the
// literal, as is a literal beyond f32's range meeting an f32.
dlspan::elementwise! {
    fn gelu<T: dlspan::kernel::Float>(x: &T, out: &mut T) {
        *out = 0.5 * *x * (1.0 + (0.7978845608 * *x).tanh());
    }
}

dlspan::elementwise! {
    fn halve<T: dlspan::kernel::Scalar>(x: &T, out: &mut T) {
        *out = *x * 0.5;
    }
}

dlspan::elementwise! {
    fn huge(x: &f32, out: &mut f32) {
        *out = *x * 1e300;
    }
}

fn main() {}
