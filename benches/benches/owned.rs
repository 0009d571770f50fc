//! Managed export + import + drop round trips of a 64x64 `Vec<f32>` owner: dlspan (versioned and
//! legacy), dlpark, and a hand-written single-box export (the floor). The owner is made outside the
//! timed routine (and dropped inside it, as a real exchange does); `keep_freed_memory` keeps freed
//! buffers in the process so the loop measures the exchange, not `munmap`. Allocations per
//! round trip (besides the owner) are recorded for the report.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use dlspan::{LayoutRight, ManagedTensor};
use dlspan_benches::managed::{self, SHAPE};
use dlspan_benches::{CountingAllocator, keep_freed_memory, record_allocations};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[inline(always)]
fn checksum(ptr: *const f32, a: usize, b: usize) -> usize {
    ptr as usize ^ a ^ b
}

/// dlspan: export the owner, hand it over as a raw versioned (or legacy) pointer, import it with
/// every check, view it, drop it (the deleter drops the owner).
#[inline(never)]
fn dlspan_round_trip<O: dlspan::TensorOwner<Elem = f32>>(owner: O, legacy: bool) -> usize {
    let Ok(exported) = ManagedTensor::from_owner(owner, SHAPE) else { return 0 };
    let imported = if legacy {
        let Ok(raw) = exported.into_raw_legacy() else { return 0 };
        // SAFETY: a live export whose ownership passes here.
        unsafe { ManagedTensor::from_raw_legacy(raw) }
    } else {
        let raw = exported.into_raw_versioned();
        // SAFETY: a live export whose ownership passes here.
        unsafe { ManagedTensor::from_raw_versioned(raw) }
    };
    let Ok(imported) = imported else { return 0 };
    match imported.view::<f32, 2, LayoutRight>() {
        Ok(view) => checksum(view.data_handle(), view.extent(0), view.extent(1)),
        Err(_) => 0,
    }
}

/// dlpark: its metadata builder with the Vec as context, then `Managed::from_raw`, `validate`,
/// `cpu_slice`, drop.
#[inline(never)]
fn dlpark_round_trip(owner: Vec<f32>) -> usize {
    let Some(raw) = managed::dlpark_export(owner) else { return 0 };
    // SAFETY: a live export whose ownership passes here.
    let Ok(managed) = (unsafe { dlpark::Managed::<dlpark::ffi::DLManagedTensorVersioned>::from_raw(raw) }) else {
        return 0;
    };
    let Ok(tensor) = managed.validate() else { return 0 };
    // SAFETY: the tensor describes the live context's data.
    match unsafe { tensor.cpu_slice::<f32>() } {
        Ok(slice) => checksum(slice.as_ptr(), slice.len(), 0),
        Err(_) => 0,
    }
}

/// The floor: the hand-written single box; the import reads the fields without checks; the
/// consumer calls the deleter.
#[inline(never)]
fn hand_round_trip(owner: Vec<f32>) -> usize {
    let raw = black_box(managed::hand_export(owner));
    // SAFETY: live.
    let tensor = unsafe { &(*raw).dl_tensor };
    // SAFETY: two live extents.
    let shape = unsafe { *tensor.shape.cast::<[i64; 2]>() };
    let sum = checksum(tensor.data.cast(), shape[0] as usize, shape[1] as usize);
    // SAFETY: a live export we own, released once.
    unsafe { managed::release(raw) };
    sum
}

/// Export only: dlspan's export handed to a consumer that calls the deleter at once (no import).
#[inline(never)]
fn dlspan_export_release(owner: Vec<f32>) -> usize {
    let Some(raw) = managed::dlspan_export(owner) else { return 0 };
    let raw = black_box(raw);
    // SAFETY: live.
    let data = unsafe { (*raw).dl_tensor.data } as usize;
    // SAFETY: a live export we own, released once.
    unsafe { managed::release(raw) };
    data
}

/// Export only, dlpark.
#[inline(never)]
fn dlpark_export_release(owner: Vec<f32>) -> usize {
    let Some(raw) = managed::dlpark_export(owner) else { return 0 };
    let raw = black_box(raw);
    // SAFETY: live.
    let data = unsafe { (*raw).dl_tensor.data } as usize;
    // SAFETY: a live export we own, released once.
    unsafe { managed::release_dlpark(raw) };
    data
}

