//! The borrow export and the conversions allocate nothing: a counting global allocator (counting
//! per thread, so other tests running in parallel do not disturb it) watches the whole path.

use dlspan::*;
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn counter_sees_allocations() {
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 16]);
    assert_eq!(allocations(), before + 1, "the allocator counts");
    drop(v);
}

#[test]
fn export_import_index_and_iterate_without_allocating() {
    let data: Vec<f32> = (0..64).map(|x| x as f32).collect();
    let before = allocations();

    let view = HostMdspan::<f32, 2>::from_slice(&data, [8, 8]).unwrap();
    let dl = to_dlpack_tensor(&view).unwrap();
    let handle = dl.get();
    // SAFETY: the export describes `data`, alive and unwritten here.
    let back = unsafe { to_host_mdspan::<f32, 2, LayoutStride>(&handle) }.unwrap();
    // SAFETY: as above.
    let relaxed = unsafe { to_host_mdspan::<f32, 2, LayoutStrideRelaxed>(&handle) }.unwrap();
    let sub = back.subview((2..6, 1..7));
    let sub_dl = to_dlpack_tensor(&sub).unwrap();
    let total: f32 = sub.iter().sum::<f32>() + relaxed[[7, 7]] + back[[1, 1]];
    let column = back.index_axis::<1>(1, 3);
    let count = column.iter().count() + usize::from(sub_dl.get().ndim == 2);
    std::hint::black_box((total, count));

    assert_eq!(allocations(), before, "no heap allocation on the view/export path");
}

#[test]
fn an_aligned_buffer_exports_with_one_allocation_and_copies_with_two() {
    let buffer = AlignedBuffer::<f32>::zeroed(64);
    let before = allocations();
    let tensor = ManagedTensor::from_owner(buffer, [8, 8]).unwrap();
    assert_eq!(allocations(), before + 1, "one context, the buffer is not copied");

    let view = tensor.view::<f32, 2, LayoutRight>().unwrap();
    let column = view.subview((.., 3..4));
    let before = allocations();
    let copy = std::hint::black_box(column.to_managed_tensor(CopyMode::Always).unwrap());
    assert_eq!(allocations(), before + 2, "an aligned buffer and a context");
    drop((copy, tensor));
}
