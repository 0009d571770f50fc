//! Every copy path against an index-by-index reference, over random layouts: zero (broadcast),
//! negative and overlapping strides, zero-size and 0-d tensors, packed FP4/FP6 data with
//! non-compact strides. A copy holds one element per index, so a broadcast source's copy is larger
//! than the memory it spans: the paths that sized copies by the span overflowed their buffers.
//!
//! Paths: `to_vec`, `to_aligned_buffer`, `iter_mut` (the host side of the CUDA copies stages
//! through the first and writes through the last), `to_managed_tensor` of typed and packed views, and
//! with feature `python` the Python copies both ways (`Tensor.__dlpack__(copy=True)` and
//! `from_dlpack(copy=True)`) of whole-byte and packed tensors. The memcheck tier runs this file
//! under valgrind.

mod support;

use dlspan::dtype::{Float4E2m1fn, Float6E2m3fn};
use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
use dlspan::{
    CopyMode, Dims, DlElement, HostMdspan, HostMdspanMut, LayoutRight, LayoutStrideRelaxed, ManagedTensor, PackedMdspan,
};
use support::rng::Rng;

/// Cases per rank and path (fewer under valgrind, which sets `PROPTEST_CASES`).
fn cases() -> usize {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).map_or(300, |n: usize| n.max(20))
}

/// A random layout over a buffer: extents (sometimes 0), strides (zero, negative, overlapping,
/// large) and the element offset of index 0, with the buffer length they need (and some slack).
#[derive(Clone, Debug)]
struct Layout<const R: usize> {
    shape: [usize; R],
    strides: [isize; R],
    offset: usize,
    len: usize,
}

impl<const R: usize> Layout<R> {
    fn random(rng: &mut Rng) -> Self {
        const STRIDES: [isize; 13] = [0, 1, -1, 2, -2, 3, -3, 5, -7, 1, 1, 0, 11];
        let empty = rng.chance(8);
        let shape = core::array::from_fn(|_| if empty && rng.chance(50) { 0 } else { 1 + rng.below(4) });
        let strides = core::array::from_fn(|_| STRIDES[rng.below(STRIDES.len())]);
        let (low, high) = Self::reach(&shape, &strides);
        let offset = (-low) as usize + rng.below(3);
        let len = offset + high as usize + 1 + rng.below(3);
        Self { shape, strides, offset, len }
    }

    /// The lowest and highest element offsets an index reaches, relative to index 0.
    fn reach(shape: &[usize; R], strides: &[isize; R]) -> (isize, isize) {
        shape.iter().zip(strides).fold((0, 0), |(low, high), (&e, &s)| {
            let step = (e.max(1) as isize - 1) * s;
            (low + step.min(0), high + step.max(0))
        })
    }

    fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The element offset of every index, in row-major order.
    fn offsets(&self) -> Vec<isize> {
        let mut out = Vec::with_capacity(self.numel());
        let mut index = [0usize; R];
        for _ in 0..self.numel() {
            out.push(
                self.offset as isize + index.iter().zip(&self.strides).map(|(&i, &s)| i as isize * s).sum::<isize>(),
            );
            for axis in (0..R).rev() {
                index[axis] += 1;
                if index[axis] < self.shape[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
        out
    }
}

/// Distinct values, so a misplaced element shows.
fn buffer(len: usize, rng: &mut Rng) -> Vec<u32> {
    (0..len).map(|_| rng.next_u64() as u32).collect()
}

fn host_paths<const R: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    for _ in 0..cases() {
        let layout = Layout::<R>::random(&mut rng);
        let data = buffer(layout.len, &mut rng);
        let expected: Vec<u32> = layout.offsets().iter().map(|&o| data[o as usize]).collect();
        let view = HostMdspan::<u32, R, LayoutStrideRelaxed>::from_slice_relaxed(
            &data,
            layout.shape,
            layout.strides,
            layout.offset,
        )
        .unwrap_or_else(|e| panic!("{layout:?}: {e}"));
        assert_eq!(view.to_vec(), expected, "to_vec {layout:?}");
        assert_eq!(&view.to_aligned_buffer::<64>()[..], &expected[..], "to_aligned_buffer {layout:?}");
        let managed = view.to_managed_tensor(CopyMode::Always).unwrap();
        assert!(managed.is_copied() && !managed.is_aliased());
        assert_eq!(managed.view::<u32, R, LayoutRight>().unwrap().to_vec(), expected, "to_managed_tensor {layout:?}");

        // Writes in logical order into a view without repeated elements (the staging target of a
        // device-to-host copy): strides made unique by spreading the axes.
        let mut unique = layout.clone();
        let mut step = 1isize;
        for axis in (0..R).rev() {
            unique.strides[axis] = if layout.strides[axis] < 0 { -step } else { step };
            step *= unique.shape[axis].max(1) as isize;
        }
        let (low, high) = Layout::reach(&unique.shape, &unique.strides);
        unique.offset = (-low) as usize;
        unique.len = unique.offset + high as usize + 1;
        let mut target = vec![0u32; unique.len];
        let mut out = HostMdspanMut::<u32, R, LayoutStrideRelaxed>::from_slice_relaxed(
            &mut target,
            unique.shape,
            unique.strides,
            unique.offset,
        )
        .unwrap();
        for (slot, &value) in out.iter_mut().zip(&expected) {
            *slot = value;
        }
        let written: Vec<u32> = unique.offsets().iter().map(|&o| target[o as usize]).collect();
        assert_eq!(written, expected, "iter_mut {unique:?}");
    }
}

#[test]
fn typed_copies_hold_one_element_per_index() {
    host_paths::<0>(1);
    host_paths::<1>(2);
    host_paths::<2>(3);
    host_paths::<3>(4);
    host_paths::<4>(5);
}

/// A packed layout: the `DLTensor`'s whole-byte offset of index 0 and the bytes it needs.
struct Packed<const R: usize> {
    layout: Layout<R>,
    bits: usize,
    byte_offset: usize,
    bytes: Vec<u8>,
}

impl<const R: usize> Packed<R> {
    fn random(rng: &mut Rng, bits: usize) -> Self {
        let mut layout = Layout::<R>::random(rng);
        let (low, high) = Layout::reach(&layout.shape, &layout.strides);
        // Index 0 starts at a whole byte; the lowest element must not lie below `data`.
        let byte_offset = ((-low) as usize * bits).div_ceil(8) + rng.below(2);
        layout.offset = 0;
        let len = (byte_offset * 8 + (high as usize + 1) * bits).div_ceil(8) + rng.below(2);
        let bytes = (0..len).map(|_| rng.next_u64() as u8).collect();
        Self { layout, bits, byte_offset, bytes }
    }

    /// The value at each index in row-major order, by bit position.
    fn values(&self) -> Vec<u8> {
        let mask = (1u16 << self.bits) - 1;
        self.layout
            .offsets()
            .iter()
            .map(|&o| {
                let bit = (self.byte_offset * 8) as isize + o * self.bits as isize;
                let (byte, shift) = (bit as usize / 8, bit as usize % 8);
                let word = u16::from(self.bytes[byte]) | u16::from(*self.bytes.get(byte + 1).unwrap_or(&0)) << 8;
                ((word >> shift) & mask) as u8
            })
            .collect()
    }

    /// The tensor; shape and strides point into `shape` and `strides`.
    fn tensor<T: DlElement>(&self, shape: &mut [i64; R], strides: &mut [i64; R]) -> DLTensor {
        *shape = self.layout.shape.map(|e| e as i64);
        *strides = self.layout.strides.map(|s| s as i64);
        DLTensor {
            data: self.bytes.as_ptr().cast_mut().cast(),
            device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            ndim: R as i32,
            dtype: T::DTYPE,
            shape: if R == 0 { core::ptr::null_mut() } else { shape.as_mut_ptr() },
            strides: if R == 0 { core::ptr::null_mut() } else { strides.as_mut_ptr() },
            byte_offset: self.byte_offset as u64,
        }
    }
}

/// The packed values of a compact row-major copy.
fn compact_values(bytes: &[u8], count: usize, bits: usize) -> Vec<u8> {
    (0..count)
        .map(|k| {
            let bit = k * bits;
            let word = u16::from(bytes[bit / 8]) | u16::from(*bytes.get(bit / 8 + 1).unwrap_or(&0)) << 8;
            ((word >> (bit % 8)) & ((1 << bits) - 1)) as u8
        })
        .collect()
}

fn packed_paths<T: DlElement + dlspan::dtype::PlainBits, const R: usize>(seed: u64) {
    let bits = T::DTYPE.bits as usize;
    let mut rng = Rng::new(seed);
    for _ in 0..cases() {
        let packed = Packed::<R>::random(&mut rng, bits);
        let expected = packed.values();
        let (mut shape, mut strides) = ([0i64; R], [0i64; R]);
        let tensor = packed.tensor::<T>(&mut shape, &mut strides);
        // SAFETY: the tensor describes `packed.bytes`, alive and unwritten while the view lives.
        let view = unsafe { PackedMdspan::<T, R, Dims<R>, LayoutStrideRelaxed>::from_dltensor(&tensor) }
            .unwrap_or_else(|e| panic!("{:?}: {e}", packed.layout));
        let to_bits = |v: &T| -> u8 {
            // SAFETY: a packable element type is one `PlainBits` byte.
            unsafe { core::mem::transmute_copy::<T, u8>(v) }
        };
        assert_eq!(view.to_vec().iter().map(to_bits).collect::<Vec<_>>(), expected, "{:?}", packed.layout);
        let managed = view.to_managed_tensor(CopyMode::Always).unwrap();
        let copy = managed.view_as::<PackedMdspan<T, R>>().unwrap();
        assert_eq!(
            copy.to_vec().iter().map(to_bits).collect::<Vec<_>>(),
            expected,
            "to_managed_tensor {:?}",
            packed.layout
        );
        assert_eq!(copy.byte_len(), (expected.len() * bits).div_ceil(8), "compact");
    }
}

#[test]
fn packed_copies_read_every_value_by_its_bits() {
    packed_paths::<Float4E2m1fn, 0>(11);
    packed_paths::<Float4E2m1fn, 1>(12);
    packed_paths::<Float4E2m1fn, 2>(13);
    packed_paths::<Float4E2m1fn, 3>(14);
    packed_paths::<Float6E2m3fn, 1>(15);
    packed_paths::<Float6E2m3fn, 2>(16);
    packed_paths::<Float6E2m3fn, 3>(17);
}

#[cfg(feature = "python")]
mod python {
    //! The Python copies, through the Rust API of `dlspan::python` on an embedded interpreter.
    use super::*;
    use dlspan::python::{ExportRequest, ImportRequest, Tensor, from_dlpack, take_capsule};
    use pyo3::prelude::*;
    use pyo3::types::PyByteArray;

    /// Both copies of `tensor`: its `__dlpack__(copy=True)` taken back, and `from_dlpack(copy=True)`.
    fn both_copies(tensor: &Bound<'_, Tensor>) -> [ManagedTensor; 2] {
        let request = ExportRequest { max_version: Some((1, 3)), copy: Some(true), ..ExportRequest::default() };
        let exported = take_capsule(Tensor::dlpack(tensor, &request).unwrap().as_any()).unwrap();
        // SAFETY: the capsule held a fresh copy, which nothing else reaches.
        let exported = unsafe { exported.assume_unaliased() };
        let imported =
            from_dlpack(tensor.as_any(), ImportRequest { copy: Some(true), ..ImportRequest::default() }).unwrap();
        assert!(exported.is_copied() && imported.is_copied() && !imported.is_aliased());
        [exported, imported]
    }

    fn typed<const R: usize>(seed: u64) {
        let mut rng = Rng::new(seed);
        Python::attach(|py| {
            for _ in 0..cases() {
                let layout = Layout::<R>::random(&mut rng);
                let data = buffer(layout.len, &mut rng);
                let expected: Vec<u32> = layout.offsets().iter().map(|&o| data[o as usize]).collect();
                let owner = ManagedTensor::from_owner_strided(data, layout.shape, layout.strides, layout.offset)
                    .unwrap_or_else(|e| panic!("{layout:?}: {e}"));
                let tensor = Tensor::from_managed(py, owner).unwrap();
                for copy in both_copies(&tensor) {
                    let view = copy.view::<u32, R, LayoutRight>().unwrap();
                    assert_eq!(view.to_vec(), expected, "{layout:?}");
                }
            }
        });
    }

    #[test]
    fn python_copies_of_typed_tensors() {
        Python::initialize();
        typed::<0>(21);
        typed::<1>(22);
        typed::<2>(23);
        typed::<3>(24);
        typed::<4>(25);
    }

    fn packed<T: DlElement + dlspan::dtype::PlainBits, const R: usize>(seed: u64) {
        let bits = T::DTYPE.bits as usize;
        let mut rng = Rng::new(seed);
        Python::attach(|py| {
            for _ in 0..cases() {
                let packed = Packed::<R>::random(&mut rng, bits);
                let expected = packed.values();
                // The bytes live in a bytearray the tensor keeps alive.
                let owner = PyByteArray::new(py, &packed.bytes);
                let (mut shape, mut strides) = ([0i64; R], [0i64; R]);
                let mut tensor = packed.tensor::<T>(&mut shape, &mut strides);
                tensor.data = owner.data().cast();
                // SAFETY: the tensor describes the bytearray's bytes, which it keeps alive and in
                // place (never resized here); shape and strides are read during the call.
                let tensor = unsafe { Tensor::from_object(py, owner.into_any().unbind(), &tensor, false) }
                    .unwrap_or_else(|e| panic!("{:?}: {e}", packed.layout));
                for copy in both_copies(&tensor) {
                    assert!(!copy.is_subbyte_padded());
                    let view = copy.view_as::<PackedMdspan<T, R>>().unwrap();
                    assert_eq!(view.byte_len(), (expected.len() * bits).div_ceil(8), "compact {:?}", packed.layout);
                    // SAFETY: the view's bytes, alive while `copy` is.
                    let bytes = unsafe { core::slice::from_raw_parts(view.data_handle(), view.byte_len()) };
                    assert_eq!(compact_values(bytes, expected.len(), bits), expected, "{:?}", packed.layout);
                    if !(expected.len() * bits).is_multiple_of(8) {
                        let last = bytes[bytes.len() - 1];
                        assert_eq!(last >> ((expected.len() * bits) % 8), 0, "trailing bits are cleared");
                    }
                }
            }
        });
    }

    #[test]
    fn python_copies_of_packed_tensors() {
        Python::initialize();
        packed::<Float4E2m1fn, 0>(31);
        packed::<Float4E2m1fn, 1>(32);
        packed::<Float4E2m1fn, 2>(33);
        packed::<Float4E2m1fn, 3>(34);
        packed::<Float6E2m3fn, 1>(35);
        packed::<Float6E2m3fn, 2>(36);
    }

    /// The reproducers: a broadcast tensor of 4 Mi elements over one `f64`, copied (the
    /// copy was sized by the span, 8 bytes, and overflowed), and an FP4 tensor of stride 2
    /// (copied as its raw bytes).
    #[test]
    fn broadcast_and_strided_packed_copies_are_whole() {
        Python::initialize();
        Python::attach(|py| {
            let owner = ManagedTensor::from_owner_strided(vec![1.0f64], [1 << 22], [0], 0).unwrap();
            let tensor = Tensor::from_managed(py, owner).unwrap();
            assert_eq!(tensor.getattr("nbytes").unwrap().extract::<usize>().unwrap(), 8 << 22);
            for copy in both_copies(&tensor) {
                let view = copy.view::<f64, 1, LayoutRight>().unwrap();
                assert_eq!(view.size(), 1 << 22);
                assert!(view.as_slice().unwrap().iter().all(|&x| x == 1.0));
            }

            let owner = PyByteArray::new(py, &[0x21, 0x43, 0x65, 0x87]);
            let (mut shape, mut strides) = ([4i64], [2i64]);
            let tensor = DLTensor {
                data: owner.data().cast(),
                device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
                ndim: 1,
                dtype: Float4E2m1fn::DTYPE,
                shape: shape.as_mut_ptr(),
                strides: strides.as_mut_ptr(),
                byte_offset: 0,
            };
            // SAFETY: the tensor describes the bytearray's 4 bytes (elements at bits 0, 8, 16, 24).
            let tensor = unsafe { Tensor::from_object(py, owner.into_any().unbind(), &tensor, false) }.unwrap();
            for copy in both_copies(&tensor) {
                let view = copy.view_as::<PackedMdspan<Float4E2m1fn, 1>>().unwrap();
                // SAFETY: the view's bytes, alive while `copy` is.
                let bytes = unsafe { core::slice::from_raw_parts(view.data_handle(), view.byte_len()) };
                assert_eq!(bytes, [0x31, 0x75], "values 1, 3, 5, 7");
            }
        });
    }
}
