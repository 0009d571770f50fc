//! A tensor's metadata as `dlspan.Tensor` keeps it: validated once by the rules of a dynamic view,
//! with shape and strides owned (always present, in elements) and the buffer protocol's forms of
//! them; and the re-expression of reversed axes every Python read path applies first.

use super::error::ExchangeError;
use crate::convert::ImportOptions;
use crate::error::DlpackError;
use crate::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLTensor,
};
use core::ffi::c_void;

/// The largest rank a [`Tensor`](super::Tensor) holds: the buffer protocol's limit (`PyBUF_MAX_NDIM`).
pub const MAX_TENSOR_RANK: usize = 64;

/// A tensor's metadata, validated once by the rules of a dynamic view
/// ([`DynMdspan`](crate::DynMdspan), rules D1–D3), with shape and strides owned here (strides
/// always present, in elements) and the buffer protocol's forms of them.
pub(crate) struct Meta {
    pub(crate) data: *mut c_void,
    pub(crate) byte_offset: u64,
    pub(crate) dtype: DLDataType,
    pub(crate) device: DLDevice,
    /// The shape, then the strides (in elements): one allocation ([`shape`](Self::shape),
    /// [`strides`](Self::strides)).
    axes: Box<[i64]>,
    pub(crate) read_only: bool,
    pub(crate) subbyte_padded: bool,
    /// Elements.
    pub(crate) numel: usize,
    /// Bits of one element (`bits · lanes`; one lane per byte for padded sub-byte data).
    pub(crate) bits: usize,
    /// Bytes of one element; 0 for packed sub-byte data, which is not addressed by element.
    pub(crate) item_size: usize,
    /// Bytes from the lowest element to the end of the highest: the memory the tensor reaches,
    /// which is less than the elements take when strides are zero or overlap (packed sub-byte
    /// data: `ceil(numel · bits / 8)` when compact).
    pub(crate) span: usize,
    /// The shape and the strides (in bytes) as the buffer protocol takes them, one after the
    /// other: one allocation, whose address does not change while the metadata lives (a buffer's
    /// `shape` and `strides` point into it).
    buffer_axes: Box<[isize]>,
}

// SAFETY: `data` points to the memory the tensor's owner keeps alive; the metadata is never
// mutated after construction.
unsafe impl Send for Meta {}
// SAFETY: as above.
unsafe impl Sync for Meta {}

/// The shape half and the strides half of axes stored one after the other.
#[inline]
fn halves<T>(axes: &[T]) -> (&[T], &[T]) {
    axes.split_at(axes.len() / 2)
}

/// Row-major strides of `shape` (an extent of 0 or 1 counts as 1).
pub(crate) fn row_major(shape: &[i64]) -> Box<[i64]> {
    let mut strides = vec![0i64; shape.len()];
    let mut next = 1i64;
    for (stride, &extent) in strides.iter_mut().zip(shape).rev() {
        *stride = next;
        next = next.saturating_mul(extent.max(1));
    }
    strides.into_boxed_slice()
}

/// What a dynamic view says of its tensor: shape then strides (filled by version) in one vector,
/// elements, bits per element, bytes spanned.
type Summary = (Vec<i64>, usize, usize, usize);

/// The [`Summary`] of `tensor` as a dynamic view in memory space `S`.
fn summary<S: crate::MemorySpace>(tensor: &DLTensor, options: ImportOptions) -> Result<Summary, DlpackError> {
    // SAFETY: the view is dropped before this function returns and only its metadata is read;
    // the producer's contract makes shape and strides readable arrays of `ndim` entries.
    let view = unsafe { crate::DynMdspan::<S>::from_dltensor_with(tensor, options) }?;
    // Validated: extents and strides fit isize, hence int64_t on 64-bit targets (and the byte
    // span fits isize on every target).
    let mut axes = Vec::with_capacity(2 * view.rank());
    axes.extend(view.shape().iter().map(|&e| e as i64));
    axes.extend(view.strides().iter().map(|&s| s as i64));
    Ok((axes, view.size(), view.element_bits(), view.byte_range().len()))
}

