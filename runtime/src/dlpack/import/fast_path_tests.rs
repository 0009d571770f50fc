//! The fast import path against the ordered one: whatever the fast path accepts, the ordered path
//! accepts with the same pointer, mapping and ordinal; and the common tensors do take the fast path.
//! Random tensors are built around the fast path's own edges: its bound (powers of two and their
//! neighbours), byte offsets that are or are not whole elements, addresses near 2^63 and the top of
//! the address space, canonical strides with one axis off, empty and negative extents.

use super::*;
use crate::check::fast_bound;
use crate::ffi::{DLDataTypeCode, DLDevice, DLDeviceType};
use crate::space::{Device, Host, Managed};
use crate::view::{Dims, Dyn, Static};
use crate::{DlElement, LayoutLeft, LayoutRight, LayoutStride, LayoutStrideRelaxed};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

/// Three bytes, aligned to 1: an element size that is not a power of two.
#[derive(Clone, Copy, Debug, PartialEq, crate::DlElement)]
#[repr(C)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

/// Twelve bytes, aligned to 4: alignment below the size, and a size that is not a power of two.
#[derive(Clone, Copy, Debug, PartialEq, crate::DlElement)]
#[repr(C)]
struct Xyz {
    x: f32,
    y: f32,
    z: f32,
}

/// How a tensor's strides relate to its shape, at the rank a conversion reads.
#[derive(Clone, Debug)]
enum Strides {
    RowMajor,
    ColumnMajor,
    /// Row-major with one axis's stride moved by ±1 (or replaced by an edge number).
    RowMajorChanged {
        axis: usize,
        to: Option<i64>,
        by: i64,
    },
    /// Row-major with every stride doubled: padded, not compact.
    Padded,
    /// Every stride 0: one element broadcast.
    Broadcast,
    /// Strides unrelated to the shape.
    Any([i64; 8]),
}

#[derive(Clone, Debug)]
pub(crate) struct Input {
    pub(crate) data: usize,
    pub(crate) device: DLDevice,
    /// `None`: the rank of the conversion tried.
    pub(crate) ndim: Option<i32>,
    /// `None`: the data type of the conversion tried.
    pub(crate) dtype: Option<DLDataType>,
    /// Eight entries, whatever the rank: reading `ndim` of them stays in bounds.
    pub(crate) shape: [i64; 8],
    strides: Strides,
    /// Multiplied by the element size when `whole_elements`.
    pub(crate) byte_offset: u64,
    pub(crate) whole_elements: bool,
}

impl Input {
    /// The strides a rank-`rank` conversion reads (8 entries).
    pub(crate) fn strides(&self, rank: usize) -> [i64; 8] {
        let compact = |column: bool| {
            let mut strides = [1i64; 8];
            let mut acc = 1i64;
            for k in 0..rank {
                let axis = if column { k } else { rank - 1 - k };
                strides[axis] = acc;
                acc = acc.wrapping_mul(self.shape[axis].max(1));
            }
            strides
        };
        match self.strides {
            Strides::RowMajor => compact(false),
            Strides::ColumnMajor => compact(true),
            Strides::RowMajorChanged { axis, to, by } => {
                let mut strides = compact(false);
                strides[axis] = to.unwrap_or(strides[axis].wrapping_add(by));
                strides
            }
            Strides::Padded => compact(false).map(|s| s.wrapping_mul(2)),
            Strides::Broadcast => [0; 8],
            Strides::Any(strides) => strides,
        }
    }
}

/// Numbers around every bound the fast path uses: small ones, negative ones, each power of two and
/// its neighbours, the extremes.
fn edge() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => -2i64..=6,
        3 => (0u32..63, -1i64..=1).prop_map(|(k, d)| (1i64 << k).wrapping_add(d)),
        1 => prop_oneof![Just(i64::MAX), Just(i64::MIN), Just(i64::MAX / 2 + 1)],
    ]
}

/// Extents: mostly small, sometimes at an edge.
fn extent() -> impl Strategy<Value = i64> {
    prop_oneof![8 => 1i64..6, 2 => edge()]
}

/// Extents near the fast path's bounds, where a product of three or four overflows isize.
fn large_extent() -> impl Strategy<Value = i64> {
    (15u32..32, -1i64..=1).prop_map(|(k, d)| (1i64 << k) + d)
}

fn address() -> impl Strategy<Value = usize> {
    let top = 1usize << 63;
    prop_oneof![
        6 => (0usize..64).prop_map(|k| 0x1_0000 + k),
        1 => Just(0usize),
        1 => (0usize..64).prop_map(move |k| top - 32 + k),
        1 => (0usize..32).prop_map(|k| usize::MAX - k),
        1 => (0usize..64).prop_map(|k| (1usize << 62) - 32 + k),
    ]
}

