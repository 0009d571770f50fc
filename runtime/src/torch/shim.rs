//! The LibTorch stable C shim, resolved at run time from the libtorch already in the process
//! (`dlopen(RTLD_NOLOAD)` then `dlsym`): an extension links nothing of PyTorch, builds with no torch
//! installed and loads against any torch from [`OLDEST`] on. Functions newer than the oldest
//! supported torch are optional, and asking for one that this torch lacks is a
//! [`TorchError::Unsupported`] naming the version that has it.

use super::error::TorchError;
use core::ffi::{c_char, c_void};
use std::sync::{Mutex, OnceLock};

/// An opaque `AtenTensorHandle` target (`at::Tensor*` behind the shim).
#[repr(C)]
pub(crate) struct AtenTensorOpaque {
    _private: [u8; 0],
}

/// An opaque `TorchLibraryHandle` target (`torch::Library*`).
#[repr(C)]
pub(crate) struct TorchLibraryOpaque {
    _private: [u8; 0],
}

/// `AtenTensorHandle`.
pub(crate) type TensorHandle = *mut AtenTensorOpaque;
/// `TorchLibraryHandle`.
pub(crate) type LibraryHandle = *mut TorchLibraryOpaque;
/// An opaque `StringHandle` target (`std::string*`).
#[repr(C)]
pub(crate) struct StringOpaque {
    _private: [u8; 0],
}

/// `StringHandle`: a `str` argument.
pub(crate) type StringHandle = *mut StringOpaque;
/// `AOTITorchError`: 0 on success.
type Code = i32;

/// A boxed kernel as the dispatcher calls it: the stack, the number of arguments and of returns.
/// Declared `C-unwind`: a kernel reports its error by calling `aoti_torch_check`, which throws a
/// C++ exception through the kernel's own frame.
pub(crate) type BoxedFn = unsafe extern "C-unwind" fn(*mut u64, u64, u64);

/// The oldest torch dlspan's operators load into: 2.10, whose shim has `torch_library_impl` and the
/// versioned boxed calling convention.
///
/// ```
/// assert_eq!(dlspan::torch::OLDEST, (2, 10));
/// ```
pub const OLDEST: (u8, u8) = (2, 10);

/// `TORCH_ABI_VERSION` of a torch `major.minor` (`major << 56 | minor << 48`).
pub(crate) const fn abi_version(major: u8, minor: u8) -> u64 {
    ((major as u64) << 56) | ((minor as u64) << 48)
}

/// The version dlspan's operators are built for, as `torch_library_impl` takes it: the oldest
/// supported torch's (the calling convention of its boxed kernels).
pub(crate) const BUILD_VERSION: u64 = abi_version(OLDEST.0, OLDEST.1);

macro_rules! shim {
    (
        getters { $($getter:ident: fn() -> $gret:ty;)* }
        required { $($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)* }
        optional { $($opt:ident: fn($($oarg:ty),*) $(-> $oret:ty)?;)* }
    ) => {
        /// The shim's functions this process's libtorch exports.
        #[allow(non_snake_case)]
        pub(crate) struct Shim {
            $(pub(crate) $getter: extern "C" fn() -> $gret,)*
            $(pub(crate) $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            $(pub(crate) $opt: Option<unsafe extern "C" fn($($oarg),*) $(-> $oret)?>,)*
            /// `aoti_torch_check`: throws a C++ exception when its condition is false.
            pub(crate) check: unsafe extern "C-unwind" fn(bool, *const c_char, *const c_char, u32, *const c_char),
        }

        impl Shim {
            /// Resolves every function through `lookup` (a NUL-terminated name → address or null).
            fn resolve(lookup: &dyn Fn(&[u8]) -> *mut c_void) -> Result<Self, TorchError> {
                let required = |name: &'static str| {
                    let address = lookup(name.as_bytes());
                    if address.is_null() {
                        Err(TorchError::TooOld { symbol: name.trim_end_matches('\0'), oldest: OLDEST })
                    } else {
                        Ok(address)
                    }
                };
                Ok(Self {
                    // SAFETY: each address is the libtorch export of that name, a C function of no
                    // arguments that returns a constant: safe to call.
                    $($getter: unsafe { core::mem::transmute::<*mut c_void, extern "C" fn() -> $gret>(required(concat!(stringify!($getter), "\0"))?) },)*
                    // SAFETY: each address is the libtorch export of that name, a C function with
                    // the prototype the shim's headers declare (transcribed here).
                    $($name: unsafe { core::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(required(concat!(stringify!($name), "\0"))?) },)*
                    $($opt: {
                        let address = lookup(concat!(stringify!($opt), "\0").as_bytes());
                        // SAFETY: as above, for the functions a newer torch adds.
                        (!address.is_null()).then(|| unsafe {
                            core::mem::transmute::<*mut c_void, unsafe extern "C" fn($($oarg),*) $(-> $oret)?>(address)
                        })
                    },)*
                    // SAFETY: `aoti_torch_check(bool, const char*, const char*, uint32_t, const char*)`,
                    // which may throw: called only as `C-unwind`.
                    check: unsafe {
                        core::mem::transmute::<*mut c_void, unsafe extern "C-unwind" fn(bool, *const c_char, *const c_char, u32, *const c_char)>(required("aoti_torch_check\0")?)
                    },
                })
            }
        }
    };
}

