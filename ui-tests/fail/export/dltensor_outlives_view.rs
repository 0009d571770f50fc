// Rule: an export cannot outlive the view it describes.
use dlspan::{to_dlpack_tensor, DlpackTensor, HostMdspan};

fn main() {
    let data = [0i32; 6];
    let dl: DlpackTensor<'_, 2>;
    {
        let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
        dl = to_dlpack_tensor(&md).unwrap();
    }
    println!("{:?}", dl.shape());
}
