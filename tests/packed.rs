//! Packed sub-byte views: FP4 and FP6 tensors with odd element counts imported, read, written and
//! exported with DLPack's packed dtypes; managed exports of packed data (zero-copy and copies,
//! through the raw C form and back); undersized buffers; device views; strided, reversed and
//! byte-offset layouts; and random packed tensors read and written against a bit-by-bit oracle.

mod support;

use dlspan::dtype::*;
use dlspan::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLTensor};
use dlspan::*;
use proptest::prelude::*;
use support::Crafted;

fn fp4(bytes: &[u8], shape: &[i64], strides: &[i64]) -> Crafted {
    let mut t = Crafted::cpu(bytes.as_ptr(), shape, Some(strides));
    t.dtype = Float4E2m1fn::DTYPE;
    t
}

fn values<T: Copy>(values: &[T], f: impl Fn(T) -> f32) -> Vec<f32> {
    values.iter().map(|&v| f(v)).collect()
}

#[test]
fn fp4_three_values_in_two_bytes_round_trip() {
    // 0.5, 1.0 | 6.0 and an unused high nibble that must survive every write.
    let mut bytes = [0x21u8, 0xD7];
    let mut t = fp4(&bytes, &[3], &[1]);
    t.data = bytes.as_mut_ptr().cast();
    let tensor = t.tensor();
    assert_eq!(tensor.dtype, DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1));
    {
        // SAFETY: the tensor describes `bytes`, read only while `view` lives.
        let view = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor(&tensor) }.unwrap();
        assert_eq!(values(&view.to_vec(), Float4E2m1fn::to_f32), [0.5, 1.0, 6.0]);
        assert_eq!(view.byte_len(), 2);
    }
    {
        // SAFETY: the tensor describes `bytes`, reached only through `view` while it lives.
        let mut view = unsafe { PackedMdspanMut::<Float4E2m1fn, 1>::from_dltensor(&tensor) }.unwrap();
        view.set([0], Float4E2m1fn::from_f32(-2.0));
        view.set([2], Float4E2m1fn::from_f32(3.0));
        let exported = view.to_dlpack_tensor().unwrap();
        let handle = exported.get();
        assert_eq!((handle.dtype, exported.shape(), exported.strides()), (Float4E2m1fn::DTYPE, &[3i64], &[1i64]));
        assert_eq!((handle.byte_offset, handle.data), (0, tensor.data));
    }
    assert_eq!(bytes, [0x2C, 0xD5]);
    // The export re-imports as the same values.
    let view = HostPackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3]).unwrap();
    let exported = view.to_dlpack_tensor().unwrap();
    let handle = exported.get();
    // SAFETY: the export describes `bytes`, alive and unwritten.
    let back = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor(&handle) }.unwrap();
    assert_eq!(values(&back.to_vec(), Float4E2m1fn::to_f32), [-2.0, 1.0, 3.0]);
}

