//! Random `DLTensor`s thrown at every conversion (three element types, ranks 0–3, four layouts,
//! three memory spaces, shared and mutable): never a panic, and every accepted view keeps its
//! promises: its reachable offsets lie in `[0, span)`, its bytes fit `isize` without wrapping the
//! address space, and, when the data lies in the test's buffer, every element can be read and the
//! view exports and re-imports unchanged. The dynamically typed views agree with the typed
//! import: a tensor they refuse is refused by every typed conversion, and their typed conversion
//! gives exactly the typed import's result, view or error.

mod support;

use dlspan::ffi::{DLDataType, DLDevice, DLDeviceType};
use dlspan::*;
use proptest::prelude::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

const BUFFER_WORDS: usize = 512;

/// How many views were accepted, and how many of those were read and round-tripped: the test
/// asserts both are substantial, so a generator that stops producing valid tensors fails it.
static ACCEPTED: AtomicUsize = AtomicUsize::new(0);
static READ: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Debug)]
enum Data {
    Null,
    /// Byte offset into the test's buffer.
    Buffer(usize),
    /// An address that must never be dereferenced.
    Fake(usize),
}

#[derive(Clone, Debug)]
struct Input {
    ndim: i32,
    shape: Option<Vec<i64>>,
    strides: Option<Vec<i64>>,
    byte_offset: u64,
    data: Data,
    device: i32,
    device_id: i32,
    dtype: DLDataType,
}

fn extent() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => 0i64..5,
        1 => -3i64..0,
        1 => prop_oneof![Just(1i64 << 31), Just(1i64 << 40), Just(1i64 << 62), Just(i64::MAX)],
    ]
}

fn stride() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => -6i64..=6,
        1 => prop_oneof![Just(1i64 << 40), Just(-(1i64 << 40)), Just(i64::MAX), Just(i64::MIN), Just(1i64 << 61)],
    ]
}

/// Tensors likely to be accepted by some conversion: small shapes, strides that are row-major,
/// column-major, padded, or random small (with negative and zero ones), element-aligned offsets.
fn well_formed() -> impl Strategy<Value = Input> {
    let dtype = prop_oneof![Just(u8::DTYPE), Just(i32::DTYPE), Just(f64::DTYPE)];
    (
        0i32..=3,
        dtype,
        proptest::array::uniform3(0i64..5),
        0u8..5,
        proptest::array::uniform3(-3i64..=3),
        0u64..6,
        0usize..4,
    )
        .prop_map(|(ndim, dtype, extents, kind, random, offset_elements, misalign)| {
            let rank = ndim as usize;
            let shape: Vec<i64> = extents[..rank].to_vec();
            let mut strides = vec![0i64; rank];
            let mut acc = 1;
            match kind {
                0 | 2 => {
                    for axis in (0..rank).rev() {
                        strides[axis] = acc;
                        acc *= shape[axis].max(1) + if kind == 2 { 1 } else { 0 };
                    }
                }
                1 => {
                    for axis in 0..rank {
                        strides[axis] = acc;
                        acc *= shape[axis].max(1);
                    }
                }
                _ => strides.copy_from_slice(&random[..rank]),
            }
            let pad = |v: Vec<i64>| v.into_iter().chain(std::iter::repeat(1)).take(8).collect::<Vec<_>>();
            let size = u64::from(dtype.bits / 8);
            Input {
                ndim,
                shape: Some(pad(shape)),
                strides: if kind == 4 { None } else { Some(pad(strides)) },
                byte_offset: offset_elements * size,
                data: Data::Buffer(if misalign == 0 { 1 } else { 8 * misalign }),
                device: 1,
                device_id: 0,
                dtype,
            }
        })
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![hostile(), well_formed()]
}

