//! The two import paths agree. On random tensors (every device type and id, ranks, data types,
//! extents and strides around the fast path's magnitude bound, offsets, misaligned and null
//! pointers), whenever `import_fast` accepts, `import_ordered` accepts with the same pointer,
//! mapping and ordinal, whatever the producer's options; so a tensor the ordered rules refuse never
//! gets a view. Only metadata is read: the data addresses are never dereferenced.

use super::*;
use crate::dtype::{F32x4, Float6E2m3fnX4};
use crate::view::{Dims, Dyn, LayoutLeft, LayoutRight, LayoutStride, LayoutStrideRelaxed, Static};
use crate::{ffi::DLDeviceType, space::MemorySpace};
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Views the fast path built (each checked against the ordered path): the test asserts there are
/// many, so a generator that stops producing common tensors fails it.
static FAST_ACCEPTED: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Debug)]
struct Input {
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: Option<[i64; 4]>,
    strides: Option<[i64; 4]>,
    byte_offset: u64,
    data: usize,
}

/// Extents: small ones (most tensors), and values around the fast path's bound of 2^30.
fn extent() -> impl Strategy<Value = i64> {
    prop_oneof![
        12 => 1i64..6,
        2 => Just(0i64),
        1 => prop_oneof![Just((1 << 30) - 1), Just(1 << 30), Just(1 << 31), Just(1 << 40), Just(i64::MAX), Just(-1)],
    ]
}

fn stride() -> impl Strategy<Value = i64> {
    prop_oneof![
        12 => -6i64..=6,
        1 => prop_oneof![
            Just((1 << 30) - 1),
            Just(1 << 30),
            Just(-(1 << 30)),
            Just(1 << 40),
            Just(i64::MAX),
            Just(i64::MIN),
        ],
    ]
}

fn input() -> impl Strategy<Value = Input> {
    let device_type = prop_oneof![
        10 => Just(DLDeviceType::kDLCPU),
        2 => Just(DLDeviceType::kDLCUDA),
        2 => Just(DLDeviceType::kDLCUDAManaged),
        1 => Just(DLDeviceType::kDLCUDAHost),
        1 => Just(DLDeviceType(0)),
        1 => Just(DLDeviceType(99)),
    ];
    let device_id = prop_oneof![8 => Just(0i32), 2 => 1i32..4, 1 => Just(-1), 1 => Just(i32::MIN), 1 => Just(i32::MAX)];
    // Rank and data type: mostly a pair some tested view type has (so that tensors get through the
    // early rules), sometimes anything.
    let matching = prop_oneof![
        Just((0, u8::DTYPE)),
        Just((1, u8::DTYPE)),
        Just((3, u8::DTYPE)),
        Just((2, i32::DTYPE)),
        Just((1, f64::DTYPE)),
        Just((3, f64::DTYPE)),
        Just((2, F32x4::DTYPE)),
        Just((1, Float6E2m3fnX4::DTYPE)),
    ];
    let any = (
        prop_oneof![10 => 0i32..=3, 1 => Just(-1), 1 => Just(4)],
        (0u8..20, prop_oneof![Just(8u8), Just(32), Just(64)], 1u16..5).prop_map(|(code, bits, lanes)| DLDataType {
            code,
            bits,
            lanes,
        }),
    );
    let rank_and_dtype = prop_oneof![6 => matching, 1 => any];
    // Strides: canonical row-major or column-major (the fast path's common case), padded rows, or
    // random.
    let layout = 0u8..5;
    let byte_offset = prop_oneof![
        8 => (0u64..6).prop_map(|k| k * 8),
        2 => 0u64..48,
        1 => prop_oneof![Just((1u64 << 32) * 8), Just((1u64 << 32) * 8 - 8), Just(u64::MAX - 7), Just(1u64 << 62)],
    ];
    let data = prop_oneof![
        10 => (0usize..8).prop_map(|k| 0x7f00_0000_0000 + 8 * k),
        1 => Just(0usize),
        1 => prop_oneof![Just(usize::MAX - 15), Just(3usize), Just(0x7fff_ffff_fff0)],
    ];
    (
        (device_type, device_id),
        rank_and_dtype,
        proptest::option::weighted(0.95, proptest::array::uniform4(extent())),
        (layout, proptest::array::uniform4(stride())),
        byte_offset,
        data,
    )
        .prop_map(|((device_type, device_id), (ndim, dtype), shape, (layout, random), byte_offset, data)| {
            let strides = shape.map(|shape| {
                let rank = ndim.clamp(0, 4) as usize;
                let mut strides = random;
                if layout <= 2 {
                    // Row-major (0), column-major (1), row-major with the innermost axis padded (2).
                    let mut acc = 1i64;
                    for k in 0..rank {
                        let axis = if layout == 1 { k } else { rank - 1 - k };
                        strides[axis] = acc;
                        let pad = i64::from(layout == 2 && k == 0);
                        acc = acc.wrapping_mul(shape[axis].max(1).wrapping_add(pad));
                    }
                }
                strides
            });
            Input {
                device: DLDevice { device_type, device_id },
                ndim,
                dtype,
                shape,
                strides: if layout == 4 && ndim > 0 { None } else { strides },
                byte_offset,
                data,
            }
        })
}

