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

/// Every pointer an ndarray view can form by moving along its axes (its own safety rule, which
/// holds even for empty arrays), as byte offsets from `base`.
fn reachable_offsets<D: ndarray::Dimension>(array: &ndarray::ArrayView<'_, u8, D>, base: *const u8) -> (isize, isize) {
    let origin = array.as_ptr() as isize - base as isize;
    let (mut low, mut high) = (origin, origin);
    for (&len, &stride) in array.shape().iter().zip(array.strides()) {
        let reach = len.saturating_sub(1) as isize * stride;
        if reach < 0 { low += reach } else { high += reach }
    }
    (low, high)
}

#[test]
fn empty_views_give_ndarray_views_that_stay_in_their_memory() {
    // Found by an audit: an empty view used to keep any strides, so `to_ndarray` inverted an axis
    // of stride -1000 and moved ndarray's pointer 2000 bytes past a 4-byte array.
    let data = [0u8; 4];
    let empty = HostMdspan::<u8, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [0, 3], [1, -1000], 0).unwrap();
    let array = empty.to_ndarray();
    assert_eq!(array.shape(), &[0, 3]);
    let (low, high) = reachable_offsets(&array, data.as_ptr());
    assert!(0 <= low && high <= 4, "ndarray's pointers reach bytes {low}..={high} of a 4-byte array");
    // A stride of isize::MAX / 2 broke ndarray's own `from_shape_ptr` precondition (a debug build
    // panicked there).
    let huge = HostMdspan::<u8, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [0, 3], [1, isize::MAX / 2], 0);
    let array = huge.unwrap().to_ndarray();
    let (low, high) = reachable_offsets(&array, data.as_ptr());
    assert!(0 <= low && high <= 4, "ndarray's pointers reach bytes {low}..={high} of a 4-byte array");
    // An empty sub-view of a reversed view, mutable.
    let mut data = [0u8; 12];
    let base = data.as_ptr();
    let reversed =
        HostMdspanMut::<u8, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut data, [3, 4], [1, -3], 9).unwrap();
    let array = reversed.into_subview((0..0, ..)).into_ndarray();
    let (low, high) = reachable_offsets(&array.view(), base);
    assert!(0 <= low && high < 12, "ndarray's pointers reach bytes {low}..={high} of a 12-byte array");
    // Over no memory at all, ndarray may not move its pointer along any axis: an empty compact view
    // of an empty slice (row-major strides would move it 2 elements along the last axis).
    let none: [u8; 0] = [];
    let array = HostMdspan::<u8, 2>::from_slice(&none, [0, 3]).unwrap().to_ndarray();
    assert_eq!(reachable_offsets(&array, none.as_ptr()), (0, 0));
    let mut inverted = array;
    inverted.invert_axis(ndarray::Axis(1));
    assert_eq!(inverted.as_ptr(), none.as_ptr());
    // ndarray's own form of an empty array (all strides zero) also passes its uniqueness check for
    // mutable views, which zero strides on an axis before the empty one would fail (a debug build
    // panicked in `into_ndarray`).
    let mut none: [u8; 0] = [];
    let array = HostMdspanMut::<u8, 2>::from_slice(&mut none, [3, 0]).unwrap().into_ndarray();
    assert_eq!((array.shape(), array.strides()), (&[3, 0][..], &[0, 0][..]));
}

#[test]
fn unit_axes_with_extreme_strides() {
    // Found while auditing stride arithmetic: the magnitude of isize::MIN, the stride of an axis of extent 1,
    // reached ndarray as a negative stride (a debug build failed ndarray's own check).
    let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
    for stride in [isize::MAX, isize::MIN] {
        let view = HostMdspan::<u8, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [1, 3], [stride, 2], 1).unwrap();
        let array = view.to_ndarray();
        assert_eq!(array, ndarray::array![[2, 4, 6]]);
        assert!(array.strides().iter().all(|&s| s >= 0));
    }
}
