// Rule: a refused mdspan! type reports its own error only; uses of the type add none.
use dlspan::{mdspan, HostMdspan};

type Bad<'a> = mdspan!(&f32; 4; layout = stride);

fn main() {
    let data = [1.0f32; 4];
    let view = HostMdspan::<f32, 1>::from_slice(&data, [4]).unwrap();
    let bad: Bad<'_> = view.try_into().unwrap();
    println!("{:?}", bad.to_vec());
}
