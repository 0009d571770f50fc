//! NumPy arrays read through NumPy's C struct, with no capsule and no call into NumPy: the
//! `PyArrayObject` fields (data, ndim, dimensions, strides, descr, flags) and the descriptor's
//! `type_num` and `byteorder`, whose places are the same in NumPy 1.x and 2.x (NumPy documents these
//! structs as part of its ABI).
//!
//! Only exact `numpy.ndarray` objects take this path (subclasses may override `__dlpack__`), and
//! only arrays DLPack can describe: a data type NumPy's own `__dlpack__` exports, or one of
//! ml_dtypes' whole-byte types (`bfloat16`, the FP8 types: NumPy's `__dlpack__` refuses them, and
//! dlspan hands them to NumPy callers, rule Y19), native byte order, strides that are whole
//! elements. Anything else goes through `__dlpack__`, where NumPy raises its own `BufferError`.

use super::gil::Shared;
use super::meta::rebase;
use crate::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLTensor};
use core::ffi::{c_char, c_int, c_long, c_void};
use pyo3::prelude::*;
use pyo3::{ffi, intern};

/// The head of NumPy's `PyArrayObject_fields`.
#[repr(C)]
struct ArrayFields {
    _ob_base: ffi::PyObject,
    data: *mut c_char,
    nd: c_int,
    dimensions: *const isize,
    strides: *const isize,
    _base: *mut ffi::PyObject,
    descr: *const DescrHead,
    flags: c_int,
}

/// The head of NumPy's `PyArray_Descr` (identical in NumPy 1.x and 2.x up to `type_num`).
#[repr(C)]
struct DescrHead {
    _ob_base: ffi::PyObject,
    _typeobj: *mut ffi::PyTypeObject,
    _kind: c_char,
    _type_char: c_char,
    byteorder: c_char,
    _former_flags: c_char,
    type_num: c_int,
}

/// `NPY_ARRAY_WRITEABLE`.
const WRITEABLE: c_int = 0x0400;

/// The DLPack data type of a NumPy type number in native byte order, for the types NumPy's own
/// `__dlpack__` exports.
fn dtype(type_num: c_int) -> Option<DLDataType> {
    use DLDataTypeCode as C;
    let long_bits = c_long::BITS as u8;
    let (code, bits) = match type_num {
        0 => (C::kDLBool, 8),
        1 => (C::kDLInt, 8),
        2 => (C::kDLUInt, 8),
        3 => (C::kDLInt, 16),
        4 => (C::kDLUInt, 16),
        5 => (C::kDLInt, 32),
        6 => (C::kDLUInt, 32),
        7 => (C::kDLInt, long_bits),
        8 => (C::kDLUInt, long_bits),
        9 => (C::kDLInt, 64),
        10 => (C::kDLUInt, 64),
        11 => (C::kDLFloat, 32),
        12 => (C::kDLFloat, 64),
        14 => (C::kDLComplex, 64),
        15 => (C::kDLComplex, 128),
        23 => (C::kDLFloat, 16),
        _ => return None,
    };
    Some(DLDataType::new(code, bits, 1))
}

/// NumPy's first type number for types registered by other packages (`NPY_USERDEF`).
const USER_TYPES: c_int = 256;

/// The type numbers of registered types seen so far, with their DLPack data types (`None`: not one
/// of ml_dtypes' whole-byte types). A process registers a handful.
static REGISTERED: Shared<Vec<(c_int, Option<DLDataType>)>> = Shared::new(Vec::new());

/// The DLPack data type of a registered NumPy type (`descr`, of number `type_num`): ml_dtypes'
/// whole-byte scalar types, by name (`bfloat16`, `float8_e4m3fn`, …), when their scalar type comes
/// from `ml_dtypes`, their item size is the data type's and DLPack defines it. Its sub-byte types
/// (`float4_e2m1fn`, `int4`) take a byte per value, which a plain DLPack tensor cannot say.
fn registered_dtype(py: Python<'_>, descr: &Bound<'_, PyAny>, type_num: c_int) -> Option<DLDataType> {
    if let Some(known) = REGISTERED.with(py, |seen| seen.iter().find(|(num, _)| *num == type_num).map(|&(_, d)| d)) {
        return known;
    }
    let found = (|| -> PyResult<Option<DLDataType>> {
        let module: String = descr.getattr(intern!(py, "type"))?.getattr(intern!(py, "__module__"))?.extract()?;
        if module != "ml_dtypes" && !module.starts_with("ml_dtypes.") {
            return Ok(None);
        }
        let name: String = descr.getattr(intern!(py, "name"))?.extract()?;
        let itemsize: usize = descr.getattr(intern!(py, "itemsize"))?.extract()?;
        Ok(super::dtype::dtype_from_name(&name).filter(|dtype| {
            dtype.lanes == 1
                && dtype.bits % 8 == 0
                && usize::from(dtype.bits / 8) == itemsize
                && crate::dtype::defined(*dtype)
        }))
    })();
    // An answer is kept for the type number; a failed look-up (an exception inside it, which the
    // caller's fall-back to `__dlpack__` replaces with NumPy's own) is asked again next time.
    let found = found.ok()?;
    REGISTERED.with(py, |seen| seen.push((type_num, found)));
    found
}