impl Meta {
    /// Validates a `DLTensor` of any rank and data type, on a device dlspan has a memory space
    /// for (host and pinned host memory, CUDA device and managed memory), by the rules of a
    /// dynamic view.
    pub(crate) fn from_dltensor(
        tensor: &DLTensor,
        options: ImportOptions,
        read_only: bool,
    ) -> Result<Self, DlpackError> {
        // Codes DLPack does not define, and codes whose width DLPack fixes given another (FP8, FP6,
        // FP4 and bool: "the consumer must stop importing if the value is unexpected"), before
        // anything else of the tensor is read.
        if !crate::dtype::defined(tensor.dtype) {
            return Err(DlpackError::UnsupportedDtype { dtype: tensor.dtype });
        }
        check_rank(tensor)?;
        let mut rebased = *tensor;
        // SAFETY: the producer's contract on shape and strides, which `summary` relies on too.
        unsafe { rebase(&mut rebased) };
        let tensor = &rebased;
        let (axes, numel, bits, span) = match tensor.device.device_type {
            DLDeviceType::kDLCUDA => summary::<crate::Device>(tensor, options)?,
            DLDeviceType::kDLCUDAManaged => summary::<crate::Managed>(tensor, options)?,
            _ => summary::<crate::Host>(tensor, options)?,
        };
        let subbyte_padded = options.subbyte_padded && tensor.dtype.bits < 8;
        let item_size = if bits % 8 == 0 { bits / 8 } else { 0 };
        let (shape, strides) = halves(&axes);
        let mut buffer_axes = Vec::with_capacity(axes.len());
        buffer_axes.extend(shape.iter().map(|&e| e as isize));
        buffer_axes.extend(strides.iter().map(|&s| (s as isize).wrapping_mul(item_size as isize)));
        Ok(Self {
            data: tensor.data,
            byte_offset: tensor.byte_offset,
            dtype: tensor.dtype,
            device: tensor.device,
            axes: axes.into_boxed_slice(),
            read_only,
            subbyte_padded,
            numel,
            bits,
            item_size,
            span,
            buffer_axes: buffer_axes.into_boxed_slice(),
        })
    }

    /// The shape.
    #[inline]
    pub(crate) fn shape(&self) -> &[i64] {
        halves(&self.axes).0
    }

    /// The strides, in elements.
    #[inline]
    pub(crate) fn strides(&self) -> &[i64] {
        halves(&self.axes).1
    }

    /// The shape as the buffer protocol takes it (alive, unmoved, as long as the metadata).
    #[inline]
    pub(crate) fn buffer_shape(&self) -> &[isize] {
        halves(&self.buffer_axes).0
    }

    /// The strides as the buffer protocol takes them, in bytes (alive, unmoved, as long as the
    /// metadata).
    #[inline]
    pub(crate) fn buffer_strides(&self) -> &[isize] {
        halves(&self.buffer_axes).1
    }

    /// The tensor, with shape and strides pointing into this metadata.
    pub(crate) fn dl_tensor(&self) -> DLTensor {
        let ndim = self.shape().len();
        DLTensor {
            data: self.data,
            device: self.device,
            ndim: ndim as i32,
            dtype: self.dtype,
            shape: if ndim == 0 { core::ptr::null_mut() } else { self.shape().as_ptr().cast_mut() },
            strides: if ndim == 0 { core::ptr::null_mut() } else { self.strides().as_ptr().cast_mut() },
            byte_offset: self.byte_offset,
        }
    }

    /// The bytes the elements take stored compactly (row-major, no element twice): what a copy
    /// holds, and NumPy's `nbytes`. `numel · item_size`, or `ceil(numel · bits / 8)` for packed
    /// sub-byte data; `None` when that overflows `isize` (a broadcast view can describe more
    /// elements than any buffer holds).
    pub(crate) fn compact_bytes(&self) -> Option<usize> {
        let bytes = self.numel.checked_mul(self.bits)?.div_ceil(8);
        (bytes <= isize::MAX as usize).then_some(bytes)
    }

    /// The bytes to allocate for `bytes` bytes of this tensor's data (its compact bytes, or its
    /// span when row-major): `bytes`, or for packed sub-byte data the size DLPack's header tells C
    /// consumers to reckon with, `numel · ceil(bits / 8)` (its `GetDataSize`, which counts a byte
    /// per value), when that is more and fits. A consumer that copies `GetDataSize` bytes then
    /// reads only memory of the allocation (zeroed past the values), at the cost of a packed FP4
    /// buffer as large as a padded one.
    pub(crate) fn allocation_bytes(&self, bytes: usize) -> usize {
        if self.bits.is_multiple_of(8) {
            return bytes;
        }
        match self.numel.checked_mul(self.bits.div_ceil(8)) {
            Some(header) if header <= isize::MAX as usize => bytes.max(header),
            _ => bytes,
        }
    }

