// Rule: a static-extent view of a flat array needs the length the extents fix (checked when code is
// generated; the message names the extents and both lengths, its last note points at the call).
use dlspan::mdspan;

type Tile<'a> = mdspan!(&'a f32; 2, 3);

fn main() {
    let data = [0.0f32; 5];
    let tile = Tile::from_array(&data);
    println!("{}", tile.size());
}
