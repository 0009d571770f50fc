// Rule: space = names one of host, device, managed.
type M<'a> = dlspan::mdspan!(&'a f32; dyn; space = gpu);

fn main() {}
