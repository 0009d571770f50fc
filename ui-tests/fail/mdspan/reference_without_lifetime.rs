// Rule: a reference element spells its lifetime.
type M = dlspan::mdspan!(&f32; 2);

fn main() {}