#[test]
fn fp6_three_values_in_three_bytes_round_trip() {
    for (e2m3, expected) in [(true, [7.5f32, -0.125, 1.0]), (false, [28.0, -0.0625, 1.0])] {
        let mut bytes = [0u8; 3]; // 18 bits of 24
        {
            let mut view: DynMdspanMut = if e2m3 {
                HostPackedMdspanMut::<Float6E2m3fn, 1>::from_bytes(&mut bytes, [3]).unwrap().into()
            } else {
                HostPackedMdspanMut::<Float6E3m2fn, 1>::from_bytes(&mut bytes, [3]).unwrap().into()
            };
            assert_eq!((view.element_bits(), view.byte_range().len()), (6, 3));
            if e2m3 {
                let mut typed = view.typed_packed_mut::<Float6E2m3fn, 1, LayoutRight>().unwrap();
                for (i, v) in expected.iter().enumerate() {
                    typed.set([i], Float6E2m3fn::from_f32(*v));
                }
            } else {
                let mut typed = view.typed_packed_mut::<Float6E3m2fn, 1, LayoutRight>().unwrap();
                for (i, v) in expected.iter().enumerate() {
                    typed.set([i], Float6E3m2fn::from_f32(*v));
                }
            }
        }
        let mut t = Crafted::cpu(bytes.as_ptr(), &[3], Some(&[1]));
        t.dtype = if e2m3 { Float6E2m3fn::DTYPE } else { Float6E3m2fn::DTYPE };
        let tensor = t.tensor();
        // SAFETY: the tensor describes `bytes`, alive and unwritten.
        let dynamic = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) }.unwrap();
        let read = if e2m3 {
            values(&dynamic.typed_packed::<Float6E2m3fn, 1, LayoutRight>().unwrap().to_vec(), Float6E2m3fn::to_f32)
        } else {
            values(&dynamic.typed_packed::<Float6E3m2fn, 1, LayoutRight>().unwrap().to_vec(), Float6E3m2fn::to_f32)
        };
        assert_eq!(read, expected);
        let exported = dynamic.to_dlpack_tensor().unwrap();
        assert_eq!((exported.get().dtype, exported.shape()), (t.dtype, &[3i64][..]));
        // The top six bits of byte 2 are not a value and stay clear.
        assert_eq!(bytes[2] >> 2, 0);
    }
}

#[test]
fn undersized_and_oversized_buffers_are_errors() {
    assert_eq!(
        HostPackedMdspan::<Float4E2m1fn, 1>::from_bytes(&[0u8], [3]).unwrap_err(),
        DlpackError::PackedByteLength { required: 2, found: 1 }
    );
    assert_eq!(
        HostPackedMdspan::<Float6E2m3fn, 2>::from_bytes(&[0u8; 4], [2, 2]).unwrap_err(),
        DlpackError::PackedByteLength { required: 3, found: 4 }
    );
    assert_eq!(
        HostPackedMdspan::<Float4E2m1fn, 1, LayoutStride>::from_bytes_strided(&[0u8; 2], [3], [2]).unwrap_err(),
        DlpackError::PackedByteLength { required: 3, found: 2 }
    );
    assert!(matches!(
        ManagedTensor::from_packed::<Float4E2m1fn, _, 2>(vec![0u8; 2], [3, 3]),
        Err(DlpackError::PackedByteLength { required: 5, found: 2 })
    ));
    // A padded tensor is not packed data, and packed data is not padded.
    let bytes = [0u8; 3];
    let padded = ImportOptions { subbyte_padded: true, ..ImportOptions::CURRENT };
    let mut t = fp4(&bytes, &[3], &[1]);
    let tensor = t.tensor();
    // SAFETY: metadata only (refused).
    let refused = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor_with(&tensor, padded) };
    assert_eq!(refused.unwrap_err(), DlpackError::SubbytePacking { element_padded: false, tensor_padded: true });
    // SAFETY: metadata only (refused).
    let refused = unsafe { to_host_mdspan::<Float4E2m1fn, 1, LayoutRight>(&tensor) };
    assert_eq!(refused.unwrap_err(), DlpackError::SubbytePacking { element_padded: true, tensor_padded: false });
}

