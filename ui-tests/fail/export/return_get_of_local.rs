// Rule: a DLTensor handle cannot be returned from the function that owns its wrapper.
use dlspan::{to_dlpack_tensor, DlTensorRef, HostMdspan};

fn export<'a>(md: &'a HostMdspan<'a, i32, 2>) -> DlTensorRef<'a> {
    let dl = to_dlpack_tensor(md).unwrap();
    dl.get()
}

fn main() {
    let data = [0i32; 6];
    let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    let _ = export(&md);
}
