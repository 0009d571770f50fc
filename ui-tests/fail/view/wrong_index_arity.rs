// Rule: an index has exactly rank entries: [usize; R].
use dlspan::HostMdspan;

fn main() {
    let data = [0i32; 6];
    let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    println!("{}", md[[1]]);
}
