//! Every import rule (`runtime/docs/rules.md`, section I) fed a crafted `DLTensor` that breaks it,
//! matched against the exact error variant; and the order of the rules (the first failing rule is
//! the one reported). Tests are named after the rule they check.

mod support;

use dlspan::dtype::{Float4E2m1fn, Float4E2m1fnX2};
use dlspan::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLPackVersion};
use dlspan::*;
use support::Crafted;

/// Converts with a host view of `T`, rank `R`, layout `L`.
fn host<T: DlElement, const R: usize, L: Layout>(t: &mut Crafted) -> Result<(), DlpackError> {
    let tensor = t.tensor();
    // SAFETY: every crafted tensor's data is a live buffer or never dereferenced (the conversion
    // only reads metadata); shape and strides arrays hold at least `ndim` entries.
    unsafe { to_host_mdspan::<T, R, L>(&tensor) }.map(|_| ())
}

fn host_mut<T: DlElement, const R: usize, L: Layout>(t: &mut Crafted) -> Result<(), DlpackError> {
    let tensor = t.tensor();
    // SAFETY: as in `host`.
    unsafe { to_host_mdspan_mut::<T, R, L>(&tensor) }.map(|_| ())
}

fn with<T: DlElement, const R: usize, L: Layout>(t: &mut Crafted, options: ImportOptions) -> Result<(), DlpackError> {
    let tensor = t.tensor();
    // SAFETY: as in `host`.
    unsafe { Mdspan::<T, R, Dims<R>, L, Host>::from_dltensor_with(&tensor, options) }.map(|_| ())
}

// A `static`, not a `const`: every use names one array, so addresses taken in two places compare
// equal (two promotions of a `const` need not, and under Miri they do not).
static DATA: [i32; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

fn good() -> Crafted {
    Crafted::cpu(DATA.as_ptr(), &[2, 3], Some(&[3, 1]))
}

#[test]
fn rule_i1_device() {
    let mut t = good();
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    assert_eq!(
        host::<i32, 2, LayoutRight>(&mut t),
        Err(DlpackError::DeviceMismatch { expected: DLDeviceType::kDLCPU, found: t.device })
    );
    let tensor = t.tensor();
    // SAFETY: metadata only.
    let managed = unsafe { to_managed_mdspan::<i32, 2, LayoutRight>(&tensor) };
    assert!(matches!(managed, Err(DlpackError::DeviceMismatch { expected: DLDeviceType::kDLCUDAManaged, .. })));
    let mut t = good();
    let tensor = t.tensor();
    // SAFETY: metadata only.
    let device = unsafe { to_device_mdspan::<i32, 2, LayoutRight>(&tensor) };
    assert!(matches!(device, Err(DlpackError::DeviceMismatch { expected: DLDeviceType::kDLCUDA, .. })));
    t.device = DLDevice { device_type: DLDeviceType(99), device_id: 0 };
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::DeviceMismatch { .. })));
    // The device id is not checked for host memory.
    t.device = DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 7 };
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Ok(()));
}

#[test]
fn rule_i2_device_id() {
    // CUDA ordinals are never negative: device and managed memory refuse them.
    let mut t = good();
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: -1 };
    let tensor = t.tensor();
    // SAFETY: metadata only.
    let device = unsafe { to_device_mdspan::<i32, 2, LayoutRight>(&tensor) };
    assert_eq!(device.map(|_| ()), Err(DlpackError::NegativeDeviceId { device: t.device }));
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: i32::MIN };
    let tensor = t.tensor();
    // SAFETY: metadata only.
    let managed = unsafe { to_managed_mdspan_mut::<i32, 2, LayoutStride>(&tensor) };
    assert_eq!(managed.map(|_| ()), Err(DlpackError::NegativeDeviceId { device: t.device }));
    // The device type is checked first.
    t.device = DLDevice { device_type: DLDeviceType::kDLCPU, device_id: -1 };
    let tensor = t.tensor();
    // SAFETY: metadata only.
    let device = unsafe { to_device_mdspan::<i32, 2, LayoutRight>(&tensor) };
    assert!(matches!(device, Err(DlpackError::DeviceMismatch { .. })));
    // A device view keeps a valid ordinal.
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 3 };
    let tensor = t.tensor();
    // SAFETY: metadata only.
    assert_eq!(unsafe { to_device_mdspan::<i32, 2, LayoutRight>(&tensor) }.unwrap().ordinal(), 3);
    // Host memory tolerates any id: JAX numbers its host devices, and no host view uses the id.
    for device_id in [0, 1, 7, -1, i32::MIN] {
        for device_type in [DLDeviceType::kDLCPU, DLDeviceType::kDLCUDAHost] {
            t.device = DLDevice { device_type, device_id };
            assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Ok(()), "{:?}", t.device);
        }
    }
}

