//! XLA's call frames read safely: [`handle`] is the one entry of every handler (the metadata XLA
//! asks for, the stage, the API version, `catch_unwind`, the error XLA gets back), and
//! [`CallFrame`] the checked reading of its buffers and attributes.
//!
//! Nothing XLA hands over is trusted beyond what the header promises: every struct's
//! `struct_size` is checked before a field past the common prefix is read, enums are read as
//! integers, counts are checked against the kernel's, a buffer's rank, extents and dtype are
//! checked before a view is made of it, and the views themselves go through dlspan's import rules
//! ([section I](crate::rules#i)).

use super::error::JaxError;
use super::ffi;
use crate::ffi::{DLDataType, DLDataTypeCode as C, DLDevice, DLTensor};
use crate::{FromDlTensor, ImportOptions};
use core::ffi::c_void;
use std::ffi::CString;

/// The traits a handler reports to XLA.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Traits {
    /// Safe to capture into a CUDA graph (`XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE`):
    /// the handler only enqueues work on XLA's stream, with no host synchronisation, no
    /// allocation and no reading of the buffers' values on the host.
    pub(crate) command_buffer: bool,
}

/// Runs `body` as the handler of `frame`: answers XLA's metadata query (API version, traits),
/// checks the frame and the stage, catches a panic, and turns an error into the `XLA_FFI_Error`
/// XLA raises. Never unwinds.
///
/// A frame without a usable API table (a null pointer, or a struct too small to hold the table's
/// pointer) cannot be answered with an error: the process aborts rather than report a call as
/// done whose results were never written. XLA never passes one.
///
/// # Safety
///
/// `frame` is null or the call frame XLA passed to the handler, valid for the call.
pub(crate) unsafe fn handle(
    frame: *mut ffi::XlaFfiCallFrame,
    traits: Traits,
    body: impl FnOnce(&CallFrame<'_>) -> Result<(), JaxError>,
) -> *mut ffi::XlaFfiError {
    // The metadata query first: XLA may ask it with no API table (jaxlib 0.5 does), and it reads
    // nothing but the extension.
    // SAFETY: forwarded: `frame` is XLA's.
    if let Some(metadata) = unsafe { metadata_query(frame) } {
        // SAFETY: XLA's metadata struct, valid for the call, written field by field within its
        // size (never as a whole: an older XLA's struct may be shorter than dlspan's).
        let outcome = unsafe { write_metadata(metadata, traits) };
        // SAFETY: forwarded: `frame` is XLA's.
        let api = unsafe { api_of(frame) };
        return match (outcome, api) {
            (Ok(()), _) => core::ptr::null_mut(),
            // SAFETY: the frame's checked table.
            (Err(error), Some(api)) => unsafe { create_error(api, ffi::ERROR_UNIMPLEMENTED, &error.to_string()) },
            // Nothing to report with: XLA finds the metadata unwritten (a version of 0.0, which
            // it refuses).
            (Err(_), None) => core::ptr::null_mut(),
        };
    }
    // SAFETY: forwarded: `frame` is XLA's.
    let Some(api) = (unsafe { api_of(frame) }) else { std::process::abort() };
    // SAFETY: `api_of` checked the frame's size and the table's; the frame is valid for the call.
    let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| unsafe { dispatch(frame, api, body) }));
    let error = match outcome {
        Ok(Ok(())) => return core::ptr::null_mut(),
        Ok(Err(error)) => error,
        Err(payload) => {
            let message = crate::error::panic_message(payload, "a panic without a message");
            JaxError::Panic { message }
        }
    };
    let code = match error {
        JaxError::Frame(_) => ffi::ERROR_UNIMPLEMENTED,
        JaxError::Panic { .. } => ffi::ERROR_INTERNAL,
        _ => ffi::ERROR_INVALID_ARGUMENT,
    };
    // SAFETY: `api` is the frame's checked table.
    unsafe { create_error(api, code, &error.to_string()) }
}