fn hostile() -> impl Strategy<Value = Input> {
    let dims = prop_oneof![1 => Just(-1i32), 10 => 0i32..=3, 1 => Just(4)];
    let shape = proptest::option::weighted(0.95, proptest::collection::vec(extent(), 8));
    let strides = proptest::option::weighted(0.85, proptest::collection::vec(stride(), 8));
    let byte_offset = prop_oneof![8 => 0u64..48, 1 => Just(u64::MAX - 7), 1 => Just(1u64 << 62)];
    let data = prop_oneof![
        1 => Just(Data::Null),
        8 => (0usize..64).prop_map(Data::Buffer),
        1 => prop_oneof![Just(usize::MAX - 15), Just(1usize << 47), Just(3usize)].prop_map(Data::Fake),
    ];
    let device = prop_oneof![6 => Just(1i32), 1 => Just(2), 1 => Just(3), 1 => Just(13), 1 => Just(99)];
    let device_id = prop_oneof![6 => Just(0i32), 1 => Just(1), 1 => Just(-1), 1 => Just(i32::MIN)];
    let dtype = prop_oneof![
        3 => Just(u8::DTYPE),
        3 => Just(i32::DTYPE),
        3 => Just(f64::DTYPE),
        1 => (0u8..20, prop_oneof![Just(8u8), Just(32), Just(64)], 1u16..3)
            .prop_map(|(code, bits, lanes)| DLDataType { code, bits, lanes }),
    ];
    (dims, shape, strides, byte_offset, data, (device, device_id), dtype).prop_map(
        |(ndim, shape, strides, byte_offset, data, (device, device_id), dtype)| Input {
            ndim,
            shape,
            strides,
            byte_offset,
            data,
            device,
            device_id,
            dtype,
        },
    )
}

struct World {
    buffer: Vec<u64>,
}

impl World {
    fn crafted(&self, input: &Input) -> support::Crafted {
        let data = match input.data {
            Data::Null => std::ptr::null_mut(),
            Data::Buffer(offset) => self.buffer.as_ptr().cast::<u8>().wrapping_add(offset).cast_mut().cast::<c_void>(),
            Data::Fake(address) => address as *mut c_void,
        };
        support::Crafted {
            data,
            device: DLDevice { device_type: DLDeviceType(input.device), device_id: input.device_id },
            ndim: input.ndim,
            dtype: input.dtype,
            // Always 8 entries: reading `ndim` (at most 4) of them stays in bounds.
            shape: input.shape.clone(),
            strides: input.strides.clone(),
            byte_offset: input.byte_offset,
        }
    }

    fn buffer_range(&self) -> std::ops::Range<usize> {
        let start = self.buffer.as_ptr() as usize;
        start..start + BUFFER_WORDS * 8
    }
}

/// Checks the promises of an accepted view (any space): offsets in range, bytes in range.
fn check_mapping<T, const R: usize, L: Layout>(mapping: &Mapping<R, Dims<R>, L>, address: usize) {
    ACCEPTED.fetch_add(1, Ordering::Relaxed);
    let span = mapping.required_span_size();
    let bytes = span.checked_mul(std::mem::size_of::<T>()).expect("span bytes fit usize");
    assert!(bytes <= isize::MAX as usize, "span bytes fit isize");
    assert!(address.checked_add(bytes).is_some(), "range does not wrap the address space");
    let expected_size = if mapping.extents().contains(&0) {
        0
    } else {
        mapping.extents().iter().try_fold(1usize, |a, &e| a.checked_mul(e)).expect("an accepted view's size fits usize")
    };
    assert_eq!(mapping.size(), expected_size);
    for index in support::indices(mapping.extents(), 4096) {
        let offset = mapping.index_offset(index).expect("in-bounds index");
        assert!(offset >= 0 && (offset as usize) < span, "offset {offset} of {index:?} outside [0, {span})");
    }
}

/// For a host view inside the buffer: reads every element, and round-trips the export.
fn check_host_view<T: DlElement + PartialEq + std::fmt::Debug, const R: usize, L: Layout>(
    world: &World,
    view: &HostMdspan<'_, T, R, L>,
) {
    let start = view.data_handle() as usize;
    let end = start + view.mapping().required_span_size() * std::mem::size_of::<T>();
    let inside = world.buffer_range().contains(&start) && end <= world.buffer_range().end;
    if view.is_empty() || !inside || view.size() > 4096 {
        return;
    }
    let values = view.to_vec();
    assert_eq!(values.len(), view.size());
    let by_index: Vec<T> = support::indices(view.extents(), 4096).into_iter().map(|i| view[i]).collect();
    assert_eq!(values, by_index);
    let dl = to_dlpack_tensor(view).expect("an accepted view exports");
    let handle = dl.get();
    // SAFETY: the export describes memory inside the live buffer, unwritten here.
    let back = unsafe { to_host_mdspan::<T, R, L>(&handle) }.expect("an export re-imports");
    assert_eq!(back.to_vec(), values);
    READ.fetch_add(1, Ordering::Relaxed);
}