#[test]
fn rule_i3_rank() {
    let mut t = good();
    assert_eq!(host::<i32, 3, LayoutRight>(&mut t), Err(DlpackError::RankMismatch { expected: 3, found: 2 }));
    t.ndim = -1;
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::RankMismatch { expected: 2, found: -1 }));
    t.ndim = i32::MIN;
    assert_eq!(host::<i32, 0, LayoutRight>(&mut t), Err(DlpackError::RankMismatch { expected: 0, found: i32::MIN }));
}

#[test]
fn rule_i4_dtype() {
    let mut t = good();
    assert_eq!(
        host::<f32, 2, LayoutRight>(&mut t),
        Err(DlpackError::DtypeMismatch { expected: f32::DTYPE, found: i32::DTYPE })
    );
    assert!(matches!(host::<u32, 2, LayoutRight>(&mut t), Err(DlpackError::DtypeMismatch { .. })));
    t.dtype = DLDataType { lanes: 2, ..i32::DTYPE };
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::DtypeMismatch { .. })));
    t.dtype = DLDataType { bits: 64, ..i32::DTYPE };
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::DtypeMismatch { .. })));
}

#[test]
fn rule_i5_subbyte_packing() {
    let bytes = [0x21u8, 0x43, 0x65];
    // A bare DLTensor of (17, 4, 1) is packed: padded single-FP4 storage must not read it.
    let mut t = Crafted::cpu(bytes.as_ptr().cast::<Float4E2m1fn>(), &[3], Some(&[1]));
    assert_eq!(
        host::<Float4E2m1fn, 1, LayoutRight>(&mut t),
        Err(DlpackError::SubbytePacking { element_padded: true, tensor_padded: false })
    );
    let padded = ImportOptions { subbyte_padded: true, ..ImportOptions::CURRENT };
    assert_eq!(with::<Float4E2m1fn, 1, LayoutRight>(&mut t, padded), Ok(()));
    // Packed pairs (PyTorch's float4_e2m1fn_x2) read packed data, and refuse padded data.
    let mut t = Crafted::cpu(bytes.as_ptr().cast::<Float4E2m1fnX2>(), &[3], Some(&[1]));
    assert_eq!(host::<Float4E2m1fnX2, 1, LayoutRight>(&mut t), Ok(()));
    assert_eq!(
        with::<Float4E2m1fnX2, 1, LayoutRight>(&mut t, padded),
        Err(DlpackError::SubbytePacking { element_padded: false, tensor_padded: true })
    );
}

#[test]
fn rule_i6_null_data() {
    let mut t = good();
    t.data = std::ptr::null_mut();
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::NullData));
    // Rank 0 has one element: null data is an error.
    let mut scalar = Crafted::cpu(std::ptr::null::<i32>(), &[], None);
    assert_eq!(host::<i32, 0, LayoutRight>(&mut scalar), Err(DlpackError::NullData));
    // Zero elements: null data is what DLPack asks for, and is accepted by every layout.
    let mut empty = Crafted::cpu(std::ptr::null::<i32>(), &[0, 3], Some(&[3, 1]));
    assert_eq!(host::<i32, 2, LayoutRight>(&mut empty), Ok(()));
    assert_eq!(host::<i32, 2, LayoutStride>(&mut empty), Ok(()));
    assert_eq!(host::<i32, 2, LayoutStrideRelaxed>(&mut empty), Ok(()));
    assert_eq!(host_mut::<i32, 2, LayoutLeft>(&mut empty), Ok(()));
}