/// The metadata struct XLA asks the handler to fill, when `frame` is a metadata query (its first
/// extension is the metadata kind, of the extension's size).
///
/// # Safety
///
/// As for [`handle`].
unsafe fn metadata_query(frame: *const ffi::XlaFfiCallFrame) -> Option<*mut ffi::Metadata> {
    if frame.is_null() {
        return None;
    }
    // SAFETY: a non-null frame is XLA's, valid for the call; its size is read first, and the
    // extension pointer only when the size covers it.
    let size = unsafe { (*frame).struct_size };
    if size < ffi::struct_size!(ffi::XlaFfiCallFrame, extension_start) {
        return None;
    }
    // SAFETY: within the frame's size.
    let extension = unsafe { (*frame).extension_start };
    if extension.is_null() {
        return None;
    }
    // SAFETY: XLA's extension, valid for the call; its size and kind are read first.
    let header = unsafe { &*extension };
    if header.kind != ffi::EXTENSION_METADATA
        || header.struct_size < ffi::struct_size!(ffi::MetadataExtension, metadata)
    {
        return None;
    }
    // SAFETY: an extension of the metadata kind and size is an `XLA_FFI_Metadata_Extension`.
    Some(unsafe { (*extension.cast::<ffi::MetadataExtension>()).metadata })
}

/// The frame's API table, when the frame and the table are large enough to hold what dlspan
/// calls.
///
/// # Safety
///
/// As for [`handle`].
unsafe fn api_of<'a>(frame: *const ffi::XlaFfiCallFrame) -> Option<&'a ffi::Api> {
    if frame.is_null() {
        return None;
    }
    // SAFETY: a non-null frame is XLA's, valid for the call; its first field is its size, and the
    // API pointer is read only when the size covers it.
    let size = unsafe { (*frame).struct_size };
    if size < ffi::struct_size!(ffi::XlaFfiCallFrame, api) {
        return None;
    }
    // SAFETY: within the frame's size.
    let api = unsafe { (*frame).api };
    if api.is_null() {
        return None;
    }
    // SAFETY: XLA's table, alive for the process; its size is read first, and the table is
    // referenced only when it covers every function dlspan calls.
    let table_size = unsafe { (*api).struct_size };
    if table_size < ffi::struct_size!(ffi::Api, stream_get) {
        return None;
    }
    // SAFETY: as above: the table holds every field of `ffi::Api`.
    let api = unsafe { &*api };
    api.error_create.is_some().then_some(api)
}

/// An `XLA_FFI_Error` carrying `message`.
///
/// # Safety
///
/// `api` is XLA's checked table.
unsafe fn create_error(api: &ffi::Api, code: i32, message: &str) -> *mut ffi::XlaFfiError {
    let text = CString::new(message.replace('\0', "\u{fffd}")).unwrap_or_default();
    let mut args = ffi::ErrorCreateArgs {
        struct_size: ffi::struct_size!(ffi::ErrorCreateArgs, errc),
        extension_start: core::ptr::null_mut(),
        message: text.as_ptr(),
        errc: code,
    };
    let Some(create) = api.error_create else { std::process::abort() };
    // SAFETY: XLA's function, called with arguments of its layout; XLA copies the message into the
    // error it returns, so `text` may be dropped after the call.
    unsafe { create(&mut args) }
}

/// The message of an error XLA returned, and the error destroyed.
///
/// # Safety
///
/// `api` is XLA's checked table, `error` an error its functions returned, owned by the caller
/// (destroyed here).
unsafe fn take_error(api: &ffi::Api, error: *mut ffi::XlaFfiError) -> String {
    let mut message = String::from("no message");
    if let Some(get) = api.error_get_message {
        let mut args = ffi::ErrorGetMessageArgs {
            struct_size: ffi::struct_size!(ffi::ErrorGetMessageArgs, message),
            extension_start: core::ptr::null_mut(),
            error,
            message: core::ptr::null(),
        };
        // SAFETY: XLA's function, with arguments of its layout and its own error.
        unsafe { get(&mut args) };
        if !args.message.is_null() {
            // SAFETY: XLA's NUL-terminated message, alive until the error is destroyed.
            message = unsafe { core::ffi::CStr::from_ptr(args.message) }.to_string_lossy().into_owned();
        }
    }
    if let Some(destroy) = api.error_destroy {
        let mut args = ffi::ErrorDestroyArgs {
            struct_size: ffi::struct_size!(ffi::ErrorDestroyArgs, error),
            extension_start: core::ptr::null_mut(),
            error,
        };
        // SAFETY: XLA's function, destroying the error it returned (not used after).
        unsafe { destroy(&mut args) };
    }
    message
}

