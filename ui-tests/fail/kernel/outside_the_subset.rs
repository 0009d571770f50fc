// Rule: a kernel body is written in a subset of Rust; anything else is an error at its token,
// naming the construct and saying what the subset has.
dlspan::elementwise! {
    fn shift(x: &u32, out: &mut u32) {
        *out = *x << 2;
    }
}

dlspan::elementwise! {
    fn looping(x: &f32, out: &mut f32) {
        for _ in 0..3 {
            *out += *x;
        }
    }
}

dlspan::elementwise! {
    fn closure(x: &f32, out: &mut f32) {
        let twice = |v: f32| v * 2.0;
        *out = twice(*x);
    }
}

dlspan::elementwise! {
    fn matching(x: &i32, out: &mut i32) {
        *out = match *x {
            0 => 1,
            _ => 2,
        };
    }
}

dlspan::elementwise! {
    fn calls(x: &f32, out: &mut f32) {
        *out = f32::sqrt(*x) + x.hypot(1.0);
    }
}

fn main() {}