#[test]
fn rule_i7_byte_offset() {
    let mut t = good();
    t.byte_offset = u64::MAX - 2;
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::ByteOffsetOverflow { byte_offset: u64::MAX - 2 }));
    // Relaxed: the offset must be whole elements.
    let mut t = Crafted::cpu(DATA.as_ptr(), &[2], Some(&[1]));
    t.byte_offset = 6;
    assert_eq!(
        host::<i32, 1, LayoutStrideRelaxed>(&mut t),
        Err(DlpackError::ByteOffsetNotElementMultiple { byte_offset: 6, element_size: 4 })
    );
    t.byte_offset = 8;
    assert_eq!(host::<i32, 1, LayoutStrideRelaxed>(&mut t), Ok(()));
    assert_eq!(host::<i32, 1, LayoutRight>(&mut t), Ok(()), "strict layouts fold it into the pointer");
}

#[test]
fn rule_i8_alignment() {
    let mut t = good();
    t.data = DATA.as_ptr().cast::<u8>().wrapping_add(1).cast_mut().cast();
    let address = t.data as usize;
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::Misaligned { address, alignment: 4 }));
    // A byte offset that is not a whole element misaligns the first element of strict layouts.
    let mut t = good();
    t.byte_offset = 2;
    assert_eq!(
        host::<i32, 2, LayoutStride>(&mut t),
        Err(DlpackError::Misaligned { address: DATA.as_ptr() as usize + 2, alignment: 4 })
    );
    // A 3-byte element (FP6 x4) needs no alignment beyond its bytes.
    let bytes = [0u8; 9];
    let mut t = Crafted::cpu(bytes.as_ptr().wrapping_add(1).cast::<dlspan::dtype::Float6E2m3fnX4>(), &[2], Some(&[1]));
    assert_eq!(host::<dlspan::dtype::Float6E2m3fnX4, 1, LayoutRight>(&mut t), Ok(()));
}

#[test]
fn rule_i10_shape() {
    let mut t = good();
    t.shape = None;
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::NullShape));
    let mut t = Crafted::cpu(DATA.as_ptr(), &[2, -3], Some(&[3, 1]));
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::NegativeExtent { axis: 1, extent: -3 }));
}

#[test]
fn rule_i11_null_strides_by_version() {
    let mut t = Crafted::cpu(DATA.as_ptr(), &[2, 3], None);
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::NullStrides { version: DLPackVersion::CURRENT }));
    let v1_2 = ImportOptions { version: DLPackVersion { major: 1, minor: 2 }, ..ImportOptions::CURRENT };
    assert!(matches!(with::<i32, 2, LayoutStride>(&mut t, v1_2), Err(DlpackError::NullStrides { .. })));
    // Before 1.2, null strides mean compact row-major.
    let v1_1 = ImportOptions { version: DLPackVersion { major: 1, minor: 1 }, ..ImportOptions::CURRENT };
    assert_eq!(with::<i32, 2, LayoutRight>(&mut t, v1_1), Ok(()));
    assert_eq!(with::<i32, 2, LayoutStride>(&mut t, ImportOptions::legacy()), Ok(()));
    // ...which layout_left accepts only when it coincides.
    assert!(matches!(
        with::<i32, 2, LayoutLeft>(&mut t, ImportOptions::legacy()),
        Err(DlpackError::StridesIncompatible { layout: LayoutKind::Left, .. })
    ));
    let mut column = Crafted::cpu(DATA.as_ptr(), &[3], None);
    assert_eq!(with::<i32, 1, LayoutLeft>(&mut column, ImportOptions::legacy()), Ok(()));
}

#[test]
fn rule_i13_compact_layouts() {
    let mut t = Crafted::cpu(DATA.as_ptr(), &[2, 3], Some(&[1, 2]));
    assert_eq!(
        host::<i32, 2, LayoutRight>(&mut t),
        Err(DlpackError::StridesIncompatible {
            layout: LayoutKind::Right,
            axis: 0,
            expected: 3,
            found: 1,
            accepted_by: LayoutKind::Stride
        })
    );
    assert_eq!(host::<i32, 2, LayoutLeft>(&mut t), Ok(()));
    let mut t = good();
    assert_eq!(
        host::<i32, 2, LayoutLeft>(&mut t),
        Err(DlpackError::StridesIncompatible {
            layout: LayoutKind::Left,
            axis: 0,
            expected: 1,
            found: 3,
            accepted_by: LayoutKind::Stride
        })
    );
    let mut padded_rows = Crafted::cpu(DATA.as_ptr(), &[2, 3], Some(&[4, 1]));
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut padded_rows), Err(DlpackError::StridesIncompatible { .. })));
}

