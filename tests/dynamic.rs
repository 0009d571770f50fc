//! Dynamically typed views and the runtime dtype dispatch: `add`, `scale_` and `sum` written once
//! as generic Rust and run on `DLTensor`s of every scalar dtype (strided, transposed, reversed);
//! every construction rule of the dynamic view with its error; managed tensors (READ_ONLY, padded
//! sub-byte data); packed FP4 data; ranks beyond the inline storage; export round trips.

mod support;

use dlspan::dtype::*;
use dlspan::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLPackVersion, DLTensor};
use dlspan::half::{bf16, f16};
use dlspan::num_complex::Complex;
use dlspan::*;
use support::Crafted;

/// `out = a + b`, element by element: one generic body for every dtype and rank.
fn add(a: &DynMdspan<'_>, b: &DynMdspan<'_>, out: &mut DynMdspanMut<'_>) -> Result<(), DlpackError> {
    struct Add<'v, 'a, 'o> {
        a: &'v DynMdspan<'a>,
        b: &'v DynMdspan<'a>,
        out: &'v mut DynMdspanMut<'o>,
    }
    impl TensorVisitor for Add<'_, '_, '_> {
        type Output = Result<(), DlpackError>;
        fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
            let a = self.a.typed::<T, R, LayoutStrideRelaxed>()?;
            let b = self.b.typed::<T, R, LayoutStrideRelaxed>()?;
            let mut out = self.out.typed_mut::<T, R, LayoutStrideRelaxed>()?;
            out.zip_with(&a, |o, &x| *o = x)?;
            out.zip_with(&b, |o, &y| *o = o.add(y))
        }
    }
    if a.dtype() != out.dtype() || b.dtype() != out.dtype() {
        return Err(DlpackError::DtypeMismatch { expected: out.dtype(), found: a.dtype() });
    }
    dispatch_tensor(out.dtype(), out.rank(), Add { a, b, out })?
}

/// `x *= alpha` in place, computed in the accumulator type and rounded once.
fn scale_(x: &mut DynMdspanMut<'_>, alpha: f64) -> Result<(), DlpackError> {
    struct Scale<'v, 'a>(&'v mut DynMdspanMut<'a>, f64);
    impl TensorVisitor for Scale<'_, '_> {
        type Output = Result<(), DlpackError>;
        fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
            let alpha: T::Acc = cast(self.1);
            self.0
                .typed_mut::<T, R, LayoutStrideRelaxed>()?
                .for_each_unordered(|x| *x = T::from_acc(x.to_acc().mul(alpha)));
            Ok(())
        }
    }
    dispatch_tensor(x.dtype(), x.rank(), Scale(x, alpha))?
}

/// The sum in the accumulator type, as `Complex<f64>` (exact for every accumulator but the 128-bit
/// integers, which the test keeps small).
fn sum(x: &DynMdspan<'_>) -> Result<Complex<f64>, DlpackError> {
    struct Sum<'v, 'a>(&'v DynMdspan<'a>);
    impl TensorVisitor for Sum<'_, '_> {
        type Output = Result<Complex<f64>, DlpackError>;
        fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
            let view = self.0.typed::<T, R, LayoutStrideRelaxed>()?;
            Ok(cast(view.fold_unordered(T::Acc::ZERO, |acc, &x| acc.add(x.to_acc()))))
        }
        // FP6/FP4: padded data as above, packed data (DLPack's default) through packed views.
        fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
            if self.0.is_subbyte_padded() {
                return self.visit::<T, R>();
            }
            let view = self.0.typed_packed::<T, R, LayoutStrideRelaxed>()?;
            Ok(cast(view.iter().fold(T::Acc::ZERO, |acc, x| acc.add(x.to_acc()))))
        }
    }
    dispatch_tensor(x.dtype(), x.rank(), Sum(x))?
}

/// A (2, 3) tensor of `T` over `data` with `strides`, as a dynamic view (shared or mutable).
fn crafted<T: DlElement>(data: &[T], strides: [i64; 2], byte_offset: u64) -> Crafted {
    let mut t = Crafted::cpu(data.as_ptr(), &[2, 3], Some(&strides));
    t.byte_offset = byte_offset;
    t
}

