// Rule: a shared view cannot become a mutable one.
use dlspan::{HostMdspan, HostMdspanMut};

fn main() {
    let data = [0i32; 6];
    let shared = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    let mutable: HostMdspanMut<'_, i32, 2> = shared.into();
    println!("{}", mutable.size());
}
