//! Typed views: the reference vectors of CCCL's documented conversions, and the view API (queries,
//! indexing, iteration, sub-views, slices, static extents, layouts, Debug).

mod support;

use dlspan::ffi::{DLDevice, DLDeviceType};
use dlspan::*;
use support::Crafted;

#[test]
fn reference_layout_right() {
    let data: Vec<i32> = (0..6).collect();
    let mut t = Crafted::cpu(data.as_ptr(), &[2, 3], Some(&[3, 1]));
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`, alive and unwritten during the test.
    let m = unsafe { to_host_mdspan::<i32, 2, LayoutRight>(&tensor) }.unwrap();
    assert_eq!(m.rank(), 2);
    assert_eq!((m.extent(0), m.extent(1)), (2, 3));
    assert_eq!((m.stride(0), m.stride(1)), (3, 1));
    assert_eq!(m.data_handle(), data.as_ptr());
    assert_eq!((m[[0, 0]], m[[1, 2]]), (0, 5));
}

#[test]
fn reference_layout_left() {
    let data = [1i32, 4, 2, 5, 3, 6];
    let mut t = Crafted::cpu(data.as_ptr(), &[2, 3], Some(&[1, 2]));
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    let m = unsafe { to_host_mdspan::<i32, 2, LayoutLeft>(&tensor) }.unwrap();
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(m[[i, j]], 1 + 3 * i as i32 + j as i32);
        }
    }
}

#[test]
fn reference_layout_stride() {
    let data = [1i32, 2, 3, 0, 4, 5, 6, 0];
    let mut t = Crafted::cpu(data.as_ptr(), &[2, 3], Some(&[4, 1]));
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    let m = unsafe { to_host_mdspan::<i32, 2, LayoutStride>(&tensor) }.unwrap();
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(m[[i, j]], 1 + 3 * i as i32 + j as i32);
        }
    }
    assert_eq!(m.to_vec(), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn reference_rank_zero() {
    let data = [42.0f64];
    let mut t = Crafted::cpu(data.as_ptr(), &[], None);
    t.shape = None;
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    let m = unsafe { to_host_mdspan::<f64, 0, LayoutRight>(&tensor) }.unwrap();
    assert_eq!((m.size(), m[[]]), (1, 42.0));
    assert_eq!(m.iter().copied().collect::<Vec<_>>(), [42.0]);
    // SAFETY: as above; a rank-0 tensor's null strides are never read, whatever the version.
    let strided = unsafe { to_host_mdspan::<f64, 0, LayoutStride>(&tensor) }.unwrap();
    assert_eq!(strided[[]], 42.0);
}

#[test]
fn reference_relaxed_negative_stride() {
    let data = [1i32, 2, 3, 4, 5];
    let mut t = Crafted::cpu(data.as_ptr(), &[5], Some(&[-1]));
    t.byte_offset = 16;
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    let m = unsafe { to_host_mdspan::<i32, 1, LayoutStrideRelaxed>(&tensor) }.unwrap();
    assert_eq!(m.offset(), 4);
    assert_eq!(m.data_handle(), data.as_ptr());
    for i in 0..5 {
        assert_eq!(m[[i]], 5 - i as i32);
    }
    assert_eq!(m.to_vec(), [5, 4, 3, 2, 1]);
    assert_eq!(m.as_slice(), Some(&data[..]), "contiguous in memory order");
}

#[test]
fn reference_relaxed_broadcast() {
    let data = [10u8, 11, 12, 13];
    let mut t = Crafted::cpu(data.as_ptr(), &[3, 4], Some(&[0, 1]));
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    let m = unsafe { to_host_mdspan::<u8, 2, LayoutStrideRelaxed>(&tensor) }.unwrap();
    for i in 0..3 {
        assert_eq!(m.index_axis::<1>(0, i).to_vec(), data);
    }
    assert_eq!(m.size(), 12);
    assert!(!m.is_contiguous());
    assert_eq!(m.as_slice(), None);
    // Broadcast views are shared only: two indices share each element.
    // SAFETY: as above.
    let mutable = unsafe { to_host_mdspan_mut::<u8, 2, LayoutStrideRelaxed>(&tensor) };
    assert!(matches!(mutable, Err(DlpackError::OverlappingStrides)));
}

#[test]
fn reference_right_is_strict_about_unit_axes() {
    let data = [1i32, 2, 3];
    let mut t = Crafted::cpu(data.as_ptr(), &[1, 3], Some(&[1, 1]));
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    let err = unsafe { to_host_mdspan::<i32, 2, LayoutRight>(&tensor) }.unwrap_err();
    assert_eq!(
        err,
        DlpackError::StridesIncompatible {
            layout: LayoutKind::Right,
            axis: 0,
            expected: 3,
            found: 1,
            accepted_by: LayoutKind::Stride
        }
    );
    // The strided layouts take what PyTorch sends for unit axes.
    // SAFETY: as above.
    let m = unsafe { to_host_mdspan::<i32, 2, LayoutStride>(&tensor) }.unwrap();
    assert_eq!(m.to_vec(), [1, 2, 3]);
}

#[test]
fn pinned_host_memory_is_host_memory() {
    let data = [1u16, 2];
    let mut t = Crafted::cpu(data.as_ptr(), &[2], Some(&[1]));
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDAHost, device_id: 0 };
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    let m = unsafe { to_host_mdspan::<u16, 1, LayoutRight>(&tensor) }.unwrap();
    assert_eq!(m[[1]], 2);
    let dl = to_dlpack_tensor(&m).unwrap();
    assert_eq!(dl.get().device.device_type, DLDeviceType::kDLCPU, "exports as plain host memory");
}

#[test]
fn device_and_managed_views_validate_without_a_gpu() {
    let fake_device_address = std::ptr::without_provenance::<f32>(0x7f00_0000_0000);
    let mut t = Crafted::cpu(fake_device_address, &[4, 8], Some(&[8, 1]));
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 3 };
    let tensor = t.tensor();
    // SAFETY: device views never read their memory on the host; the metadata arrays are alive.
    let d = unsafe { to_device_mdspan::<f32, 2, LayoutRight>(&tensor) }.unwrap();
    assert_eq!((d.extents(), d.ordinal(), d.data_handle()), ([4, 8], 3, fake_device_address));
    let sub = d.subview((1..3, ..));
    assert_eq!(sub.data_handle(), fake_device_address.wrapping_add(8));
    let dl = to_dlpack_tensor(&d).unwrap();
    assert_eq!(dl.get().device, DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 3 });
    assert!(format!("{d:?}").contains("<device memory>"));
    // SAFETY: as above.
    let host = unsafe { to_host_mdspan::<f32, 2, LayoutRight>(&tensor) };
    assert!(matches!(host, Err(DlpackError::DeviceMismatch { expected: DLDeviceType::kDLCPU, .. })));

    let data = [1.0f32, 2.0];
    let mut t = Crafted::cpu(data.as_ptr(), &[2], Some(&[1]));
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: 0 };
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data` (standing in for managed memory).
    let m = unsafe { to_managed_mdspan::<f32, 1, LayoutRight>(&tensor) }.unwrap();
    assert_eq!(m[[1]], 2.0);
    assert_eq!(to_dlpack_tensor(&m).unwrap().get().device.device_type, DLDeviceType::kDLCUDAManaged);
}