#[test]
fn managed_exports_of_packed_data() {
    // Zero-copy: the Vec's bytes are the tensor.
    let exported = ManagedTensor::from_packed::<Float4E2m1fn, _, 2>(vec![0x21, 0x43, 0x65], [2, 3]).unwrap();
    assert_eq!(
        (exported.dtype(), exported.shape(), exported.strides()),
        (Float4E2m1fn::DTYPE, &[2i64, 3][..], Some(&[3i64, 1][..]))
    );
    assert!(!exported.is_subbyte_padded() && !exported.is_read_only());
    // Through the raw C form and back: the deleter runs once, on drop.
    let raw = exported.into_raw_versioned();
    // SAFETY: `raw` is a live managed tensor whose ownership passes back.
    let mut back = unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap();
    {
        let mut view = back.view_mut_as::<HostPackedMdspanMut<Float4E2m1fn, 2>>().unwrap();
        assert_eq!(values(&view.to_vec(), Float4E2m1fn::to_f32), [0.5, 1.0, 1.5, 2.0, 3.0, 4.0]);
        view.set([1, 2], Float4E2m1fn::from_f32(-0.5));
    }
    let view = back.view_as::<HostPackedMdspan<Float4E2m1fn, 2>>().unwrap();
    assert_eq!(view.get([1, 2]).unwrap().to_f32(), -0.5);
    // A copy of a strided view: compact, IS_COPIED, and its dynamic view knows the layout.
    let columns = back.view_as::<HostPackedMdspan<Float4E2m1fn, 2, LayoutStrideRelaxed>>().unwrap();
    let copy = columns.to_managed_tensor(CopyMode::Always).unwrap();
    assert!(copy.is_copied());
    let dynamic = copy.view_as::<DynMdspan>().unwrap();
    assert_eq!((dynamic.byte_range().len(), dynamic.is_subbyte_padded()), (3, false));
    assert_eq!(copy.view_as::<HostPackedMdspan<Float4E2m1fn, 2>>().unwrap().to_vec(), view.to_vec());
    assert_eq!(columns.to_managed_tensor(CopyMode::Never).unwrap_err(), DlpackError::CopyRequired);
    // A read-only owner stays read-only.
    let mut shared =
        ManagedTensor::from_packed::<Float4E2m1fn, _, 1>(std::sync::Arc::<[u8]>::from([0x21u8, 0x07]), [3]).unwrap();
    assert_eq!(shared.view_mut_as::<HostPackedMdspanMut<Float4E2m1fn, 1>>().unwrap_err(), DlpackError::ReadOnly);
    // Legacy form too (JAX takes only that): the dtype carries no flag, packed is the default.
    let legacy =
        ManagedTensor::from_packed::<Float6E2m3fn, _, 1>(vec![0u8; 3], [4]).unwrap().into_raw_legacy().unwrap();
    // SAFETY: `legacy` is a live legacy managed tensor whose ownership passes here.
    let legacy = unsafe { ManagedTensor::from_raw_legacy(legacy) }.unwrap();
    assert_eq!(legacy.view_as::<HostPackedMdspan<Float6E2m3fn, 1>>().unwrap().size(), 4);
}

