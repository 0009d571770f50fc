//! `DLTensor` → typed view with full validation (ranks 2 and 4, every layout), and view →
//! `DlpackTensor` → `get()`, each beside an unchecked hand-written floor. Prints allocations per
//! operation after the timings.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{Criterion, criterion_group, criterion_main};
use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
use dlspan::*;
use dlspan_benches::{CountingAllocator, allocations_per_call};
use std::hint::black_box;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// A CPU float32 tensor of `shape` with row-major strides, over `data`.
struct Owned<const R: usize> {
    data: Vec<f32>,
    shape: [i64; R],
    strides: [i64; R],
}

impl<const R: usize> Owned<R> {
    fn new(shape: [i64; R]) -> Self {
        let mut strides = [0i64; R];
        let mut acc = 1;
        for axis in (0..R).rev() {
            strides[axis] = acc;
            acc *= shape[axis];
        }
        Self { data: vec![1.0; acc as usize], shape, strides }
    }

    /// Column-major strides instead (for the layout_left import).
    fn column_major(&mut self) {
        let mut acc = 1;
        for axis in 0..R {
            self.strides[axis] = acc;
            acc *= self.shape[axis];
        }
    }

    fn tensor(&mut self) -> DLTensor {
        DLTensor {
            data: self.data.as_mut_ptr().cast(),
            device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            ndim: R as i32,
            dtype: f32::DTYPE,
            shape: self.shape.as_mut_ptr(),
            strides: self.strides.as_mut_ptr(),
            byte_offset: 0,
        }
    }
}

/// Every routine returns a checksum of what it produced (pointer and extents), so each measures its
/// own work plus the same small harness cost, and none can be optimised away.
#[inline(always)]
fn checksum<const R: usize>(ptr: *const f32, extents: [usize; R]) -> usize {
    extents.iter().fold(ptr as usize, |acc, &e| acc ^ e)
}

/// The floor of a compact import: what an unchecked consumer of a compact tensor does (read the
/// pointer and the shape, no validation).
#[inline(never)]
fn unchecked<const R: usize>(t: &DLTensor) -> usize {
    // SAFETY: the bench's tensors have `R` extents.
    let shape = unsafe { &*t.shape.cast::<[i64; R]>() };
    checksum(t.data.cast::<f32>().cast_const(), shape.map(|e| e as usize))
}

/// The floor of a strided import: an unchecked consumer of a strided tensor also reads the strides
/// and the byte offset.
#[inline(never)]
fn unchecked_strided<const R: usize>(t: &DLTensor) -> usize {
    // SAFETY: the bench's tensors have `R` extents and strides.
    let shape = unsafe { &*t.shape.cast::<[i64; R]>() };
    // SAFETY: as above.
    let strides = unsafe { &*t.strides.cast::<[i64; R]>() };
    let data = t.data.cast::<u8>().wrapping_add(t.byte_offset as usize).cast::<f32>();
    checksum(data, shape.map(|e| e as usize)) ^ strides.iter().fold(0, |acc, &s| acc ^ s as usize)
}

#[inline(never)]
fn import<const R: usize, L: Layout>(t: &DLTensor) -> usize {
    // SAFETY: the bench's tensors describe live buffers.
    match unsafe { to_host_mdspan::<f32, R, L>(t) } {
        Ok(view) => checksum(view.data_handle(), view.extents()),
        Err(_) => 0,
    }
}

fn import_group<const R: usize>(c: &mut Criterion, shape: [i64; R]) {
    let mut owned = Owned::new(shape);
    let tensor = owned.tensor();
    let mut column_major = Owned::new(shape);
    column_major.column_major();
    let left_tensor = column_major.tensor();
    let mut group = c.benchmark_group(format!("import_rank{R}"));
    group.bench_function("unchecked_floor", |b| b.iter(|| unchecked::<R>(black_box(&tensor))));
    group.bench_function("unchecked_floor_strided", |b| b.iter(|| unchecked_strided::<R>(black_box(&tensor))));
    group.bench_function("layout_right", |b| b.iter(|| import::<R, LayoutRight>(black_box(&tensor))));
    group.bench_function("layout_left", |b| b.iter(|| import::<R, LayoutLeft>(black_box(&left_tensor))));
    group.bench_function("layout_stride", |b| b.iter(|| import::<R, LayoutStride>(black_box(&tensor))));
    group.bench_function("layout_stride_relaxed", |b| b.iter(|| import::<R, LayoutStrideRelaxed>(black_box(&tensor))));
    group.finish();
    for ok in [
        import::<R, LayoutRight>(&tensor),
        import::<R, LayoutLeft>(&left_tensor),
        import::<R, LayoutStride>(&tensor),
        import::<R, LayoutStrideRelaxed>(&tensor),
    ] {
        assert_ne!(ok, 0, "every benched import succeeds");
    }
    let allocs = allocations_per_call(10_000, || {
        black_box(import::<R, LayoutStride>(black_box(&tensor)));
    });
    println!("import_rank{R}: {allocs} allocations per validated import");
}

/// Exports a view and takes its `DLTensor`; the checksum reads the fields a consumer reads.
#[inline(never)]
fn export_get(view: &HostMdspan<'_, f32, 2>) -> usize {
    match to_dlpack_tensor(view) {
        Ok(dl) => consume(&dl.get()),
        Err(_) => 0,
    }
}

/// What a consumer reads of an exported tensor: data, ndim, shape and strides, one scalar load
/// each, as C code indexing `shape[i]` does. (A 16-byte vector load of two entries just written by
/// separate 8-byte stores would measure a store-forwarding stall, not the export.)
#[inline(always)]
fn consume(t: &DLTensor) -> usize {
    let t = black_box(t);
    let mut sum = (t.data as usize) ^ (t.ndim as usize);
    for i in 0..2 {
        // `wrapping_add` keeps the address arithmetic safe; the reads below are what need care.
        let (shape, strides) = (t.shape.wrapping_add(i), t.strides.wrapping_add(i));
        // SAFETY: every tensor passed here has rank 2 with live shape and strides.
        let extent = unsafe { shape.read_volatile() };
        // SAFETY: as above.
        let stride = unsafe { strides.read_volatile() };
        sum ^= (extent ^ stride) as usize;
    }
    sum
}

/// The floor of an export: filling a `DLTensor` by hand from known parts.
#[inline(never)]
fn export_floor(data: *const f32, shape: &[i64; 2], strides: &[i64; 2]) -> usize {
    let t = DLTensor {
        data: data.cast_mut().cast(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: 2,
        dtype: f32::DTYPE,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        byte_offset: 0,
    };
    consume(&t)
}

fn benches(c: &mut Criterion) {
    import_group::<2>(c, [512, 512]);
    import_group::<4>(c, [8, 16, 32, 64]);

    let data = vec![1.0f32; 512 * 512];
    let view = HostMdspan::<f32, 2>::from_slice(&data, [512, 512]).unwrap();
    let (shape, strides) = ([512i64, 512], [512i64, 1]);
    let mut group = c.benchmark_group("export_rank2");
    group.bench_function("hand_filled_floor", |b| {
        b.iter(|| export_floor(black_box(data.as_ptr()), black_box(&shape), black_box(&strides)))
    });
    group.bench_function("to_dlpack_tensor_get", |b| b.iter(|| export_get(black_box(&view))));
    group.finish();
    let allocs = allocations_per_call(10_000, || {
        black_box(export_get(black_box(&view)));
    });
    println!("export_rank2: {allocs} allocations per to_dlpack_tensor + get");
}

criterion_group!(convert, benches);
criterion_main!(convert);