/// The checks of an executing call's frame, then `body`.
///
/// # Safety
///
/// `frame` is XLA's valid call frame whose table `api` is.
unsafe fn dispatch(
    frame: *mut ffi::XlaFfiCallFrame,
    api: &ffi::Api,
    body: impl FnOnce(&CallFrame<'_>) -> Result<(), JaxError>,
) -> Result<(), JaxError> {
    if api.api_version.major_version != ffi::API_MAJOR {
        return Err(JaxError::Frame(format!(
            "XLA's FFI API is version {}.{}: this build of dlspan reads version {}.x (update dlspan, or use a jaxlib of that API)",
            api.api_version.major_version,
            api.api_version.minor_version,
            ffi::API_MAJOR
        )));
    }
    if size_of_frame(frame) < ffi::struct_size!(ffi::XlaFfiCallFrame, attrs) {
        return Err(JaxError::Frame(format!("the call frame has {} bytes", size_of_frame(frame))));
    }
    // SAFETY: the frame holds every field of `XlaFfiCallFrame` (checked above), valid for the call.
    let raw = unsafe { &*frame };
    if raw.stage != ffi::STAGE_EXECUTE {
        return Err(JaxError::Frame(format!(
            "the handler was called for stage {} (dlspan's handlers execute: register them as one capsule, not a bundle of stages)",
            raw.stage
        )));
    }
    body(&CallFrame { raw, api })
}

/// The frame's `struct_size`.
fn size_of_frame(frame: *const ffi::XlaFfiCallFrame) -> usize {
    // SAFETY: called on a frame `api_of` accepted: non-null, its first field readable.
    unsafe { (*frame).struct_size }
}

/// Writes the handler's metadata: the API version it reads and its traits.
///
/// # Safety
///
/// `metadata` is null or XLA's metadata struct, writable for its `struct_size` bytes.
unsafe fn write_metadata(metadata: *mut ffi::Metadata, traits: Traits) -> Result<(), JaxError> {
    if metadata.is_null() {
        return Err(JaxError::Frame("the metadata extension has no metadata".into()));
    }
    // SAFETY: XLA's struct; its size is read first.
    let size = unsafe { (*metadata).struct_size };
    if size < ffi::struct_size!(ffi::Metadata, traits) {
        return Err(JaxError::Frame(format!("the handler metadata has {size} bytes")));
    }
    let version = ffi::ApiVersion {
        struct_size: ffi::struct_size!(ffi::ApiVersion, minor_version),
        extension_start: core::ptr::null_mut(),
        major_version: ffi::API_MAJOR,
        minor_version: ffi::API_MINOR,
    };
    let bits = if traits.command_buffer { ffi::TRAIT_COMMAND_BUFFER_COMPATIBLE } else { 0 };
    // SAFETY: the fields lie within the checked size; written through raw field pointers,
    // never through a reference to the whole struct.
    let version_at = unsafe { core::ptr::addr_of_mut!((*metadata).api_version) };
    // SAFETY: as above.
    let traits_at = unsafe { core::ptr::addr_of_mut!((*metadata).traits) };
    // SAFETY: an aligned field of XLA's struct, within its size.
    unsafe { version_at.write(version) };
    // SAFETY: as above.
    unsafe { traits_at.write(bits) };
    // A newer XLA's metadata also has the state's type id, after the traits: none (0).
    let state = core::mem::offset_of!(ffi::Metadata, traits) + 4;
    let state = state.next_multiple_of(core::mem::align_of::<i64>());
    if size >= state + core::mem::size_of::<i64>() {
        // SAFETY: within the checked size: the field's aligned offset in XLA's layout.
        let at = unsafe { metadata.cast::<u8>().add(state) }.cast::<i64>();
        // SAFETY: as above: an aligned `int64_t` of XLA's struct.
        unsafe { at.write(0) };
    }
    Ok(())
}

/// A call frame XLA passed to an executing handler, checked: what the handler reads of it.
pub(crate) struct CallFrame<'a> {
    raw: &'a ffi::XlaFfiCallFrame,
    api: &'a ffi::Api,
}

/// Which list of the frame a buffer comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Arg,
    Ret,
}

