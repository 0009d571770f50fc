//! `AlignedBuffer`: alignment of every constructor (empty, grown, over-aligned element types),
//! contents, drops (each element once, also when a clone or a drop panics), the managed export
//! without copying, and view copies into aligned storage.

use dlspan::dtype::F64x4;
use dlspan::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn address<T>(buffer: &[T]) -> usize {
    buffer.as_ptr().addr()
}

#[test]
fn every_constructor_aligns_the_first_element() {
    for len in [0usize, 1, 3, 64, 1000] {
        assert_eq!(address(&AlignedBuffer::<u8>::zeroed(len)) % 64, 0, "zeroed({len})");
        assert_eq!(address(&AlignedBuffer::<f32, 16>::filled(1.0, len)) % 16, 0, "filled({len})");
        assert_eq!(address(&AlignedBuffer::<u16, 4096>::from_fn(len, |i| i as u16)) % 4096, 0);
        let values: Vec<i64> = (0..len as i64).collect();
        assert_eq!(address(&AlignedBuffer::<i64, 128>::from_slice(&values)) % 128, 0);
        // An iterator that does not know its length: the buffer grows, keeping its alignment.
        let grown: AlignedBuffer<u32> = (0..len as u32).filter(|_| true).collect();
        assert_eq!((grown.len(), address(&grown) % 64), (len, 0));
    }
    assert!(AlignedBuffer::<u8, 1>::new().is_empty());
    assert_eq!(address(&AlignedBuffer::<u8>::default()) % 64, 0);
}

#[test]
fn the_element_alignment_wins_when_larger() {
    assert_eq!(AlignedBuffer::<F64x4, 8>::ALIGNMENT, 32);
    assert_eq!(AlignedBuffer::<u8, 8>::ALIGNMENT, 8);
    let wide = AlignedBuffer::<F64x4, 8>::zeroed(3);
    assert_eq!(address(&wide) % 32, 0);
}

#[test]
fn contents_of_each_constructor() {
    assert_eq!(&*AlignedBuffer::<i32>::zeroed(3), &[0, 0, 0]);
    assert_eq!(&*AlignedBuffer::<bool>::zeroed(2), &[false, false]);
    assert_eq!(&*AlignedBuffer::<u8>::filled(9, 2), &[9, 9]);
    assert_eq!(&*AlignedBuffer::<f64>::from_slice(&[1.5, -2.0]), &[1.5, -2.0]);
    assert_eq!(&*AlignedBuffer::<u64>::from_fn(3, |i| i as u64 * 7), &[0, 7, 14]);
    let collected: AlignedBuffer<u16> = (1..=5).collect();
    assert_eq!(collected.as_slice(), &[1, 2, 3, 4, 5]);
    let from: AlignedBuffer<u8> = AlignedBuffer::from(&[4u8, 5][..]);
    assert_eq!(from, AlignedBuffer::<u8, 8>::from_slice(&[4, 5]));
    let mut copy = from.clone();
    copy[0] = 0;
    for x in &mut copy {
        *x += 1;
    }
    assert_eq!((&*copy, &*from), (&[1u8, 6][..], &[4u8, 5][..]));
    assert_eq!(format!("{copy:?}"), "[1, 6]");
    assert_eq!((&copy).into_iter().sum::<u8>(), 7);
}

#[test]
fn zero_sized_elements_need_no_memory() {
    let units = AlignedBuffer::<()>::from_fn(1000, |_| ());
    assert_eq!((units.len(), address(&units) % 64), (1000, 0));
    let grown: AlignedBuffer<()> = std::iter::repeat_n((), 70).filter(|_| true).collect();
    assert_eq!(grown.len(), 70);
}

#[test]
fn too_large_a_buffer_is_a_typed_error() {
    let result = AlignedBuffer::<u32, 64>::try_zeroed(usize::MAX / 2);
    assert!(matches!(
        result,
        Err(DlpackError::AllocationFailed { len, element_size: 4, alignment: 64 }) if len == usize::MAX / 2
    ));
    let panicked = catch_unwind(|| AlignedBuffer::<u32>::zeroed(usize::MAX / 2));
    assert!(panicked.is_err(), "the infallible constructor panics on a size overflow");
}

/// An element that counts its drops.
#[derive(Clone)]
struct Tracked {
    drops: Arc<AtomicUsize>,
    panic_on_drop: bool,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.panic_on_drop {
            self.panic_on_drop = false;
            panic!("element drop panics");
        }
    }
}

