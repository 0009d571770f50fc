//! Shared pieces of the benchmarks: a counting allocator to report allocations per operation,
//! and builders of the tensors every bench converts.
//!
//! Run them with `cargo bench -p dlspan-benches`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// A global allocator that counts allocations per thread and forwards to the system allocator.
///
/// ```
/// # use dlspan_benches::{allocations_during, CountingAllocator};
/// // In a bench binary: `#[global_allocator] static A: CountingAllocator = CountingAllocator;`
/// let n = allocations_during(|| {});
/// assert_eq!(n, 0);
/// ```
pub struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made on this thread while `f` runs (meaningful when [`CountingAllocator`] is the
/// global allocator).
pub fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// Allocations per call of `f`, averaged over `iterations` calls.
///
/// ```
/// assert_eq!(dlspan_benches::allocations_per_call(10, || {}), 0.0);
/// ```
pub fn allocations_per_call(iterations: u64, mut f: impl FnMut()) -> f64 {
    let total = allocations_during(|| {
        for _ in 0..iterations {
            f();
        }
    });
    total as f64 / iterations as f64
}