impl<'a> CallFrame<'a> {
    /// The number of arguments and of results.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.raw.args.size.max(0) as usize, self.raw.rets.size.max(0) as usize)
    }

    /// Argument `k`, named `name` for errors, as a buffer of `device`.
    pub(crate) fn arg(&self, k: usize, name: &'static str, device: DLDevice) -> Result<Buffer<'a>, JaxError> {
        self.buffer(Side::Arg, k, name, device)
    }

    /// Result `k`, named `name`, as a writable buffer of `device`.
    pub(crate) fn ret(&self, k: usize, name: &'static str, device: DLDevice) -> Result<Buffer<'a>, JaxError> {
        self.buffer(Side::Ret, k, name, device)
    }

    fn buffer(&self, side: Side, k: usize, name: &'static str, device: DLDevice) -> Result<Buffer<'a>, JaxError> {
        let (struct_size, size, types, pointers) = match side {
            Side::Arg => {
                let a = &self.raw.args;
                (a.struct_size, a.size, a.types, a.args)
            }
            Side::Ret => {
                let r = &self.raw.rets;
                (r.struct_size, r.size, r.types, r.rets)
            }
        };
        let what = if side == Side::Arg { "argument" } else { "result" };
        if struct_size < ffi::struct_size!(ffi::Args, args) || k as i64 >= size || types.is_null() || pointers.is_null()
        {
            return Err(JaxError::Frame(format!("the call has no {what} {k} (`{name}`)")));
        }
        // SAFETY: XLA's arrays of `size` entries (checked non-null, `k < size`), valid for the call.
        let kind = unsafe { entry(types, k) };
        // SAFETY: as above.
        let pointer = unsafe { entry(pointers, k) };
        if kind != ffi::TYPE_BUFFER || pointer.is_null() {
            return Err(JaxError::Frame(format!("{what} `{name}` is not a buffer (type {kind})")));
        }
        let buffer = pointer.cast::<ffi::Buffer>();
        // SAFETY: XLA's buffer description, valid for the call; its size is read first.
        let buffer_size = unsafe { (*buffer).struct_size };
        if buffer_size < ffi::struct_size!(ffi::Buffer, dims) {
            return Err(JaxError::Frame(format!("{what} `{name}`'s buffer has {buffer_size} bytes")));
        }
        // SAFETY: the buffer holds every field of `ffi::Buffer`.
        let raw = unsafe { &*buffer };
        let rank =
            usize::try_from(raw.rank).ok().filter(|&r| r <= crate::dtype::MAX_DISPATCH_RANK).ok_or_else(|| {
                JaxError::Kernel(format!(
                    "{what} `{name}` has rank {}: dlspan's kernels take up to {} axes",
                    raw.rank,
                    crate::dtype::MAX_DISPATCH_RANK
                ))
            })?;
        if rank > 0 && raw.dims.is_null() {
            return Err(JaxError::Frame(format!("{what} `{name}` has rank {rank} and no extents")));
        }
        let dims = if rank == 0 {
            Vec::new()
        } else {
            // SAFETY: XLA's `rank` extents (checked non-null), valid for the call.
            unsafe { core::slice::from_raw_parts(raw.dims, rank) }.to_vec()
        };
        if let Some(d) = dims.iter().find(|&&d| d < 0) {
            return Err(JaxError::Kernel(format!("{what} `{name}` has a negative extent {d}")));
        }
        Ok(Buffer::new(name, raw.dtype, raw.data, &dims, device, side == Side::Ret))
    }

    /// The scalar attribute `name`: its XLA dtype and a pointer to its value.
    fn scalar_attr(&self, name: &str) -> Result<(i32, *const c_void), JaxError> {
        let a = &self.raw.attrs;
        let missing = || JaxError::Attribute {
            name: name.to_owned(),
            reason: "the call passes no attribute of this name (pass it as a keyword of `jax.ffi.ffi_call`)".into(),
        };
        if a.struct_size < ffi::struct_size!(ffi::Attrs, attrs) || a.size <= 0 {
            return Err(missing());
        }
        if a.types.is_null() || a.names.is_null() || a.attrs.is_null() {
            return Err(JaxError::Frame("the attributes have null arrays".into()));
        }
        for k in 0..a.size as usize {
            // SAFETY: XLA's arrays of `size` entries (checked non-null), valid for the call.
            let kind = unsafe { entry(a.types, k) };
            // SAFETY: as above.
            let span = unsafe { entry(a.names, k) };
            // SAFETY: as above.
            let value = unsafe { entry(a.attrs, k) };
            if span.is_null() {
                continue;
            }
            // SAFETY: XLA's name span, valid for the call.
            let span = unsafe { &*span };
            let bytes: &[u8] = if span.ptr.is_null() || span.len == 0 {
                &[]
            } else {
                // SAFETY: `len` bytes at `ptr`, XLA's, valid for the call.
                unsafe { core::slice::from_raw_parts(span.ptr.cast::<u8>(), span.len) }
            };
            if bytes != name.as_bytes() {
                continue;
            }
            if kind != ffi::ATTR_SCALAR || value.is_null() {
                return Err(JaxError::Attribute {
                    name: name.to_owned(),
                    reason: format!("the attribute is not a scalar (type {kind})"),
                });
            }
            // SAFETY: a scalar attribute is an `XLA_FFI_Scalar`, valid for the call.
            let scalar = unsafe { &*value.cast::<ffi::Scalar>() };
            if scalar.value.is_null() {
                return Err(JaxError::Frame(format!("attribute `{name}` has no value")));
            }
            return Ok((scalar.dtype, scalar.value.cast_const()));
        }
        Err(missing())
    }

    /// The scalar attribute `name` as the bits [`Spec::scalar`](crate::kernel::signature::Spec::scalar)
    /// reads for `kind`: a float attribute (`float16` … `float64`) as `f64` bits, an integer one
    /// as `i64` bits, a `bool` as 0 or 1.
    pub(crate) fn scalar_bits(&self, name: &str, kind: crate::kernel::signature::ScalarKind) -> Result<u64, JaxError> {
        use crate::kernel::signature::ScalarKind as K;
        let (dtype, value) = self.scalar_attr(name)?;
        let read = |size: usize| -> u64 {
            let mut bytes = [0u8; 8];
            // SAFETY: XLA's scalar of the dtype it names (`size` bytes, at most 8), valid for the
            // call; copied bytewise (the header promises no alignment of attribute storage).
            unsafe { core::ptr::copy_nonoverlapping(value.cast::<u8>(), bytes.as_mut_ptr(), size) };
            u64::from_ne_bytes(bytes)
        };
        let found = dtype_of(dtype).map_or_else(|| format!("XLA dtype {dtype}"), |d| d.to_string());
        let wrong = |expected: &str| JaxError::Attribute {
            name: name.to_owned(),
            reason: format!("the attribute has dtype {found}; the kernel takes {expected}"),
        };
        let bits = match (kind, dtype_of(dtype)) {
            (K::Float, Some(d)) if d.code == C::kDLFloat.0 && d.bits == 64 => read(8),
            (K::Float, Some(d)) if d.code == C::kDLFloat.0 && d.bits == 32 => {
                f64::from(f32::from_bits(read(4) as u32)).to_bits()
            }
            (K::Float, _) => return Err(wrong("a float (float32 or float64)")),
            (K::Int, Some(d)) if d.code == C::kDLInt.0 => {
                let raw = read(usize::from(d.bits / 8));
                let shift = 64 - u32::from(d.bits);
                (((raw << shift) as i64) >> shift) as u64
            }
            (K::Int, Some(d)) if d.code == C::kDLUInt.0 && d.bits < 64 => read(usize::from(d.bits / 8)),
            (K::Int, Some(d)) if d.code == C::kDLUInt.0 => {
                let raw = read(8);
                if raw > i64::MAX as u64 {
                    return Err(JaxError::Attribute {
                        name: name.to_owned(),
                        reason: format!("{raw} does not fit an int64"),
                    });
                }
                raw
            }
            (K::Int, _) => return Err(wrong("an integer")),
            (K::Bool, Some(d)) if d.code == C::kDLBool.0 => u64::from(read(1) as u8 != 0),
            (K::Bool, _) => return Err(wrong("a bool")),
        };
        Ok(bits)
    }

    /// XLA's stream for the call (a `CUstream` on CUDA), from the execution context.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn stream(&self) -> Result<*mut c_void, JaxError> {
        let Some(get) = self.api.stream_get else {
            return Err(JaxError::Frame("XLA's API table has no `XLA_FFI_Stream_Get`".into()));
        };
        let mut args = ffi::StreamGetArgs {
            struct_size: ffi::struct_size!(ffi::StreamGetArgs, stream),
            extension_start: core::ptr::null_mut(),
            ctx: self.raw.ctx,
            stream: core::ptr::null_mut(),
        };
        // SAFETY: XLA's function with arguments of its layout and the call's context.
        let error = unsafe { get(&mut args) };
        if !error.is_null() {
            // SAFETY: an error XLA's function returned, owned by the caller.
            return Err(JaxError::Frame(format!("XLA_FFI_Stream_Get failed: {}", unsafe {
                take_error(self.api, error)
            })));
        }
        Ok(args.stream)
    }
}

#[cfg(feature = "cuda")]
impl CallFrame<'_> {
    /// The call's CUDA device and XLA's stream on it, as a dlspan [`Stream`](crate::cuda::Stream)
    /// that borrows it (for this call only: the frame's lifetime bounds its use).
    pub(crate) fn cuda_stream(&self) -> Result<(usize, crate::cuda::Stream), JaxError> {
        let ordinal = self.device_ordinal()?;
        let handle = self.stream()?;
        let gpu = crate::cuda::Gpu::new(ordinal)?;
        gpu.context().bind_to_thread().map_err(crate::cuda::CudaError::from)?;
        // SAFETY: XLA's stream of this device's primary context (XLA's streams are in it, as
        // JAX shares the primary context), alive for the call; the wrapper is used for this call
        // only and destroys nothing when dropped.
        let inner = unsafe { gpu.context().wrap_borrowed_stream(handle.cast()) };
        Ok((ordinal, crate::cuda::Stream::wrap(&gpu, inner)?))
    }

    /// The call's device ordinal (`XLA_FFI_DeviceOrdinal_Get`, API 0.3).
    fn device_ordinal(&self) -> Result<usize, JaxError> {
        let needed = core::mem::offset_of!(ffi::ApiTail, device_ordinal_get) + core::mem::size_of::<usize>();
        if self.api.struct_size < needed {
            return Err(JaxError::Frame(
                "XLA's API table has no `XLA_FFI_DeviceOrdinal_Get` (a jaxlib older than API 0.3): the CUDA handler cannot tell its device".into(),
            ));
        }
        // SAFETY: the table's size covers `ApiTail` (checked above); XLA's table lives for the
        // process.
        let tail = unsafe { &*(self.api as *const ffi::Api).cast::<ffi::ApiTail>() };
        let Some(get) = tail.device_ordinal_get else {
            return Err(JaxError::Frame("XLA_FFI_DeviceOrdinal_Get is null".into()));
        };
        let mut args = ffi::DeviceOrdinalGetArgs {
            struct_size: ffi::struct_size!(ffi::DeviceOrdinalGetArgs, device_ordinal),
            extension_start: core::ptr::null_mut(),
            ctx: self.raw.ctx,
            device_ordinal: -1,
        };
        // SAFETY: XLA's function with arguments of its layout and the call's context.
        let error = unsafe { get(&mut args) };
        if !error.is_null() {
            // SAFETY: an error XLA's function returned, owned by the caller.
            let message = unsafe { take_error(self.api, error) };
            return Err(JaxError::Frame(format!("XLA_FFI_DeviceOrdinal_Get failed: {message}")));
        }
        usize::try_from(args.device_ordinal)
            .map_err(|_| JaxError::Frame(format!("XLA's device ordinal is {}", args.device_ordinal)))
    }
}

