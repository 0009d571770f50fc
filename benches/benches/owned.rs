#![allow(missing_docs)] // criterion's macros generate undocumented items
//! Managed export + import + drop round trips: the cost of handing a tensor across a DLPack
//! boundary and back. Owners that do not allocate (a static slice, an `Arc` clone) keep the owner's
//! own allocation and the OS out of the timed loop; allocations per round trip are printed after
//! the timings (besides the owner: dlspan's export makes one).

use criterion::{Criterion, criterion_group, criterion_main};
use dlspan::{LayoutRight, ManagedTensor, TensorOwner};
use dlspan_benches::{CountingAllocator, allocations_per_call};
use std::hint::black_box;
use std::sync::Arc;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Export `owner` as a 512x512 tensor, hand it over as a raw versioned pointer, import it, view it,
/// drop it (the deleter releases the owner). Returns a checksum of the view.
#[inline(never)]
fn round_trip<O: TensorOwner<Elem = f32>>(owner: O, legacy: bool) -> usize {
    let Ok(exported) = ManagedTensor::from_owner(owner, [512, 512]) else { return 0 };
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
        Ok(view) => view.data_handle() as usize ^ view.extent(0),
        Err(_) => 0,
    }
}

fn benches(c: &mut Criterion) {
    let data: &'static [f32] = Vec::leak(vec![1.0f32; 512 * 512]);
    let shared: Arc<[f32]> = Arc::from(vec![1.0f32; 512 * 512]);
    let mut group = c.benchmark_group("managed_round_trip_512x512");
    group.bench_function("static_slice_versioned", |b| b.iter(|| round_trip(black_box(data), false)));
    group.bench_function("static_slice_legacy", |b| b.iter(|| round_trip(black_box(data), true)));
    group.bench_function("arc_clone_versioned", |b| b.iter(|| round_trip(black_box(shared.clone()), false)));
    group.finish();
    assert_ne!(round_trip(data, false), 0, "the benched round trip succeeds");
    let allocs = allocations_per_call(10_000, || {
        black_box(round_trip(black_box(data), false));
    });
    println!("managed_round_trip: {allocs} allocations per export + import + drop (owner excluded)");
}

criterion_group!(owned, benches);
criterion_main!(owned);
