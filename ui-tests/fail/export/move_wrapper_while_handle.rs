// Rule: the wrapper cannot move while a handle to its DLTensor lives.
use dlspan::{to_dlpack_tensor, HostMdspan};

fn main() {
    let data = [0i32; 6];
    let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    let dl = to_dlpack_tensor(&md).unwrap();
    let handle = dl.get();
    let moved = dl;
    println!("{} {:?}", handle.ndim, moved.shape());
}