/// Runs the three generic functions on `T` through DLTensors: `a` row-major, `b` column-major,
/// `out` with its rows reversed (negative stride, offset); checks each result against the same
/// arithmetic done on typed views.
fn ops_on<T: Numeric>() {
    let value = |k: usize| cast::<i32, T>(k as i32 % 5 + 1);
    let a_data: Vec<T> = (0..6).map(value).collect();
    let b_data: Vec<T> = (0..6).map(|k| value(k + 2)).collect();
    let mut out_data = vec![T::ZERO; 6];
    let size = size_of::<T>() as u64;
    let (mut a, mut b) = (crafted(&a_data, [3, 1], 0), crafted(&b_data, [1, 2], 0));
    let mut out = crafted(&out_data, [-3, 1], 3 * size);
    out.data = out_data.as_mut_ptr().cast();
    let (a_tensor, b_tensor, out_tensor) = (a.tensor(), b.tensor(), out.tensor());
    // SAFETY: the tensors describe the live vectors above; `out_data` is reached only through the
    // mutable view while it lives.
    let a_view = unsafe { DynMdspan::from_dltensor(&a_tensor) }.unwrap();
    // SAFETY: as above.
    let b_view = unsafe { DynMdspan::from_dltensor(&b_tensor) }.unwrap();
    // SAFETY: as above.
    let mut out_view = unsafe { DynMdspanMut::from_dltensor(&out_tensor) }.unwrap();
    add(&a_view, &b_view, &mut out_view).unwrap();
    scale_(&mut out_view, 2.0).unwrap();
    let total = sum(&out_view.as_view()).unwrap();

    let a_typed = HostMdspan::<T, 2>::from_slice(&a_data, [2, 3]).unwrap();
    let b_typed = HostMdspan::<T, 2, LayoutLeft>::from_slice(&b_data, [2, 3]).unwrap();
    let mut expected_total = T::Acc::ZERO;
    for i in 0..2 {
        for j in 0..3 {
            let two: T::Acc = cast(2.0f64);
            let expected = T::from_acc(a_typed[[i, j]].add(b_typed[[i, j]]).to_acc().mul(two));
            // Row i of `out` is memory row 1 - i.
            let found = out_data[(1 - i) * 3 + j];
            assert_eq!(found, expected, "{} at [{i}, {j}]", std::any::type_name::<T>());
            expected_total = expected_total.add(expected.to_acc());
        }
    }
    assert_eq!(total, cast::<T::Acc, Complex<f64>>(expected_total), "{}", std::any::type_name::<T>());
}

#[test]
fn generic_add_scale_and_sum_serve_every_scalar_dtype() {
    macro_rules! each {
        ($($ty:ty),* $(,)?) => {$( ops_on::<$ty>(); )*};
    }
    each!(
        bool,
        Bool,
        i8,
        i16,
        i32,
        i64,
        i128,
        u8,
        u16,
        u32,
        u64,
        u128,
        f16,
        bf16,
        f32,
        f64,
        Complex<f16>,
        Complex<f32>,
        Complex<f64>,
        Float8E3m4,
        Float8E4m3,
        Float8E4m3b11fnuz,
        Float8E4m3fn,
        Float8E4m3fnuz,
        Float8E5m2,
        Float8E5m2fnuz,
        Float8E8m0fnu,
    );
}

#[test]
fn generic_results_are_the_expected_numbers() {
    let a = [1.5f32, 2.0, -1.0, 4.0, 5.0, 6.0];
    let b = [0.5f32, 0.25, 1.0, 2.0, 3.0, 4.0];
    let mut out = [0f32; 6];
    let a_view: DynMdspan = HostMdspan::<f32, 2>::from_slice(&a, [2, 3]).unwrap().into();
    let b_view: DynMdspan = HostMdspan::<f32, 2>::from_slice(&b, [2, 3]).unwrap().into();
    let mut out_view: DynMdspanMut = HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3]).unwrap().into();
    add(&a_view, &b_view, &mut out_view).unwrap();
    scale_(&mut out_view, 0.5).unwrap();
    assert_eq!(sum(&out_view.as_view()).unwrap(), Complex::new(14.125, 0.0));
    assert_eq!(out, [1.0, 1.125, 0.0, 3.0, 4.0, 5.0]);
    // FP8 e4m3fn: 1.0 + 0.0625 rounds back to 1.0 (3 mantissa bits); sums accumulate in f32.
    let ones = [Float8E4m3fn::from_f32(1.0); 16];
    let small = [Float8E4m3fn::from_f32(0.0625); 16];
    let mut fp8_out = [Float8E4m3fn::default(); 16];
    let ones_view: DynMdspan = HostMdspan::<_, 1>::from_slice(&ones, [16]).unwrap().into();
    let small_view: DynMdspan = HostMdspan::<_, 1>::from_slice(&small, [16]).unwrap().into();
    let mut fp8_view: DynMdspanMut = HostMdspanMut::<_, 1>::from_slice(&mut fp8_out, [16]).unwrap().into();
    add(&ones_view, &small_view, &mut fp8_view).unwrap();
    assert_eq!(sum(&fp8_view.as_view()).unwrap(), Complex::new(16.0, 0.0));
    assert_eq!(sum(&small_view).unwrap(), Complex::new(1.0, 0.0));
    // bool adds as "or" and sums by counting.
    let flags = [true, false, true];
    assert_eq!(sum(&HostMdspan::<bool, 1>::from_slice(&flags, [3]).unwrap().into()).unwrap(), Complex::new(2.0, 0.0));
}

