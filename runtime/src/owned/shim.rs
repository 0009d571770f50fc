//! Shells that present a managed tensor of one form as the other: a legacy shell around a foreign
//! versioned tensor, and a versioned shell around a legacy tensor. Each is one allocation whose
//! deleter frees it and calls the inner tensor's deleter.

use super::{call_legacy_deleter, call_versioned_deleter};
use crate::ffi::{DLManagedTensor, DLManagedTensorVersioned, DLPackVersion};
use core::ffi::c_void;
use core::ptr::NonNull;

/// A legacy tensor presenting a versioned one (header first, so the header pointer is the shell).
#[repr(C)]
struct LegacyShell {
    legacy: DLManagedTensor,
    inner: NonNull<DLManagedTensorVersioned>,
}

/// A versioned tensor presenting a legacy one.
#[repr(C)]
struct VersionedShell {
    versioned: DLManagedTensorVersioned,
    inner: NonNull<DLManagedTensor>,
}

/// Wraps a versioned tensor (given up by its owner) as a legacy one.
pub(super) fn legacy_around_versioned(inner: NonNull<DLManagedTensorVersioned>) -> NonNull<DLManagedTensor> {
    // SAFETY: the caller owned `inner`, a live tensor; its `DLTensor` (whose arrays live as long as
    // `inner`) is copied.
    let dl_tensor = unsafe { (*inner.as_ptr()).dl_tensor };
    let shell = Box::into_raw(Box::new(LegacyShell {
        legacy: DLManagedTensor { dl_tensor, manager_ctx: core::ptr::null_mut(), deleter: Some(delete_legacy_shell) },
        inner,
    }));
    // SAFETY: `shell` is live and unique; it is its own context.
    unsafe { (*shell).legacy.manager_ctx = shell.cast::<c_void>() };
    // SAFETY: from `Box::into_raw`, non-null; the header is the first field.
    unsafe { NonNull::new_unchecked(shell) }.cast()
}

/// Wraps a legacy tensor (given up by its owner) as a versioned one (flags 0: a legacy producer
/// states nothing).
pub(super) fn versioned_around_legacy(inner: NonNull<DLManagedTensor>) -> NonNull<DLManagedTensorVersioned> {
    // SAFETY: as above.
    let dl_tensor = unsafe { (*inner.as_ptr()).dl_tensor };
    let shell = Box::into_raw(Box::new(VersionedShell {
        versioned: DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(delete_versioned_shell),
            flags: 0,
            dl_tensor,
        },
        inner,
    }));
    // SAFETY: `shell` is live and unique; it is its own context.
    unsafe { (*shell).versioned.manager_ctx = shell.cast::<c_void>() };
    // SAFETY: from `Box::into_raw`, non-null; the header is the first field.
    unsafe { NonNull::new_unchecked(shell) }.cast()
}

/// # Safety
///
/// `managed` is null or a live `LegacyShell` given up by its owner.
unsafe extern "C" fn delete_legacy_shell(managed: *mut DLManagedTensor) {
    if managed.is_null() {
        return;
    }
    // SAFETY: the shell came from `Box::into_raw` and is released once.
    let shell = unsafe { Box::from_raw(managed.cast::<LegacyShell>()) };
    // SAFETY: the shell owned `inner`; its deleter is called once, here.
    unsafe { call_versioned_deleter(shell.inner) };
}

/// # Safety
///
/// `managed` is null or a live `VersionedShell` given up by its owner.
unsafe extern "C" fn delete_versioned_shell(managed: *mut DLManagedTensorVersioned) {
    if managed.is_null() {
        return;
    }
    // SAFETY: the shell came from `Box::into_raw` and is released once.
    let shell = unsafe { Box::from_raw(managed.cast::<VersionedShell>()) };
    // SAFETY: the shell owned `inner`; its deleter is called once, here.
    unsafe { call_legacy_deleter(shell.inner) };
}
