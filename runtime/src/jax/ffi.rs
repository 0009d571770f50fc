//! The XLA FFI C ABI (`xla/ffi/api/c_api.h`, shipped in the jaxlib wheel; [rules
//! X1–X5](crate::rules#x1)): the structs a handler reads and the API table it calls back through,
//! as `#[repr(C)]` mirrors.
//!
//! C enums are read as `i32` (their `int` representation), never as Rust enums: a value XLA adds
//! later, or a corrupted one, is then a value to refuse, not undefined behaviour. Only what dlspan
//! uses is spelled out; the API table's later functions are opaque pointers, so a table that grows
//! keeps its prefix's layout (the header's compatibility rule: structs grow at the end, each
//! carries its `struct_size`).

use core::ffi::{c_char, c_void};

/// The major version of the API these mirrors follow (the header's `XLA_FFI_API_MAJOR`).
pub(crate) const API_MAJOR: i32 = 0;
/// The minor version handlers report: the oldest whose call frame and table prefix dlspan reads
/// (every later minor keeps them).
pub(crate) const API_MINOR: i32 = 1;

/// `XLA_FFI_Extension_Metadata`: the extension XLA attaches to ask a handler its metadata.
pub(crate) const EXTENSION_METADATA: i32 = 1;
/// `XLA_FFI_ExecutionStage_EXECUTE`.
pub(crate) const STAGE_EXECUTE: i32 = 3;
/// `XLA_FFI_ArgType_BUFFER` and `XLA_FFI_RetType_BUFFER`.
pub(crate) const TYPE_BUFFER: i32 = 1;
/// `XLA_FFI_AttrType_SCALAR`.
pub(crate) const ATTR_SCALAR: i32 = 3;
/// `XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE`: the handler may be captured into a CUDA
/// graph.
pub(crate) const TRAIT_COMMAND_BUFFER_COMPATIBLE: u32 = 1;

/// `XLA_FFI_Error_Code` values dlspan reports.
pub(crate) const ERROR_INVALID_ARGUMENT: i32 = 3;
/// `XLA_FFI_Error_Code_UNIMPLEMENTED`.
pub(crate) const ERROR_UNIMPLEMENTED: i32 = 12;
/// `XLA_FFI_Error_Code_INTERNAL`.
pub(crate) const ERROR_INTERNAL: i32 = 13;

/// `XLA_FFI_Extension_Base`.
#[repr(C)]
pub(crate) struct ExtensionBase {
    pub(crate) struct_size: usize,
    pub(crate) kind: i32,
    pub(crate) next: *mut ExtensionBase,
}

/// `XLA_FFI_Api_Version`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct ApiVersion {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) major_version: i32,
    pub(crate) minor_version: i32,
}

/// `XLA_FFI_Error` (opaque).
#[repr(C)]
pub struct XlaFfiError {
    _opaque: [u8; 0],
}

/// `XLA_FFI_Error_Create_Args`.
#[repr(C)]
pub(crate) struct ErrorCreateArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) message: *const c_char,
    pub(crate) errc: i32,
}

/// `XLA_FFI_Error_GetMessage_Args`.
#[repr(C)]
pub(crate) struct ErrorGetMessageArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) error: *mut XlaFfiError,
    pub(crate) message: *const c_char,
}

/// `XLA_FFI_Error_Destroy_Args`.
#[repr(C)]
pub(crate) struct ErrorDestroyArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) error: *mut XlaFfiError,
}

/// `XLA_FFI_Buffer`.
#[repr(C)]
pub(crate) struct Buffer {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) dtype: i32,
    pub(crate) data: *mut c_void,
    pub(crate) rank: i64,
    pub(crate) dims: *mut i64,
}

/// `XLA_FFI_ByteSpan`.
#[repr(C)]
pub(crate) struct ByteSpan {
    pub(crate) ptr: *const c_char,
    pub(crate) len: usize,
}

/// `XLA_FFI_Scalar`.
#[repr(C)]
pub(crate) struct Scalar {
    pub(crate) dtype: i32,
    pub(crate) value: *mut c_void,
}

/// `XLA_FFI_Args`.
#[repr(C)]
pub(crate) struct Args {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) size: i64,
    pub(crate) types: *mut i32,
    pub(crate) args: *mut *mut c_void,
}

/// `XLA_FFI_Rets`.
#[repr(C)]
pub(crate) struct Rets {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) size: i64,
    pub(crate) types: *mut i32,
    pub(crate) rets: *mut *mut c_void,
}

/// `XLA_FFI_Attrs`.
#[repr(C)]
pub(crate) struct Attrs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) size: i64,
    pub(crate) types: *mut i32,
    pub(crate) names: *mut *mut ByteSpan,
    pub(crate) attrs: *mut *mut c_void,
}

