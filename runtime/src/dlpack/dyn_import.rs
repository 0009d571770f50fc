//! The dynamic import: a `DLTensor` validated by every rule of the typed import that does not need
//! the element type, in the same order, into the parts a dynamic view holds. As the typed import, a
//! fast path takes the common tensors and gives up on everything else, which the ordered checks
//! decide; a differential test below holds the two paths to the same answers.

use super::import::ImportOptions;
use crate::check;
use crate::dtype::{Validity, defined, storage_bits};
use crate::error::{DlpackError, LayoutKind};
use crate::ffi::DLTensor;
use crate::index::{Axes, INLINE_AXES};
use crate::space::MemorySpace;
use crate::view::DynParts;

/// Validates a `DLTensor` by every rule of the typed import that does not need the element type,
/// in the same order: device, `ndim >= 0`, a defined dtype with a storage layout, null data, shape,
/// extents, strides (null by version), where the elements lie ([`locate`](DynParts::locate), which
/// covers the byte offset); with `unique`, also that no two indices share an element.
///
/// # Safety
///
/// `tensor.shape` and `tensor.strides`, when non-null and `ndim > 0`, each point to `ndim`
/// readable `int64_t`.
#[inline]
pub(crate) unsafe fn import_dynamic<S: MemorySpace>(
    tensor: &DLTensor,
    options: ImportOptions,
    unique: bool,
) -> Result<DynParts<S>, DlpackError> {
    // SAFETY: forwarded to the caller.
    if let Some(parts) = unsafe { import_fast::<S>(tensor, unique) } {
        return Ok(parts);
    }
    // SAFETY: forwarded to the caller.
    unsafe { import_ordered::<S>(tensor, options, unique) }
}

/// The common case of [`import_dynamic`], as the typed import's fast path: the space's
/// own device type, rank up to 8 with non-null data, shape and strides, a dtype of whole bytes
/// with lanes of at least 8 bits,
/// at least one element, non-negative strides and a byte offset below 2^32. The axes are
/// padded to 4 or 8 (extent 1, stride 0, which reach nothing) so that two instantiations of the
/// typed fast path's reach check serve every rank. `None` hands the tensor to
/// [`import_ordered`], which accepts everything this accepts.
///
/// # Safety
///
/// As for [`import_dynamic`].
#[inline]
unsafe fn import_fast<S: MemorySpace>(tensor: &DLTensor, unique: bool) -> Option<DynParts<S>> {
    let ordinal = S::fast_accept(tensor.device)?;
    let rank = usize::try_from(tensor.ndim).ok().filter(|&rank| rank <= INLINE_AXES)?;
    let dtype = tensor.dtype;
    // A defined data type of whole bytes, and no sub-byte lanes (whose padding only the ordered
    // path considers).
    if !defined(dtype) {
        return None;
    }
    let bits = storage_bits(dtype, false).filter(|bits| bits % 8 == 0 && dtype.bits >= 8)?;
    let arrays_null = rank > 0 && (tensor.shape.is_null() || tensor.strides.is_null());
    if tensor.data.is_null() || arrays_null || tensor.byte_offset >= 1 << 32 {
        return None;
    }
    let (mut extents, mut strides) = ([1usize; INLINE_AXES], [0isize; INLINE_AXES]);
    if rank > 0 {
        // SAFETY: non-null, `ndim` entries (caller).
        let shape = unsafe { core::slice::from_raw_parts(tensor.shape, rank) };
        // SAFETY: as above.
        let given = unsafe { core::slice::from_raw_parts(tensor.strides, rank) };
        for axis in 0..rank {
            // A negative extent or stride is huge as unsigned and fails the reach check's bound.
            extents[axis] = shape[axis] as usize;
            strides[axis] = given[axis] as isize;
        }
    }
    // Non-negative strides within the typed fast path's bound: no element lies below index 0,
    // which is `byte_offset` (below 2^32) into `data`, and the bytes reached from there are at
    // most FAST_SPAN_BYTES, so a first element below 2^63 cannot wrap. Most tensors have at
    // most 4 axes: their check reads half the padding.
    let size = bits / 8;
    let within = if rank <= 4 {
        let (extents, strides) =
            ([extents[0], extents[1], extents[2], extents[3]], [strides[0], strides[1], strides[2], strides[3]]);
        check::reach_fast::<4, false>(&extents, &strides, 0, check::fast_bound(4, size))
    } else {
        check::reach_fast::<INLINE_AXES, false>(&extents, &strides, 0, check::fast_bound(INLINE_AXES, size))
    };
    let (first, wrapped) = tensor.data.addr().overflowing_add(tensor.byte_offset as usize);
    if !within || wrapped || first > isize::MAX as usize {
        return None;
    }
    if unique && !check::unique(&extents[..rank], &strides[..rank]) {
        return None;
    }
    Some(DynParts {
        data: tensor.data.cast(),
        byte_offset: tensor.byte_offset,
        dtype,
        padded: false,
        validity: Validity::AnyBits,
        origin: S::origin(ordinal),
        extents: Axes::Inline { len: rank as u8, values: extents },
        strides: Axes::Inline { len: rank as u8, values: strides },
    })
}