pub(crate) fn input() -> impl Strategy<Value = Input> {
    // Device ids: 0, others, and negative ones (refused for CUDA ordinals, tolerated for host memory).
    let id = prop_oneof![6 => Just(0i32), 1 => 1i32..3, 1 => Just(-1), 1 => Just(i32::MIN)];
    let device = prop_oneof![
        8 => Just(DLDeviceType::kDLCPU),
        2 => Just(DLDeviceType::kDLCUDA),
        1 => Just(DLDeviceType::kDLCUDAHost),
        2 => Just(DLDeviceType::kDLCUDAManaged),
    ];
    let device = (device, id).prop_map(|(device_type, device_id)| DLDevice { device_type, device_id });
    let ndim = proptest::option::weighted(0.05, -1i32..6);
    let dtype = proptest::option::weighted(0.05, Just(DLDataType::new(DLDataTypeCode::kDLInt, 32, 1)));
    let shape = prop_oneof![4 => proptest::array::uniform8(extent()), 1 => proptest::array::uniform8(large_extent())];
    let strides = prop_oneof![
        3 => Just(Strides::RowMajor),
        2 => Just(Strides::ColumnMajor),
        2 => (0usize..4, proptest::option::weighted(0.5, edge()), prop_oneof![Just(-1i64), Just(1)])
            .prop_map(|(axis, to, by)| Strides::RowMajorChanged { axis, to, by }),
        2 => Just(Strides::Padded),
        1 => Just(Strides::Broadcast),
        2 => proptest::array::uniform8(edge()).prop_map(Strides::Any),
    ];
    let byte_offset = prop_oneof![
        6 => 0u64..4,
        2 => edge().prop_map(|e| e as u64),
        1 => prop_oneof![Just(u64::MAX), Just(u64::MAX - 15), Just(1u64 << 63)],
    ];
    let whole_elements = proptest::bool::weighted(0.8);
    (device, ndim, dtype, shape, strides, address(), byte_offset, whole_elements).prop_map(
        |(device, ndim, dtype, shape, strides, data, byte_offset, whole_elements)| Input {
            data,
            device,
            ndim,
            dtype,
            shape,
            strides,
            byte_offset,
            whole_elements,
        },
    )
}

/// How many conversions the fast path accepted, and how many the ordered path accepted.
#[derive(Default)]
struct Counts {
    fast: usize,
    ordered: usize,
}

/// Runs both paths on `input` as a view of `T`, rank `R`, extents `E`, layout `L`, space `S`,
/// shared and unique: the fast path accepts only what the ordered one accepts, identically.
fn agree<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    input: &Input,
    counts: &mut Counts,
) -> Result<(), TestCaseError> {
    let mut shape = input.shape;
    let mut strides = input.strides(R);
    let size = size_of::<T>() as u64;
    let tensor = DLTensor {
        data: ptr::without_provenance_mut(input.data),
        device: input.device,
        ndim: input.ndim.unwrap_or(R as i32),
        dtype: input.dtype.unwrap_or(T::DTYPE),
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: if input.whole_elements { input.byte_offset.wrapping_mul(size) } else { input.byte_offset },
    };
    // The fast path ignores what a producer says beyond the struct: it must agree with the ordered
    // path under every option (a legacy producer's null strides, padded sub-byte data).
    let options = [
        ImportOptions::CURRENT,
        ImportOptions::legacy(),
        ImportOptions { subbyte_padded: true, ..ImportOptions::CURRENT },
    ];
    for unique in [false, true] {
        // SAFETY: shape and strides hold 8 entries (R <= 8); an import never reads the data.
        let fast = unsafe { import_fast::<T, R, E, L, S>(&tensor, unique) };
        for options in options {
            // SAFETY: as above.
            let ordered = unsafe { import_ordered::<T, R, E, L, S>(&tensor, options, unique) };
            if let Some(parts) = fast {
                prop_assert_eq!(Ok(parts), ordered, "fast path accepted {:?} under {:?}", input, options);
            }
        }
        // SAFETY: as above.
        let ordered = unsafe { import_ordered::<T, R, E, L, S>(&tensor, ImportOptions::CURRENT, unique) };
        counts.fast += usize::from(fast.is_some());
        counts.ordered += usize::from(ordered.is_ok());
    }
    Ok(())
}