#[test]
fn dtypes_without_a_rust_type_and_mismatches_are_errors() {
    let data = [0u8; 16];
    let mut t = Crafted::cpu(data.as_ptr(), &[2], Some(&[1]));
    t.dtype = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 3); // float32x3: a layout, no Rust type
    let tensor = t.tensor();
    // SAFETY: the tensor describes `data` (12 bytes of 16).
    let view = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(sum(&view), Err(DlpackError::UnsupportedDtype { dtype: t.dtype }));
    assert_eq!(view.byte_range().len(), 24);
    let wide = [0u8; 8];
    let a: DynMdspan = HostMdspan::<u8, 1>::from_slice(&wide, [8]).unwrap().into();
    let mut out = [0u16; 8];
    let mut out: DynMdspanMut = HostMdspanMut::<u16, 1>::from_slice(&mut out, [8]).unwrap().into();
    assert!(matches!(add(&a, &a, &mut out), Err(DlpackError::DtypeMismatch { .. })));
    // Rank 9 is beyond the dispatch.
    let nine = [1u8; 1];
    let mut t = Crafted::cpu(nine.as_ptr(), &[1; 9], Some(&[1; 9]));
    let tensor = t.tensor();
    // SAFETY: one element of `nine`.
    let view = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(sum(&view), Err(DlpackError::UnsupportedRank { rank: 9, max: MAX_DISPATCH_RANK }));
}

/// A dynamic view of a crafted tensor, shared.
fn dynamic(tensor: &DLTensor) -> Result<DynMdspan<'_>, DlpackError> {
    // SAFETY: crafted tensors' data is the live static buffer or never read.
    unsafe { DynMdspan::<Host>::from_dltensor(tensor) }
}