fn tracked(drops: &Arc<AtomicUsize>) -> Tracked {
    Tracked { drops: drops.clone(), panic_on_drop: false }
}

#[test]
fn every_element_drops_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let buffer = AlignedBuffer::<Tracked>::filled(tracked(&drops), 5);
    assert_eq!(drops.load(Ordering::SeqCst), 0, "the value is moved in, not cloned and dropped");
    drop(buffer);
    assert_eq!(drops.load(Ordering::SeqCst), 5);

    let drops = Arc::new(AtomicUsize::new(0));
    let grown: AlignedBuffer<Tracked, 32> = (0..100).filter(|_| true).map(|_| tracked(&drops)).collect();
    assert_eq!(drops.load(Ordering::SeqCst), 0, "growing moves elements, dropping none");
    drop(grown);
    assert_eq!(drops.load(Ordering::SeqCst), 100);
}

#[test]
fn a_panic_while_filling_drops_what_was_made() {
    let drops = Arc::new(AtomicUsize::new(0));
    let result = catch_unwind(AssertUnwindSafe(|| {
        AlignedBuffer::<Tracked>::from_fn(10, |i| {
            assert!(i < 6, "the seventh element fails");
            tracked(&drops)
        })
    }));
    assert!(result.is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 6, "the six elements made are dropped");
}

#[test]
fn a_panicking_element_drop_still_drops_the_rest() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut buffer = AlignedBuffer::<Tracked>::from_fn(4, |_| tracked(&drops));
    buffer[1].panic_on_drop = true;
    let result = catch_unwind(AssertUnwindSafe(move || drop(buffer)));
    assert!(result.is_err());
    // Every element was dropped; the memory was freed too (the valgrind tier checks for leaks).
    assert_eq!(drops.load(Ordering::SeqCst), 4);
}

#[test]
fn buffers_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<AlignedBuffer<f32>>();
    let buffer = AlignedBuffer::<u64>::from_fn(1000, |i| i as u64);
    let total = std::thread::spawn(move || buffer.iter().sum::<u64>()).join().unwrap();
    assert_eq!(total, 499_500);
}

#[test]
fn exports_without_copying_and_round_trips() {
    let buffer = AlignedBuffer::<f32>::from_fn(12, |i| i as f32);
    let address = buffer.as_ptr().addr();
    let tensor = ManagedTensor::from_owner(buffer, [3, 4]).unwrap();
    let t = tensor.dl_tensor();
    assert_eq!((t.data.addr(), t.data.addr() % 64), (address, 0), "the buffer itself is exported");
    assert!(!tensor.is_read_only() && !tensor.is_copied());
    // Through C and back: the deleter frees the buffer (valgrind checks it).
    let raw = tensor.into_raw_legacy().unwrap();
    // SAFETY: `raw` is a live legacy managed tensor whose ownership passes here.
    let mut back = unsafe { ManagedTensor::from_raw_legacy(raw) }.unwrap();
    back.view_mut::<f32, 2, LayoutRight>().unwrap()[[2, 3]] = -1.0;
    assert_eq!(back.view::<f32, 2, LayoutRight>().unwrap().to_vec().last(), Some(&-1.0));
    assert!(matches!(
        ManagedTensor::from_owner(AlignedBuffer::<u8>::zeroed(5), [2, 3]),
        Err(DlpackError::LengthMismatch { expected: 6, found: 5 })
    ));
}

#[test]
fn view_copies_export_aligned_storage() {
    let data: Vec<u8> = (0..64).collect();
    let view = HostMdspan::<u8, 2>::from_slice(&data[1..], [3, 21]).unwrap();
    let columns = view.subview((.., 1..5));
    for (copy, expected) in [
        (view.to_managed_tensor(CopyMode::Always).unwrap(), view.to_vec()),
        (columns.to_managed_tensor(CopyMode::IfNeeded).unwrap(), columns.to_vec()),
    ] {
        assert_eq!(copy.dl_tensor().data.addr() % 64, 0, "the copy is 64-byte aligned");
        assert_eq!(copy.view::<u8, 2, LayoutRight>().unwrap().to_vec(), expected);
    }
    let transposed = HostMdspan::<u8, 2, LayoutStride>::from_slice_strided(&data, [4, 2], [1, 4]).unwrap();
    let copy = transposed.to_aligned_buffer::<256>();
    assert_eq!((&*copy, address(&copy) % 256), (&[0u8, 4, 1, 5, 2, 6, 3, 7][..], 0));
}