/// Every conversion of one element type `$t`: ranks 0-4, the four layouts, host, device and managed
/// memory.
macro_rules! every_conversion {
    ($input:expr, $counts:expr, $t:ty) => {{
        macro_rules! layouts {
            ($r:literal) => {{
                agree::<$t, $r, Dims<$r>, LayoutRight, Host>($input, $counts)?;
                agree::<$t, $r, Dims<$r>, LayoutLeft, Host>($input, $counts)?;
                agree::<$t, $r, Dims<$r>, LayoutStride, Host>($input, $counts)?;
                agree::<$t, $r, Dims<$r>, LayoutStrideRelaxed, Host>($input, $counts)?;
                agree::<$t, $r, Dims<$r>, LayoutStrideRelaxed, Device>($input, $counts)?;
                agree::<$t, $r, Dims<$r>, LayoutRight, Managed>($input, $counts)?;
            }};
        }
        layouts!(0);
        layouts!(1);
        layouts!(2);
        layouts!(3);
        layouts!(4);
        agree::<$t, 2, (Static<3>, Dyn), LayoutRight, Host>($input, $counts)?;
        agree::<$t, 3, (Dyn, Static<2>, Dyn), LayoutStrideRelaxed, Host>($input, $counts)?;
    }};
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000)
}

#[test]
fn fast_path_accepts_only_what_the_ordered_path_accepts() {
    let cases = cases();
    let mut runner = TestRunner::new(ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() });
    let counts = core::cell::RefCell::new(Counts::default());
    runner
        .run(&input(), |input| {
            let mut counts = counts.borrow_mut();
            let counts = &mut *counts;
            every_conversion!(&input, counts, u8);
            every_conversion!(&input, counts, f32);
            every_conversion!(&input, counts, f64);
            every_conversion!(&input, counts, Rgb);
            every_conversion!(&input, counts, Xyz);
            every_conversion!(&input, counts, crate::dtype::F32x4);
            Ok(())
        })
        .unwrap();
    let counts = counts.into_inner();
    println!("{} conversions accepted by the fast path, {} by the ordered path", counts.fast, counts.ordered);
    // The generator must keep producing tensors both paths accept, or the comparison is empty.
    assert!(counts.fast > cases as usize, "too few fast acceptances ({})", counts.fast);
    assert!(counts.ordered > counts.fast, "no tensor took the ordered path alone");
}

/// A CPU `f32` tensor over the given arrays.
fn tensor(data: usize, shape: &mut [i64], strides: &mut [i64], byte_offset: u64) -> DLTensor {
    DLTensor {
        data: ptr::without_provenance_mut(data),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: shape.len() as i32,
        dtype: f32::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset,
    }
}

/// Which path a tensor takes: `Some(true)` the fast path, `Some(false)` the ordered path alone,
/// `None` neither (both paths must then agree too).
fn path<const R: usize, L: Layout>(tensor: &DLTensor) -> Option<bool> {
    // SAFETY: the tests' arrays hold R entries; an import never reads the data.
    let fast = unsafe { import_fast::<f32, R, Dims<R>, L, Host>(tensor, false) };
    // SAFETY: as above.
    let ordered = unsafe { import_ordered::<f32, R, Dims<R>, L, Host>(tensor, ImportOptions::CURRENT, false) };
    match fast {
        Some(parts) => {
            assert_eq!(Ok(parts), ordered);
            Some(true)
        }
        None => ordered.is_ok().then_some(false),
    }
}

#[test]
fn common_tensors_take_the_fast_path() {
    let data = 0x1_0000;
    for shape in [vec![1 << 18], vec![512, 512], vec![64, 64, 64], vec![16, 16, 32, 32], vec![1, 1, 1, 1]] {
        let rank = shape.len();
        let mut row = vec![1i64; rank];
        let mut column = vec![1i64; rank];
        for axis in (0..rank - 1).rev() {
            row[axis] = row[axis + 1] * shape[axis + 1];
        }
        for axis in 1..rank {
            column[axis] = column[axis - 1] * shape[axis - 1];
        }
        let mut pitched = row.clone();
        pitched[0] *= 2;
        let mut shape_ = shape.clone();
        macro_rules! fast {
            ($r:literal) => {{
                let t = tensor(data, &mut shape_, &mut row, 0);
                assert_eq!(path::<$r, LayoutRight>(&t), Some(true), "{shape:?} right");
                let t = tensor(data, &mut shape_, &mut column, 0);
                assert_eq!(path::<$r, LayoutLeft>(&t), Some(true), "{shape:?} left");
                let t = tensor(data, &mut shape_, &mut pitched, 64);
                assert_eq!(path::<$r, LayoutStride>(&t), Some(true), "{shape:?} stride");
                assert_eq!(path::<$r, LayoutStrideRelaxed>(&t), Some(true), "{shape:?} relaxed");
            }};
        }
        match rank {
            1 => fast!(1),
            2 => fast!(2),
            3 => fast!(3),
            _ => fast!(4),
        }
    }
}

