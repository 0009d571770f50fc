// Rule: a nested array of the view type's shape makes a row-major view, shared or mutable.
use dlspan::mdspan;

fn main() {
    let rows = [[1u8, 2, 3], [4, 5, 6]];
    let matrix = <mdspan!(u8; 2, 3)>::from_nested(&rows);
    assert_eq!((matrix[[1, 0]], matrix.as_slice().map(<[u8]>::len)), (4, Some(6)));

    let mut cube = [[[0i32; 4]; 3]; 2];
    let mut view = <mdspan!(mut i32; 2, 3, 4)>::from_nested(&mut cube);
    view[[1, 2, 3]] = 7;
    assert_eq!(cube[1][2][3], 7);

    let line = <mdspan!(f64; 3)>::from_nested(&[0.5, 1.5, 2.5]);
    assert_eq!(line.sum(), 4.5);
}
