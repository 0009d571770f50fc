// Rule: index_axis removes exactly one axis: the result's rank is R - 1 (compile time).
use dlspan::HostMdspan;

fn main() {
    let data = [0i32; 6];
    let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    let row = md.index_axis::<2>(0, 1);
    println!("{}", row.size());
}