static DATA: [i32; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

fn good() -> Crafted {
    Crafted::cpu(DATA.as_ptr(), &[2, 3], Some(&[3, 1]))
}

#[test]
fn every_construction_rule_has_its_error() {
    let mut t = good();
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    assert!(matches!(dynamic(&t.tensor()), Err(DlpackError::DeviceMismatch { .. })));
    let mut t = good();
    t.ndim = -1;
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::NegativeNdim { ndim: -1 });
    for dtype in [
        DLDataType { code: 2, bits: 0, lanes: 1 },
        DLDataType { code: 2, bits: 32, lanes: 0 },
        DLDataType { code: 2, bits: 12, lanes: 1 },
        // Codes DLPack gives one width, at another ("the consumer must stop importing"), in the
        // fast path's whole bytes and below them, and a code DLPack does not define.
        DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 8, 1),
        DLDataType::new(DLDataTypeCode::kDLFloat6_e2m3fn, 8, 1),
        DLDataType::new(DLDataTypeCode::kDLFloat6_e3m2fn, 4, 1),
        DLDataType::new(DLDataTypeCode::kDLFloat8_e4m3fn, 16, 1),
        DLDataType::new(DLDataTypeCode::kDLFloat8_e5m2, 4, 1),
        DLDataType::new(DLDataTypeCode::kDLBool, 1, 1),
        DLDataType::new(DLDataTypeCode::kDLBool, 16, 1),
        DLDataType { code: 99, bits: 16, lanes: 1 },
    ] {
        let mut t = good();
        t.dtype = dtype;
        assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::UnsupportedDtype { dtype }, "{dtype:?}");
    }
    let mut t = good();
    t.data = std::ptr::null_mut();
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::NullData);
    let mut t = good();
    t.shape = None;
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::NullShape);
    let mut t = good();
    t.shape = Some(vec![2, -3]);
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::NegativeExtent { axis: 1, extent: -3 });
    let mut t = good();
    t.strides = None;
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::NullStrides { version: DLPackVersion::CURRENT });
    let mut t = good();
    t.strides = Some(vec![-3, 1]);
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::NegativeReach { lowest: -3 });
    t.byte_offset = 12; // now the reversed rows start at element 3: fine
    assert!(dynamic(&t.tensor()).is_ok());
    let mut t = good();
    t.strides = Some(vec![i64::MAX / 2, 1]);
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::SpanOverflow);
    let mut t = good();
    t.data = std::ptr::without_provenance_mut(usize::MAX - 8);
    assert_eq!(dynamic(&t.tensor()).unwrap_err(), DlpackError::SpanOverflow);
    // Mutable views need unique strides.
    let mut t = good();
    t.strides = Some(vec![0, 1]);
    let tensor = t.tensor();
    // SAFETY: metadata only (refused).
    assert!(matches!(unsafe { DynMdspanMut::<Host>::from_dltensor(&tensor) }, Err(DlpackError::OverlappingStrides)));
    // Empty tensors: null data, any strides, any byte offset.
    let mut t = good();
    t.shape = Some(vec![0, 3]);
    t.strides = Some(vec![-1000, 7]);
    t.data = std::ptr::null_mut();
    t.byte_offset = u64::MAX;
    let tensor = t.tensor();
    let empty = dynamic(&tensor).unwrap();
    assert!(empty.is_empty() && empty.byte_range().is_empty());
}

#[test]
fn rules_needing_the_element_type_wait_for_typed() {
    // A byte offset that is not a whole number of elements: strict layouts take it, the relaxed
    // layout does not, and the dynamic view holds both possibilities.
    let mut t = good();
    t.byte_offset = 2;
    let tensor = t.tensor();
    let view = dynamic(&tensor).unwrap();
    assert!(matches!(view.typed::<i32, 2, LayoutRight>(), Err(DlpackError::Misaligned { .. })));
    assert_eq!(
        view.typed::<i32, 2, LayoutStrideRelaxed>().unwrap_err(),
        DlpackError::ByteOffsetNotElementMultiple { byte_offset: 2, element_size: 4 }
    );
    let mut t = good();
    t.byte_offset = 4;
    t.dtype = u16::DTYPE;
    t.shape = Some(vec![2, 2]);
    t.strides = Some(vec![2, 1]);
    let tensor = t.tensor();
    let halves = dynamic(&tensor).unwrap();
    assert!(halves.typed::<u16, 2, LayoutRight>().is_ok());
    assert!(matches!(halves.typed::<i16, 2, LayoutRight>(), Err(DlpackError::DtypeMismatch { .. })));
    assert!(matches!(halves.typed::<u16, 1, LayoutRight>(), Err(DlpackError::RankMismatch { expected: 1, found: 2 })));
    assert!(matches!(halves.typed::<u16, 2, LayoutLeft>(), Err(DlpackError::StridesIncompatible { .. })));
}

#[test]
fn managed_tensors_give_dynamic_views_and_keep_read_only() {
    let mut tensor = ManagedTensor::from_owner(vec![1u32, 2, 3, 4], [2, 2]).unwrap();
    {
        let mut view = tensor.view_mut_as::<DynMdspanMut>().unwrap();
        view.typed_mut::<u32, 2, LayoutRight>().unwrap()[[1, 1]] = 40;
    }
    assert_eq!(tensor.view_as::<DynMdspan>().unwrap().typed::<u32, 2, LayoutRight>().unwrap().to_vec(), [1, 2, 3, 40]);
    let mut shared = ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8, 2]), [2]).unwrap();
    assert!(shared.view_as::<DynMdspan>().is_ok());
    assert_eq!(shared.view_mut_as::<DynMdspanMut>().unwrap_err(), DlpackError::ReadOnly);
    // Padded FP4 (one value per byte) travels with its flag; the dynamic view knows it.
    let padded = ManagedTensor::from_owner(vec![Float4E2m1fn::from_f32(1.5); 3], [3]).unwrap();
    let view = padded.view_as::<DynMdspan>().unwrap();
    assert!(view.is_subbyte_padded());
    assert_eq!((view.element_bits(), view.byte_range().len()), (8, 3));
    assert_eq!(view.typed::<Float4E2m1fn, 1, LayoutRight>().unwrap()[[2]].to_f32(), 1.5);
    assert_eq!(view.to_dlpack_tensor().unwrap_err(), DlpackError::PaddedSubbyteExport);
}