/// An array's `DLTensor` fields, read from NumPy's struct: strides converted to elements into the
/// caller's buffer.
pub(crate) struct Array {
    /// The tensor (shape points into NumPy's array, strides into the caller's buffer).
    pub(crate) tensor: DLTensor,
    /// Whether NumPy allows writes (`flags.writeable`).
    pub(crate) writeable: bool,
}

/// Reads an exact `numpy.ndarray`; `None` when DLPack cannot describe it here (the caller falls
/// back to `__dlpack__`). The strides in elements go to `strides`; with `rank` given, an array of
/// another rank gives a tensor with null shape and strides, which the typed conversion refuses by
/// its rank before reading them.
///
/// # Safety
///
/// `object` is a live object whose type is exactly `numpy.ndarray`. The returned tensor's shape
/// points into the array, alive while it is.
pub(crate) unsafe fn read(
    py: Python<'_>,
    object: *mut ffi::PyObject,
    strides: &mut [i64],
    rank: Option<usize>,
) -> Option<Array> {
    // `npy_intp` dimensions are read as `int64_t`: 64-bit targets only.
    if cfg!(not(target_pointer_width = "64")) {
        return None;
    }
    let array = object.cast::<ArrayFields>();
    // SAFETY: an ndarray object starts with `PyArrayObject_fields` (caller); a raw read, as the
    // look-up of a registered type below runs Python code, during which the array may change.
    let descr_ptr = unsafe { (*array).descr };
    // SAFETY: every array has a live descriptor, which starts with these fields; a descriptor's
    // type number and byte order never change.
    let head = unsafe { &*descr_ptr };
    let (type_num, byteorder) = (head.type_num, head.byteorder);
    // '>' is big-endian, '<' little-endian, '=' native, '|' not applicable.
    let foreign_order = if cfg!(target_endian = "little") { b'>' } else { b'<' };
    if byteorder as u8 == foreign_order {
        return None;
    }
    // The descriptor of a registered type, held until its identity with the array's is checked
    // below (so that it cannot be freed, and its address reused, in between).
    let mut held = None;
    let dtype = match dtype(type_num) {
        Some(dtype) => dtype,
        None if type_num >= USER_TYPES => {
            // SAFETY: the array's descriptor, a live Python object (the array holds it).
            let descr = held.insert(unsafe { Bound::from_borrowed_ptr(py, descr_ptr.cast_mut().cast()) });
            registered_dtype(py, descr, type_num)?
        }
        None => return None,
    };
    // SAFETY: as above; no Python code runs from here on while `fields` lives.
    let fields = unsafe { &*array };
    // The first look-up of a registered type read Python attributes: should another thread have
    // given the array another descriptor meanwhile (`x.dtype = …`), the type found is not the
    // array's.
    if !core::ptr::eq(fields.descr, descr_ptr) {
        return None;
    }
    // The array holds the same descriptor: releasing ours frees nothing and runs no Python code.
    drop(held);
    let size = isize::from(dtype.bits / 8);
    let nd = usize::try_from(fields.nd).ok()?;
    if nd > strides.len() {
        return None;
    }
    let (shape, strides_ptr) = if rank.is_none_or(|r| r == nd) && nd > 0 {
        // SAFETY: an array of rank `nd` has `nd` strides (in bytes).
        let bytes = unsafe { core::slice::from_raw_parts(fields.strides, nd) };
        // Element sizes are powers of two: a shift and a mask, not a division per axis.
        let (shift, mask) = (size.trailing_zeros(), size - 1);
        if size.count_ones() != 1 {
            return None;
        }
        for (out, &b) in strides.iter_mut().zip(bytes) {
            if b & mask != 0 {
                return None;
            }
            *out = (b >> shift) as i64;
        }
        (fields.dimensions.cast_mut().cast::<i64>(), strides.as_mut_ptr())
    } else {
        (core::ptr::null_mut(), core::ptr::null_mut())
    };
    let mut tensor = DLTensor {
        data: fields.data.cast::<c_void>(),
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: fields.nd,
        dtype,
        shape,
        strides: strides_ptr,
        byte_offset: 0,
    };
    // SAFETY: shape and strides are null or `nd` entries (NumPy's dimensions, our strides).
    unsafe { rebase(&mut tensor) };
    Some(Array { tensor, writeable: fields.flags & WRITEABLE != 0 })
}
