//! Iteration. Elements: logical order on random views of every kind (`next`, `fold` and both
//! mixed, exact lengths, clones, mutable iterators). Axes (`outer_iter`, `axis_iter`, `index_axis`):
//! every layout and axis agrees with indexing, mutable sub-views are disjoint (held together, sent
//! to threads), empty views, rank 1 to rank 0, double-ended and exact-size behaviour, device views,
//! and the rank inference that needs no turbofish.

use dlspan::view::{AxisIter, LowerRank, Rank};
use dlspan::*;
use proptest::prelude::*;

mod support;

proptest! {
    #[test]
    fn element_iterators_walk_logical_order(
        extents in proptest::array::uniform3(0usize..5),
        strides in proptest::array::uniform3(-9isize..9),
        offset in 0usize..80,
        split in 0usize..70,
    ) {
        let data: Vec<u32> = (0..128).collect();
        let Ok(view) = HostMdspan::<u32, 3, LayoutStrideRelaxed>::from_slice_relaxed(&data, extents, strides, offset)
        else {
            return Ok(());
        };
        let expected: Vec<u32> = support::indices(extents, usize::MAX).into_iter().map(|index| view[index]).collect();
        prop_assert_eq!(view.iter().copied().collect::<Vec<_>>(), expected.clone());
        // `next` for a while, then `fold` (through `sum`) for the rest; lengths exact throughout.
        let mut iter = view.iter();
        let head = split.min(expected.len());
        for (k, value) in expected[..head].iter().enumerate() {
            prop_assert_eq!(iter.len(), expected.len() - k);
            prop_assert_eq!(iter.next(), Some(value));
        }
        let rest = iter.clone();
        prop_assert_eq!(iter.copied().sum::<u32>(), expected[head..].iter().sum::<u32>());
        prop_assert_eq!(rest.copied().collect::<Vec<_>>(), &expected[head..]);

        // The same traversal mutably, over a unique layout of the same shape.
        let mut owned = data.clone();
        let unique = strides.map(|s| if s == 0 { 1 } else { s });
        if let Ok(mut m) = HostMdspanMut::<u32, 3, LayoutStrideRelaxed>::from_slice_relaxed(&mut owned, extents, unique, offset) {
            let expected: Vec<u32> = support::indices(extents, usize::MAX).into_iter().map(|index| m[index]).collect();
            let mut seen = Vec::new();
            let mut iter = m.iter_mut();
            for _ in 0..head.min(expected.len()) {
                let x = iter.next().unwrap();
                seen.push(*x);
                *x += 1000;
            }
            iter.for_each(|x| {
                seen.push(*x);
                *x += 1000;
            });
            prop_assert_eq!(&seen, &expected);
            prop_assert!(m.iter().zip(&expected).all(|(now, before)| *now == before + 1000));
        }
    }
}

/// Checks `axis_iter(axis)` against `index_axis` and against the parent's own indexing, both ways.
fn check_axes<L: Layout>(m: HostMdspan<'_, i32, 3, L>) {
    let [a, b, c] = m.extents();
    for axis in 0..3 {
        let views: Vec<_> = m.axis_iter(axis).collect();
        assert_eq!(views.len(), m.extent(axis));
        for (i, sub) in views.iter().enumerate() {
            assert_eq!(sub.to_vec(), m.index_axis(axis, i).to_vec());
            let (q0, q1) = (sub.extent(0), sub.extent(1));
            for j in 0..q0 {
                for k in 0..q1 {
                    let index = match axis {
                        0 => [i, j, k],
                        1 => [j, i, k],
                        _ => [j, k, i],
                    };
                    assert_eq!(sub[[j, k]], m[index], "axis {axis}, sub-view {i}, [{j}, {k}]");
                }
            }
        }
        let backwards: Vec<Vec<i32>> = m.axis_iter(axis).rev().map(|v| v.to_vec()).collect();
        let mut forwards: Vec<Vec<i32>> = views.iter().map(|v| v.to_vec()).collect();
        forwards.reverse();
        assert_eq!(backwards, forwards);
    }
    let rows: Vec<i32> = m.outer_iter().flat_map(|row| row.to_vec()).collect();
    assert_eq!((rows.len(), rows), (a * b * c, m.to_vec()));
}