    /// The address of the element at index 0.
    pub(crate) fn first(&self) -> *mut u8 {
        self.data.cast::<u8>().wrapping_add(self.byte_offset as usize)
    }

    /// Whether the strides are row-major (extents of 0 or 1 allow any stride).
    pub(crate) fn is_c_contiguous(&self) -> bool {
        self.numel == 0
            || self
                .shape()
                .iter()
                .zip(self.strides())
                .zip(row_major(self.shape()).iter())
                .all(|((&e, &s), &r)| e <= 1 || s == r)
    }

    /// Whether the strides are column-major.
    pub(crate) fn is_f_contiguous(&self) -> bool {
        let mut next = 1i64;
        self.numel == 0
            || self.shape().iter().zip(self.strides()).all(|(&e, &s)| {
                let ok = e <= 1 || s == next;
                next = next.saturating_mul(e.max(1));
                ok
            })
    }

    /// The alignment any consumer may assume of an element's address: the largest power of two
    /// dividing the bytes of one lane's real scalar (half of a complex lane), 1 for sub-byte data.
    /// For DLPack's scalar types this is the alignment rule I8 asks of their element types.
    pub(crate) fn element_alignment(&self) -> usize {
        let mut bits = usize::from(self.dtype.bits);
        if self.dtype.type_code() == DLDataTypeCode::kDLComplex {
            bits /= 2;
        }
        let bytes = bits / 8;
        if bytes == 0 { 1 } else { 1 << bytes.trailing_zeros() }
    }

    /// Rule I8 for the first element, without an element type ([`Self::element_alignment`]): a
    /// `Tensor` holds any memory (NumPy makes misaligned arrays, and the dynamic rules of D1 take
    /// them), but what shares that memory with another consumer must hand out an address a typed
    /// reader can use.
    pub(crate) fn check_aligned(&self) -> Result<(), DlpackError> {
        if self.numel == 0 || self.data.is_null() {
            return Ok(());
        }
        crate::check::aligned(self.first().addr(), self.element_alignment())
    }

    /// The DLPack flags this metadata implies.
    pub(crate) fn flags(&self) -> u64 {
        let mut flags = 0;
        if self.read_only {
            flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
        }
        if self.subbyte_padded {
            flags |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
        }
        flags
    }
}

/// The first axis whose stride a producer exported as an unsigned number: a stride whose product
/// with the element size wraps around to a small negative byte stride (CuPy 14 divides a reversed
/// axis's byte stride by the item size as unsigned numbers). Such a stride is refused by the
/// validation anyway (it reaches beyond the address space); this names the producer's mistake.
///
/// # Safety
///
/// `tensor.shape` and `tensor.strides`, when non-null and `ndim > 0`, point to `ndim` readable
/// `int64_t`.
pub(crate) unsafe fn unsigned_stride(tensor: &DLTensor) -> Option<ExchangeError> {
    let rank = usize::try_from(tensor.ndim).ok().filter(|&r| r > 0 && r <= MAX_TENSOR_RANK)?;
    let bits = u64::from(tensor.dtype.bits) * u64::from(tensor.dtype.lanes);
    if tensor.shape.is_null() || tensor.strides.is_null() || bits % 8 != 0 || bits < 16 {
        return None;
    }
    // SAFETY: non-null arrays of `ndim` entries (caller).
    let shape = unsafe { core::slice::from_raw_parts(tensor.shape, rank) };
    // SAFETY: as above.
    let strides = unsafe { core::slice::from_raw_parts(tensor.strides, rank) };
    let size = bits / 8;
    (0..rank).find_map(|axis| {
        let stride = strides[axis];
        let bytes = (stride as u64).wrapping_mul(size) as i64;
        let wrapped = shape[axis] > 1 && stride > 0 && stride.checked_mul(size as i64).is_none();
        (wrapped && (-(1i64 << 40)..0).contains(&bytes)).then_some(ExchangeError::UnsignedStride {
            axis,
            stride,
            bytes,
        })
    })
}

