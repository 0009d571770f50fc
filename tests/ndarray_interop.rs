//! Zero-copy conversions between views and ndarray views (feature `ndarray`), through the
//! re-exported `dlspan::ndarray` (this package has no ndarray dependency of its own).
#![cfg(feature = "ndarray")]

use dlspan::ndarray::{self, Array2, Array3, s};
use dlspan::*;

#[test]
fn views_become_ndarray_views_of_the_same_memory() {
    let data: Vec<i32> = (0..24).collect();
    let right = HostMdspan::<i32, 3>::from_slice(&data, [2, 3, 4]).unwrap();
    let array = right.to_ndarray();
    assert_eq!(array.shape(), &[2, 3, 4]);
    assert_eq!(array.as_ptr(), data.as_ptr());
    assert_eq!(array, Array3::from_shape_vec((2, 3, 4), data.clone()).unwrap());
    // Column-major, strided, reversed, broadcast.
    let left = HostMdspan::<i32, 2, LayoutLeft>::from_slice(&data[..6], [2, 3]).unwrap();
    assert_eq!(left.to_ndarray(), ndarray::arr2(&[[0, 2, 4], [1, 3, 5]]));
    let reversed = HostMdspan::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [2, 3], [-12, -4], 20).unwrap();
    let nd = reversed.to_ndarray();
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(nd[[i, j]], reversed[[i, j]]);
        }
    }
    let broadcast = HostMdspan::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3, 4], [0, 1], 0).unwrap();
    assert_eq!(broadcast.to_ndarray().row(2).to_vec(), [0, 1, 2, 3]);
    let empty = HostMdspan::<i32, 2>::from_slice(&[], [0, 5]).unwrap();
    assert_eq!(empty.to_ndarray().shape(), &[0, 5]);
}

#[test]
fn ndarray_views_become_views() {
    let array = Array2::from_shape_fn((4, 5), |(i, j)| (10 * i + j) as u16);
    let sliced = array.slice(s![1..4;2, ..;-2]);
    let view = HostMdspan::<u16, 2, LayoutStrideRelaxed>::from_ndarray(sliced).unwrap();
    assert_eq!(view.extents(), [2, 3]);
    assert_eq!(view.to_vec(), sliced.iter().copied().collect::<Vec<_>>());
    // Round trip back to ndarray.
    assert_eq!(view.to_ndarray(), sliced);
    // Dynamic dimensions: rank checked.
    let dynamic = array.view().into_dyn();
    assert!(HostMdspan::<u16, 2, LayoutStrideRelaxed>::from_ndarray(dynamic.clone()).is_ok());
    assert!(matches!(
        HostMdspan::<u16, 3, LayoutStrideRelaxed>::from_ndarray(dynamic),
        Err(DlpackError::RankMismatch { expected: 3, found: 2 })
    ));
    // A view exported to DLPack from ndarray memory.
    let dl = to_dlpack_tensor(&view).unwrap();
    assert_eq!(dl.strides(), &[10, -2]);
}

#[test]
fn mutable_views_both_ways() {
    let mut array = Array2::<f64>::zeros((3, 3));
    {
        let mut view =
            HostMdspanMut::<f64, 2, LayoutStrideRelaxed>::from_ndarray(array.slice_mut(s![.., ..;-1])).unwrap();
        view[[0, 0]] = 1.0; // the last column of row 0
    }
    assert_eq!(array[[0, 2]], 1.0);
    let mut data = vec![0.0f64; 6];
    let view = HostMdspanMut::<f64, 2>::from_slice(&mut data, [2, 3]).unwrap();
    let mut nd = view.into_ndarray();
    nd.row_mut(1).fill(2.0);
    assert_eq!(data, [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]);
}
