// Rule: an aligned view's inner view cannot be replaced (no DerefMut), so the alignment it states holds.
use dlspan::{AlignedBuffer, HostMdspanMut};

fn main() {
    let mut buffer = AlignedBuffer::<f32>::zeroed(8);
    let mut other = [0.0f32; 9];
    let aligned = buffer.view_mut([8]).unwrap();
    *aligned = HostMdspanMut::<f32, 1>::from_slice(&mut other[1..], [8]).unwrap();
    println!("{}", aligned.size());
}
