// Rule: a view cannot outlive the data it borrows.
use dlspan::HostMdspan;

fn main() {
    let view;
    {
        let data = vec![0i32; 6];
        view = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    }
    println!("{}", view[[0, 0]]);
}