/// Whether two conversion results are the same view (pointer and mapping) or the same error.
fn same_result<T, const R: usize, L: Layout>(
    a: Result<(*const T, Mapping<R, Dims<R>, L>), DlpackError>,
    b: Result<(*const T, Mapping<R, Dims<R>, L>), DlpackError>,
) {
    assert_eq!(a, b, "typed conversion through the dynamic view differs from the typed import");
}

macro_rules! try_every_conversion {
    ($world:expr, $crafted:expr, $t:ty, $r:literal) => {{
        let tensor = $crafted.tensor();
        let address = tensor.data as usize;
        // SAFETY: as for the typed conversions below.
        let dynamic = unsafe { DynMdspan::<Host>::from_dltensor(&tensor) };
        // SAFETY: as above; nothing is written.
        let mut dynamic_mut = unsafe { DynMdspanMut::<Host>::from_dltensor(&tensor) };
        macro_rules! layout {
            ($l:ty) => {{
                // SAFETY: the data is a live buffer, null, or an address never dereferenced (device
                // and managed views are only checked, host views only read inside the buffer); shape
                // and strides hold 8 entries.
                let direct = unsafe { to_host_mdspan::<$t, $r, $l>(&tensor) };
                let parts = |v: HostMdspan<'_, $t, $r, $l>| (v.data_handle(), *v.mapping());
                match &dynamic {
                    Ok(d) => {
                        same_result(d.typed::<$t, $r, $l>().map(parts), direct.map(parts));
                        if let Ok(v) = direct {
                            let bytes = d.byte_range();
                            let (low, high) = (
                                v.data_handle() as usize,
                                v.data_handle() as usize + v.mapping().required_span_size() * std::mem::size_of::<$t>(),
                            );
                            assert!(
                                v.is_empty() || (bytes.start >= low && bytes.end == high),
                                "dynamic byte range {bytes:?} vs typed span {low:#x}..{high:#x}"
                            );
                        }
                    }
                    Err(_) => assert!(direct.is_err(), "the dynamic view refuses what the typed import accepts"),
                }
                // SAFETY: as above; the mutable view is not written.
                let direct_mut = unsafe { to_host_mdspan_mut::<$t, $r, $l>(&tensor) };
                let parts_mut = |v: HostMdspanMut<'_, $t, $r, $l>| (v.data_handle().cast_const(), *v.mapping());
                match dynamic_mut {
                    Ok(ref mut d) => same_result(d.typed_mut::<$t, $r, $l>().map(parts_mut), direct_mut.map(parts_mut)),
                    Err(_) => {
                        assert!(direct_mut.is_err(), "the mutable dynamic view refuses what the typed import accepts")
                    }
                }
                // SAFETY: as above.
                if let Ok(v) = unsafe { to_host_mdspan::<$t, $r, $l>(&tensor) } {
                    check_mapping::<$t, $r, $l>(v.mapping(), v.data_handle() as usize);
                    check_host_view::<$t, $r, $l>($world, &v);
                }
                // SAFETY: as above; the mutable view is not written.
                if let Ok(v) = unsafe { to_host_mdspan_mut::<$t, $r, $l>(&tensor) } {
                    assert!(v.mapping().is_unique(), "mutable views are unique");
                    check_mapping::<$t, $r, $l>(v.mapping(), v.data_handle() as usize);
                }
                // SAFETY: as above.
                if let Ok(v) = unsafe { to_device_mdspan::<$t, $r, $l>(&tensor) } {
                    check_mapping::<$t, $r, $l>(v.mapping(), v.data_handle() as usize);
                    assert!(v.ordinal() >= 0, "a device view's ordinal is a CUDA ordinal (rule I2)");
                    let _ = to_dlpack_tensor(&v);
                }
                // SAFETY: as above.
                if let Ok(v) = unsafe { to_managed_mdspan_mut::<$t, $r, $l>(&tensor) } {
                    check_mapping::<$t, $r, $l>(v.mapping(), v.data_handle() as usize);
                }
                // SAFETY: as above.
                let _ = unsafe {
                    Mdspan::<$t, $r, Dims<$r>, $l, Host>::from_dltensor_with(&tensor, ImportOptions::legacy())
                };
            }};
        }
        layout!(LayoutRight);
        layout!(LayoutLeft);
        layout!(LayoutStride);
        layout!(LayoutStrideRelaxed);
        let _ = address;
    }};
}

