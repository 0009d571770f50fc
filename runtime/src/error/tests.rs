//! Every variant of [`DlpackError`], produced through the public API at each place that constructs
//! it, and its message checked against the facts: it names the values it carries, and what it
//! claims holds for those values. The match in `claims` has no wildcard arm, so a new variant does
//! not compile until it is walked here too.

use super::*;
use crate::dtype::Float4E2m1fn;
use crate::ffi::{DLDataTypeCode, DLManagedTensorVersioned, DLTensor};
use crate::{
    CopyMode, DlElement, Dyn, HostMdspan, HostMdspanMut, ImportOptions, LayoutRight, LayoutStride, LayoutStrideRelaxed,
    ManagedTensor, Mapping, Mdspan, MdspanMut, Static, to_device_mdspan, to_dlpack_tensor, to_host_mdspan,
    to_host_mdspan_mut, to_managed_mdspan,
};
use std::sync::Arc;

/// A CPU `DLTensor` under construction, owning its shape and strides.
struct Tensor {
    data: *mut core::ffi::c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: Option<Vec<i64>>,
    strides: Option<Vec<i64>>,
    byte_offset: u64,
}

impl Tensor {
    fn cpu<T: DlElement>(data: &[T], shape: &[i64], strides: &[i64]) -> Self {
        Self {
            data: data.as_ptr().cast_mut().cast(),
            device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            ndim: shape.len() as i32,
            dtype: T::DTYPE,
            shape: Some(shape.to_vec()),
            strides: Some(strides.to_vec()),
            byte_offset: 0,
        }
    }

    fn raw(&mut self) -> DLTensor {
        DLTensor {
            data: self.data,
            device: self.device,
            ndim: self.ndim,
            dtype: self.dtype,
            shape: self.shape.as_mut().map_or(core::ptr::null_mut(), |s| s.as_mut_ptr()),
            strides: self.strides.as_mut().map_or(core::ptr::null_mut(), |s| s.as_mut_ptr()),
            byte_offset: self.byte_offset,
        }
    }

    /// Imports as a shared host view of `T`, rank `R`, layout `L`.
    fn host<T: DlElement, const R: usize, L: crate::Layout>(mut self) -> DlpackError {
        let raw = self.raw();
        // SAFETY: the data is a live slice of the test or never read (every case fails before the
        // view exists); shape and strides hold `ndim` entries whenever `ndim == R`.
        unsafe { to_host_mdspan::<T, R, L>(&raw) }.map(|_| ()).unwrap_err()
    }

    /// Imports as a mutable host view.
    fn host_mut<T: DlElement, const R: usize, L: crate::Layout>(mut self) -> DlpackError {
        let raw = self.raw();
        // SAFETY: as in `host`; the view is never built, so nothing is written.
        unsafe { to_host_mdspan_mut::<T, R, L>(&raw) }.map(|_| ()).unwrap_err()
    }

    fn with(mut self, options: ImportOptions) -> DlpackError {
        let raw = self.raw();
        // SAFETY: as in `host`.
        unsafe { Mdspan::<i32, 2, crate::Dims<2>, LayoutRight, crate::Host>::from_dltensor_with(&raw, options) }
            .map(|_| ())
            .unwrap_err()
    }
}

