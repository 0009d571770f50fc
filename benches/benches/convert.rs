//! `DLTensor` → typed view with full validation, ranks 1–4, every layout, beside the unchecked
//! floor and dlpark importing the same tensor; and view → `DLTensor` (`to_dlpack_tensor` + `get`)
//! beside a hand-filled struct. Allocations per operation are recorded for the report.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{Criterion, criterion_group, criterion_main};
use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
use dlspan::*;
use dlspan_benches::import::{ELEMENTS, SHAPE_1, SHAPE_2, SHAPE_3, SHAPE_4, Tensor};
use dlspan_benches::{CountingAllocator, record_allocations};
use std::hint::black_box;
use std::time::Duration;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Every routine returns a checksum of what it produced (pointer and extents), so each measures its
/// own work plus the same small harness cost, and none can be optimised away.
#[inline(always)]
fn checksum(ptr: *const f32, extents: &[usize]) -> usize {
    extents.iter().fold(ptr as usize, |acc, &e| acc ^ e)
}

/// The floor of a compact import: read the pointer and the shape, check nothing.
#[inline(never)]
fn floor<const R: usize>(t: &DLTensor) -> usize {
    // SAFETY: the bench's tensors have `R` extents.
    let shape = unsafe { &*t.shape.cast::<[i64; R]>() };
    checksum(t.data.cast::<f32>(), &shape.map(|e| e as usize))
}

/// The floor of a strided import: also read the strides and the byte offset.
#[inline(never)]
fn floor_strided<const R: usize>(t: &DLTensor) -> usize {
    // SAFETY: the bench's tensors have `R` extents and strides.
    let shape = unsafe { &*t.shape.cast::<[i64; R]>() };
    // SAFETY: as above.
    let strides = unsafe { &*t.strides.cast::<[i64; R]>() };
    let data = t.data.cast::<u8>().wrapping_add(t.byte_offset as usize).cast::<f32>();
    checksum(data, &shape.map(|e| e as usize)) ^ strides.iter().fold(0, |acc, &s| acc ^ s as usize)
}

#[inline(never)]
fn dlspan_import<const R: usize, L: Layout>(t: &DLTensor) -> usize {
    // SAFETY: the bench's tensors describe live buffers.
    match unsafe { to_host_mdspan::<f32, R, L>(t) } {
        Ok(view) => checksum(view.data_handle(), &view.extents()),
        Err(_) => 0,
    }
}

/// dlpark's `DLTensor` has the same `#[repr(C)]` layout as dlspan's (both mirror dlpack.h).
fn as_dlpark(t: &DLTensor) -> &dlpark::ffi::DLTensor {
    // SAFETY: identical layouts (both are dlpack.h's DLTensor), same lifetime.
    unsafe { &*(t as *const DLTensor).cast::<dlpark::ffi::DLTensor>() }
}

/// dlpark's checked typed import: `TensorRef::from_raw` then `cpu_slice` (row-major compact only).
#[inline(never)]
fn dlpark_slice(t: &dlpark::ffi::DLTensor) -> usize {
    // SAFETY: the bench's tensors describe live buffers.
    let Ok(tensor) = (unsafe { dlpark::tensor::TensorRef::from_raw(t) }) else { return 0 };
    // SAFETY: as above.
    match unsafe { tensor.cpu_slice::<f32>() } {
        Ok(slice) => checksum(slice.as_ptr(), &[slice.len()]),
        Err(_) => 0,
    }
}

/// dlpark's checked strided import, through ndarray: a borrowed legacy wrapper (no deleter) around
/// the tensor, then `ArrayViewD::try_from_dlpack`.
#[inline(never)]
fn dlpark_ndarray(t: &dlpark::ffi::DLTensor) -> usize {
    use dlpark::TryFromDlpack;
    let mut wrapper = dlpark::ffi::DLManagedTensor { dl_tensor: *t, manager_ctx: std::ptr::null_mut(), deleter: None };
    // SAFETY: a live wrapper without a deleter, outliving the view below.
    let Ok(managed) = (unsafe { dlpark::Managed::<dlpark::ffi::DLManagedTensor>::from_raw(&mut wrapper) }) else {
        return 0;
    };
    // SAFETY: the tensor describes a live buffer.
    match unsafe { ndarray::ArrayViewD::<f32>::try_from_dlpack(&managed, ()) } {
        Ok(view) => checksum(view.as_ptr(), view.shape()),
        Err(_) => 0,
    }
}

