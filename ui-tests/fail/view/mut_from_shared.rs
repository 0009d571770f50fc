// Rule: a mutable view needs a mutable borrow of its data.
use dlspan::HostMdspanMut;

fn main() {
    let data = vec![0i32; 6];
    let md = HostMdspanMut::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    println!("{}", md.size());
}