/// Compares the two paths for one view type, shared and mutable, under every producer option.
fn agree<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(tensor: &DLTensor) {
    let options = [
        ImportOptions::CURRENT,
        ImportOptions::legacy(),
        ImportOptions { subbyte_padded: true, ..ImportOptions::CURRENT },
    ];
    for unique in [false, true] {
        // SAFETY: `shape` and `strides` are null or hold 4 entries, and `ndim == R <= 3` is what
        // both paths require before reading them; the data address is never read.
        let Some(fast) = (unsafe { import_fast::<T, R, E, L, S>(tensor, unique) }) else { continue };
        FAST_ACCEPTED.fetch_add(1, Ordering::Relaxed);
        for options in options {
            // SAFETY: as above.
            let ordered = unsafe { import_ordered::<T, R, E, L, S>(tensor, options, unique) };
            assert_eq!(
                ordered,
                Ok(fast),
                "the fast path accepted what the ordered path decides otherwise: {}, R = {R}, {:?}, {}, \
                 unique = {unique}, {options:?}, {tensor:?}",
                core::any::type_name::<T>(),
                L::KIND,
                core::any::type_name::<S>(),
            );
        }
    }
}

macro_rules! every_layout_and_space {
    ($tensor:expr, $t:ty, $r:literal, $e:ty) => {{
        macro_rules! spaces {
            ($l:ty) => {{
                agree::<$t, $r, $e, $l, crate::Host>($tensor);
                agree::<$t, $r, $e, $l, crate::Device>($tensor);
                agree::<$t, $r, $e, $l, crate::Managed>($tensor);
            }};
        }
        spaces!(LayoutRight);
        spaces!(LayoutLeft);
        spaces!(LayoutStride);
        spaces!(LayoutStrideRelaxed);
    }};
}

fn every_view_type(input: &Input) {
    let (mut shape, mut strides) = (input.shape, input.strides);
    let tensor = DLTensor {
        data: input.data as *mut c_void,
        device: input.device,
        ndim: input.ndim,
        dtype: input.dtype,
        shape: shape.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
        strides: strides.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: input.byte_offset,
    };
    let tensor = &tensor;
    every_layout_and_space!(tensor, u8, 0, Dims<0>);
    every_layout_and_space!(tensor, u8, 1, Dims<1>);
    every_layout_and_space!(tensor, u8, 3, Dims<3>);
    every_layout_and_space!(tensor, i32, 2, Dims<2>);
    every_layout_and_space!(tensor, i32, 2, (Static<2>, Dyn));
    every_layout_and_space!(tensor, f64, 1, Dims<1>);
    every_layout_and_space!(tensor, f64, 3, Dims<3>);
    every_layout_and_space!(tensor, F32x4, 2, Dims<2>);
    every_layout_and_space!(tensor, Float6E2m3fnX4, 1, Dims<1>);
}

/// Random tensors per run: `PROPTEST_CASES` (the memcheck tier lowers it), 3000 by default.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000)
}

#[test]
fn the_fast_path_accepts_only_what_the_ordered_path_accepts_and_builds_the_same_view() {
    let cases = cases();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases, ..ProptestConfig::default() });
    runner
        .run(&input(), |input| {
            every_view_type(&input);
            Ok(())
        })
        .unwrap();
    let accepted = FAST_ACCEPTED.load(Ordering::Relaxed);
    println!("{accepted} views built by the fast path and confirmed by the ordered path, from {cases} tensors");
    assert!(accepted > cases as usize, "too few tensors took the fast path ({accepted} in {cases} cases)");
}
