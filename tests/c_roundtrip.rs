//! The ABI from the C side: a C producer's managed tensors consumed by dlspan, and dlspan's exports
//! consumed by C, which calls their deleters. The C file is compiled by this test with gcc against
//! a real dlpack.h (see `tests/support`).

mod support;

use dlspan::ffi::*;
use dlspan::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct CLibrary {
    lib: libloading::Library,
}

impl CLibrary {
    fn load() -> Option<Self> {
        let (include, cc) = (support::dlpack_include()?, support::c_compiler()?);
        let dir = support::scratch_dir("c-roundtrip");
        let library = dir.join("libroundtrip.so");
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/roundtrip.c");
        support::compile_c(&cc, &include, &source, &library, &["-O1", "-shared", "-fPIC", "-lm"]);
        // SAFETY: the library is ours, with no initialisers beyond the C runtime's.
        let lib = unsafe { libloading::Library::new(&library) }.expect("load the C library");
        Some(Self { lib })
    }

    /// A function of the library.
    ///
    /// # Safety
    ///
    /// `F` is the C function's exact type.
    unsafe fn get<F: Copy>(&self, name: &str) -> F {
        // SAFETY: the caller names the function's type.
        *unsafe { self.lib.get::<F>(name.as_bytes()) }.expect("C symbol")
    }

    fn deleted(&self) -> i64 {
        // SAFETY: `long c_deleted_count(void)`.
        let f: unsafe extern "C" fn() -> i64 = unsafe { self.get("c_deleted_count") };
        // SAFETY: the C function reads a counter.
        unsafe { f() }
    }

    fn make_versioned(&self, rows: i64, cols: i64, flags: u64, major: u32) -> *mut DLManagedTensorVersioned {
        // SAFETY: the C signature.
        let f: unsafe extern "C" fn(i64, i64, u64, u32) -> *mut DLManagedTensorVersioned =
            unsafe { self.get("c_make_versioned") };
        // SAFETY: the C function allocates and fills a tensor.
        unsafe { f(rows, cols, flags, major) }
    }

    fn make_legacy(&self, n: i64) -> *mut DLManagedTensor {
        // SAFETY: the C signature.
        let f: unsafe extern "C" fn(i64) -> *mut DLManagedTensor = unsafe { self.get("c_make_legacy") };
        // SAFETY: the C function allocates and fills a tensor.
        unsafe { f(n) }
    }

    fn consume_versioned(&self, tensor: *mut DLManagedTensorVersioned, expected_flags: u64) -> f64 {
        // SAFETY: the C signature.
        let f: unsafe extern "C" fn(*mut DLManagedTensorVersioned, u64) -> f64 =
            unsafe { self.get("c_consume_versioned") };
        // SAFETY: ownership of a live tensor passes to C, which calls its deleter.
        unsafe { f(tensor, expected_flags) }
    }

    fn consume_legacy(&self, tensor: *mut DLManagedTensor) -> f64 {
        // SAFETY: the C signature.
        let f: unsafe extern "C" fn(*mut DLManagedTensor) -> f64 = unsafe { self.get("c_consume_legacy") };
        // SAFETY: ownership of a live tensor passes to C, which calls its deleter.
        unsafe { f(tensor) }
    }

    fn read_borrowed(&self, tensor: *const DLTensor) -> f64 {
        // SAFETY: the C signature.
        let f: unsafe extern "C" fn(*const DLTensor) -> f64 = unsafe { self.get("c_read_borrowed") };
        // SAFETY: a live borrowed tensor; C only reads it.
        unsafe { f(tensor) }
    }
}

/// The C consumer's checksum: Σ (k + 1)·value over logical (row-major) order.
fn weighted(values: &[f32]) -> f64 {
    values.iter().enumerate().map(|(k, &v)| (k as f64 + 1.0) * f64::from(v)).sum()
}

/// One library for the whole file (loading it once keeps the deleted-count deltas meaningful when
/// tests run one after another; each test compares counts before and after under a lock).
fn library() -> Option<&'static (CLibrary, std::sync::Mutex<()>)> {
    static LIB: std::sync::OnceLock<Option<(CLibrary, std::sync::Mutex<()>)>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| CLibrary::load().map(|lib| (lib, std::sync::Mutex::new(())))).as_ref()
}