/// [`import_dynamic`] rule by rule, in the typed import's order, reporting the first
/// rule that fails.
///
/// # Safety
///
/// As for [`import_dynamic`].
#[cold]
#[inline(never)]
unsafe fn import_ordered<S: MemorySpace>(
    tensor: &DLTensor,
    options: ImportOptions,
    unique: bool,
) -> Result<DynParts<S>, DlpackError> {
    let ordinal = S::accept(tensor.device)?;
    let rank = usize::try_from(tensor.ndim).map_err(|_| DlpackError::NegativeNdim { ndim: tensor.ndim })?;
    let dtype = tensor.dtype;
    let padded = options.subbyte_padded && dtype.bits < 8;
    if !defined(dtype) || storage_bits(dtype, padded).is_none() {
        return Err(DlpackError::UnsupportedDtype { dtype });
    }
    let shape = if rank == 0 || tensor.shape.is_null() {
        None
    } else {
        // SAFETY: non-null, `ndim` entries (caller).
        Some(unsafe { core::slice::from_raw_parts(tensor.shape, rank) })
    };
    if tensor.data.is_null() && !shape.is_some_and(|s| s.contains(&0)) {
        return Err(DlpackError::NullData);
    }
    let shape = match shape {
        Some(shape) => shape,
        None if rank == 0 => &[],
        None => return Err(DlpackError::NullShape),
    };
    let mut extents = Axes::zeroed(rank);
    for (axis, (&extent, slot)) in shape.iter().zip(extents.as_mut_slice()).enumerate() {
        *slot = check::extent(axis, extent)?;
    }
    let mut strides = Axes::zeroed(rank);
    if rank > 0 && tensor.strides.is_null() {
        if !options.null_strides_are_row_major() {
            return Err(DlpackError::NullStrides { version: options.version });
        }
        check::compact_strides_into(extents.as_slice(), LayoutKind::Right, strides.as_mut_slice())?;
    } else if rank > 0 {
        // SAFETY: non-null, `ndim` entries (caller).
        let given = unsafe { core::slice::from_raw_parts(tensor.strides, rank) };
        for (&stride, slot) in given.iter().zip(strides.as_mut_slice()) {
            *slot = check::stride(stride)?;
        }
    }
    let parts = DynParts {
        data: tensor.data.cast(),
        byte_offset: tensor.byte_offset,
        dtype,
        padded,
        validity: Validity::AnyBits,
        origin: S::origin(ordinal),
        extents,
        strides,
    };
    parts.locate()?;
    if unique && !check::unique(parts.extents.as_slice(), parts.strides.as_slice()) {
        return Err(DlpackError::OverlappingStrides);
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::super::import::fast_path_tests::{Input, input};
    use super::*;
    use crate::dtype::{DlElement, Float4E2m1fn, Float6E2m3fnX4};
    use crate::ffi::DLDataType;
    use crate::space::{Device, Host};
    use proptest::prelude::*;
    use proptest::test_runner::{TestCaseError, TestRunner};

    /// Runs both import paths of a dynamic view on `input` as rank `rank`, data type `dtype`:
    /// whatever the fast path accepts, the ordered one accepts identically. Returns how many each
    /// accepted.
    fn agree<S: MemorySpace>(input: &Input, rank: usize, dtype: DLDataType) -> Result<[usize; 2], TestCaseError> {
        let mut shape = input.shape;
        let mut strides = input.strides(rank);
        let size = storage_bits(dtype, false).unwrap_or(8).div_ceil(8) as u64;
        let tensor = DLTensor {
            data: core::ptr::without_provenance_mut(input.data),
            device: input.device,
            ndim: input.ndim.unwrap_or(rank as i32),
            dtype: input.dtype.unwrap_or(dtype),
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: if input.whole_elements { input.byte_offset.wrapping_mul(size) } else { input.byte_offset },
        };
        let mut counts = [0; 2];
        for unique in [false, true] {
            // SAFETY: shape and strides hold 8 entries (the rank is at most 8); nothing reads data.
            let fast = unsafe { import_fast::<S>(&tensor, unique) };
            // SAFETY: as above.
            let ordered = unsafe { import_ordered::<S>(&tensor, ImportOptions::CURRENT, unique) };
            if let Some(fast) = fast {
                let Ok(ordered) = ordered else {
                    return Err(TestCaseError::fail(format!("fast path accepted what the ordered refuses: {input:?}")));
                };
                let parts = |p: &DynParts<S>| {
                    (
                        p.data,
                        p.byte_offset,
                        p.dtype,
                        p.padded,
                        p.extents.as_slice().to_vec(),
                        p.strides.as_slice().to_vec(),
                    )
                };
                prop_assert_eq!(parts(&fast), parts(&ordered), "{:?}", input);
                counts[0] += 1;
                counts[1] += 1;
            } else {
                counts[1] += usize::from(ordered.is_ok());
            }
        }
        Ok(counts)
    }

    #[test]
    fn fast_path_accepts_only_what_the_ordered_path_accepts() {
        let cases = 3000;
        let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
        let counts = core::cell::Cell::new([0usize; 2]);
        TestRunner::new(config)
            .run(&(input(), 0usize..=8), |(input, rank)| {
                for dtype in [u8::DTYPE, f32::DTYPE, f64::DTYPE, Float6E2m3fnX4::DTYPE, Float4E2m1fn::DTYPE] {
                    for [fast, ordered] in [agree::<Host>(&input, rank, dtype)?, agree::<Device>(&input, rank, dtype)?]
                    {
                        let [f, o] = counts.get();
                        counts.set([f + fast, o + ordered]);
                    }
                }
                Ok(())
            })
            .unwrap();
        let [fast, ordered] = counts.get();
        assert!(fast > cases as usize && ordered > fast, "fast {fast}, ordered {ordered}");
    }
}