#[test]
fn indexing_get_and_iteration_orders() {
    let data: Vec<u32> = (0..24).collect();
    let right = HostMdspan::<u32, 3>::from_slice(&data, [2, 3, 4]).unwrap();
    assert_eq!(right[[1, 2, 3]], 23);
    assert_eq!(right.get([1, 2, 4]), None);
    assert_eq!(right.iter().copied().collect::<Vec<_>>(), data);
    let left = HostMdspan::<u32, 3, LayoutLeft>::from_slice(&data, [2, 3, 4]).unwrap();
    assert_eq!(left[[1, 2, 3]], 1 + 2 * 2 + 3 * 6);
    let expected: Vec<u32> =
        (0..2).flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| i + 2 * j + 6 * k))).collect();
    assert_eq!(left.iter().copied().collect::<Vec<_>>(), expected, "logical order, not memory order");
    assert_eq!(left.to_vec(), expected);
    assert_eq!(left.iter().len(), 24);
    assert_eq!(left.iter().sum::<u32>(), data.iter().sum::<u32>());
    assert_eq!(left.iter().nth(5), Some(&expected[5]));
}

#[test]
#[should_panic(expected = "index [2, 0] out of bounds for extents [2, 3]")]
fn indexing_out_of_bounds_panics_with_the_index() {
    let data = [0u8; 6];
    let m = HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
    let _ = m[[2, 0]];
}