#[test]
fn every_layout_and_axis_agrees_with_indexing() {
    let data: Vec<i32> = (0..60).collect();
    check_axes(HostMdspan::<i32, 3>::from_slice(&data[..24], [2, 3, 4]).unwrap());
    check_axes(HostMdspan::<i32, 3, LayoutLeft>::from_slice(&data[..24], [2, 3, 4]).unwrap());
    check_axes(HostMdspan::<i32, 3, LayoutStride>::from_slice_strided(&data, [3, 2, 4], [1, 24, 3]).unwrap());
    // Reversed and broadcast axes, with an offset.
    let relaxed = HostMdspan::<i32, 3, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3, 2, 4], [-20, 0, 2], 45);
    check_axes(relaxed.unwrap());
    // Static extents.
    let data_array: [i32; 24] = core::array::from_fn(|i| i as i32);
    check_axes(<mdspan!(i32; 2, 3, 4)>::from_array(&data_array).into_dyn());
}

#[test]
fn rows_of_row_major_views_are_row_major_slices() {
    let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
    let m = HostMdspan::<f32, 2>::from_slice(&data, [3, 4]).unwrap();
    let mut sums = Vec::new();
    for row in m.outer_iter() {
        let row: HostMdspan<'_, f32, 1, LayoutRight> = row; // the layout survives, by type
        sums.push(row.as_slice().expect("a row of a row-major view is contiguous").iter().sum::<f32>());
    }
    assert_eq!(sums, [6.0, 22.0, 38.0]);
    // Columns of a column-major view, and rows of other layouts, are strided.
    let left = HostMdspan::<f32, 2, LayoutLeft>::from_slice(&data, [3, 4]).unwrap();
    let row: HostMdspan<'_, f32, 1, LayoutStride> = left.outer_iter().next().unwrap();
    assert_eq!((row.stride(0), row.to_vec()), (3, vec![0.0, 3.0, 6.0, 9.0]));
}

#[test]
fn index_axis_infers_its_rank_and_takes_a_turbofish() {
    let data: Vec<u16> = (0..24).collect();
    let m = HostMdspan::<u16, 3>::from_slice(&data, [2, 3, 4]).unwrap();
    let plane = m.index_axis(0, 1);
    let line = plane.index_axis(1, 2);
    let point = line.index_axis(0, 1);
    assert_eq!((plane.rank(), line.rank(), point.rank(), point[[]]), (2, 1, 0, 18));
    assert_eq!(m.index_axis::<2>(2, 3).to_vec(), m.index_axis(2, 3).to_vec());

    fn generic<const R: usize, const Q: usize>(m: HostMdspan<'_, u16, R>) -> Vec<u16>
    where
        Rank<R>: LowerRank<Q>,
    {
        m.index_axis(0, 0).to_vec()
    }
    assert_eq!(generic(m), (0..12).collect::<Vec<_>>());
}

#[test]
fn mutable_index_axis_through_borrows() {
    let mut data = [0i32; 12];
    let mut m = HostMdspanMut::<i32, 2>::from_slice(&mut data, [3, 4]).unwrap();
    m.index_axis_mut(0, 1).iter_mut().for_each(|x| *x = 1);
    m.index_axis_mut(1, 3)[[2]] = 5;
    assert_eq!(m.index_axis(0, 1).to_vec(), [1, 1, 1, 1]);
    assert_eq!(m.index_axis(1, 3).to_vec(), [0, 1, 5]);
    let column = m.into_index_axis(1, 0);
    assert_eq!(column.to_vec(), [0, 1, 0]);
}

#[test]
fn mutable_sub_views_are_disjoint_and_held_together() {
    let mut data = [0u32; 12];
    let mut m = HostMdspanMut::<u32, 2, LayoutLeft>::from_slice(&mut data, [3, 4]).unwrap();
    let mut columns: Vec<_> = m.axis_iter_mut(1).collect();
    let mut rows_first = columns.remove(0);
    for (j, column) in columns.iter_mut().enumerate() {
        column.iter_mut().for_each(|x| *x = j as u32 + 1);
    }
    rows_first[[2]] = 9;
    drop((columns, rows_first));
    assert_eq!(m.to_vec(), [0, 1, 2, 3, 0, 1, 2, 3, 9, 1, 2, 3]);

    for (i, mut row) in m.outer_iter_mut().enumerate().rev() {
        row[[0]] = 100 + i as u32;
    }
    assert_eq!(m.axis_iter(1).next().unwrap().to_vec(), [100, 101, 102]);
}

#[test]
fn rows_go_to_threads() {
    let mut data = vec![0u64; 8 * 1000];
    let mut m = HostMdspanMut::<u64, 2>::from_slice(&mut data, [8, 1000]).unwrap();
    std::thread::scope(|scope| {
        for (i, mut row) in m.outer_iter_mut().enumerate() {
            scope.spawn(move || {
                row.as_mut_slice().unwrap().iter_mut().enumerate().for_each(|(j, x)| *x = (i * j) as u64)
            });
        }
    });
    assert_eq!(
        m.outer_iter().map(|row| row.sum()).collect::<Vec<_>>(),
        (0..8).map(|i| i * 499_500).collect::<Vec<u64>>()
    );
}

#[test]
fn consumed_views_give_sub_views_for_their_whole_lifetime() {
    let mut data = [0i8; 6];
    let rows: Vec<HostMdspanMut<'_, i8, 1, LayoutRight>> =
        HostMdspanMut::<i8, 2>::from_slice(&mut data, [2, 3]).unwrap().into_outer_iter().collect();
    for (i, mut row) in rows.into_iter().enumerate() {
        row[[i]] = 1;
    }
    let columns: Vec<_> = HostMdspanMut::<i8, 2>::from_slice(&mut data, [2, 3]).unwrap().into_axis_iter(1).collect();
    assert_eq!(columns.iter().map(|c| c.to_vec()).collect::<Vec<_>>(), [[1, 0], [0, 1], [0, 0]]);
}

#[test]
fn empty_views_and_rank_zero_sub_views() {
    let data = [7i32, 8, 9];
    let none = HostMdspan::<i32, 2>::from_slice(&data[..0], [0, 3]).unwrap();
    assert_eq!(none.outer_iter().len(), 0);
    let columns: Vec<_> = none.axis_iter(1).collect();
    assert_eq!(columns.len(), 3);
    assert!(columns.iter().all(|c| c.is_empty() && c.extents() == [0]));
    let empty_rows = HostMdspan::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data[..0], [3, 0], [-5, 1], 0);
    let empty_rows = empty_rows.unwrap();
    assert!(empty_rows.outer_iter().all(|row| row.is_empty() && row.offset() == 0 && row.to_vec().is_empty()));

    let line = HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3], [-1], 2).unwrap();
    let scalars: Vec<i32> = line.outer_iter().map(|point| point[[]]).collect();
    assert_eq!(scalars, [9, 8, 7]);
}

