// Rule: `usize` is no DLPack element type (its width is the target's); the error suggests `u64`.
use dlspan::{HostMdspan, to_dlpack_tensor};

fn main() {
    let indices = [0usize, 1, 2];
    let view = HostMdspan::<usize, 1>::from_slice(&indices, [3]).unwrap();
    let _ = to_dlpack_tensor(&view);
}