#[test]
fn packed_fp4_is_measured_in_bits() {
    // Three FP4 values in two bytes, then a reversed view of the same three values.
    let packed = [0x21u8, 0x07];
    let mut t = Crafted::cpu(packed.as_ptr(), &[3], Some(&[1]));
    t.dtype = DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1);
    let tensor = t.tensor();
    // SAFETY: the tensor describes `packed`.
    let view = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) }.unwrap();
    let start = packed.as_ptr() as usize;
    assert_eq!((view.element_bits(), view.byte_range()), (4, start..start + 2));
    assert!(matches!(view.typed::<Float4E2m1fn, 1, LayoutRight>(), Err(DlpackError::SubbytePacking { .. })));
    let exported = view.to_dlpack_tensor().unwrap();
    assert_eq!((exported.get().dtype, exported.shape()), (t.dtype, &[3i64][..]));
    t.strides = Some(vec![-1]);
    t.byte_offset = 1; // element 2 of the packed row is 8 bits in: a whole byte offset
    let tensor = t.tensor();
    // SAFETY: as above.
    let reversed = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(reversed.byte_range(), start..start + 2);
    t.byte_offset = 0;
    let tensor = t.tensor();
    // SAFETY: as above (refused: elements below data).
    let below = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) };
    assert_eq!(below.unwrap_err(), DlpackError::NegativeReach { lowest: -2 });
}

#[test]
fn one_generic_sum_serves_packed_and_padded_sub_byte_data() {
    // FP4 0.5, 1.0, 6.0, -0.5, 3.0 packed low nibble first (5 values in 3 bytes), then padded.
    let packed = [0x21u8, 0x97, 0x05];
    let padded = [0x01u8, 0x02, 0x07, 0x09, 0x05];
    let fp4 = DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1);
    for (bytes, padded_flag) in [(&packed[..], false), (&padded[..], true)] {
        let mut t = Crafted::cpu(bytes.as_ptr(), &[5], Some(&[1]));
        t.dtype = fp4;
        let tensor = t.tensor();
        let options = ImportOptions { subbyte_padded: padded_flag, ..ImportOptions::CURRENT };
        // SAFETY: the tensor describes `bytes`.
        let view = unsafe { DynMdspan::<Host>::from_dltensor_with(&tensor, options) }.unwrap();
        assert_eq!(view.is_subbyte_padded(), padded_flag);
        assert_eq!(sum(&view).unwrap(), Complex::new(10.0, 0.0), "padded: {padded_flag}");
    }
    // FP6 e2m3fn 1.0, 7.5, -0.125 packed: 6-bit codes 0x08, 0x1F, 0x21 side by side.
    let codes = [0x08u32, 0x1F, 0x21];
    let bits = codes.iter().enumerate().fold(0u32, |word, (k, &c)| word | c << (6 * k));
    let fp6 = bits.to_le_bytes();
    let view = PackedMdspan::<Float6E2m3fn, 1>::from_bytes(&fp6[..3], [3]).unwrap();
    assert_eq!(sum(&view.into()).unwrap(), Complex::new(8.375, 0.0));
}

#[test]
fn ranks_beyond_inline_storage() {
    let data: Vec<u16> = (0..1 << 10).collect();
    let shape = [2usize; 10];
    let typed = HostMdspan::<u16, 10, LayoutLeft>::from_slice(&data, shape).unwrap();
    let view: DynMdspan = typed.into();
    assert_eq!((view.rank(), view.strides()[9], view.size()), (10, 512, 1024));
    let exported = view.to_dlpack_tensor().unwrap();
    let handle = exported.get();
    // SAFETY: the export describes `data`, alive and unwritten.
    let back = unsafe { to_host_mdspan::<u16, 10, LayoutLeft>(&handle) }.unwrap();
    assert_eq!(back.to_vec(), typed.to_vec());
    let again = view.clone().typed::<u16, 10, LayoutStride>().unwrap();
    assert_eq!(again[[1, 1, 1, 1, 1, 1, 1, 1, 1, 1]], 1023);
}