#[test]
fn strided_reversed_and_offset_layouts_address_bits() {
    // Eight FP4 values 0.5, 1.0, ... 6.0 and their negatives, packed.
    let bytes = [0x21u8, 0x43, 0x65, 0x87];
    let all: Vec<f32> = (0..8u8).map(|c| Float4E2m1fn::from_bits(c + 1).to_f32()).collect();
    // Reversed with a relaxed layout: index 0 is value 7, at byte offset 3 (bit 28 needs the
    // element offset 7 from byte 0).
    let mut t = fp4(&bytes, &[8], &[-1]);
    t.byte_offset = 0;
    let tensor = t.tensor();
    // SAFETY: metadata only (refused: values below data).
    let refused = unsafe { PackedMdspan::<Float4E2m1fn, 1, Dims<1>, LayoutStrideRelaxed>::from_dltensor(&tensor) };
    assert!(matches!(refused, Err(DlpackError::NegativeReach { .. })));
    // The last value starts at bit 28 (byte 3, high nibble): a byte offset cannot say that, so the
    // reversed view starts at value 6 (byte 3, low nibble) and covers 7 values.
    let mut t = fp4(&bytes, &[7], &[-1]);
    t.byte_offset = 3;
    let tensor = t.tensor();
    // SAFETY: the tensor describes `bytes`.
    let reversed =
        unsafe { PackedMdspan::<Float4E2m1fn, 1, Dims<1>, LayoutStrideRelaxed>::from_dltensor(&tensor) }.unwrap();
    let expected: Vec<f32> = all[..7].iter().rev().copied().collect();
    assert_eq!(values(&reversed.to_vec(), Float4E2m1fn::to_f32), expected);
    let exported = reversed.to_dlpack_tensor().unwrap();
    assert_eq!((exported.get().byte_offset, exported.strides()), (3, &[-1i64]));
    // Strict layouts take the byte offset as the first value's byte.
    let mut t = fp4(&bytes, &[2, 2], &[3, 1]);
    t.byte_offset = 1;
    let tensor = t.tensor();
    // SAFETY: the tensor describes `bytes` (values 2 to 6).
    let strided = unsafe { PackedMdspan::<Float4E2m1fn, 2, Dims<2>, LayoutStride>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(values(&strided.to_vec(), Float4E2m1fn::to_f32), [all[2], all[3], all[5], all[6]]);
    // FP6 with a relaxed byte offset that is not a whole number of values: 8 bits = one value and
    // two bits, so index 0 starts at bit 8.
    let six = [0b1100_0000u8, 0b0000_0111, 0];
    let mut t = Crafted::cpu(six.as_ptr(), &[1], Some(&[1]));
    t.dtype = Float6E2m3fn::DTYPE;
    t.byte_offset = 1;
    let tensor = t.tensor();
    // SAFETY: the tensor describes `six`.
    let shifted =
        unsafe { PackedMdspan::<Float6E2m3fn, 1, Dims<1>, LayoutStrideRelaxed>::from_dltensor(&tensor) }.unwrap();
    assert_eq!(shifted.get([0]).unwrap().to_bits(), 0b0000_0111);
    assert_eq!(shifted.to_dlpack_tensor().unwrap().get().byte_offset, 1);
}

#[test]
fn device_views_check_metadata_only() {
    let mut t = fp4(&[], &[5], &[1]);
    t.data = std::ptr::without_provenance_mut(0x7f00_0000_0000);
    t.device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 3 };
    let tensor = t.tensor();
    // SAFETY: device memory is never read on the host.
    let view = unsafe { DevicePackedMdspan::<Float4E2m1fn, 1>::from_dltensor(&tensor) }.unwrap();
    assert_eq!((view.byte_len(), view.ordinal()), (3, 3));
    let dynamic: DynMdspan<'_, Device> = view.into();
    assert_eq!(dynamic.byte_range().len(), 3);
    let exported = view.to_dlpack_tensor().unwrap();
    assert_eq!(exported.get().device, DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 3 });
    // SAFETY: metadata only (refused: host view of device memory).
    let host = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor(&tensor) };
    assert!(matches!(host, Err(DlpackError::DeviceMismatch { .. })));
}

/// The bits of value `k` of a packed buffer, one bit at a time.
fn oracle(bytes: &[u8], bit: usize, bits: usize) -> u8 {
    (0..bits).map(|b| ((bytes[(bit + b) / 8] >> ((bit + b) % 8)) & 1) << b).sum()
}