fn import_group<const R: usize>(c: &mut Criterion, data: &mut [f32], shape: [i64; R]) {
    let mut row = Tensor::row_major(shape);
    let mut column = Tensor::column_major(shape);
    let mut pitched = Tensor::pitched(shape);
    let (row, column, pitched) = (row.dl(data), column.dl(data), pitched.dl(data));
    let group_name = format!("import_rank{R}");
    let checks: [(&str, usize); 9] = [
        ("floor", floor::<R>(&row)),
        ("floor_strided", floor_strided::<R>(&pitched)),
        ("dlspan_right", dlspan_import::<R, LayoutRight>(&row)),
        ("dlspan_left", dlspan_import::<R, LayoutLeft>(&column)),
        ("dlspan_stride", dlspan_import::<R, LayoutStride>(&pitched)),
        ("dlspan_relaxed", dlspan_import::<R, LayoutStrideRelaxed>(&pitched)),
        ("dlpark_slice", dlpark_slice(as_dlpark(&row))),
        ("dlpark_ndarray_left", dlpark_ndarray(as_dlpark(&column))),
        ("dlpark_ndarray_strided", dlpark_ndarray(as_dlpark(&pitched))),
    ];
    for (name, result) in checks {
        assert_ne!(result, 0, "{group_name}/{name} must succeed on its tensor");
    }
    let mut group = c.benchmark_group(&group_name);
    group.bench_function("floor", |b| b.iter(|| floor::<R>(black_box(&row))));
    group.bench_function("floor_strided", |b| b.iter(|| floor_strided::<R>(black_box(&pitched))));
    group.bench_function("dlspan_right", |b| b.iter(|| dlspan_import::<R, LayoutRight>(black_box(&row))));
    group.bench_function("dlspan_left", |b| b.iter(|| dlspan_import::<R, LayoutLeft>(black_box(&column))));
    group.bench_function("dlspan_stride", |b| b.iter(|| dlspan_import::<R, LayoutStride>(black_box(&pitched))));
    group.bench_function("dlspan_relaxed", |b| b.iter(|| dlspan_import::<R, LayoutStrideRelaxed>(black_box(&pitched))));
    group.bench_function("dlpark_slice", |b| b.iter(|| dlpark_slice(black_box(as_dlpark(&row)))));
    group.bench_function("dlpark_ndarray_left", |b| b.iter(|| dlpark_ndarray(black_box(as_dlpark(&column)))));
    group.bench_function("dlpark_ndarray_strided", |b| b.iter(|| dlpark_ndarray(black_box(as_dlpark(&pitched)))));
    group.finish();
    record_allocations(&group_name, "dlspan_right", || sink(dlspan_import::<R, LayoutRight>(black_box(&row))));
    record_allocations(&group_name, "dlspan_stride", || sink(dlspan_import::<R, LayoutStride>(black_box(&pitched))));
    record_allocations(&group_name, "dlspan_relaxed", || {
        sink(dlspan_import::<R, LayoutStrideRelaxed>(black_box(&pitched)))
    });
    record_allocations(&group_name, "dlpark_slice", || sink(dlpark_slice(black_box(as_dlpark(&row)))));
    record_allocations(&group_name, "dlpark_ndarray_strided", || sink(dlpark_ndarray(black_box(as_dlpark(&pitched)))));
}

/// Keeps a result alive for the optimiser.
fn sink(value: usize) {
    black_box(value);
}