#[test]
fn rule_i13_layout_stride_needs_positive_strides() {
    let mut t = Crafted::cpu(DATA.as_ptr(), &[2, 3], Some(&[0, 1]));
    assert_eq!(host::<i32, 2, LayoutStride>(&mut t), Err(DlpackError::NonPositiveStride { axis: 0, stride: 0 }));
    let mut t = Crafted::cpu(DATA.as_ptr(), &[2, 3], Some(&[3, -1]));
    t.byte_offset = 8;
    assert_eq!(host::<i32, 2, LayoutStride>(&mut t), Err(DlpackError::NonPositiveStride { axis: 1, stride: -1 }));
    assert_eq!(host::<i32, 2, LayoutStrideRelaxed>(&mut t), Ok(()));
}

#[test]
fn rule_i14_i15_overflow_and_negative_reach() {
    // Element offsets beyond isize.
    let mut t = Crafted::cpu(DATA.as_ptr(), &[1 << 62, 4], Some(&[4, 1]));
    assert_eq!(host::<i32, 2, LayoutStride>(&mut t), Err(DlpackError::SpanOverflow));
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::SpanOverflow));
    // Offsets fit, bytes do not.
    let mut t = Crafted::cpu(DATA.as_ptr(), &[1 << 61], Some(&[1]));
    assert_eq!(host::<i32, 1, LayoutRight>(&mut t), Err(DlpackError::SpanOverflow));
    // The range wraps around the address space.
    let high = std::ptr::without_provenance::<i32>(usize::MAX - 15);
    let mut t = Crafted::cpu(high, &[8], Some(&[1]));
    assert_eq!(host::<i32, 1, LayoutRight>(&mut t), Err(DlpackError::SpanOverflow));
    // Element count beyond isize with zero strides (a broadcast of nothing real).
    let mut t = Crafted::cpu(DATA.as_ptr(), &[1 << 40, 1 << 40], Some(&[0, 0]));
    assert_eq!(host::<i32, 2, LayoutStrideRelaxed>(&mut t), Err(DlpackError::SpanOverflow));
    // A stride whose product with its extent overflows.
    let mut t = Crafted::cpu(DATA.as_ptr(), &[3], Some(&[i64::MAX]));
    assert_eq!(host::<i32, 1, LayoutStride>(&mut t), Err(DlpackError::SpanOverflow));
    // A relaxed mapping reaching below its base.
    let mut t = Crafted::cpu(DATA.as_ptr(), &[5], Some(&[-1]));
    t.byte_offset = 12;
    assert_eq!(host::<i32, 1, LayoutStrideRelaxed>(&mut t), Err(DlpackError::NegativeReach { lowest: -1 }));
    // A unit axis's stride is never used, whatever it is.
    let mut t = Crafted::cpu(DATA.as_ptr(), &[1, 3], Some(&[i64::MAX, 1]));
    assert_eq!(host::<i32, 2, LayoutStride>(&mut t), Ok(()));
}

#[test]
fn static_extents_and_uniqueness() {
    let mut t = good();
    let tensor = t.tensor();
    // SAFETY: `tensor` describes `DATA`.
    let err = unsafe { <mdspan!(i32; 3, dyn)>::from_dltensor(&tensor) }.unwrap_err();
    assert_eq!(err, DlpackError::ExtentMismatch { axis: 0, expected: 3, found: 2 });
    let mut overlapping = Crafted::cpu(DATA.as_ptr(), &[3, 3], Some(&[1, 1]));
    assert_eq!(host::<i32, 2, LayoutStride>(&mut overlapping), Ok(()));
    assert_eq!(host_mut::<i32, 2, LayoutStride>(&mut overlapping), Err(DlpackError::OverlappingStrides));
}