/// The first pair `(k, j)` of buffers sharing a byte where `k` is written (`written(k)`): a
/// result that aliases another buffer of the call.
pub(crate) fn overlap(buffers: &[Buffer<'_>], written: impl Fn(usize) -> bool) -> Option<(usize, usize)> {
    for (k, buffer) in buffers.iter().enumerate().filter(|(k, _)| written(*k)) {
        let Some((start, end)) = buffer.span() else { continue };
        for (j, other) in buffers.iter().enumerate().filter(|(j, _)| *j != k) {
            if other.span().is_some_and(|(s, e)| s < end && start < e) {
                return Some((k, j));
            }
        }
    }
    None
}

/// Entry `k` of one of XLA's arrays.
///
/// # Safety
///
/// `array` points to at least `k + 1` initialised entries, valid for the call.
unsafe fn entry<T: Copy>(array: *const T, k: usize) -> T {
    // SAFETY: within the array (the caller's contract).
    let at = unsafe { array.add(k) };
    // SAFETY: as above: an initialised entry.
    unsafe { at.read() }
}

/// The DLPack data type of an XLA dtype, where it has one (the byte-sized scalar types).
pub(crate) fn dtype_of(xla: i32) -> Option<DLDataType> {
    let (code, bits) = match xla {
        1 => (C::kDLBool, 8),
        2 => (C::kDLInt, 8),
        3 => (C::kDLInt, 16),
        4 => (C::kDLInt, 32),
        5 => (C::kDLInt, 64),
        6 => (C::kDLUInt, 8),
        7 => (C::kDLUInt, 16),
        8 => (C::kDLUInt, 32),
        9 => (C::kDLUInt, 64),
        10 => (C::kDLFloat, 16),
        11 => (C::kDLFloat, 32),
        12 => (C::kDLFloat, 64),
        16 => (C::kDLBfloat, 16),
        15 => (C::kDLComplex, 64),
        18 => (C::kDLComplex, 128),
        19 => (C::kDLFloat8_e5m2, 8),
        20 => (C::kDLFloat8_e4m3fn, 8),
        23 => (C::kDLFloat8_e4m3b11fnuz, 8),
        24 => (C::kDLFloat8_e5m2fnuz, 8),
        25 => (C::kDLFloat8_e4m3fnuz, 8),
        28 => (C::kDLFloat8_e4m3, 8),
        29 => (C::kDLFloat8_e3m4, 8),
        33 => (C::kDLFloat8_e8m0fnu, 8),
        _ => return None,
    };
    Some(DLDataType::new(code, bits, 1))
}

/// The XLA dtype of a DLPack data type, where it has one ([`dtype_of`]'s inverse).
pub(crate) fn xla_dtype(dtype: DLDataType) -> Option<i32> {
    (0..64).find(|&xla| dtype_of(xla) == Some(dtype))
}

/// An argument or result buffer of a call, checked (rank, extents non-negative), described as a
/// compact row-major `DLTensor` — XLA's buffers are dense and row-major — of the rank
/// [`expand_rank`](Self::expand_rank) gives it.
#[derive(Debug)]
pub(crate) struct Buffer<'a> {
    name: &'static str,
    dtype: Option<DLDataType>,
    xla_dtype: i32,
    data: *mut c_void,
    /// The extents, then the strides (in elements): the description's arrays, on the heap, so
    /// that moving the buffer keeps `dl`'s pointers valid.
    dims: Vec<i64>,
    rank: usize,
    device: DLDevice,
    writable: bool,
    /// The description views are made from (`None` for a dtype without a DLPack equivalent).
    dl: Option<DLTensor>,
    /// The buffer is XLA's, valid while the frame's call runs (`'a`).
    frame: core::marker::PhantomData<&'a ()>,
}

