//! View → `DLTensor` (CCCL `to_dlpack_tensor`) and back: every field of the export, every layout
//! round-tripping through the import, relaxed offsets, devices, and what cannot be exported.

use dlspan::dtype::Float4E2m1fn;
use dlspan::ffi::{DLDevice, DLDeviceType};
use dlspan::*;

#[test]
fn the_cccl_example() {
    type Extents23<'a> = mdspan!(&'a i32; 2, 3);
    let data = [0i32, 1, 2, 3, 4, 5];
    let md = Extents23::from_array(&data);
    let dl = to_dlpack_tensor(&md).unwrap();
    let t = dl.get();
    assert_eq!(t.device, DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 });
    assert_eq!(t.ndim, 2);
    assert_eq!(t.dtype, i32::DTYPE);
    // SAFETY: shape points to 2 entries inside `dl`, alive here.
    let shape = unsafe { std::slice::from_raw_parts(t.shape, 2) };
    // SAFETY: strides point to 2 entries inside `dl`, alive here.
    let strides = unsafe { std::slice::from_raw_parts(t.strides, 2) };
    assert_eq!((shape, strides), (&[2i64, 3][..], &[3i64, 1][..]));
    assert_eq!(t.data, data.as_ptr().cast_mut().cast());
    assert_eq!(t.byte_offset, 0);
}

/// Exports `view`, imports the export as the same kind of view, and compares.
fn round_trip<L: Layout>(view: HostMdspan<'_, i32, 2, L>) {
    let dl = to_dlpack_tensor(&view).unwrap();
    let handle = dl.get();
    // SAFETY: the export describes the view's data, alive and unwritten here.
    let back = unsafe { to_host_mdspan::<i32, 2, L>(&handle) }.unwrap();
    assert_eq!(back.extents(), view.extents());
    assert_eq!(back.strides(), view.strides());
    assert_eq!(back.offset(), view.offset());
    assert_eq!(back.data_handle(), view.data_handle());
    assert_eq!(back.to_vec(), view.to_vec());
}

#[test]
fn every_layout_round_trips() {
    let data: Vec<i32> = (0..24).collect();
    round_trip(HostMdspan::<i32, 2>::from_slice(&data[..12], [3, 4]).unwrap());
    round_trip(HostMdspan::<i32, 2, LayoutLeft>::from_slice(&data[..12], [3, 4]).unwrap());
    round_trip(HostMdspan::<i32, 2, LayoutStride>::from_slice_strided(&data, [3, 4], [8, 2]).unwrap());
    round_trip(HostMdspan::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3, 4], [-8, 0], 16).unwrap());
    round_trip(
        HostMdspan::<i32, 2>::from_slice(&data[..12], [3, 4])
            .unwrap()
            .subview((1..3, 1..))
            .into_layout::<LayoutStrideRelaxed>()
            .unwrap(),
    );
}

#[test]
fn relaxed_offsets_travel_in_byte_offset() {
    let data: Vec<f64> = (0..5).map(f64::from).collect();
    let reversed = HostMdspan::<f64, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [5], [-1], 4).unwrap();
    let dl = to_dlpack_tensor(&reversed).unwrap();
    let t = dl.get();
    assert_eq!(t.data, data.as_ptr().cast_mut().cast(), "data stays the base: nothing is reached below it");
    assert_eq!(t.byte_offset, 32);
    assert_eq!(dl.strides(), &[-1]);
    // A strict consumer that only handles positive strides sees the same first element.
    let shifted = HostMdspan::<f64, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [2], [2], 1).unwrap();
    let dl = to_dlpack_tensor(&shifted).unwrap();
    let handle = dl.get();
    // SAFETY: the export describes `data`.
    let strict = unsafe { to_host_mdspan::<f64, 1, LayoutStride>(&handle) }.unwrap();
    assert_eq!(strict.to_vec(), [1.0, 3.0]);
}

#[test]
fn rank_zero_and_empty_exports() {
    let data = [9u8];
    let scalar = HostMdspan::<u8, 0>::from_slice(&data, []).unwrap();
    let dl = to_dlpack_tensor(&scalar).unwrap();
    let t = dl.get();
    assert!(t.shape.is_null() && t.strides.is_null());
    assert_eq!(t.ndim, 0);
    // SAFETY: the export describes `data`.
    assert_eq!(unsafe { to_host_mdspan::<u8, 0, LayoutRight>(&t) }.unwrap()[[]], 9);

    let empty = HostMdspan::<u8, 2>::from_slice(&[], [0, 4]).unwrap();
    let dl = to_dlpack_tensor(&empty).unwrap();
    assert!(dl.get().data.is_null());
    assert_eq!(dl.shape(), &[0, 4]);
}

#[test]
fn mutable_views_export_too() {
    let mut data = [1.5f32, 2.5];
    let m = HostMdspanMut::<f32, 1>::from_slice(&mut data, [2]).unwrap();
    let dl = to_dlpack_tensor(&m).unwrap();
    let mut handle = dl.get();
    let raw = handle.as_mut_ptr();
    // SAFETY: `raw` points to the handle's DLTensor, alive here.
    assert_eq!(unsafe { (*raw).ndim }, 1);
    assert_eq!(handle.as_ptr(), raw.cast_const());
}

#[test]
fn the_wrapper_may_move_between_gets() {
    let data = [1u16, 2, 3, 4];
    let md = HostMdspan::<u16, 2>::from_slice(&data, [2, 2]).unwrap();
    let dl = to_dlpack_tensor(&md).unwrap();
    let moved = Box::new(dl);
    let t = moved.get();
    // SAFETY: shape points to 2 entries inside `moved`, alive here.
    let shape = unsafe { std::slice::from_raw_parts(t.shape, 2) };
    assert_eq!(shape, [2, 2]);
    // SAFETY: the export describes `data`.
    assert_eq!(unsafe { to_host_mdspan::<u16, 2, LayoutRight>(&t) }.unwrap()[[1, 1]], 4);
}

#[test]
fn padded_subbyte_data_needs_a_managed_export() {
    let data = [Float4E2m1fn::from_bits(1); 4];
    let md = HostMdspan::<Float4E2m1fn, 1>::from_slice(&data, [4]).unwrap();
    assert_eq!(to_dlpack_tensor(&md).unwrap_err(), DlpackError::PaddedSubbyteExport);
}

#[test]
fn an_empty_view_exports_a_valid_empty_tensor() {
    // What a `Default` for `DlpackTensor` would have to invent a dtype for (DESIGN.md): the export
    // of an empty view of the element type wanted.
    let empty: [f32; 0] = [];
    let view = HostMdspan::<f32, 2>::from_slice(&empty, [0, 0]).unwrap();
    let dl = to_dlpack_tensor(&view).unwrap();
    let t = dl.get();
    assert!(t.data.is_null());
    assert_eq!((t.ndim, t.dtype, t.byte_offset), (2, f32::DTYPE, 0));
    assert_eq!(t.device, DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 });
    assert_eq!((dl.shape(), dl.strides()), (&[0, 0], &[1, 1]));
    // SAFETY: the export has no elements; its metadata lives in `dl`.
    let back = unsafe { to_host_mdspan::<f32, 2, LayoutRight>(&t) }.unwrap();
    assert!(back.is_empty());
}
