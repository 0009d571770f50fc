// Rule: an extent is an integer literal, `dyn`, or a `{ const expression }`.
type M<'a> = dlspan::mdspan!(&'a f32; 2, -3);

fn main() {}