shim! {
    getters {
        aoti_torch_abi_version: fn() -> u64;
        aoti_torch_device_type_cpu: fn() -> i32;
        aoti_torch_device_type_cuda: fn() -> i32;
        aoti_torch_device_type_meta: fn() -> i32;
        aoti_torch_dtype_bool: fn() -> i32;
        aoti_torch_dtype_uint8: fn() -> i32;
        aoti_torch_dtype_uint16: fn() -> i32;
        aoti_torch_dtype_uint32: fn() -> i32;
        aoti_torch_dtype_uint64: fn() -> i32;
        aoti_torch_dtype_int8: fn() -> i32;
        aoti_torch_dtype_int16: fn() -> i32;
        aoti_torch_dtype_int32: fn() -> i32;
        aoti_torch_dtype_int64: fn() -> i32;
        aoti_torch_dtype_float16: fn() -> i32;
        aoti_torch_dtype_bfloat16: fn() -> i32;
        aoti_torch_dtype_float32: fn() -> i32;
        aoti_torch_dtype_float64: fn() -> i32;
        aoti_torch_dtype_complex64: fn() -> i32;
        aoti_torch_dtype_complex128: fn() -> i32;
        aoti_torch_dtype_float8_e5m2: fn() -> i32;
        aoti_torch_dtype_float8_e4m3fn: fn() -> i32;
        aoti_torch_dtype_float8_e5m2fnuz: fn() -> i32;
        aoti_torch_dtype_float8_e4m3fnuz: fn() -> i32;
    }
    required {
        aoti_torch_library_init_def: fn(*const c_char, *const c_char, u32, *mut LibraryHandle) -> Code;
        aoti_torch_library_init_impl: fn(*const c_char, *const c_char, *const c_char, u32, *mut LibraryHandle) -> Code;
        aoti_torch_library_def: fn(LibraryHandle, *const c_char) -> Code;
        torch_library_impl: fn(LibraryHandle, *const c_char, BoxedFn, u64) -> Code;
        aoti_torch_delete_library_object: fn(LibraryHandle) -> Code;
        aoti_torch_delete_tensor_object: fn(TensorHandle) -> Code;
        aoti_torch_new_tensor_handle: fn(TensorHandle, *mut TensorHandle) -> Code;
        torch_string_length: fn(StringHandle, *mut usize) -> Code;
        torch_string_c_str: fn(StringHandle, *mut *const c_char) -> Code;
        torch_delete_string: fn(StringHandle) -> Code;
        aoti_torch_get_data_ptr: fn(TensorHandle, *mut *mut c_void) -> Code;
        aoti_torch_get_dim: fn(TensorHandle, *mut i64) -> Code;
        aoti_torch_get_sizes: fn(TensorHandle, *mut *mut i64) -> Code;
        aoti_torch_get_strides: fn(TensorHandle, *mut *mut i64) -> Code;
        aoti_torch_get_dtype: fn(TensorHandle, *mut i32) -> Code;
        aoti_torch_get_device_type: fn(TensorHandle, *mut i32) -> Code;
        aoti_torch_get_device_index: fn(TensorHandle, *mut i32) -> Code;
        aoti_torch_empty_strided: fn(i64, *const i64, *const i64, i32, i32, i32, *mut TensorHandle) -> Code;
    }
    optional {
        torch_exception_get_what_without_backtrace: fn() -> *const c_char;
        torch_delete_stable_ivalue: fn(*mut u64) -> Code;
        // C++'s `operator delete(void*)`, found from libtorch (its own C++ runtime's): what frees
        // an optional argument's slot before torch 2.13.
        _ZdlPv: fn(*mut c_void);
    }
}

/// The sonames of the library that exports the shim, tried in turn.
const LIBRARIES: &[&[u8]] = &[b"libtorch_cpu.so\0", b"libtorch_cpu.dylib\0"];

/// The shim of the libtorch in this process, resolved once.
///
/// # Errors
///
/// [`TorchError::NotLoaded`] when no libtorch is loaded (import `torch` first, or link it);
/// [`TorchError::TooOld`] when it lacks a function of the oldest supported torch.
pub(crate) fn shim() -> Result<&'static Shim, TorchError> {
    static SHIM: OnceLock<Result<Shim, TorchError>> = OnceLock::new();
    SHIM.get_or_init(load).as_ref().map_err(Clone::clone)
}