#[test]
fn the_first_failing_rule_is_reported() {
    // device before rank, rank before dtype, dtype before data, data before shape, byte offset and
    // alignment before shape, shape before strides, strides before overflow.
    let mut t = good();
    t.device = DLDevice { device_type: DLDeviceType::kDLVulkan, device_id: 0 };
    t.ndim = 5;
    t.dtype = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1);
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::DeviceMismatch { .. })));
    t.device = DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 };
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::RankMismatch { .. })));
    t.ndim = 2;
    t.data = std::ptr::null_mut();
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::DtypeMismatch { .. })));
    t.dtype = i32::DTYPE;
    t.shape = None;
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::NullData)));
    t.data = DATA.as_ptr().cast_mut().cast();
    t.byte_offset = 1;
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::Misaligned { .. })));
    t.byte_offset = 0;
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::NullShape)));
    t.shape = Some(vec![2, 3]);
    t.strides = None;
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::NullStrides { .. })));
    t.strides = Some(vec![1, 1]);
    assert!(matches!(host::<i32, 2, LayoutRight>(&mut t), Err(DlpackError::StridesIncompatible { .. })));
    t.strides = Some(vec![3, 1]);
    assert_eq!(host::<i32, 2, LayoutRight>(&mut t), Ok(()));
}

#[test]
fn rule_i17_empty_tensors_are_normalised() {
    // A zero extent makes a tensor empty: it reaches nothing, so any strides are accepted (within
    // the layout's sign rule), and the view keeps the compact ones with no offset. Before, an empty
    // view kept whatever it was given, and consumers that move a pointer along an axis anyway
    // (ndarray) went out of bounds.
    let values = [1i32, 2];
    let mut t = Crafted::cpu(values.as_ptr(), &[0, 3], Some(&[1, -1000]));
    t.byte_offset = 8;
    let tensor = t.tensor();
    // SAFETY: the tensor has no elements; its metadata arrays are alive.
    let view = unsafe { to_host_mdspan::<i32, 2, LayoutStrideRelaxed>(&tensor) }.unwrap();
    assert_eq!((view.strides(), view.offset(), view.data_handle()), ([3, 1], 0, values.as_ptr()));
    assert_eq!((view.size(), view.iter().count(), view.to_vec().len()), (0, 0, 0));
    let dl = to_dlpack_tensor(&view).unwrap();
    assert_eq!((dl.get().data, dl.strides(), dl.get().byte_offset), (std::ptr::null_mut(), &[3, 1], 0));
    let mut t = Crafted::cpu(values.as_ptr(), &[4, 0], Some(&[isize::MAX as i64 / 2, 7]));
    let tensor = t.tensor();
    // SAFETY: as above.
    let view = unsafe { to_host_mdspan::<i32, 2, LayoutStride>(&tensor) }.unwrap();
    assert_eq!(view.strides(), [1, 1]);
    // The same for views of slices, sub-views and static layouts.
    let slice = HostMdspan::<u8, 2, LayoutStrideRelaxed>::from_slice_relaxed(&[0; 4], [0, 3], [1, -1000], 0).unwrap();
    assert_eq!((slice.strides(), slice.offset()), ([3, 1], 0));
    let data: Vec<i32> = (0..12).collect();
    let reversed = HostMdspan::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3, 4], [1, -3], 9).unwrap();
    let empty_rows = reversed.subview((1..1, ..));
    assert_eq!((empty_rows.strides(), empty_rows.offset()), ([4, 1], 0));
    let left = HostMdspan::<i32, 2, LayoutLeft>::from_slice(&[], [3, 0]).unwrap();
    assert_eq!(left.strides(), [1, 3]);
    // Extents whose product (a zero counted as 1) overflows isize are refused by every layout, as
    // NumPy and ndarray refuse such shapes even when empty.
    let mut t = Crafted::cpu(std::ptr::null::<u8>(), &[1 << 62, 4, 0], Some(&[0, 0, 0]));
    assert_eq!(host::<u8, 3, LayoutStrideRelaxed>(&mut t), Err(DlpackError::SpanOverflow));
    assert_eq!(host::<u8, 3, LayoutRight>(&mut t), Err(DlpackError::SpanOverflow));
    let mut t = Crafted::cpu(std::ptr::null::<u8>(), &[1 << 62, 2, 0], Some(&[1, 1, 1]));
    assert_eq!(host::<u8, 3, LayoutStride>(&mut t), Err(DlpackError::SpanOverflow));
    let mut t = Crafted::cpu(std::ptr::null::<u8>(), &[1 << 62, 1, 0], Some(&[1, 1, 1]));
    assert_eq!(host::<u8, 3, LayoutStride>(&mut t), Ok(()));
}