#[test]
fn c_produces_dlspan_consumes() {
    let Some((c, lock)) = library() else { return };
    let _guard = lock.lock().unwrap();
    let before = c.deleted();
    // SAFETY: a fresh C tensor whose ownership passes here.
    let tensor = unsafe { ManagedTensor::from_raw_versioned(c.make_versioned(3, 4, 0, 1)) }.unwrap();
    let view = tensor.view::<f32, 2, LayoutRight>().unwrap();
    assert_eq!(view[[2, 3]], 5.5);
    assert_eq!(view.to_vec(), (0..12).map(|i| i as f32 * 0.5).collect::<Vec<_>>());
    drop(tensor);
    assert_eq!(c.deleted() - before, 1, "the C deleter ran once");

    // Read-only from C: shared views only.
    // SAFETY: as above.
    let mut read_only =
        unsafe { ManagedTensor::from_raw_versioned(c.make_versioned(2, 2, DLPACK_FLAG_BITMASK_READ_ONLY, 1)) }.unwrap();
    assert_eq!(read_only.view_mut::<f32, 2, LayoutRight>().unwrap_err(), DlpackError::ReadOnly);
    drop(read_only);
    // Major version 2: refused, deleter called.
    // SAFETY: as above.
    let refused = unsafe { ManagedTensor::from_raw_versioned(c.make_versioned(2, 2, 0, 2)) };
    assert!(matches!(refused, Err(DlpackError::UnsupportedVersion { .. })));
    // Legacy with null strides: row-major.
    // SAFETY: as above.
    let legacy = unsafe { ManagedTensor::from_raw_legacy(c.make_legacy(4)) }.unwrap();
    assert_eq!(legacy.view::<f32, 1, LayoutStride>().unwrap().to_vec(), [4.0, 3.0, 2.0, 1.0]);
    drop(legacy);
    // Empty: null data.
    // SAFETY: as above.
    let empty = unsafe { ManagedTensor::from_raw_versioned(c.make_versioned(0, 4, 0, 1)) }.unwrap();
    assert!(empty.view::<f32, 2, LayoutRight>().unwrap().is_empty());
    drop(empty);
    assert_eq!(c.deleted() - before, 5);
}

struct Counted(Vec<f32>, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: the Vec's buffer does not move until the owner is dropped.
unsafe impl TensorOwner for Counted {
    type Elem = f32;

    fn storage(&mut self) -> Storage<f32> {
        Storage { ptr: std::ptr::NonNull::new(self.0.as_mut_ptr()).unwrap(), len: self.0.len(), writable: true }
    }
}

#[test]
fn dlspan_produces_c_consumes() {
    let Some((c, lock)) = library() else { return };
    let _guard = lock.lock().unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let values: Vec<f32> = (0..6).map(|x| x as f32).collect();

    // Row-major, versioned.
    let t = ManagedTensor::from_owner(Counted(values.clone(), drops.clone()), [2, 3]).unwrap();
    assert_eq!(c.consume_versioned(t.into_raw_versioned(), 0), weighted(&values));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "C called dlspan's deleter once");

    // Transposed (strides (1, 3)), versioned: C walks the strides.
    let t = ManagedTensor::from_owner_strided(Counted(values.clone(), drops.clone()), [3, 2], [1, 3], 0).unwrap();
    assert_eq!(c.consume_versioned(t.into_raw_versioned(), 0), weighted(&[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]));
    assert_eq!(drops.load(Ordering::SeqCst), 2);

    // Reversed, relaxed (negative stride, byte_offset), legacy, rewritten in place.
    let t = ManagedTensor::from_owner_strided(Counted(values.clone(), drops.clone()), [6], [-1], 5).unwrap();
    assert_eq!(c.consume_legacy(t.into_raw_legacy().unwrap()), weighted(&[5.0, 4.0, 3.0, 2.0, 1.0, 0.0]));
    assert_eq!(drops.load(Ordering::SeqCst), 3);

    // A copy of a strided view: IS_COPIED reaches C.
    let view = HostMdspan::<f32, 2>::from_slice(&values, [2, 3]).unwrap();
    let copy = view.subview((.., 1..)).to_managed_tensor(CopyMode::Always).unwrap();
    assert_eq!(
        c.consume_versioned(copy.into_raw_versioned(), DLPACK_FLAG_BITMASK_IS_COPIED),
        weighted(&[1.0, 2.0, 4.0, 5.0])
    );

    // A shared owner: READ_ONLY reaches C.
    let shared: Arc<[f32]> = Arc::from(values.clone());
    let t = ManagedTensor::from_owner(shared.clone(), [6]).unwrap();
    assert_eq!(c.consume_versioned(t.into_raw_versioned(), DLPACK_FLAG_BITMASK_READ_ONLY), weighted(&values));
    assert_eq!(Arc::strong_count(&shared), 1, "the deleter released its clone");

    // A borrowed export: C reads, owns nothing.
    let sub = view.subview((.., 1..2));
    let dl = to_dlpack_tensor(&sub).unwrap();
    assert_eq!(c.read_borrowed(dl.get().as_ptr()), weighted(&[1.0, 4.0]));
}

#[test]
fn c_tensors_round_trip_through_dlspan_back_to_c() {
    let Some((c, lock)) = library() else { return };
    let _guard = lock.lock().unwrap();
    let before = c.deleted();
    // A C versioned tensor, owned by dlspan, handed on to a C consumer as legacy (through a shell).
    // SAFETY: a fresh C tensor whose ownership passes here.
    let t = unsafe { ManagedTensor::from_raw_versioned(c.make_versioned(2, 3, 0, 1)) }.unwrap();
    let expected = weighted(&t.view::<f32, 2, LayoutRight>().unwrap().to_vec());
    assert_eq!(c.consume_legacy(t.into_raw_legacy().unwrap()), expected);
    // A C legacy tensor handed on as versioned (through a shell).
    // SAFETY: as above.
    let t = unsafe { ManagedTensor::from_raw_legacy(c.make_legacy(3)) }.unwrap();
    assert_eq!(c.consume_versioned(t.into_raw_versioned(), 0), weighted(&[3.0, 2.0, 1.0]));
    assert_eq!(c.deleted() - before, 2, "each C deleter ran once, through the shells");
}