/// Export only, the hand-written single box.
#[inline(never)]
fn hand_export_release(owner: Vec<f32>) -> usize {
    let raw = black_box(managed::hand_export(owner));
    // SAFETY: live.
    let data = unsafe { (*raw).dl_tensor.data } as usize;
    // SAFETY: a live export we own, released once.
    unsafe { managed::release(raw) };
    data
}

fn benches(c: &mut Criterion) {
    keep_freed_memory();
    let template = vec![1.0f32; SHAPE[0] * SHAPE[1]];
    for (name, result) in [
        ("dlspan_versioned", dlspan_round_trip(template.clone(), false)),
        ("dlspan_legacy", dlspan_round_trip(template.clone(), true)),
        ("dlpark_versioned", dlpark_round_trip(template.clone())),
        ("floor_hand_box", hand_round_trip(template.clone())),
        ("dlspan_export", dlspan_export_release(template.clone())),
        ("dlpark_export", dlpark_export_release(template.clone())),
        ("hand_export", hand_export_release(template.clone())),
    ] {
        assert_ne!(result, 0, "{name} must succeed");
    }
    let owner = || template.clone();
    let mut group = c.benchmark_group("managed_round_trip");
    group.bench_function("floor_hand_box", |b| {
        b.iter_batched(owner, |v| hand_round_trip(black_box(v)), BatchSize::SmallInput)
    });
    group.bench_function("dlspan_versioned", |b| {
        b.iter_batched(owner, |v| dlspan_round_trip(black_box(v), false), BatchSize::SmallInput)
    });
    group.bench_function("dlspan_legacy", |b| {
        b.iter_batched(owner, |v| dlspan_round_trip(black_box(v), true), BatchSize::SmallInput)
    });
    group.bench_function("dlpark_versioned", |b| {
        b.iter_batched(owner, |v| dlpark_round_trip(black_box(v)), BatchSize::SmallInput)
    });
    // Owners that do not allocate at all: the protocol's own cost.
    let shared: Arc<[f32]> = Arc::from(template.clone());
    let leaked: &'static [f32] = Vec::leak(template.clone());
    group.bench_function("dlspan_arc_owner", |b| b.iter(|| dlspan_round_trip(black_box(shared.clone()), false)));
    group.bench_function("dlspan_static_owner", |b| b.iter(|| dlspan_round_trip(black_box(leaked), false)));
    group.finish();

    let mut group = c.benchmark_group("managed_export");
    group.bench_function("floor_hand_box", |b| {
        b.iter_batched(owner, |v| hand_export_release(black_box(v)), BatchSize::SmallInput)
    });
    group.bench_function("dlspan", |b| {
        b.iter_batched(owner, |v| dlspan_export_release(black_box(v)), BatchSize::SmallInput)
    });
    group.bench_function("dlpark", |b| {
        b.iter_batched(owner, |v| dlpark_export_release(black_box(v)), BatchSize::SmallInput)
    });
    group.finish();

    // Allocations per round trip besides the owner: the owners are cloned before counting.
    let owners = || (0..1000).map(|_| template.clone()).collect::<Vec<_>>().into_iter();
    let mut pre = owners();
    record_allocations("managed_round_trip", "dlspan_versioned", || {
        black_box(dlspan_round_trip(pre.next().unwrap_or_default(), false));
    });
    let mut pre = owners();
    record_allocations("managed_round_trip", "dlpark_versioned", || {
        black_box(dlpark_round_trip(pre.next().unwrap_or_default()));
    });
    let mut pre = owners();
    record_allocations("managed_round_trip", "floor_hand_box", || {
        black_box(hand_round_trip(pre.next().unwrap_or_default()));
    });
    let mut pre = owners();
    record_allocations("managed_export", "dlspan", || {
        black_box(dlspan_export_release(pre.next().unwrap_or_default()));
    });
    let mut pre = owners();
    record_allocations("managed_export", "dlpark", || {
        black_box(dlpark_export_release(pre.next().unwrap_or_default()));
    });
    let mut pre = owners();
    record_allocations("managed_export", "floor_hand_box", || {
        black_box(hand_export_release(pre.next().unwrap_or_default()));
    });
}

criterion_group! {
    name = owned;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1)).sample_size(40);
    targets = benches
}
criterion_main!(owned);