#[test]
fn empty_relaxed_views_carry_no_offset() {
    // Found by review: an empty relaxed mapping used to keep any offset, and `into_layout` then moved
    // the pointer by it. Offsets beyond isize are refused; others are normalised to 0.
    let data: [i32; 0] = [];
    assert_eq!(
        HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [0], [1], usize::MAX).unwrap_err(),
        DlpackError::SpanOverflow
    );
    let empty = HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [0], [1], 1000).unwrap();
    assert_eq!(empty.offset(), 0);
    let strict = empty.into_layout::<LayoutStride>().unwrap();
    assert_eq!(strict.data_handle(), data.as_ptr(), "the pointer does not move for an empty view");
    // The same through a DLTensor with a large byte offset.
    let values = [1i32, 2];
    let mut t = Crafted::cpu(values.as_ptr(), &[0], Some(&[1]));
    t.byte_offset = 1 << 40;
    let tensor = t.tensor();
    // SAFETY: the tensor has no elements; its metadata arrays are alive.
    let view = unsafe { to_host_mdspan::<i32, 1, LayoutStrideRelaxed>(&tensor) }.unwrap();
    assert_eq!((view.offset(), view.into_layout::<LayoutStride>().unwrap().data_handle()), (0, values.as_ptr()));
}

/// A `kDLBool` tensor of rank 1 over `bytes`: what NumPy exports for
/// `np.array(bytes, np.uint8).view(np.bool_)`.
fn bool_bytes(bytes: &[u8], shape: &[i64], strides: &[i64]) -> Crafted {
    let mut t = Crafted::cpu(bytes.as_ptr(), shape, Some(strides));
    t.dtype = bool::DTYPE;
    t
}

#[test]
fn rule_i18_bool_views_check_every_byte() {
    // NumPy bool arrays can hold any byte; a Rust `bool` holding 2 is undefined behaviour.
    let numpy = [2u8, 1, 0, 255];
    let mut t = bool_bytes(&numpy, &[4], &[1]);
    assert_eq!(host::<bool, 1, LayoutRight>(&mut t), Err(DlpackError::InvalidBool { found: 2 }));
    assert_eq!(host_mut::<bool, 1, LayoutStride>(&mut t), Err(DlpackError::InvalidBool { found: 2 }));
    // The ordered path (a legacy producer's null strides) checks too.
    t.strides = None;
    assert_eq!(
        with::<bool, 1, LayoutRight>(&mut t, ImportOptions::legacy()),
        Err(DlpackError::InvalidBool { found: 2 })
    );
    // `Bool` takes every byte, without reading any.
    let mut t = bool_bytes(&numpy, &[4], &[1]);
    let tensor = t.tensor();
    // SAFETY: the tensor describes `numpy`, alive and unwritten while the view lives.
    let view = unsafe { to_host_mdspan::<dtype::Bool, 1, LayoutRight>(&tensor) }.unwrap();
    assert_eq!(view.iter().map(|b| b.get()).collect::<Vec<_>>(), [true, true, false, true]);
    assert_eq!(view.iter().map(|b| b.to_bits()).collect::<Vec<_>>(), numpy);
    // The first byte that is neither 0 nor 1, in memory order.
    let mut t = bool_bytes(&[1, 0, 1, 7, 9], &[5], &[1]);
    assert_eq!(host::<bool, 1, LayoutRight>(&mut t), Err(DlpackError::InvalidBool { found: 7 }));
    let mut t = bool_bytes(&[1, 0, 1, 0], &[2, 2], &[2, 1]);
    assert_eq!(host::<bool, 2, LayoutRight>(&mut t), Ok(()));
}

