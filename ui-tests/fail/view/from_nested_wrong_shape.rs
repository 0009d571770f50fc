// Rule: a nested array must have the view type's shape: a type error that `cargo check` reports.
use dlspan::mdspan;

type Tile<'a> = mdspan!(&'a f32; 2, 3);

fn main() {
    let rows = [[0.0f32; 2]; 3];
    let tile = Tile::from_nested(&rows);
    println!("{}", tile.size());
}