#[test]
fn double_ended_exact_size_and_fused() {
    let data: Vec<i32> = (0..10).collect();
    let m = HostMdspan::<i32, 2>::from_slice(&data, [5, 2]).unwrap();
    let mut rows: AxisIter<'_, i32, 1, LayoutRight, Host> = m.outer_iter();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows.next().unwrap().to_vec(), [0, 1]);
    assert_eq!(rows.next_back().unwrap().to_vec(), [8, 9]);
    assert_eq!((rows.len(), rows.size_hint()), (3, (3, Some(3))));
    let again = rows.clone();
    assert_eq!(rows.nth(1).unwrap().to_vec(), [4, 5]);
    assert_eq!(rows.next_back().unwrap().to_vec(), [6, 7]);
    assert!(rows.next().is_none() && rows.next_back().is_none() && rows.next().is_none());
    assert_eq!((again.clone().count(), again.clone().last().unwrap().to_vec()), (3, vec![6, 7]));
    let mut again = again;
    assert!(again.nth(10).is_none());
    assert!(again.next().is_none());
}

#[test]
fn device_views_iterate_sub_views_without_host_reads() {
    let base = 0x7f00_0000_0000usize as *const f32; // a device address, never read
    let map = Mapping::compact([4, 8]).unwrap();
    // SAFETY: the address stands for 32 floats of device 0; nothing on the host reads them.
    let gpu: DeviceMdspan<'_, f32, 2> = unsafe { DeviceMdspan::from_raw_parts(base, map, 0) };
    let rows: Vec<*const f32> = gpu.outer_iter().map(|row| row.data_handle()).collect();
    assert_eq!(rows, (0..4).map(|i| base.wrapping_add(8 * i)).collect::<Vec<_>>());
    let column = gpu.axis_iter(1).nth(5).unwrap();
    assert_eq!((column.data_handle(), column.stride(0), column.ordinal()), (base.wrapping_add(5), 8, 0));
}