#[test]
fn rule_i18_only_reached_elements_are_read() {
    // Gaps between strided elements may hold anything (a bool column of a record, say).
    let gaps = [1u8, 9, 0, 9, 1, 9];
    let mut t = bool_bytes(&gaps, &[3], &[2]);
    assert_eq!(host::<bool, 1, LayoutStride>(&mut t), Ok(()));
    let mut t = bool_bytes(&gaps, &[3], &[1]);
    assert_eq!(host::<bool, 1, LayoutStride>(&mut t), Err(DlpackError::InvalidBool { found: 9 }));
    // Reversed (negative stride, the offset at the last byte) and transposed views: each element
    // once, the gaps never.
    let mut t = bool_bytes(&gaps, &[3], &[-2]);
    t.byte_offset = 4;
    assert_eq!(host::<bool, 1, LayoutStrideRelaxed>(&mut t), Ok(()));
    let grid = [1u8, 0, 5, 0, 1, 5];
    let mut t = bool_bytes(&grid, &[2, 2], &[1, 3]); // column-major 2x2 in rows of 3
    assert_eq!(host::<bool, 2, LayoutStride>(&mut t), Ok(()));
    let mut t = bool_bytes(&grid, &[2, 3], &[1, 2]);
    assert_eq!(host::<bool, 2, LayoutStride>(&mut t), Err(DlpackError::InvalidBool { found: 5 }));
    // Broadcast: one byte seen through a zero stride.
    let one = [1u8, 3];
    let mut t = bool_bytes(&one, &[1000, 4], &[0, 0]);
    assert_eq!(host::<bool, 2, LayoutStrideRelaxed>(&mut t), Ok(()));
    t.byte_offset = 1;
    assert_eq!(host::<bool, 2, LayoutStrideRelaxed>(&mut t), Err(DlpackError::InvalidBool { found: 3 }));
    // A long run, with one bad byte near its end (the check reads in chunks).
    let mut long = vec![1u8; 100_000];
    long[99_998] = 0x80;
    let mut t = bool_bytes(&long, &[100, 1000], &[1000, 1]);
    assert_eq!(host::<bool, 2, LayoutRight>(&mut t), Err(DlpackError::InvalidBool { found: 0x80 }));
    let mut t = bool_bytes(&long, &[99_998], &[1]);
    assert_eq!(host::<bool, 1, LayoutRight>(&mut t), Ok(()));
}

#[test]
fn rule_i18_is_the_last_rule_and_reads_only_host_memory() {
    let bad = [2u8; 8];
    // A tensor that breaks another rule reports that rule: its elements are never read.
    let mut t = bool_bytes(&bad, &[2, 3], &[1, 2]);
    assert!(matches!(host::<bool, 2, LayoutRight>(&mut t), Err(DlpackError::StridesIncompatible { .. })));
    let mut t = bool_bytes(&bad, &[2, 3], &[3, 1]);
    t.ndim = 1;
    assert!(matches!(host::<bool, 2, LayoutRight>(&mut t), Err(DlpackError::RankMismatch { .. })));
    // No elements: nothing to read, whatever the data pointer.
    let mut t = bool_bytes(&bad, &[0, 3], &[3, 1]);
    assert_eq!(host::<bool, 2, LayoutRight>(&mut t), Ok(()));
    let mut t = bool_bytes(&bad, &[4, 0], &[1, 1]);
    t.data = std::ptr::null_mut();
    assert_eq!(host_mut::<bool, 2, LayoutStride>(&mut t), Ok(()));
    // Managed memory is read on the host: checked. Device memory is never read on the host (a
    // device address is not even dereferenceable here): not checked.
    let mut t = bool_bytes(&bad, &[8], &[1]);
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: 0 };
    let tensor = t.tensor();
    // SAFETY: `bad` stands in for managed memory, alive and unwritten while the view lives.
    let managed = unsafe { to_managed_mdspan::<bool, 1, LayoutRight>(&tensor) };
    assert_eq!(managed.map(|_| ()), Err(DlpackError::InvalidBool { found: 2 }));
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    t.data = std::ptr::without_provenance_mut(0x7f00_0000_0000);
    let tensor = t.tensor();
    // SAFETY: a device view is never read on the host; the metadata arrays are alive.
    let device = unsafe { to_device_mdspan::<bool, 1, LayoutRight>(&tensor) };
    assert_eq!(device.map(|d| d.extent(0)), Ok(8));
}
