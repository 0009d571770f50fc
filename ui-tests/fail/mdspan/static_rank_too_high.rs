// Rule: static extents go up to rank 12.
type M<'a> = dlspan::mdspan!(&'a u8; 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2);

fn main() {}
