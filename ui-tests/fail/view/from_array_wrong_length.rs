// Rule: a static-extent view of an array needs the array length the extents fix (compile time).
use dlspan::mdspan;

type Tile<'a> = mdspan!(&'a f32; 2, 3);

fn main() {
    let data = [0.0f32; 5];
    let tile = Tile::from_array(&data);
    println!("{}", tile.size());
}