/// A random packed tensor over a 16-byte buffer: rank 2, FP4 or FP6, strides from -5 to 5, a
/// byte offset, through a relaxed view; each index read (and written) against the oracle. Returns
/// whether the tensor was accepted and read.
fn check_random<T: DlElement + PlainBits + std::fmt::Debug>(
    shape: [i64; 2],
    strides: [i64; 2],
    byte_offset: u64,
    writes: &[u8],
) -> Result<bool, TestCaseError> {
    const LEN: usize = 16;
    let original: Vec<u8> = (0..LEN as u8).map(|i| i.wrapping_mul(157).wrapping_add(11)).collect();
    let mut bytes = original.clone();
    let bits = T::DTYPE.bits as usize;
    let mut t = Crafted::cpu(bytes.as_ptr(), &shape, Some(&strides));
    t.dtype = T::DTYPE;
    t.byte_offset = byte_offset;
    t.data = bytes.as_mut_ptr().cast();
    let tensor: DLTensor = t.tensor();
    // Which elements lie in the buffer decides acceptance here (a DLTensor cannot tell the buffer
    // length): only tensors inside it are read.
    let reach =
        |index: [i64; 2]| byte_offset as i64 * 8 + (index[0] * strides[0] + index[1] * strides[1]) * bits as i64;
    let indices: Vec<[i64; 2]> = (0..shape[0]).flat_map(|i| (0..shape[1]).map(move |j| [i, j])).collect();
    let inside = indices.iter().all(|&index| reach(index) >= 0 && reach(index) + bits as i64 <= 8 * LEN as i64);
    // SAFETY: the tensor describes `bytes` when `inside`; otherwise the view is only checked.
    let view = unsafe { PackedMdspan::<T, 2, Dims<2>, LayoutStrideRelaxed>::from_dltensor(&tensor) };
    let Ok(view) = view else { return Ok(false) };
    prop_assert!(indices.iter().all(|&index| reach(index) >= 0), "a value below data was accepted");
    if !inside {
        return Ok(false);
    }
    for &index in &indices {
        let value = view.get(index.map(|i| i as usize)).unwrap();
        let bits_read = bits_of(value);
        prop_assert_eq!(bits_read, oracle(&bytes, reach(index) as usize, bits), "{:?}", index);
    }
    // Writes through a mutable view change the written values' bits and nothing else.
    // SAFETY: the tensor describes `bytes`, reached only through this view while it lives.
    let Ok(mut view) = (unsafe { PackedMdspanMut::<T, 2, Dims<2>, LayoutStrideRelaxed>::from_dltensor(&tensor) })
    else {
        // Not unique (a zero or overlapping stride): shared reads only.
        return Ok(true);
    };
    let mut expected = original.clone();
    for (&index, &w) in indices.iter().zip(writes.iter().cycle()) {
        let value = w & ((1 << bits) - 1);
        view.set(index.map(|i| i as usize), from_byte::<T>(value));
        let bit = reach(index) as usize;
        for b in 0..bits {
            let (byte, shift) = ((bit + b) / 8, (bit + b) % 8);
            expected[byte] = (expected[byte] & !(1 << shift)) | (((value >> b) & 1) << shift);
        }
    }
    prop_assert_eq!(bytes, expected);
    Ok(true)
}

fn bits_of<T: PlainBits>(value: T) -> u8 {
    // SAFETY: packable types are one plain byte.
    unsafe { std::mem::transmute_copy::<T, u8>(&value) }
}

fn from_byte<T: PlainBits>(value: u8) -> T {
    // SAFETY: packable types are one byte that accepts any bits.
    unsafe { std::mem::transmute_copy::<u8, T>(&value) }
}

#[test]
fn random_packed_tensors_read_and_write_the_right_bits() {
    // Fewer under Miri, which interprets every access (about 1000x slower).
    let cases = if cfg!(miri) { 40 } else { 2000 };
    // No regression file: the inputs are cheap to regenerate, and a failure prints its input.
    let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let read = std::cell::Cell::new(0u32);
    let input = (
        proptest::array::uniform2(0i64..5),
        proptest::array::uniform2(-5i64..=5),
        0u64..12,
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 1..8),
    );
    runner
        .run(&input, |(shape, strides, byte_offset, six, writes)| {
            let checked = if six {
                check_random::<Float6E2m3fn>(shape, strides, byte_offset, &writes)?
            } else {
                check_random::<Float4E2m1fn>(shape, strides, byte_offset, &writes)?
            };
            read.set(read.get() + u32::from(checked));
            Ok(())
        })
        .unwrap();
    println!("{} of {cases} random packed tensors read and written", read.get());
    assert!(read.get() > cases / 4, "too few tensors read: {}", read.get());
}