#[test]
fn typed_views_round_trip_through_dynamic_views() {
    let data: Vec<i64> = (0..12).collect();
    let relaxed = HostMdspan::<i64, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [3, 4], [-4, 1], 8).unwrap();
    let view: DynMdspan = relaxed.into();
    assert_eq!((view.byte_offset(), view.strides()), (64, &[-4isize, 1][..]));
    let start = data.as_ptr() as usize;
    assert_eq!(view.byte_range(), start..start + 96);
    let back = view.typed::<i64, 2, LayoutStrideRelaxed>().unwrap();
    assert_eq!(back.to_vec(), relaxed.to_vec());
    let tensor: DLTensor = *view.to_dlpack_tensor().unwrap().get();
    assert_eq!((tensor.ndim, tensor.byte_offset), (2, 64));
    // Device views too: metadata only.
    let gpu = std::ptr::without_provenance::<f32>(0x7f00_0000_0000);
    // SAFETY: a device address never read on the host.
    let device = unsafe { DeviceMdspan::<f32, 1>::from_raw_parts(gpu, Mapping::compact([4]).unwrap(), 2) };
    let view: DynMdspan<'_, Device> = device.into();
    assert_eq!((view.ordinal(), view.device().device_type), (2, DLDeviceType::kDLCUDA));
    assert_eq!(view.typed::<f32, 1, LayoutRight>().unwrap().ordinal(), 2);
}

#[test]
fn empty_tensors_with_null_data_get_aligned_pointers() {
    // A view of no elements still holds a pointer aligned for its type (a slice of it is made from
    // that pointer); 32-byte vectors need more than a word's alignment.
    let mut t = Crafted::cpu(std::ptr::null::<F64x4>(), &[0, 3], Some(&[3, 1]));
    t.data = std::ptr::null_mut();
    let tensor = t.tensor();
    // SAFETY: no element is read: the tensor is empty.
    let view = unsafe { to_host_mdspan::<F64x4, 2, LayoutRight>(&tensor) }.unwrap();
    assert_eq!(view.data_handle() as usize % 32, 0);
    assert_eq!(view.as_slice().map(<[F64x4]>::len), Some(0));
    let dynamic = dynamic(&tensor).unwrap();
    let typed = dynamic.typed::<F64x4, 2, LayoutStrideRelaxed>().unwrap();
    assert_eq!(typed.data_handle() as usize % 32, 0);
}

#[test]
fn padding_decides_the_size_of_sub_byte_vectors() {
    // (17, 4, 2): one byte packed (PyTorch's float4_e2m1fn_x2), two bytes padded.
    let data = [0u8; 8];
    let mut t = Crafted::cpu(data.as_ptr(), &[4], Some(&[1]));
    t.dtype = Float4E2m1fnX2::DTYPE;
    let tensor = t.tensor();
    // SAFETY: the tensor describes `data` (4 or 8 bytes of 8).
    let packed = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) }.unwrap();
    let padded = ImportOptions { subbyte_padded: true, ..ImportOptions::CURRENT };
    // SAFETY: as above.
    let padded = unsafe { DynMdspan::<Host>::from_dltensor_with(&tensor, padded) }.unwrap();
    assert_eq!((packed.element_bits(), packed.byte_range().len()), (8, 4));
    assert_eq!((padded.element_bits(), padded.byte_range().len()), (16, 8));
    assert!(packed.typed::<Float4E2m1fnX2, 1, LayoutRight>().is_ok());
}

/// An opaque boolean, as safe Rust may declare one: any byte goes in, and exports say `kDLBool`.
#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLBool, bits = 8)]
#[repr(transparent)]
struct Flag(u8);

/// A newtype of `bool`: the derive forwards `bool`'s validity, so its imports check alike.
#[derive(Clone, Copy, Debug, PartialEq, DlElement)]
#[repr(transparent)]
struct Truth(bool);

/// Two lanes of `bool` (`kDLBool` x2), and opaque storage of the same data type.
#[derive(Clone, Copy, Debug, PartialEq, DlElement)]
#[repr(C)]
struct TruthPair {
    a: bool,
    b: bool,
}

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLBool, bits = 8, lanes = 2)]
#[repr(transparent)]
struct FlagPair([u8; 2]);