const DATA: [i32; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

fn good() -> Tensor {
    Tensor::cpu(&DATA, &[2, 3], &[3, 1])
}

/// Every error a public call can return, one or more per construction site.
fn produced() -> Vec<DlpackError> {
    let mut errors = Vec::new();

    // DeviceMismatch: each memory space.
    let mut t = good();
    t.device.device_type = DLDeviceType::kDLCUDA;
    errors.push(t.host::<i32, 2, LayoutRight>());
    let mut device_tensor = good();
    let mut raw = device_tensor.raw();
    // SAFETY: metadata only (alive in `device_tensor`), the conversion fails.
    errors.push(unsafe { to_device_mdspan::<i32, 2, LayoutRight>(&raw) }.map(|_| ()).unwrap_err());
    raw.device.device_type = DLDeviceType::kDLVulkan;
    // SAFETY: as above.
    errors.push(unsafe { to_managed_mdspan::<i32, 2, LayoutRight>(&raw) }.map(|_| ()).unwrap_err());

    // NegativeDeviceId: device and managed memory (host memory tolerates any id).
    let mut tensor = good();
    let mut raw = tensor.raw();
    raw.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: i32::MIN };
    // SAFETY: metadata only, the conversion fails.
    errors.push(unsafe { to_device_mdspan::<i32, 2, LayoutRight>(&raw) }.map(|_| ()).unwrap_err());
    raw.device = DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: -2 };
    // SAFETY: as above.
    errors.push(unsafe { to_managed_mdspan::<i32, 2, LayoutRight>(&raw) }.map(|_| ()).unwrap_err());

    // RankMismatch: larger, smaller and negative ndim.
    errors.push(good().host::<i32, 3, LayoutRight>());
    errors.push(good().host::<i32, 1, LayoutRight>());
    let mut t = good();
    t.ndim = -1;
    errors.push(t.host::<i32, 2, LayoutRight>());

    // DtypeMismatch and SubbytePacking.
    errors.push(good().host::<f32, 2, LayoutRight>());
    let nibbles = [0x21u8, 0x43];
    let mut t = Tensor::cpu(&nibbles, &[2], &[1]);
    t.dtype = Float4E2m1fn::DTYPE;
    errors.push(t.host::<Float4E2m1fn, 1, LayoutRight>());

    // NullData: with a shape that has elements, and with no shape at all.
    let mut t = good();
    t.data = core::ptr::null_mut();
    errors.push(t.host::<i32, 2, LayoutRight>());
    let mut t = good();
    t.data = core::ptr::null_mut();
    t.shape = None;
    errors.push(t.host::<i32, 2, LayoutRight>());

    // ByteOffsetOverflow, ByteOffsetNotElementMultiple, Misaligned (strict and relaxed addresses).
    let mut t = good();
    t.byte_offset = u64::MAX - 1;
    errors.push(t.host::<i32, 2, LayoutStride>());
    let mut t = good();
    t.byte_offset = 6;
    errors.push(t.host::<i32, 2, LayoutStrideRelaxed>());
    let mut t = good();
    t.byte_offset = 2;
    errors.push(t.host::<i32, 2, LayoutRight>());
    let mut t = good();
    t.data = t.data.cast::<u8>().wrapping_add(1).cast();
    errors.push(t.host::<i32, 2, LayoutStrideRelaxed>());

    // NullShape, NegativeExtent.
    let mut t = good();
    t.shape = None;
    errors.push(t.host::<i32, 2, LayoutRight>());
    errors.push(Tensor::cpu(&DATA, &[2, -3], &[3, 1]).host::<i32, 2, LayoutRight>());

    // ExtentMismatch: import into a static type, a static mapping, and a view conversion.
    let mut tensor = good();
    let raw = tensor.raw();
    // SAFETY: `raw` describes `DATA`; `tensor` keeps its shape and strides alive.
    let err = unsafe { <crate::mdspan!(i32; 3, dyn)>::from_dltensor(&raw) }.map(|_| ()).unwrap_err();
    errors.push(err);
    errors.push(Mapping::<2, (Static<2>, Dyn), LayoutRight>::compact([3, 2]).unwrap_err());
    let view = HostMdspan::<i32, 2>::from_slice(&DATA[..6], [3, 2]).unwrap();
    errors.push(view.with_extents::<(Static<2>, Dyn)>().map(|_| ()).unwrap_err());

    // NullStrides from a 1.2 and a 2.0 producer (both forbid them).
    for version in [DLPackVersion { major: 1, minor: 2 }, DLPackVersion { major: 2, minor: 0 }] {
        let mut t = good();
        t.strides = None;
        errors.push(t.with(ImportOptions { version, ..ImportOptions::CURRENT }));
    }

    // StridesIncompatible (import and mapping), NonPositiveStride (import and slice).
    errors.push(Tensor::cpu(&DATA, &[2, 3], &[1, 2]).host::<i32, 2, LayoutRight>());
    errors.push(Tensor::cpu(&DATA, &[2, 3], &[0, 1]).host::<i32, 2, LayoutRight>()); // broadcast rows
    errors.push(Mapping::<2, crate::Dims<2>, crate::LayoutLeft>::from_strides([2, 3], [3, 1]).unwrap_err());
    errors.push(Tensor::cpu(&DATA, &[2, 3], &[0, 1]).host::<i32, 2, LayoutStride>());
    errors.push(HostMdspan::<i32, 1, LayoutStride>::from_slice_strided(&DATA, [2], [-1]).map(|_| ()).unwrap_err());

    // SpanOverflow: offsets beyond isize, bytes beyond isize, a wrapping range, compact strides.
    errors.push(Tensor::cpu(&DATA, &[1 << 62, 4], &[4, 1]).host::<i32, 2, LayoutStride>());
    errors.push(Tensor::cpu(&DATA, &[1 << 61], &[1]).host::<i32, 1, LayoutRight>());
    let mut t = Tensor::cpu(&DATA, &[8], &[1]);
    t.data = (usize::MAX - 15) as *mut core::ffi::c_void;
    errors.push(t.host::<i32, 1, LayoutRight>());
    errors.push(HostMdspan::<i32, 2>::from_slice(&DATA, [usize::MAX / 2, 4]).map(|_| ()).unwrap_err());
    errors.push(ManagedTensor::from_owner(vec![0u8; 4], [usize::MAX / 2, 4]).map(|_| ()).unwrap_err());

    // NegativeReach: import, slice, owner.
    let mut t = Tensor::cpu(&DATA, &[5], &[-1]);
    t.byte_offset = 12;
    errors.push(t.host::<i32, 1, LayoutStrideRelaxed>());
    errors.push(
        HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&DATA, [3], [-2], 3).map(|_| ()).unwrap_err(),
    );
    errors.push(ManagedTensor::from_owner_strided(vec![0u8; 6], [6], [-1], 2).map(|_| ()).unwrap_err());

    // OverlappingStrides: import, slice, raw parts, managed view.
    errors.push(Tensor::cpu(&DATA, &[3, 3], &[1, 1]).host_mut::<i32, 2, LayoutStride>());
    let mut data = [0i32; 4];
    errors.push(
        HostMdspanMut::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut data, [2, 2], [0, 1], 0)
            .map(|_| ())
            .unwrap_err(),
    );
    let broadcast = Mapping::<1, crate::Dims<1>, LayoutStrideRelaxed>::from_strides([3], [0]).unwrap();
    // SAFETY: `data` holds the one element the mapping reaches; the view is refused, so never used.
    let raw_parts = unsafe { MdspanMut::<i32, 1, _, _, crate::Host>::from_raw_parts(data.as_mut_ptr(), broadcast, ()) };
    errors.push(raw_parts.map(|_| ()).unwrap_err());
    let mut shared = ManagedTensor::from_owner_strided(vec![1u8, 2], [3, 2], [0, 1], 0).unwrap();
    errors.push(shared.view_mut::<u8, 2, LayoutStrideRelaxed>().map(|_| ()).unwrap_err());

    // InvalidBool: a `bool` view of bytes NumPy may hold (import, and a managed tensor's view).
    let bytes = [1u8, 0, 2, 255];
    let mut t = Tensor::cpu(&bytes, &[4], &[1]);
    t.dtype = bool::DTYPE;
    errors.push(t.host::<bool, 1, LayoutRight>());
    let flags = ManagedTensor::from_owner(vec![crate::dtype::Bool::from_bits(7)], [1]).unwrap();
    errors.push(flags.view::<bool, 1, LayoutRight>().map(|_| ()).unwrap_err());

    // LengthMismatch: slices and owners, longer and shorter than the extents.
    errors.push(HostMdspan::<i32, 2>::from_slice(&DATA, [2, 3]).map(|_| ()).unwrap_err());
    errors.push(HostMdspan::<i32, 2>::from_slice(&DATA, [3, 3]).map(|_| ()).unwrap_err());
    errors.push(HostMdspanMut::<i32, 1>::from_slice(&mut data, [3]).map(|_| ()).unwrap_err());
    errors.push(ManagedTensor::from_owner(vec![0u8; 25], [4, 4]).map(|_| ()).unwrap_err());
    errors.push(ManagedTensor::from_owner(vec![0u8; 15], [4, 4]).map(|_| ()).unwrap_err());

    // TooFewElements: slices and owners.
    errors.push(HostMdspan::<i32, 2, LayoutStride>::from_slice_strided(&DATA, [2, 3], [6, 1]).map(|_| ()).unwrap_err());
    let mapping = Mapping::<1, crate::Dims<1>, LayoutRight>::compact([9]).unwrap();
    errors.push(HostMdspan::<i32, 1>::from_slice_mapping(&DATA, mapping).map(|_| ()).unwrap_err());
    errors.push(ManagedTensor::from_owner_strided(vec![0u8; 6], [2, 3], [4, 1], 0).map(|_| ()).unwrap_err());

    // ShapeMismatch.
    let x = HostMdspan::<i32, 1>::from_slice(&DATA[..3], [3]).unwrap();
    let mut y = [0i32; 4];
    let mut y = HostMdspanMut::<i32, 1>::from_slice(&mut y, [4]).unwrap();
    errors.push(y.zip_with(&x, |_, _| ()).unwrap_err());

    // KernelShapeMismatch: an input of 3 elements for an output of 4 (a read view broadcasts
    // only from extent 1).
    let (a, b) = ([1i32; 3], [1i32; 4]);
    let mut out = [0i32; 4];
    let a = HostMdspan::<i32, 1>::from_slice(&a, [3]).unwrap();
    let b = HostMdspan::<i32, 1>::from_slice(&b, [4]).unwrap();
    let mut out = HostMdspanMut::<i32, 1>::from_slice(&mut out, [4]).unwrap();
    errors.push(crate::kernel::builtin::add.run(crate::kernel::Cpu, &a, &b, &mut out).unwrap_err());
    // KernelBroadcastRefused: an input of extent 1, which an exact run does not broadcast.
    let one = HostMdspan::<i32, 1>::from_slice(&DATA[..1], [1]).unwrap();
    errors.push(crate::kernel::builtin::add.run_exact(crate::kernel::Cpu, &one, &b, &mut out).unwrap_err());

    // SubviewOutOfBounds: reversed, beyond the extent, an inclusive end of usize::MAX, an excluded
    // start of usize::MAX; shared and mutable.
    let view = HostMdspan::<i32, 2>::from_slice(&DATA[..6], [2, 3]).unwrap();
    let reversed = (core::ops::Bound::Included(2), core::ops::Bound::Excluded(1));
    errors.push(view.try_subview((0..2, reversed)).map(|_| ()).unwrap_err());
    errors.push(view.try_subview([0..2, 1..4]).map(|_| ()).unwrap_err());
    errors.push(view.try_subview((.., 1..=usize::MAX)).map(|_| ()).unwrap_err());
    let excluded = (core::ops::Bound::Excluded(usize::MAX), core::ops::Bound::Unbounded);
    errors.push(view.try_subview((.., excluded)).map(|_| ()).unwrap_err());
    let mut data = [0i32; 4];
    let view = HostMdspanMut::<i32, 1>::from_slice(&mut data, [4]).unwrap();
    errors.push(view.try_into_subview((3..5,)).map(|_| ()).unwrap_err());

    // LanesNotGroupable: the last axis strided, another axis not a whole number of groups.
    let twelve = [0i32; 12];
    let image = HostMdspan::<i32, 3>::from_slice(&twelve, [2, 2, 3]).unwrap();
    let strided = HostMdspan::<i32, 2, LayoutStride>::from_slice_strided(&twelve, [2, 2], [6, 2]).unwrap();
    errors.push(strided.group_lanes::<crate::dtype::I32x2, 1, crate::Dims<1>, LayoutStride>().map(|_| ()).unwrap_err());
    errors.push(
        image
            .subview((.., .., 0..2))
            .group_lanes::<crate::dtype::I32x2, 2, crate::Dims<2>, LayoutStride>()
            .map(|_| ())
            .unwrap_err(),
    );

    // UncheckedWrites: `dtype::Bool` writes over Rust `bool`s, through a dynamic view and as lanes.
    let mut flags = [false; 2];
    let dynamic: crate::DynMdspanMut<'_> = HostMdspanMut::<bool, 1>::from_slice(&mut flags, [2]).unwrap().into();
    errors.push(dynamic.into_typed::<crate::dtype::Bool, 1, LayoutRight>().map(|_| ()).unwrap_err());
    let mut flags = [false; 4];
    let pairs = HostMdspanMut::<bool, 2>::from_slice(&mut flags, [2, 2]).unwrap();
    errors.push(pairs.into_grouped_lanes::<AnyFlags, 1, crate::Dims<1>, LayoutRight>().map(|_| ()).unwrap_err());

    // PaddedSubbyteExport.
    let padded = [Float4E2m1fn::from_bits(1); 2];
    let view = HostMdspan::<Float4E2m1fn, 1>::from_slice(&padded, [2]).unwrap();
    errors.push(to_dlpack_tensor(&view).map(|_| ()).unwrap_err());

    // UnsupportedVersion (the deleter is null: nothing to free), NullManagedTensor.
    let mut other_major = DLManagedTensorVersioned {
        version: DLPackVersion { major: 2, minor: 1 },
        manager_ctx: core::ptr::null_mut(),
        deleter: None,
        flags: 0,
        dl_tensor: DLTensor::default(),
    };
    // SAFETY: a live tensor without a deleter; only its version is read.
    errors.push(unsafe { ManagedTensor::from_raw_versioned(&mut other_major) }.map(|_| ()).unwrap_err());
    // SAFETY: null is allowed and refused.
    errors.push(unsafe { ManagedTensor::from_raw_versioned(core::ptr::null_mut()) }.map(|_| ()).unwrap_err());
    // SAFETY: as above.
    errors.push(unsafe { ManagedTensor::from_raw_legacy(core::ptr::null_mut()) }.map(|_| ()).unwrap_err());

    // ReadOnly: a mutable view of a read-only export, and its legacy hand-off.
    let mut read_only = ManagedTensor::from_owner(Arc::<[u8]>::from([1u8, 2]), [2]).unwrap();
    errors.push(read_only.view_mut::<u8, 1, LayoutRight>().map(|_| ()).unwrap_err());
    errors.push(read_only.into_raw_legacy().map(|_| ()).unwrap_err().error());
    // Aliased: a mutable view of an import others may reach too.
    let mut aliased = ManagedTensor::from_owner(vec![1u8, 2], [2]).unwrap().into_aliased();
    errors.push(aliased.view_mut::<u8, 1, LayoutRight>().map(|_| ()).unwrap_err());

    // CopyRequired.
    let view = HostMdspan::<i32, 1>::from_slice(&DATA, [8]).unwrap();
    errors.push(view.to_managed_tensor(CopyMode::Never).map(|_| ()).unwrap_err());

    // AllocationFailed: a size that overflows isize.
    errors.push(crate::AlignedBuffer::<f64>::try_zeroed(usize::MAX / 4).map(|_| ()).unwrap_err());

    // Underaligned: a view type stating more alignment than the first element has.
    let buffer = crate::AlignedBuffer::<u8, 64>::zeroed(16);
    let view = HostMdspan::<u8, 1>::from_slice(&buffer[4..], [12]).unwrap();
    errors.push(crate::Aligned::<_, 16>::new(view).map(|_| ()).unwrap_err());
    // UnsupportedDtype: a dispatch of float128, and a dynamic view of a 12-bit type.
    struct Size;
    impl crate::dtype::NumericVisitor for Size {
        type Output = usize;
        fn visit<T: crate::dtype::Numeric>(self) -> usize {
            size_of::<T>()
        }
    }
    errors.push(crate::dtype::dispatch(DLDataType::new(DLDataTypeCode::kDLFloat, 128, 1), Size).unwrap_err());
    let mut t = good();
    t.dtype = DLDataType::new(DLDataTypeCode::kDLInt, 12, 1);
    let raw = t.raw();
    // SAFETY: as in `Tensor::host`.
    errors.push(unsafe { crate::DynMdspan::<crate::Host>::from_dltensor(&raw) }.map(|_| ()).unwrap_err());
    // UnsupportedRank.
    struct Rank;
    impl crate::dtype::RankVisitor for Rank {
        type Output = usize;
        fn visit<const R: usize>(self) -> usize {
            R
        }
    }
    errors.push(crate::dtype::dispatch_rank(12, Rank).unwrap_err());
    // DtypeNotAccepted: an integer dtype given to the float dispatch.
    struct Float;
    impl crate::kernel::FloatVisitor for Float {
        type Output = ();
        fn visit<T: crate::kernel::Float, const R: usize>(self) {}
    }
    errors.push(crate::kernel::dispatch_float(DLDataType::new(DLDataTypeCode::kDLInt, 32, 1), 1, Float).unwrap_err());
    // PackedByteLength: too few bytes for a packed view, too many for a packed export.
    let bytes = [0u8; 1];
    let packed = crate::PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3]);
    errors.push(packed.map(|_| ()).unwrap_err());
    errors.push(ManagedTensor::from_packed::<Float4E2m1fn, _, 1>(vec![0u8; 3], [3]).map(|_| ()).unwrap_err());
    // NegativeNdim: a dynamic view has no rank to compare with.
    let mut t = good();
    t.ndim = -2;
    let raw = t.raw();
    // SAFETY: as in `Tensor::host`.
    errors.push(unsafe { crate::DynMdspan::<crate::Host>::from_dltensor(&raw) }.map(|_| ()).unwrap_err());

    // A data type code the crate knows but no view asked for reads well too.
    let mut t = good();
    t.dtype = DLDataType::new(DLDataTypeCode::kDLFloat8_e4m3fn, 8, 1);
    errors.push(t.host::<i32, 2, LayoutRight>());
    errors
}

