// Rule: removing one axis (index_axis, outer_iter, axis_iter) infers the result's rank: no turbofish.
use dlspan::{HostMdspan, HostMdspanMut};

fn main() {
    let data: Vec<i32> = (0..24).collect();
    let m = HostMdspan::<i32, 3>::from_slice(&data, [2, 3, 4]).unwrap();
    let plane = m.index_axis(0, 1);
    let line = plane.index_axis(1, 0);
    let point = line.index_axis(0, 2);
    assert_eq!(point[[]], 20);
    let mut total = 0;
    for row in m.outer_iter() {
        for column in row.axis_iter(1) {
            total += column.iter().sum::<i32>();
        }
    }
    assert_eq!(total, data.iter().sum::<i32>());

    let mut values = [0u8; 6];
    let mut grid = HostMdspanMut::<u8, 2>::from_slice(&mut values, [2, 3]).unwrap();
    grid.index_axis_mut(1, 2)[[0]] = 1;
    for mut row in grid.outer_iter_mut() {
        row[[0]] = 2;
    }
    assert_eq!(grid.index_axis(0, 0).to_vec(), [2, 0, 1]);
}
