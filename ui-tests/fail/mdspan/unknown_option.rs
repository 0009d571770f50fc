// Rule: mdspan! takes the options layout, space and crate.
type M<'a> = dlspan::mdspan!(&'a f32; 2, 3; order = c);

fn main() {}
