// Rule: two mutable views of the same data cannot coexist.
use dlspan::HostMdspanMut;

fn main() {
    let mut data = vec![0i32; 6];
    let mut a = HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
    let b = HostMdspanMut::<i32, 2>::from_slice(&mut data, [3, 2]).unwrap();
    a[[0, 0]] = 1;
    println!("{}", b.size());
}