#[test]
fn sub_views() {
    let data: Vec<i64> = (0..20).collect();
    let m = HostMdspan::<i64, 2>::from_slice(&data, [4, 5]).unwrap();
    let s = m.subview((1..3, 2..));
    assert_eq!((s.extents(), s.strides()), ([2, 3], [5, 1]));
    assert_eq!(s.to_vec(), [7, 8, 9, 12, 13, 14]);
    assert_eq!(s.subview([1..2, 1..3]).to_vec(), [13, 14]);
    let empty = m.subview((2..2, ..));
    assert!(empty.is_empty());
    assert_eq!(empty.to_vec(), Vec::<i64>::new());
    assert!(matches!(
        m.try_subview([3..5, 0..1]),
        Err(DlpackError::SubviewOutOfBounds { axis: 0, start: 3, end: 5, extent: 4 })
    ));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = m.try_subview([2..1, 0..1]);
    assert!(matches!(reversed, Err(DlpackError::SubviewOutOfBounds { axis: 0, .. })));
    assert_eq!(m.index_axis::<1>(1, 4).to_vec(), [4, 9, 14, 19]);
    let scalar = m.index_axis::<1>(0, 3).index_axis::<0>(0, 1);
    assert_eq!(scalar[[]], 16);

    // A relaxed parent keeps its base and moves the offset.
    let rev = HostMdspan::<i64, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [20], [-1], 19).unwrap();
    let tail = rev.subview([15..]);
    assert_eq!((tail.offset(), tail.to_vec()), (4, vec![4, 3, 2, 1, 0]));
}

#[test]
fn mutable_views_and_sub_views() {
    let mut data = [0i32; 12];
    let mut m = HostMdspanMut::<i32, 2>::from_slice(&mut data, [3, 4]).unwrap();
    m[[0, 0]] = 1;
    *m.get_mut([2, 3]).unwrap() = 2;
    m.subview_mut((1..2, ..)).iter_mut().for_each(|x| *x = 7);
    let mut column = m.reborrow().into_index_axis::<1>(1, 2);
    column[[2]] = 9;
    assert_eq!(m.as_view().index_axis::<1>(0, 1).to_vec(), [7, 7, 7, 7]);
    m.as_mut_slice().unwrap()[1] = 5;
    assert_eq!(data, [1, 5, 0, 0, 7, 7, 7, 7, 0, 0, 9, 2]);
}

#[test]
fn slice_constructors_check_lengths_and_overlap() {
    let data = [0u8; 6];
    assert!(matches!(
        HostMdspan::<u8, 2>::from_slice(&data, [2, 2]),
        Err(DlpackError::LengthMismatch { expected: 4, found: 6 })
    ));
    assert!(matches!(
        HostMdspan::<u8, 2>::from_slice(&data, [2, 4]),
        Err(DlpackError::LengthMismatch { expected: 8, found: 6 })
    ));
    assert!(matches!(
        HostMdspan::<u8, 2, LayoutStride>::from_slice_strided(&data, [2, 3], [4, 1]),
        Err(DlpackError::TooFewElements { required: 7, found: 6 })
    ));
    let mut data = [0u8; 6];
    assert!(matches!(
        HostMdspanMut::<u8, 2, LayoutStride>::from_slice_strided(&mut data, [3, 3], [1, 1]),
        Err(DlpackError::OverlappingStrides)
    ));
    assert!(HostMdspan::<u8, 2, LayoutStride>::from_slice_strided(&data, [3, 3], [1, 1]).is_ok());
}

#[test]
fn static_extents() {
    type Tile<'a> = mdspan!(&'a u16; 2, 3);
    type Wide<'a> = mdspan!(&'a u16; dyn, 3; layout = left);
    let data = [0u16, 1, 2, 3, 4, 5];
    let tile = Tile::from_array(&data);
    assert_eq!((tile.extents(), tile.rank_dynamic(), tile[[1, 2]]), ([2, 3], 0, 5));
    let dynamic = HostMdspan::<u16, 2>::from_slice(&data, [3, 2]).unwrap();
    let err = Tile::try_from(dynamic).unwrap_err();
    assert_eq!(err, DlpackError::ExtentMismatch { axis: 0, expected: 2, found: 3 });
    let left = HostMdspan::<u16, 2, LayoutLeft>::from_slice(&data, [2, 3]).unwrap();
    let wide: Wide<'_> = left.try_into().unwrap();
    assert_eq!(wide.rank_dynamic(), 1);
    assert_eq!(wide.into_dyn().extents(), [2, 3]);
    assert_eq!(Tile::from_slice(&data, [2, 3]).unwrap().extent(1), 3);
    assert!(matches!(Tile::from_slice(&data, [3, 2]), Err(DlpackError::ExtentMismatch { axis: 0, .. })));

    // From a DLTensor straight into a static type.
    let mut t = Crafted::cpu(data.as_ptr(), &[2, 3], Some(&[3, 1]));
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `data`.
    assert!(unsafe { Tile::from_dltensor(&tensor) }.is_ok());
    // SAFETY: as above.
    let err = unsafe { <mdspan!(u16; 2, 4)>::from_dltensor(&tensor) }.unwrap_err();
    assert_eq!(err, DlpackError::ExtentMismatch { axis: 1, expected: 4, found: 3 });
}