#[cfg(unix)]
fn load() -> Result<Shim, TorchError> {
    // A libtorch loaded by `import torch` (local scope) is found by its soname without loading
    // anything; one the process links to is also in the global scope.
    for name in LIBRARIES {
        // SAFETY: `name` is NUL-terminated; RTLD_NOLOAD loads nothing, it only finds a library
        // already in the process (and takes a reference to it, kept for the process).
        let handle = unsafe { libc::dlopen(name.as_ptr().cast(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if !handle.is_null() {
            // SAFETY: `handle` is a live library handle; each name is NUL-terminated.
            return Shim::resolve(&|symbol| unsafe { libc::dlsym(handle, symbol.as_ptr().cast()) });
        }
    }
    // SAFETY: as above, in the global scope.
    let global = |symbol: &[u8]| unsafe { libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr().cast()) };
    if global(b"aoti_torch_abi_version\0").is_null() {
        return Err(TorchError::NotLoaded);
    }
    Shim::resolve(&global)
}

#[cfg(not(unix))]
fn load() -> Result<Shim, TorchError> {
    Err(TorchError::NotLoaded)
}

impl Shim {
    /// Turns a shim call's status into a result naming `function`, with libtorch's message when
    /// this torch reports it.
    pub(crate) fn status(&self, function: &'static str, code: Code) -> Result<(), TorchError> {
        if code == 0 {
            return Ok(());
        }
        let message = self
            .torch_exception_get_what_without_backtrace
            .map(|what| {
                // SAFETY: the function returns the calling thread's last message, NUL-terminated
                // (or null), valid until the next failing call on this thread: copied at once.
                let text = unsafe { what() };
                if text.is_null() {
                    String::new()
                } else {
                    // SAFETY: non-null, NUL-terminated, live for this statement.
                    unsafe { core::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned()
                }
            })
            .unwrap_or_default();
        Err(TorchError::Shim { function, code, message })
    }

    /// Frees the heap slot of an optional argument: with `torch_delete_stable_ivalue` (2.13), or
    /// before it with C++'s `operator delete`, which allocated it (`new StableIValue`); with
    /// neither, the 8 bytes are left allocated rather than freed by the wrong allocator.
    ///
    /// # Safety
    ///
    /// `boxed` is an optional argument's heap slot, owned by the caller, not used again.
    pub(crate) unsafe fn delete_ivalue(&self, boxed: *mut u64) {
        if let Some(delete) = self.torch_delete_stable_ivalue {
            // SAFETY: forwarded.
            let _ = unsafe { delete(boxed) };
        } else if let Some(delete) = self._ZdlPv {
            // SAFETY: forwarded: the slot was allocated by `new`.
            unsafe { delete(boxed.cast()) };
        }
    }

    /// The text of a `str` argument's handle, which is then deleted.
    ///
    /// # Errors
    ///
    /// The shim's error reading it; [`TorchError::Kernel`] for text that is not UTF-8.
    ///
    /// # Safety
    ///
    /// `handle` is an owning string handle, owned by the caller, not used again.
    pub(crate) unsafe fn take_string(&self, handle: StringHandle) -> Result<String, TorchError> {
        let (mut length, mut data) = (0usize, core::ptr::null());
        // SAFETY: a live handle; the out-parameters are written.
        let read = self
            .status("torch_string_length", unsafe { (self.torch_string_length)(handle, &mut length) })
            // SAFETY: as above.
            .and_then(|()| self.status("torch_string_c_str", unsafe { (self.torch_string_c_str)(handle, &mut data) }));
        let text = read.and_then(|()| {
            if data.is_null() {
                return Ok(String::new());
            }
            // SAFETY: the handle's `length` bytes, live until it is deleted below.
            let bytes = unsafe { core::slice::from_raw_parts(data.cast::<u8>(), length) };
            String::from_utf8(bytes.to_vec()).map_err(|_| TorchError::Kernel("a `str` argument is not UTF-8".into()))
        });
        // SAFETY: the owning handle, deleted once (its text was copied).
        let _ = unsafe { (self.torch_delete_string)(handle) };
        text
    }

    /// The torch version of this process, `(major, minor)`.
    pub(crate) fn version(&self) -> (u8, u8) {
        let abi = (self.aoti_torch_abi_version)();
        ((abi >> 56) as u8, (abi >> 48) as u8)
    }
}

/// The libraries dlspan created: kept for the process (deleting one removes its kernels).
pub(crate) fn libraries() -> &'static Mutex<Vec<usize>> {
    static LIBRARIES: OnceLock<Mutex<Vec<usize>>> = OnceLock::new();
    LIBRARIES.get_or_init(Default::default)
}