/// `XLA_FFI_CallFrame` (to its `attrs`, the header's `XLA_FFI_CallFrame_STRUCT_SIZE`; the
/// `future` after it is not read).
#[repr(C)]
pub struct XlaFfiCallFrame {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) api: *const Api,
    pub(crate) ctx: *mut c_void,
    pub(crate) stage: i32,
    pub(crate) args: Args,
    pub(crate) rets: Rets,
    pub(crate) attrs: Attrs,
}

/// `XLA_FFI_Stream_Get_Args`.
#[repr(C)]
pub(crate) struct StreamGetArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) ctx: *mut c_void,
    pub(crate) stream: *mut c_void,
}

/// `XLA_FFI_DeviceOrdinal_Get_Args`.
#[repr(C)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) struct DeviceOrdinalGetArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) ctx: *mut c_void,
    pub(crate) device_ordinal: i32,
}

/// `XLA_FFI_Metadata`.
#[repr(C)]
pub(crate) struct Metadata {
    pub(crate) struct_size: usize,
    pub(crate) api_version: ApiVersion,
    pub(crate) traits: u32,
}

/// `XLA_FFI_Metadata_Extension`.
#[repr(C)]
pub(crate) struct MetadataExtension {
    pub(crate) extension_base: ExtensionBase,
    pub(crate) metadata: *mut Metadata,
}

/// A function of the API table: `XLA_FFI_Error* f(Args*)`.
pub(crate) type ApiFn<A> = Option<unsafe extern "C" fn(*mut A) -> *mut XlaFfiError>;

/// `XLA_FFI_Api`, to the functions dlspan calls (`XLA_FFI_Error_Create` … `XLA_FFI_Stream_Get`).
#[repr(C)]
pub(crate) struct Api {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) api_version: ApiVersion,
    pub(crate) internal_api: *const c_void,
    pub(crate) error_create: ApiFn<ErrorCreateArgs>,
    pub(crate) error_get_message: Option<unsafe extern "C" fn(*mut ErrorGetMessageArgs)>,
    pub(crate) error_destroy: Option<unsafe extern "C" fn(*mut ErrorDestroyArgs)>,
    pub(crate) handler_register: *const c_void,
    pub(crate) stream_get: ApiFn<StreamGetArgs>,
}

/// The table's entries after `XLA_FFI_Stream_Get` up to `XLA_FFI_DeviceOrdinal_Get` (API 0.3),
/// read only from a table whose `struct_size` covers them.
#[repr(C)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) struct ApiTail {
    pub(crate) head: Api,
    pub(crate) between: [*const c_void; 12],
    pub(crate) device_ordinal_get: ApiFn<DeviceOrdinalGetArgs>,
}

/// A handler: `XLA_FFI_Error* (*)(XLA_FFI_CallFrame*)`.
pub type Handler = unsafe extern "C" fn(*mut XlaFfiCallFrame) -> *mut XlaFfiError;

/// The size of a struct up to and including its field `last` (the header's
/// `XLA_FFI_STRUCT_SIZE`), what XLA writes in `struct_size`.
macro_rules! struct_size {
    ($ty:ty, $last:ident) => {
        ::core::mem::offset_of!($ty, $last) + {
            // The size of the field's type, read from a never-called function's pointer type.
            const fn size_of_field<T>(_: fn(&$ty) -> &T) -> usize {
                ::core::mem::size_of::<T>()
            }
            size_of_field(|s: &$ty| &s.$last)
        }
    };
}
pub(crate) use struct_size;

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the header's `*_STRUCT_SIZE` enums give on a 64-bit target, as gcc computed them
    /// from jaxlib 0.10.2's `c_api.h` (and the offset of the table's `XLA_FFI_Stream_Get`, plus
    /// its pointer).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn struct_sizes_are_the_headers() {
        assert_eq!(struct_size!(XlaFfiCallFrame, attrs), 168);
        assert_eq!(struct_size!(Buffer, dims), 48);
        assert_eq!(struct_size!(ErrorCreateArgs, errc), 28);
        assert_eq!(struct_size!(StreamGetArgs, stream), 32);
        assert_eq!(struct_size!(ErrorGetMessageArgs, message), 32);
        assert_eq!(struct_size!(ErrorDestroyArgs, error), 24);
        assert_eq!(struct_size!(ApiVersion, minor_version), 24);
        assert_eq!(struct_size!(Metadata, traits), 36);
        assert_eq!(struct_size!(MetadataExtension, metadata), 32);
        assert_eq!(struct_size!(Api, stream_get), 88);
        assert_eq!(core::mem::offset_of!(ApiTail, device_ordinal_get), 184);
        assert_eq!(struct_size!(DeviceOrdinalGetArgs, device_ordinal), 28);
    }
}