#[test]
fn layout_conversions() {
    let data: Vec<u8> = (0..6).collect();
    let right = HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
    let strided = right.into_layout::<LayoutStride>().unwrap();
    assert_eq!(strided.strides(), [3, 1]);
    let relaxed = strided.into_layout::<LayoutStrideRelaxed>().unwrap();
    assert_eq!(relaxed.into_layout::<LayoutRight>().unwrap().to_vec(), data);
    assert!(matches!(right.into_layout::<LayoutLeft>(), Err(DlpackError::StridesIncompatible { .. })));
    // A relaxed view with an offset becomes a strided view starting at its first element.
    let shifted = HostMdspan::<u8, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3], [1], 2).unwrap();
    let plain = shifted.into_layout::<LayoutStride>().unwrap();
    assert_eq!((plain.offset(), plain.data_handle(), plain.to_vec()), (0, data[2..].as_ptr(), vec![2, 3, 4]));
}

#[test]
fn contiguity_and_slices() {
    let data: Vec<u8> = (0..12).collect();
    let m = HostMdspan::<u8, 2, LayoutStride>::from_slice_strided(&data, [3, 4], [1, 3]).unwrap();
    assert!(m.is_contiguous(), "a column-major permutation is contiguous");
    assert_eq!(m.as_slice(), Some(&data[..]));
    assert_eq!(m.to_vec(), [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]);
    let gappy = HostMdspan::<u8, 2, LayoutStride>::from_slice_strided(&data, [2, 2], [4, 1]).unwrap();
    assert!(!gappy.is_contiguous());
    assert_eq!(gappy.as_slice(), None);
}

#[test]
fn debug_shows_shape_strides_and_values() {
    let data: Vec<i32> = (0..6).collect();
    let m = HostMdspan::<i32, 2, LayoutStride>::from_slice_strided(&data, [2, 2], [3, 2]).unwrap();
    let text = format!("{m:?}");
    assert!(text.contains("extents: [2, 2]"), "{text}");
    assert!(text.contains("strides: [3, 2]"), "{text}");
    assert!(text.contains("values: [[0, 2], [3, 5]]"), "{text}");
    let big: Vec<u8> = vec![1; 2000];
    let b = HostMdspan::<u8, 2>::from_slice(&big, [40, 50]).unwrap();
    let text = format!("{b:?}");
    assert!(text.contains("..."), "large views are elided");
    assert!(text.len() < 500, "{}", text.len());
}

#[test]
fn views_are_send_sync_and_copy() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<HostMdspan<'static, f32, 2>>();
    send_sync::<HostMdspanMut<'static, f32, 2>>();
    send_sync::<view::Iter<'static, f32, 2>>();
    let data = [1u8; 4];
    let m = HostMdspan::<u8, 1>::from_slice(&data, [4]).unwrap();
    let copy = m;
    assert_eq!(copy.size(), m.size());
    let total: u32 = std::thread::scope(|s| s.spawn(|| m.iter().map(|&x| u32::from(x)).sum()).join().unwrap());
    assert_eq!(total, 4);
}

#[test]
fn zero_size_tensors_have_any_data_and_strides() {
    // Null data, compact layouts: any strides are fine for a tensor without elements (PyTorch
    // sends (1, 1) for shape (3, 0), the canonical strides would be (0, 1)).
    let mut t = Crafted::cpu(std::ptr::null::<f32>(), &[3, 0], Some(&[1, 1]));
    let tensor = t.tensor();
    // SAFETY: the tensor has no elements; its metadata arrays are alive.
    let m = unsafe { to_host_mdspan::<f32, 2, LayoutRight>(&tensor) }.unwrap();
    assert!(m.is_empty());
    assert_eq!(m.iter().count(), 0);
    assert_eq!(m.as_slice(), Some(&[][..]));
    let dl = to_dlpack_tensor(&m).unwrap();
    assert!(dl.get().data.is_null(), "an export of no elements has null data");
}