#[test]
fn rule_i18_safe_exports_of_any_byte_are_checked_as_bool() {
    // Safe code exports byte 2 as `kDLBool` and views it back: `bool` is refused at every door,
    // `Bool` reads it as `true`.
    let mut tensor = ManagedTensor::from_owner(vec![Flag(1), Flag(2), Flag(0)], [3]).unwrap();
    assert_eq!(tensor.dtype(), bool::DTYPE);
    let invalid = Err(DlpackError::InvalidBool { found: 2 });
    let dynamic = tensor.view_as::<DynMdspan>().unwrap();
    assert_eq!(dynamic.typed::<bool, 1, LayoutRight>().map(|_| ()), invalid);
    assert_eq!(dynamic.typed::<Truth, 1, LayoutStrideRelaxed>().map(|_| ()), invalid);
    let flags = dynamic.typed::<Bool, 1, LayoutRight>().unwrap();
    assert_eq!(flags.to_vec(), [Bool::TRUE, Bool::TRUE, Bool::FALSE]);
    assert_eq!(flags[[1]].to_bits(), 2);
    assert_eq!(tensor.view::<bool, 1, LayoutRight>().map(|_| ()), invalid);
    assert_eq!(tensor.view::<Truth, 1, LayoutStride>().map(|_| ()), invalid);
    assert_eq!(tensor.view_mut::<bool, 1, LayoutRight>().map(|_| ()), invalid);
    assert_eq!(tensor.view_mut_as::<HostMdspanMut<'_, Truth, 1>>().map(|_| ()), invalid);
    {
        let mut dynamic = tensor.view_mut_as::<DynMdspanMut>().unwrap();
        assert_eq!(dynamic.typed_mut::<bool, 1, LayoutRight>().map(|_| ()), invalid);
        // Written through `Bool`, the byte becomes 1, and `bool` views are then valid.
        dynamic.typed_mut::<Bool, 1, LayoutRight>().unwrap()[[1]] = Bool::TRUE;
    }
    assert_eq!(tensor.view::<Truth, 1, LayoutRight>().unwrap().to_vec(), [Truth(true), Truth(true), Truth(false)]);
    assert_eq!(tensor.view_mut::<bool, 1, LayoutRight>().unwrap().to_vec(), [true, true, false]);
    // Lanes of `bool` check every byte of every element.
    let pairs = ManagedTensor::from_owner(vec![FlagPair([1, 0]), FlagPair([0, 3])], [2]).unwrap();
    assert_eq!(pairs.view::<TruthPair, 1, LayoutRight>().map(|_| ()), Err(DlpackError::InvalidBool { found: 3 }));
    let pairs = ManagedTensor::from_owner(vec![FlagPair([1, 0]), FlagPair([0, 1])], [2]).unwrap();
    let view = pairs.view::<TruthPair, 1, LayoutRight>().unwrap();
    assert_eq!(view[[1]], TruthPair { a: false, b: true });
}

#[test]
fn rule_n4_kdlbool_dispatches_to_bool_and_sums_as_numpy() {
    // `np.array([2, 1, 0, 255], np.uint8).view(np.bool_)`: NumPy sums it to 3 and `|` gives
    // [True, True, False, True].
    let numpy = [2u8, 1, 0, 255];
    let mut t = Crafted::cpu(numpy.as_ptr(), &[4], Some(&[1]));
    t.dtype = bool::DTYPE;
    let tensor = t.tensor();
    // SAFETY: the tensor describes `numpy`, alive and unwritten while the view lives.
    let view = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(sum(&view), Ok(Complex::new(3.0, 0.0)));
    assert_eq!(view.typed::<bool, 1, LayoutRight>().map(|_| ()), Err(DlpackError::InvalidBool { found: 2 }));
    let mut out = [Bool::from_bits(9); 4];
    let mut out_view: DynMdspanMut = HostMdspanMut::<Bool, 1>::from_slice(&mut out, [4]).unwrap().into();
    add(&view, &view, &mut out_view).unwrap();
    scale_(&mut out_view, 3.0).unwrap();
    assert_eq!(out.map(Bool::to_bits), [1, 1, 0, 1], "arithmetic writes 0 and 1");
    // The dispatch names `Bool` for kDLBool.
    struct Name;
    impl NumericVisitor for Name {
        type Output = &'static str;
        fn visit<T: Numeric>(self) -> &'static str {
            std::any::type_name::<T>()
        }
    }
    assert_eq!(dispatch(bool::DTYPE, Name), Ok(std::any::type_name::<Bool>()));
}
