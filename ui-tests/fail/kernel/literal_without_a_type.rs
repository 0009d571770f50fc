// Rule: a kernel types an unsuffixed literal from the operand it meets; a literal bound alone
// needs a suffix or an annotation.
dlspan::elementwise! {
    fn scaled(x: &f32, out: &mut f32) {
        let k = 2.5;
        *out = *x * k;
    }
}

fn main() {}
