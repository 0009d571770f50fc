// Rule: only views of DlElement types export to DLPack.
use dlspan::{to_dlpack_tensor, HostMdspan};

#[derive(Clone, Copy)]
struct Opaque(u32);

fn main() {
    let data = [Opaque(1), Opaque(2)];
    let md = HostMdspan::<Opaque, 1>::from_slice(&data, [2]).unwrap();
    let _ = to_dlpack_tensor(&md);
}
