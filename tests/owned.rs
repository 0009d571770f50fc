//! Owned exchange: the deleter runs exactly once on every path (drop, error paths, version
//! rejection, raw hand-offs both ways, panics in an owner's `Drop`), round trips through raw
//! pointers in both forms, read-only enforcement, copy modes and flags, 0-d and empty tensors.

use dlspan::dtype::{Float4E2m1fn, Float4E2m1fnX2};
use dlspan::ffi::*;
use dlspan::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

// ---------------------------------------------------------------------------------------------
// A foreign producer written the way C code would write one: a heap block holding the header, the
// shape and strides, the data, and a counter the deleter bumps.

struct Foreign {
    deletions: Arc<AtomicUsize>,
    _shape: Vec<i64>,
    _strides: Vec<i64>,
    _data: Vec<f32>,
}

unsafe extern "C" fn foreign_versioned_deleter(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: every tensor using this deleter was made by `foreign_versioned`, which leaked both boxes.
    let managed = unsafe { Box::from_raw(managed) };
    // SAFETY: as above: `manager_ctx` is the leaked `Foreign`.
    let foreign = unsafe { Box::from_raw(managed.manager_ctx.cast::<Foreign>()) };
    foreign.deletions.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn foreign_legacy_deleter(managed: *mut DLManagedTensor) {
    // SAFETY: every tensor using this deleter was made by `foreign_legacy`, which leaked both boxes.
    let managed = unsafe { Box::from_raw(managed) };
    // SAFETY: as above.
    let foreign = unsafe { Box::from_raw(managed.manager_ctx.cast::<Foreign>()) };
    foreign.deletions.fetch_add(1, Ordering::SeqCst);
}

/// A rows x cols f32 tensor, values 0, 1, 2, … in row-major order.
fn foreign_parts(rows: i64, cols: i64, deletions: &Arc<AtomicUsize>) -> (DLTensor, *mut Foreign) {
    let mut foreign = Box::new(Foreign {
        deletions: deletions.clone(),
        _shape: vec![rows, cols],
        _strides: vec![cols, 1],
        _data: (0..rows * cols).map(|x| x as f32).collect(),
    });
    let tensor = DLTensor {
        data: foreign._data.as_mut_ptr().cast(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: 2,
        dtype: f32::DTYPE,
        shape: foreign._shape.as_mut_ptr(),
        strides: foreign._strides.as_mut_ptr(),
        byte_offset: 0,
    };
    (tensor, Box::into_raw(foreign))
}

fn foreign_versioned(
    version: DLPackVersion,
    flags: u64,
    deletions: &Arc<AtomicUsize>,
) -> *mut DLManagedTensorVersioned {
    let (dl_tensor, ctx) = foreign_parts(2, 3, deletions);
    Box::into_raw(Box::new(DLManagedTensorVersioned {
        version,
        manager_ctx: ctx.cast(),
        deleter: Some(foreign_versioned_deleter),
        flags,
        dl_tensor,
    }))
}

fn foreign_legacy(deletions: &Arc<AtomicUsize>) -> *mut DLManagedTensor {
    let (dl_tensor, ctx) = foreign_parts(2, 3, deletions);
    Box::into_raw(Box::new(DLManagedTensor {
        dl_tensor,
        manager_ctx: ctx.cast(),
        deleter: Some(foreign_legacy_deleter),
    }))
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

// ---------------------------------------------------------------------------------------------
// A Rust owner that counts its drops, and one whose drop panics.

struct CountedOwner {
    data: Vec<i32>,
    drops: Arc<AtomicUsize>,
    panic_on_drop: bool,
}

impl Drop for CountedOwner {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.panic_on_drop {
            panic!("owner drop panics (on purpose, in a test)");
        }
    }
}

// SAFETY: `data` is a Vec whose buffer does not move until the owner is dropped.
unsafe impl TensorOwner for CountedOwner {
    type Elem = i32;

    fn storage(&mut self) -> Storage<i32> {
        Storage { ptr: std::ptr::NonNull::new(self.data.as_mut_ptr()).unwrap(), len: self.data.len(), writable: true }
    }
}

fn counted(len: usize, drops: &Arc<AtomicUsize>, panic_on_drop: bool) -> CountedOwner {
    CountedOwner { data: (0..len as i32).collect(), drops: drops.clone(), panic_on_drop }
}

// ---------------------------------------------------------------------------------------------

#[test]
fn foreign_versioned_deleted_once_on_drop() {
    let deletions = counter();
    let raw = foreign_versioned(DLPackVersion::CURRENT, 0, &deletions);
    // SAFETY: a live tensor whose ownership passes here.
    let tensor = unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap();
    assert_eq!(tensor.view::<f32, 2, LayoutRight>().unwrap().to_vec(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    // Error paths leave ownership untouched.
    assert!(tensor.view::<f64, 2, LayoutRight>().is_err());
    assert!(tensor.view::<f32, 3, LayoutRight>().is_err());
    assert_eq!(deletions.load(Ordering::SeqCst), 0);
    drop(tensor);
    assert_eq!(deletions.load(Ordering::SeqCst), 1);
}

#[test]
fn foreign_legacy_deleted_once_on_drop() {
    let deletions = counter();
    // SAFETY: a live tensor whose ownership passes here.
    let tensor = unsafe { ManagedTensor::from_raw_legacy(foreign_legacy(&deletions)) }.unwrap();
    assert_eq!((tensor.version(), tensor.flags()), (None, 0));
    assert!(!tensor.is_read_only(), "legacy tensors carry no flags");
    assert_eq!(tensor.view::<f32, 2, LayoutStride>().unwrap()[[1, 2]], 5.0);
    drop(tensor);
    assert_eq!(deletions.load(Ordering::SeqCst), 1);
}

#[test]
fn other_major_versions_are_refused_after_calling_the_deleter() {
    let deletions = counter();
    let raw = foreign_versioned(DLPackVersion { major: 2, minor: 0 }, 0, &deletions);
    // SAFETY: a live tensor whose ownership passes here (on error, its deleter has run).
    let err = unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap_err();
    assert_eq!(err, DlpackError::UnsupportedVersion { version: DLPackVersion { major: 2, minor: 0 } });
    assert_eq!(deletions.load(Ordering::SeqCst), 1);
    let raw = foreign_versioned(DLPackVersion { major: 0, minor: 8 }, 0, &deletions);
    // SAFETY: as above.
    assert!(unsafe { ManagedTensor::from_raw_versioned(raw) }.is_err());
    assert_eq!(deletions.load(Ordering::SeqCst), 2);
    // A newer minor version is accepted.
    let raw = foreign_versioned(DLPackVersion { major: 1, minor: 9 }, 0, &deletions);
    // SAFETY: as above.
    drop(unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap());
    assert_eq!(deletions.load(Ordering::SeqCst), 3);
}

#[test]
fn version_rejection_touches_nothing_but_the_deleter() {
    // A tensor of major version 2 whose layout past `deleter` is unknown: poison every other field.
    static DELETED: AtomicUsize = AtomicUsize::new(0);
    unsafe extern "C" fn deleter(managed: *mut DLManagedTensorVersioned) {
        DELETED.fetch_add(1, Ordering::SeqCst);
        // SAFETY: made by `Box::into_raw` below.
        drop(unsafe { Box::from_raw(managed) });
    }
    let poison = std::ptr::without_provenance_mut::<i64>(8);
    let poisoned = DLTensor {
        data: poison.cast(),
        device: DLDevice { device_type: DLDeviceType(-7), device_id: -1 },
        ndim: -5,
        dtype: DLDataType { code: 255, bits: 0, lanes: 0 },
        shape: poison,
        strides: poison,
        byte_offset: u64::MAX,
    };
    let raw = Box::into_raw(Box::new(DLManagedTensorVersioned {
        version: DLPackVersion { major: 2, minor: 0 },
        manager_ctx: poison.cast(),
        deleter: Some(deleter),
        flags: u64::MAX,
        dl_tensor: poisoned,
    }));
    // SAFETY: ownership passes; only version and deleter may be read.
    assert!(matches!(unsafe { ManagedTensor::from_raw_versioned(raw) }, Err(DlpackError::UnsupportedVersion { .. })));
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
}

#[test]
fn null_pointers_and_null_deleters() {
    // SAFETY: null is allowed.
    let versioned = unsafe { ManagedTensor::from_raw_versioned(std::ptr::null_mut()) };
    // SAFETY: as above.
    let legacy = unsafe { ManagedTensor::from_raw_legacy(std::ptr::null_mut()) };
    assert!(matches!(versioned, Err(DlpackError::NullManagedTensor)));
    assert!(matches!(legacy, Err(DlpackError::NullManagedTensor)));
    // A tensor with no deleter (the producer keeps ownership): dropping it calls nothing.
    let mut data = [1.0f32, 2.0];
    let mut shape = [2i64];
    let mut strides = [1i64];
    let mut managed = DLManagedTensorVersioned {
        version: DLPackVersion::CURRENT,
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
        flags: 0,
        dl_tensor: DLTensor {
            data: data.as_mut_ptr().cast(),
            device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            ndim: 1,
            dtype: f32::DTYPE,
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: 0,
        },
    };
    // SAFETY: a live tensor without a deleter; it outlives `tensor`.
    let tensor = unsafe { ManagedTensor::from_raw_versioned(&mut managed) }.unwrap();
    assert_eq!(tensor.view::<f32, 1, LayoutRight>().unwrap().to_vec(), [1.0, 2.0]);
    drop(tensor);
}

#[test]
fn read_only_tensors_refuse_mutable_views() {
    let deletions = counter();
    let raw = foreign_versioned(DLPackVersion::CURRENT, DLPACK_FLAG_BITMASK_READ_ONLY, &deletions);
    // SAFETY: a live tensor whose ownership passes here.
    let mut tensor = unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap();
    assert!(tensor.is_read_only());
    assert_eq!(tensor.view_mut::<f32, 2, LayoutRight>().unwrap_err(), DlpackError::ReadOnly);
    assert_eq!(tensor.view_mut_as::<HostMdspanMut<'_, f32, 2>>().unwrap_err(), DlpackError::ReadOnly);
    assert!(tensor.view::<f32, 2, LayoutRight>().is_ok());
    let refused = tensor.into_raw_legacy().unwrap_err();
    assert_eq!(refused.error(), DlpackError::ReadOnly);
    assert_eq!(deletions.load(Ordering::SeqCst), 0, "a refused hand-off keeps ownership");
    drop(refused.into_tensor());
    assert_eq!(deletions.load(Ordering::SeqCst), 1);
}

#[test]
fn vec_round_trips_both_forms() {
    for legacy in [false, true] {
        let drops = counter();
        let owner = counted(6, &drops, false);
        let exported = ManagedTensor::from_owner(owner, [2, 3]).unwrap();
        assert_eq!((exported.shape(), exported.strides()), (&[2i64, 3][..], Some(&[3i64, 1][..])));
        let back = if legacy {
            let raw = exported.into_raw_legacy().unwrap();
            // SAFETY: `raw` is a live legacy export whose ownership passes here.
            unsafe { ManagedTensor::from_raw_legacy(raw) }.unwrap()
        } else {
            let raw = exported.into_raw_versioned();
            // SAFETY: `raw` is a live versioned export whose ownership passes here.
            unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap()
        };
        let mut back = back;
        assert_eq!(back.view::<i32, 2, LayoutRight>().unwrap().to_vec(), [0, 1, 2, 3, 4, 5]);
        back.view_mut::<i32, 2, LayoutRight>().unwrap()[[1, 1]] = 40;
        assert_eq!(back.view::<i32, 2, LayoutRight>().unwrap()[[1, 1]], 40);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(back);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "legacy={legacy}: the owner is dropped once");
    }
}

#[test]
fn foreign_tensors_hand_off_in_the_other_form_through_a_shell() {
    let deletions = counter();
    // Versioned foreign -> legacy shell -> back -> versioned shell around the legacy shell.
    let raw = foreign_versioned(DLPackVersion::CURRENT, 0, &deletions);
    // SAFETY: a live tensor whose ownership passes here.
    let tensor = unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap();
    let legacy = tensor.into_raw_legacy().unwrap();
    // SAFETY: the shell is a live legacy tensor whose ownership passes here.
    let tensor = unsafe { ManagedTensor::from_raw_legacy(legacy) }.unwrap();
    assert_eq!(tensor.view::<f32, 2, LayoutRight>().unwrap()[[1, 0]], 3.0);
    let versioned = tensor.into_raw_versioned();
    // SAFETY: the shell is a live versioned tensor whose ownership passes here.
    let tensor = unsafe { ManagedTensor::from_raw_versioned(versioned) }.unwrap();
    assert_eq!(tensor.version(), Some(DLPackVersion::CURRENT));
    assert_eq!(deletions.load(Ordering::SeqCst), 0);
    drop(tensor);
    assert_eq!(deletions.load(Ordering::SeqCst), 1, "shells call the inner deleter once");
}

#[test]
fn owner_drop_runs_once_on_every_error_path() {
    let drops = counter();
    // Wrong element count: refused, owner dropped.
    assert!(matches!(
        ManagedTensor::from_owner(counted(5, &drops, false), [2, 3]),
        Err(DlpackError::LengthMismatch { expected: 6, found: 5 })
    ));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // More elements than the shape holds is as wrong: the export would hide the tail.
    assert!(matches!(
        ManagedTensor::from_owner(counted(7, &drops, false), [2, 3]),
        Err(DlpackError::LengthMismatch { expected: 6, found: 7 })
    ));
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    // Strides reaching beyond the owner: refused after boxing, owner dropped.
    assert!(matches!(
        ManagedTensor::from_owner_strided(counted(6, &drops, false), [2, 3], [4, 1], 0),
        Err(DlpackError::TooFewElements { required: 7, found: 6 })
    ));
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    // Strides reaching below the first element.
    assert!(matches!(
        ManagedTensor::from_owner_strided(counted(6, &drops, false), [6], [-1], 2),
        Err(DlpackError::NegativeReach { .. })
    ));
    assert_eq!(drops.load(Ordering::SeqCst), 4);
}

/// Set in the child process of a test that runs itself to capture its standard error, and by the
/// memcheck tier, which runs such tests in its own process (it captures the whole output).
const IN_PROCESS: &str = "DLSPAN_TEST_IN_PROCESS";

/// Runs the test `name` of this binary in a child process and returns its standard error, or `None`
/// when this process is the one to run the test's body.
fn stderr_of_child(name: &str) -> Option<String> {
    if std::env::var_os(IN_PROCESS).is_some() {
        return None;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary's path"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(IN_PROCESS, "1")
        .output()
        .expect("run the test binary again");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the child run of {name} failed:\n{}{stderr}", String::from_utf8_lossy(&out.stdout));
    Some(stderr)
}

#[test]
fn a_panicking_owner_drop_is_contained_and_freed() {
    // The contained panic is reported on standard error by design: the test runs in a child
    // process whose standard error it reads, so a passing run prints nothing.
    if let Some(stderr) = stderr_of_child("a_panicking_owner_drop_is_contained_and_freed") {
        let reports = stderr.matches("dlspan: a tensor owner panicked while dropped by a DLPack deleter").count();
        assert_eq!(reports, 2, "one report per contained panic:\n{stderr}");
        return;
    }
    let drops = counter();
    let tensor = ManagedTensor::from_owner(counted(4, &drops, true), [4]).unwrap();
    let raw = tensor.into_raw_versioned();
    // Call the deleter as C would: it must return normally.
    // SAFETY: `raw` is a live export we own.
    let deleter = unsafe { (*raw).deleter }.unwrap();
    // SAFETY: the owner calls the deleter once, with its tensor.
    unsafe { deleter(raw) };
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // Through Drop too.
    let tensor = ManagedTensor::from_owner(counted(4, &drops, true), [2, 2]).unwrap();
    drop(tensor);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

/// An owner whose `storage()` panics, counting its drops.
struct PanickingStorage {
    drops: Arc<AtomicUsize>,
}

impl Drop for PanickingStorage {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: `storage` never returns, so it promises nothing about memory.
unsafe impl TensorOwner for PanickingStorage {
    type Elem = u8;

    fn storage(&mut self) -> Storage<u8> {
        panic!("storage panics (on purpose, in a test)");
    }
}

#[test]
fn a_panicking_storage_drops_the_owner_and_frees_the_context() {
    // Found by an audit: the owner was already moved into the export's allocation when `storage()`
    // unwound, and neither was ever freed. The memcheck tier checks the allocation.
    let drops = counter();
    for strided in [false, true] {
        let owner = PanickingStorage { drops: drops.clone() };
        let export = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if strided {
                ManagedTensor::from_owner_strided(owner, [2, 2], [1, 2], 0)
            } else {
                ManagedTensor::from_owner(owner, [4])
            }
        }));
        assert!(export.is_err(), "the owner's panic reaches the caller");
    }
    assert_eq!(drops.load(Ordering::SeqCst), 2, "each owner is dropped once");
}

#[test]
fn shared_owners_export_read_only() {
    let shared: Arc<[f64]> = Arc::from(vec![1.0, 2.0, 3.0]);
    let tensor = ManagedTensor::from_owner(shared.clone(), [3]).unwrap();
    assert!(tensor.is_read_only() && !tensor.is_copied());
    assert_eq!(Arc::strong_count(&shared), 2, "zero-copy: the tensor holds a clone");
    assert_eq!(tensor.dl_tensor().data, shared.as_ptr().cast_mut().cast());
    drop(tensor);
    assert_eq!(Arc::strong_count(&shared), 1);
    static TABLE: [u16; 4] = [1, 2, 3, 4];
    let from_static = ManagedTensor::from_owner(&TABLE[..], [2, 2]).unwrap();
    assert!(from_static.is_read_only());
    let boxed = ManagedTensor::from_owner(vec![7u8; 4].into_boxed_slice(), [4]).unwrap();
    assert!(!boxed.is_read_only());
}

#[test]
fn copy_modes_and_flags() {
    let data: Vec<i16> = (0..12).collect();
    let view = HostMdspan::<i16, 2>::from_slice(&data, [3, 4]).unwrap();
    let column = view.subview((.., 1..2));
    for mode in [CopyMode::Always, CopyMode::IfNeeded] {
        let copy = column.to_managed_tensor(mode).unwrap();
        assert!(copy.is_copied() && !copy.is_read_only());
        assert_eq!((copy.shape(), copy.strides()), (&[3i64, 1][..], Some(&[1i64, 1][..])));
        assert_ne!(copy.dl_tensor().data, data.as_ptr().cast_mut().cast(), "an independent buffer");
        assert_eq!(copy.view::<i16, 2, LayoutRight>().unwrap().to_vec(), [1, 5, 9]);
    }
    assert_eq!(column.to_managed_tensor(CopyMode::Never).unwrap_err(), DlpackError::CopyRequired);
}

#[test]
fn zero_dimensional_and_empty_tensors() {
    let scalar = ManagedTensor::from_owner(vec![2.5f32], []).unwrap();
    assert_eq!((scalar.ndim(), scalar.shape(), scalar.strides()), (0, &[][..], None));
    assert_eq!(scalar.view::<f32, 0, LayoutRight>().unwrap()[[]], 2.5);
    let raw = scalar.into_raw_versioned();
    // SAFETY: live export, ownership passes.
    let back = unsafe { ManagedTensor::from_raw_versioned(raw) }.unwrap();
    assert_eq!(back.view::<f32, 0, LayoutStride>().unwrap()[[]], 2.5);

    let empty = ManagedTensor::from_owner(Vec::<u8>::new(), [0, 5]).unwrap();
    assert!(empty.dl_tensor().data.is_null(), "DLPack: data is null without elements");
    assert!(empty.view::<u8, 2, LayoutRight>().unwrap().is_empty());
    let legacy = empty.into_raw_legacy().unwrap();
    // SAFETY: live export, ownership passes.
    let back = unsafe { ManagedTensor::from_raw_legacy(legacy) }.unwrap();
    assert_eq!(back.shape(), &[0, 5]);
}

#[test]
fn strided_exports_and_relaxed_offsets() {
    // The reverse of a buffer, exported without copying.
    let tensor = ManagedTensor::from_owner_strided(vec![1u32, 2, 3, 4], [4], [-1], 3).unwrap();
    assert_eq!((tensor.dl_tensor().byte_offset, tensor.strides()), (12, Some(&[-1i64][..])));
    assert_eq!(tensor.view::<u32, 1, LayoutStrideRelaxed>().unwrap().to_vec(), [4, 3, 2, 1]);
    assert!(matches!(tensor.view::<u32, 1, LayoutStride>(), Err(DlpackError::NonPositiveStride { .. })));
    // A broadcast export: shared views only.
    let mut broadcast = ManagedTensor::from_owner_strided(vec![5i8, 6], [3, 2], [0, 1], 0).unwrap();
    assert_eq!(broadcast.view::<i8, 2, LayoutStrideRelaxed>().unwrap().to_vec(), [5, 6, 5, 6, 5, 6]);
    assert_eq!(broadcast.view_mut::<i8, 2, LayoutStrideRelaxed>().unwrap_err(), DlpackError::OverlappingStrides);
}

#[test]
fn subbyte_padding_travels_in_the_flags() {
    let padded = ManagedTensor::from_owner(vec![Float4E2m1fn::from_bits(3); 4], [4]).unwrap();
    assert!(padded.is_subbyte_padded());
    assert_eq!(padded.view::<Float4E2m1fn, 1, LayoutRight>().unwrap()[[0]].to_f32(), 1.5);
    assert!(matches!(padded.view::<Float4E2m1fnX2, 1, LayoutRight>(), Err(DlpackError::DtypeMismatch { .. })));
    let packed = ManagedTensor::from_owner(vec![Float4E2m1fnX2::from_bytes([0x21]); 2], [2]).unwrap();
    assert!(!packed.is_subbyte_padded());
    assert_eq!(packed.view::<Float4E2m1fnX2, 1, LayoutRight>().unwrap()[[1]].to_f32_array(), [0.5, 1.0]);
}

#[test]
fn views_of_any_type_and_debug() {
    let tensor = ManagedTensor::from_owner(vec![0.25f32; 6], [2, 3]).unwrap();
    let tile = tensor.view_as::<mdspan!(f32; 2, 3; layout = stride)>().unwrap();
    assert_eq!(tile[[1, 2]], 0.25);
    assert!(matches!(tensor.view_as::<mdspan!(f32; 3, 2)>(), Err(DlpackError::ExtentMismatch { .. })));
    assert!(matches!(tensor.view_as::<DeviceMdspan<'_, f32, 2>>(), Err(DlpackError::DeviceMismatch { .. })));
    let text = format!("{tensor:?}");
    assert!(text.contains("shape: [2, 3]") && text.contains("float32"), "{text}");
}

#[test]
fn managed_tensors_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<ManagedTensor>();
    let drops = counter();
    let tensor = ManagedTensor::from_owner(counted(3, &drops, false), [3]).unwrap();
    let sum = std::thread::spawn(move || {
        let sum: i32 = tensor.view::<i32, 1, LayoutRight>().unwrap().iter().sum();
        drop(tensor);
        sum
    })
    .join()
    .unwrap();
    assert_eq!((sum, drops.load(Ordering::SeqCst)), (3, 1));
}

#[test]
fn question_mark_on_a_refused_legacy_export_releases_the_tensor_once() {
    fn to_legacy_consumer(tensor: ManagedTensor) -> Result<*mut DLManagedTensor, DlpackError> {
        Ok(tensor.into_raw_legacy()?)
    }
    let shared: Arc<[f64]> = Arc::from(vec![1.0, 2.0, 3.0]);
    let read_only = ManagedTensor::from_owner(shared.clone(), [3]).unwrap();
    assert_eq!(Arc::strong_count(&shared), 2);
    assert!(matches!(to_legacy_consumer(read_only), Err(DlpackError::ReadOnly)));
    assert_eq!(Arc::strong_count(&shared), 1, "the refused tensor's deleter ran once");

    let drops = counter();
    let raw = to_legacy_consumer(ManagedTensor::from_owner(counted(4, &drops, false), [4]).unwrap()).unwrap();
    // SAFETY: `raw` is a live legacy tensor whose ownership passes here.
    drop(unsafe { ManagedTensor::from_raw_legacy(raw) }.unwrap());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}