/// Random tensors per run; `DLSPAN_PROPTEST_CASES` raises it for a deeper search.
fn cases() -> u32 {
    std::env::var("DLSPAN_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

#[test]
fn conversions_never_panic_and_keep_their_promises() {
    let cases = cases();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases, ..ProptestConfig::default() });
    runner
        .run(&input(), |input| {
            conversions_of(&input);
            Ok(())
        })
        .unwrap();
    let (accepted, read) = (ACCEPTED.load(Ordering::Relaxed), READ.load(Ordering::Relaxed));
    println!("{accepted} views accepted, {read} read and round-tripped, from {cases} random tensors");
    assert!(accepted > cases as usize, "too few accepted views ({accepted}): the generator lost its valid tensors");
    assert!(read > cases as usize / 4, "too few views read ({read})");
}

fn conversions_of(input: &Input) {
    {
        let world = World { buffer: (0..BUFFER_WORDS as u64).collect() };
        let mut crafted = world.crafted(input);
        // Shape and strides always have 8 entries when present (the strategy makes them so).
        try_every_conversion!(&world, crafted, u8, 0);
        try_every_conversion!(&world, crafted, u8, 1);
        try_every_conversion!(&world, crafted, u8, 2);
        try_every_conversion!(&world, crafted, u8, 3);
        try_every_conversion!(&world, crafted, i32, 1);
        try_every_conversion!(&world, crafted, i32, 2);
        try_every_conversion!(&world, crafted, i32, 3);
        try_every_conversion!(&world, crafted, f64, 0);
        try_every_conversion!(&world, crafted, f64, 2);
        try_every_conversion!(&world, crafted, f64, 3);
    }
}

proptest! {

    #[test]
    fn slice_constructors_never_panic(
        len in 0usize..64,
        extents in proptest::array::uniform3(0usize..6),
        strides in proptest::array::uniform3(-8isize..8),
        offset in 0usize..40,
    ) {
        let data: Vec<u16> = (0..len as u16).collect();
        if let Ok(v) = HostMdspan::<u16, 3, LayoutStrideRelaxed>::from_slice_relaxed(&data, extents, strides, offset) {
            prop_assert!(v.mapping().required_span_size() <= len);
            prop_assert_eq!(v.to_vec().len(), v.size());
            for (i, index) in support::indices(extents, 1000).into_iter().enumerate() {
                prop_assert_eq!(Some(&v.to_vec()[i]), v.get(index));
            }
        }
        if let Ok(v) = HostMdspan::<u16, 3, LayoutStride>::from_slice_strided(&data, extents, strides) {
            prop_assert!(v.strides().iter().all(|&s| s > 0));
            prop_assert_eq!(v.iter().count(), v.size());
        }
        let mut owned = data.clone();
        if let Ok(mut v) = HostMdspanMut::<u16, 3, LayoutStrideRelaxed>::from_slice_relaxed(&mut owned, extents, strides, offset) {
            let size = v.size();
            // Unique: writing every element once through iter_mut touches `size` distinct slots.
            v.iter_mut().for_each(|x| *x = u16::MAX);
            prop_assert_eq!(owned.iter().filter(|&&x| x == u16::MAX).count(), size);
        }
    }
}