/// Refuses a tensor of more than [`MAX_TENSOR_RANK`] axes ([`DlpackError::UnsupportedRank`]) on its
/// `ndim` alone, before anything reads its shape or strides: no framework makes such tensors, and
/// a producer that misstates `ndim` hands out arrays shorter than it says, which reading `ndim`
/// entries would overrun.
pub(crate) fn check_rank(tensor: &DLTensor) -> Result<(), DlpackError> {
    match usize::try_from(tensor.ndim) {
        Ok(rank) if rank > MAX_TENSOR_RANK => Err(DlpackError::UnsupportedRank { rank, max: MAX_TENSOR_RANK }),
        _ => Ok(()),
    }
}

/// Re-expresses a tensor whose negative strides reach below `data` (NumPy exports reversed axes
/// that way, with `byte_offset` 0) so that `data` is its lowest element and `byte_offset` leads
/// to index 0 — the same elements, in the form dlspan's views require (rules I7 and I15: the
/// relaxed layout's base is `data`). Tensors it cannot measure (packed sub-byte data, malformed
/// shapes, arithmetic beyond 2^63) are left as they are, for the validation to judge.
///
/// # Safety
///
/// `tensor.shape` and `tensor.strides`, when non-null and `ndim > 0`, point to `ndim` readable
/// `int64_t`.
pub(crate) unsafe fn rebase(tensor: &mut DLTensor) {
    // Beyond MAX_TENSOR_RANK the tensor is refused (`check_rank`) before anything reads its arrays.
    let Some(rank) = usize::try_from(tensor.ndim).ok().filter(|&rank| rank <= MAX_TENSOR_RANK) else { return };
    let bits = u32::from(tensor.dtype.bits) * u32::from(tensor.dtype.lanes);
    if rank == 0 || tensor.shape.is_null() || tensor.strides.is_null() || bits % 8 != 0 || tensor.data.is_null() {
        return;
    }
    // SAFETY: non-null arrays of `ndim` entries (caller).
    let shape = unsafe { core::slice::from_raw_parts(tensor.shape, rank) };
    // SAFETY: as above.
    let strides = unsafe { core::slice::from_raw_parts(tensor.strides, rank) };
    if shape.iter().any(|&e| e <= 0) {
        return; // empty or malformed: no element to rebase to
    }
    let below = shape
        .iter()
        .zip(strides)
        .filter(|&(_, &s)| s < 0)
        .try_fold(0i64, |sum, (&e, &s)| (e - 1).checked_mul(s).and_then(|reach| sum.checked_add(reach)))
        .and_then(|elements| elements.checked_mul(i64::from(bits / 8)))
        .map(i64::unsigned_abs);
    let Some(below) = below else { return };
    let Some(shift) = below.checked_sub(tensor.byte_offset).filter(|&shift| shift > 0) else { return };
    let Ok(shift) = usize::try_from(shift) else { return };
    if tensor.data.addr() < shift {
        return;
    }
    tensor.data = tensor.data.cast::<u8>().wrapping_sub(shift).cast();
    tensor.byte_offset += shift as u64;
}

#[cfg(test)]
mod tests {
    use crate::ffi::{DLDataType, DLDataTypeCode};
    use crate::python::device::CPU;
    use crate::python::tensor::compact_meta;

    #[test]
    fn packed_allocations_cover_dlpacks_data_size() {
        // Seven packed FP4 values take 4 bytes; DLPack's `GetDataSize` reckons 7.
        let fp4 = DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1);
        let meta = compact_meta(&[7], fp4, CPU).unwrap();
        assert_eq!((meta.span, meta.allocation_bytes(meta.span)), (4, 7));
        let fp6 = DLDataType::new(DLDataTypeCode::kDLFloat6_e2m3fn, 6, 1);
        let meta = compact_meta(&[3, 5], fp6, CPU).unwrap();
        assert_eq!((meta.span, meta.allocation_bytes(meta.span)), (12, 15));
        // Whole-byte elements: exactly the data.
        let f32 = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1);
        let meta = compact_meta(&[7], f32, CPU).unwrap();
        assert_eq!(meta.allocation_bytes(meta.span), 28);
        let empty = compact_meta(&[0], fp4, CPU).unwrap();
        assert_eq!(empty.allocation_bytes(empty.span), 0);
    }
}