/// Exports a view and takes its `DLTensor`, reading what a consumer reads.
#[inline(never)]
fn export_get<const R: usize>(view: &HostMdspan<'_, f32, R, LayoutStride>) -> usize {
    match to_dlpack_tensor(view) {
        Ok(dl) => consume::<R>(&dl.get()),
        Err(_) => 0,
    }
}

/// What a consumer reads of an exported tensor: data, ndim, shape and strides, one scalar load
/// each, as C code indexing `shape[i]` does. (A vector load of two entries just written by separate
/// stores would measure a store-forwarding stall, not the export.)
#[inline(always)]
fn consume<const R: usize>(t: &DLTensor) -> usize {
    let t = black_box(t);
    let mut sum = (t.data as usize) ^ (t.ndim as usize);
    for i in 0..R {
        let (shape, strides) = (t.shape.wrapping_add(i), t.strides.wrapping_add(i));
        // SAFETY: every tensor passed here has rank R with live shape and strides.
        let extent = unsafe { shape.read_volatile() };
        // SAFETY: as above.
        let stride = unsafe { strides.read_volatile() };
        sum ^= (extent ^ stride) as usize;
    }
    sum
}

/// The floor of an export from a view, written by hand: the view's extents and strides converted to
/// `int64_t` arrays, and a `DLTensor` pointing at them (dlpark has no borrowed export: this is what
/// its users write).
#[inline(never)]
fn export_floor_from_view<const R: usize>(data: *const f32, extents: &[usize; R], strides: &[isize; R]) -> usize {
    let shape = extents.map(|e| e as i64);
    let strides = strides.map(|s| s as i64);
    consume::<R>(&cpu_tensor(data, &shape, &strides))
}

/// A lower reference: filling a `DLTensor` from shape and strides arrays that already exist (no
/// export from a view can avoid writing those arrays).
#[inline(never)]
fn export_floor<const R: usize>(data: *const f32, shape: &[i64; R], strides: &[i64; R]) -> usize {
    consume::<R>(&cpu_tensor(data, shape, strides))
}

/// A host `f32` `DLTensor` over the given arrays, as both floors fill it.
#[inline(always)]
fn cpu_tensor<const R: usize>(data: *const f32, shape: &[i64; R], strides: &[i64; R]) -> DLTensor {
    DLTensor {
        data: data.cast_mut().cast(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: R as i32,
        dtype: f32::DTYPE,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        byte_offset: 0,
    }
}

fn export_group<const R: usize>(c: &mut Criterion, data: &[f32], shape: [usize; R]) {
    let view =
        HostMdspan::<f32, R>::from_slice(&data[..ELEMENTS], shape).unwrap().into_layout::<LayoutStride>().unwrap();
    let (shape, strides) = (view.extents().map(|e| e as i64), view.strides().map(|s| s as i64));
    let group_name = format!("export_rank{R}");
    assert_ne!(export_get(&view), 0);
    let mut group = c.benchmark_group(&group_name);
    let (extents, view_strides) = (view.extents(), view.strides());
    group.bench_function("floor", |b| {
        b.iter(|| export_floor_from_view::<R>(black_box(data.as_ptr()), black_box(&extents), black_box(&view_strides)))
    });
    group.bench_function("preexisting_arrays", |b| {
        b.iter(|| export_floor::<R>(black_box(data.as_ptr()), black_box(&shape), black_box(&strides)))
    });
    group.bench_function("dlspan_get", |b| b.iter(|| export_get(black_box(&view))));
    group.finish();
    record_allocations(&group_name, "dlspan_get", || sink(export_get(black_box(&view))));
}

fn benches(c: &mut Criterion) {
    let mut data = vec![1.0f32; 2 * ELEMENTS];
    import_group(c, &mut data, SHAPE_1);
    import_group(c, &mut data, SHAPE_2);
    import_group(c, &mut data, SHAPE_3);
    import_group(c, &mut data, SHAPE_4);
    export_group::<2>(c, &data, [512, 512]);
    export_group::<4>(c, &data, [16, 16, 32, 32]);
}

criterion_group! {
    name = convert;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1)).sample_size(40);
    targets = benches
}
criterion_main!(convert);