/// Checks that `err`'s message names its values and that what it claims holds; returns the
/// variant's index below [`VARIANTS`].
fn claims(err: &DlpackError) -> usize {
    let text = err.to_string();
    let names = |value: &dyn fmt::Display| {
        let value = value.to_string();
        assert!(text.contains(&value), "{text:?} does not name {value}");
    };
    match *err {
        DlpackError::DeviceMismatch { expected, found } => {
            names(&format_args!("{:?}:{}", found.device_type, found.device_id));
            names(&format_args!("{expected:?}"));
            assert_ne!(found.device_type, expected);
            0
        }
        DlpackError::NegativeDeviceId { device } => {
            names(&device.device_id);
            names(&format_args!("{:?}", device.device_type));
            assert!(device.device_id < 0);
            1
        }
        DlpackError::RankMismatch { expected, found } => {
            names(&expected);
            names(&found);
            assert!(usize::try_from(found) != Ok(expected));
            2
        }
        DlpackError::DtypeMismatch { expected, found } => {
            names(&expected);
            names(&found);
            assert_ne!(expected, found);
            3
        }
        DlpackError::SubbytePacking { element_padded, tensor_padded } => {
            assert_ne!(element_padded, tensor_padded);
            assert!(text.contains("padded") && text.contains("packed"));
            4
        }
        DlpackError::NullData => {
            assert!(text.contains("null"));
            5
        }
        DlpackError::ByteOffsetOverflow { byte_offset } => {
            names(&byte_offset);
            6
        }
        DlpackError::ByteOffsetNotElementMultiple { byte_offset, element_size } => {
            names(&byte_offset);
            names(&element_size);
            assert_ne!(byte_offset % element_size as u64, 0);
            7
        }
        DlpackError::Misaligned { address, alignment } => {
            names(&format_args!("{address:#x}"));
            names(&alignment);
            assert_ne!(address % alignment, 0);
            8
        }
        DlpackError::NullShape => {
            assert!(text.contains("null"));
            9
        }
        DlpackError::NegativeExtent { axis, extent } => {
            names(&axis);
            names(&extent);
            assert!(extent < 0);
            10
        }
        DlpackError::ExtentMismatch { axis, expected, found } => {
            names(&axis);
            names(&expected);
            names(&found);
            assert_ne!(expected, found);
            11
        }
        DlpackError::NullStrides { version } => {
            names(&format_args!("{}.{}", version.major, version.minor));
            assert!(version >= DLPackVersion { major: 1, minor: 2 });
            12
        }
        DlpackError::StridesIncompatible { layout, axis, expected, found, accepted_by } => {
            names(&layout);
            names(&axis);
            names(&expected);
            names(&found);
            assert_ne!(expected, found);
            // The suggestion: the strided layout that takes these strides.
            let relaxed = text.contains("LayoutStrideRelaxed takes");
            assert!(relaxed || text.contains("LayoutStride takes"), "{text:?} suggests no layout");
            assert_eq!(relaxed, accepted_by == LayoutKind::StrideRelaxed, "{text:?}");
            13
        }
        DlpackError::NonPositiveStride { axis, stride } => {
            names(&axis);
            names(&stride);
            assert!(stride <= 0);
            assert!(text.contains("LayoutStrideRelaxed takes"), "{text:?} suggests no layout");
            14
        }
        DlpackError::SpanOverflow => 15,
        DlpackError::NegativeReach { lowest } => {
            names(&lowest);
            assert!(lowest < 0);
            16
        }
        DlpackError::OverlappingStrides => 17,
        DlpackError::LengthMismatch { expected, found } => {
            names(&expected);
            names(&found);
            assert_ne!(expected, found);
            assert!(!text.contains("short") && !text.contains("long"), "{text:?} claims a direction");
            18
        }
        DlpackError::TooFewElements { required, found } => {
            names(&required);
            names(&found);
            assert!(found < required);
            19
        }
        DlpackError::ShapeMismatch { axis, expected, found } => {
            names(&axis);
            names(&expected);
            names(&found);
            assert_ne!(expected, found);
            20
        }
        DlpackError::SubviewOutOfBounds { axis, start, end, extent } => {
            names(&axis);
            names(&start);
            names(&end);
            if text.contains("reversed") {
                assert!(start > end);
            } else {
                names(&extent);
                assert!(text.contains("exceeds") && end > extent);
            }
            21
        }
        DlpackError::PaddedSubbyteExport => 22,
        DlpackError::UnsupportedVersion { version } => {
            names(&format_args!("{}.{}", version.major, version.minor));
            assert_ne!(version.major, 1);
            23
        }
        DlpackError::NullManagedTensor => 24,
        DlpackError::ReadOnly => 25,
        DlpackError::CopyRequired => 26,
        DlpackError::AllocationFailed { len, element_size, alignment } => {
            names(&len);
            names(&element_size);
            names(&alignment);
            27
        }
        DlpackError::UnsupportedDtype { dtype } => {
            names(&dtype);
            assert!(
                crate::dtype::storage_bits(dtype, false).is_none() || dtype.bits > 64 || dtype.lanes > 4,
                "{dtype} has a built-in type"
            );
            28
        }
        DlpackError::UnsupportedRank { rank, max } => {
            names(&rank);
            names(&max);
            assert!(rank > max);
            29
        }
        DlpackError::NegativeNdim { ndim } => {
            names(&ndim);
            assert!(ndim < 0);
            30
        }
        DlpackError::Underaligned { address, required, found } => {
            names(&format_args!("{address:#x}"));
            names(&required);
            names(&found);
            assert!(found < required && address % found == 0 && address % (2 * found) != 0);
            31
        }
        DlpackError::PackedByteLength { required, found } => {
            names(&required);
            names(&found);
            assert_ne!(required, found);
            32
        }
        DlpackError::Aliased => {
            assert!(text.contains("no view"));
            33
        }
        DlpackError::InvalidBool { found } => {
            names(&found);
            assert!(found > 1);
            assert!(text.contains("Bool"), "{text:?} does not name the type that takes any byte");
            34
        }
        DlpackError::LanesNotGroupable { axis, stride, lanes } => {
            names(&axis);
            names(&stride);
            names(&lanes);
            assert!(text.contains("adjacent") && text.contains("copy"), "{text:?}");
            35
        }
        DlpackError::UncheckedWrites => {
            assert!(text.contains("dtype::Bool") && text.contains("as bool"), "{text:?}");
            36
        }
        DlpackError::KernelShapeMismatch { view, axis, expected, found } => {
            assert!(text.contains(&format!("`{view}`")), "{text:?} does not name the view");
            names(&axis);
            names(&expected);
            names(&found);
            assert_ne!(expected, found);
            37
        }
        DlpackError::DtypeNotAccepted { dtype, accepted } => {
            names(&dtype);
            assert!(text.contains(accepted), "{text:?} does not say what the operation takes");
            38
        }
        DlpackError::KernelBroadcastRefused { view, axis, expected } => {
            assert!(text.contains(&format!("`{view}`")), "{text:?} does not name the view");
            names(&axis);
            names(&expected);
            assert!(expected != 1 && text.contains("extent 1"), "{text:?}");
            39
        }
    }
}

/// Two lanes of `dtype::Bool`, which take any byte.
#[derive(Clone, Copy, crate::DlElement)]
#[repr(C)]
struct AnyFlags {
    a: crate::dtype::Bool,
    b: crate::dtype::Bool,
}

/// The number of variants: the arms of `claims`.
const VARIANTS: usize = 40;

#[test]
fn every_variant_is_produced_and_its_message_holds() {
    let mut seen = [false; VARIANTS];
    for err in produced() {
        seen[claims(&err)] = true;
    }
    let missing: Vec<usize> = (0..VARIANTS).filter(|&v| !seen[v]).collect();
    assert!(missing.is_empty(), "variants never produced through the API: {missing:?}");
}

#[test]
fn errors_stay_small() {
    // Every fallible import returns `Result<view, DlpackError>`: a larger error makes every
    // successful import move more bytes.
    assert!(size_of::<DlpackError>() <= 40, "{} bytes", size_of::<DlpackError>());
}

#[test]
fn host_device_mismatch_names_pinned_memory() {
    let err = DlpackError::DeviceMismatch {
        expected: DLDeviceType::kDLCPU,
        found: DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 },
    };
    assert!(err.to_string().contains("kDLCUDAHost"), "host views accept pinned memory too: {err}");
}
