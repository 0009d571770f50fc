// Rule: a shared view cannot be written through.
use dlspan::HostMdspan;

fn main() {
    let data = [0i32; 6];
    let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    md[[0, 0]] = 1;
}
