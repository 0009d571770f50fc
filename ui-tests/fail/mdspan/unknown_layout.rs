// Rule: layout = names one of right, left, stride, stride_relaxed.
type M<'a> = dlspan::mdspan!(&'a f32; 2, 3; layout = column_major);

fn main() {}