#[test]
fn the_edges_of_the_fast_path() {
    let bound = fast_bound(2, 4) as i64;
    let data = 0x1_0000;
    // Extents: [1, bound] takes the fast path; above it, or 0, the ordered path (which accepts).
    for (extent, fast) in [(bound, true), (bound + 1, false), (1, true), (0, false)] {
        let (mut shape, mut strides) = ([extent, 1], [1, 1]);
        let t = tensor(data, &mut shape, &mut strides, 0);
        assert_eq!(path::<2, LayoutRight>(&t), Some(fast), "extent {extent}");
        assert_eq!(path::<2, LayoutStrideRelaxed>(&t), Some(fast), "extent {extent}");
    }
    // Strides: below the bound (relaxed, zero included) or in [1, bound] (stride).
    for (stride, relaxed, positive) in
        [(0, true, false), (bound - 1, true, true), (bound, false, true), (bound + 1, false, false)]
    {
        let (mut shape, mut strides) = ([2, 1], [stride, 1]);
        let t = tensor(data, &mut shape, &mut strides, 0);
        assert_eq!(path::<2, LayoutStrideRelaxed>(&t), Some(relaxed), "stride {stride}");
        assert_eq!(path::<2, LayoutStride>(&t), if stride == 0 { None } else { Some(positive) }, "stride {stride}");
    }
    // A negative stride is valid for the relaxed layout with an offset; it takes the ordered path.
    let (mut shape, mut strides) = ([4, 1], [-1, 1]);
    assert_eq!(path::<2, LayoutStrideRelaxed>(&tensor(data, &mut shape, &mut strides, 12)), Some(false));
    // Relaxed element offsets: below the bound, whole elements only.
    let (mut shape, mut strides) = ([2, 2], [2, 1]);
    for (byte_offset, outcome) in [(4 * (bound as u64 - 1), Some(true)), (4 * bound as u64, Some(false)), (6, None)] {
        let t = tensor(data, &mut shape, &mut strides, byte_offset);
        assert_eq!(path::<2, LayoutStrideRelaxed>(&t), outcome, "byte offset {byte_offset}");
    }
    // The first element below 2^63 takes the fast path; at or above, the ordered path, which
    // rejects a range that wraps (16 bytes from 2^64 - 16).
    for (address, outcome) in [
        ((1usize << 63) - 16, Some(true)),
        (1 << 63, Some(false)),
        (usize::MAX - 31, Some(false)),
        (usize::MAX - 15, None),
    ] {
        let (mut shape, mut strides) = ([2, 2], [2, 1]);
        let t = tensor(address, &mut shape, &mut strides, 0);
        assert_eq!(path::<2, LayoutRight>(&t), outcome, "address {address:#x}");
    }
    // The number of elements: products of bounded extents beyond isize take the ordered path.
    let big = fast_bound(4, 4) as i64;
    let (mut shape, mut strides) = ([big, big, big, big], [0, 0, 0, 0]);
    assert_eq!(path::<4, LayoutStrideRelaxed>(&tensor(data, &mut shape, &mut strides, 0)), None);
    let (mut shape, mut strides) = ([big, big, 4, 1], [0, 0, 0, 0]);
    assert_eq!(path::<4, LayoutStrideRelaxed>(&tensor(data, &mut shape, &mut strides, 0)), Some(true));
}

#[test]
fn fast_bound_keeps_spans_within_their_limit() {
    for rank in 0..=8 {
        for size in [1usize, 2, 3, 4, 8, 12, 16, 32, 1024, 1 << 20] {
            let bound = fast_bound(rank, size);
            assert!(bound.is_power_of_two() && bound >= 1 << 18, "rank {rank} size {size}: {bound}");
            // The highest offset reached is below (rank + 1)·bound², in bytes within the limit.
            let elements = (rank as u128 + 1) * (bound as u128).pow(2);
            assert!(elements * size as u128 <= check::FAST_SPAN_BYTES as u128, "rank {rank} size {size}");
            // The relaxed offset's rotation lands every remainder beyond the bound.
            if size.is_power_of_two() && size > 1 {
                assert!(check::element_offset_fast(1, size) >= bound);
                assert!(check::element_offset_fast(size as u64 - 1, size) >= bound);
            }
        }
    }
    assert_eq!(fast_bound(2, 0), 0);
}
