//! A tensor of any data type copied into a row-major buffer: element by element in logical order
//! (contiguous runs at once), by bytes, so one loop serves every data type.

use super::tensor::Meta;

/// Copies the elements `meta` describes, in row-major order, to `target`.
///
/// # Safety
///
/// `meta` was validated by `Meta::from_dltensor`, describes live host memory not written during
/// the copy, and `target` is valid for `meta.nbytes` bytes of writes and overlaps none of it.
pub(crate) unsafe fn compact_copy(meta: &Meta, target: *mut u8) {
    if meta.numel == 0 {
        return;
    }
    if meta.item_size == 0 || meta.is_c_contiguous() {
        // Packed sub-byte data (always compact) and row-major data: one block. Row-major strides
        // with unit extents can still step backwards, but only over extents of 1, so the block
        // starts at the first element.
        // SAFETY: a compact tensor's `nbytes` bytes start at its first element (validated span).
        unsafe { core::ptr::copy_nonoverlapping(meta.first().cast_const(), target, meta.nbytes) };
        return;
    }
    let strides: Vec<isize> = meta.strides.iter().map(|&s| s as isize * meta.item_size as isize).collect();
    let mut cursor = target;
    // SAFETY: forwarded: every source address lies in the validated span, and the destination
    // receives exactly `numel · item_size = nbytes` bytes.
    unsafe { copy_axis(meta.first().cast_const(), &meta.shape, &strides, meta.item_size, &mut cursor) };
}

/// Copies one axis (and those inside it) from `source` to `*cursor`, advancing the cursor.
///
/// # Safety
///
/// As for [`compact_copy`]: `source` plus every offset `shape` and `strides` reach is readable,
/// and `*cursor` has room for the elements.
unsafe fn copy_axis(source: *const u8, shape: &[i64], strides: &[isize], item: usize, cursor: &mut *mut u8) {
    let (&extent, &stride) = (shape.first().unwrap_or(&1), strides.first().unwrap_or(&0));
    if shape.len() <= 1 {
        if stride == item as isize {
            let bytes = extent as usize * item;
            // SAFETY: a contiguous run of `extent` elements in the source; room in the target.
            unsafe { core::ptr::copy_nonoverlapping(source, *cursor, bytes) };
            *cursor = cursor.wrapping_add(bytes);
            return;
        }
        for i in 0..extent as isize {
            // SAFETY: element `i` of this axis lies in the source span; room for one element.
            unsafe { core::ptr::copy_nonoverlapping(source.wrapping_offset(i * stride), *cursor, item) };
            *cursor = cursor.wrapping_add(item);
        }
        return;
    }
    for i in 0..extent as isize {
        // SAFETY: forwarded for the sub-tensor at index `i` of this axis.
        unsafe { copy_axis(source.wrapping_offset(i * stride), &shape[1..], &strides[1..], item, cursor) };
    }
}
