// Rule: get() on a temporary DlpackTensor cannot be kept past the statement (CCCL deletes get() &&).
use dlspan::{to_dlpack_tensor, HostMdspan};

fn main() {
    let data = [0i32, 1, 2, 3, 4, 5];
    let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    let tensor = to_dlpack_tensor(&md).unwrap().get();
    println!("{}", tensor.ndim);
}