impl<'a> Buffer<'a> {
    fn new(
        name: &'static str,
        xla_dtype: i32,
        data: *mut c_void,
        dims: &[i64],
        device: DLDevice,
        writable: bool,
    ) -> Self {
        let mut buffer = Self {
            name,
            dtype: dtype_of(xla_dtype),
            xla_dtype,
            data,
            dims: Vec::new(),
            rank: 0,
            device,
            writable,
            dl: None,
            frame: core::marker::PhantomData,
        };
        buffer.describe(dims);
        buffer
    }

    /// The parameter's name.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// The DLPack dtype, or `None` for an XLA dtype without one.
    pub(crate) fn dtype(&self) -> Option<DLDataType> {
        self.dtype
    }

    /// The dtype, for messages.
    pub(crate) fn dtype_name(&self) -> String {
        self.dtype.map_or_else(|| format!("XLA dtype {}", self.xla_dtype), |d| d.to_string())
    }

    /// The extents.
    pub(crate) fn dims(&self) -> &[i64] {
        &self.dims[..self.rank]
    }

    /// The memory the buffer spans, `[start, end)` in bytes, or `None` when it has no element
    /// (or an unknown dtype).
    pub(crate) fn span(&self) -> Option<(usize, usize)> {
        let size = usize::from(self.dtype?.bits / 8);
        let count = self.dims().iter().try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))?;
        let bytes = count.checked_mul(size)?;
        (bytes > 0).then(|| (self.data as usize, (self.data as usize).saturating_add(bytes)))
    }

    /// Gives the buffer `rank` axes, extents of 1 in front (NumPy's broadcast alignment).
    pub(crate) fn expand_rank(&mut self, rank: usize) {
        if rank > self.rank {
            let mut dims = vec![1i64; rank - self.rank];
            dims.extend_from_slice(self.dims());
            self.describe(&dims);
        }
    }

    /// Sets the extents and the description: compact row-major strides, in elements.
    fn describe(&mut self, dims: &[i64]) {
        let rank = dims.len();
        let mut all = vec![1i64; 2 * rank];
        all[..rank].copy_from_slice(dims);
        let mut step = 1i64;
        for axis in (0..rank).rev() {
            all[rank + axis] = step;
            step = step.saturating_mul(dims[axis].max(1));
        }
        self.dims = all;
        self.rank = rank;
        self.dl = self.dtype.map(|dtype| DLTensor {
            data: self.data,
            device: self.device,
            ndim: rank as i32,
            dtype,
            shape: self.dims.as_mut_ptr(),
            // SAFETY: `rank` is within the vector of `2 * rank` entries.
            strides: unsafe { self.dims.as_mut_ptr().add(rank) },
            byte_offset: 0,
        });
    }

    fn description(&self) -> Result<&DLTensor, JaxError> {
        self.dl.as_ref().ok_or_else(|| {
            JaxError::Kernel(format!(
                "argument `{}` has {}, which dlspan's kernels do not take",
                self.name,
                self.dtype_name()
            ))
        })
    }

    /// A shared, typed view of the buffer.
    ///
    /// # Errors
    ///
    /// [`JaxError::Argument`] with the import rule the buffer breaks (dtype, rank, extents,
    /// alignment, device).
    pub(crate) fn view<'v, V: FromDlTensor<'v>>(&'v self) -> Result<V, JaxError>
    where
        'a: 'v,
    {
        if V::MUTABLE {
            return Err(JaxError::Argument { name: self.name.into(), error: crate::DlpackError::ReadOnly });
        }
        let dl = self.description()?;
        // SAFETY: the description is of XLA's buffer, alive for the frame's call `'a` (which
        // outlives `'v`): its data, XLA's extents, compact row-major strides, the handler's
        // device. A shared view only reads; XLA writes no argument during the call, and the
        // handler's only mutable views are of result buffers, which the caller checked overlap
        // no other buffer before making any view.
        unsafe { V::from_dltensor_with(dl, ImportOptions::default()) }
            .map_err(|error| JaxError::Argument { name: self.name.into(), error })
    }

    /// Writes zero to every byte of a result buffer (nothing for an argument): XLA allocates
    /// results uninitialised, and a view of them may be read before it is written.
    pub(crate) fn zero(&mut self) {
        let Some((start, end)) = self.span().filter(|_| self.writable) else { return };
        // SAFETY: a result buffer XLA allocated for this call, writable, of `end - start` bytes
        // from `data` (its extents times its dtype's size); `&mut self` excludes a view of it.
        unsafe { core::ptr::write_bytes(self.data.cast::<u8>(), 0, end - start) };
        debug_assert_eq!(start, self.data as usize);
    }

    /// A mutable, typed view of a result buffer through a shared reference.
    ///
    /// # Safety
    ///
    /// The buffer is a result that overlaps no other buffer of the call, and no other view of it
    /// is alive or made while this one lives.
    pub(crate) unsafe fn view_exclusive<'v, V: FromDlTensor<'v>>(&'v self) -> Result<V, JaxError>
    where
        'a: 'v,
    {
        if !self.writable {
            return Err(JaxError::Argument { name: self.name.into(), error: crate::DlpackError::ReadOnly });
        }
        let dl = self.description()?;
        // SAFETY: as for `view`; the caller guarantees that this is the only view of the result
        // buffer, which overlaps no other buffer of the call, for `'v`.
        unsafe { V::from_dltensor_with(dl, ImportOptions::default()) }
            .map_err(|error| JaxError::Argument { name: self.name.into(), error })
    }

    /// A mutable, typed view of a result buffer.
    ///
    /// # Errors
    ///
    /// As [`view`](Self::view); [`DlpackError::ReadOnly`](crate::DlpackError::ReadOnly) for an
    /// argument.
    pub(crate) fn view_mut<'v, V: FromDlTensor<'v>>(&'v mut self) -> Result<V, JaxError>
    where
        'a: 'v,
    {
        // SAFETY: the buffer is a result XLA allocated for this call, which the caller checked
        // overlaps no other buffer of the call, and `&mut self` is the only access to it for `'v`.
        unsafe { self.view_exclusive() }
    }
}
