//! A tensor of any data type copied into a compact row-major buffer, in logical order: whole-byte
//! elements by bytes (contiguous runs at once), packed sub-byte elements by bits, so one loop
//! serves every data type and every layout — zero strides (broadcast), overlapping and negative
//! strides included. The destination holds [`Meta::compact_bytes`] bytes, one element per index,
//! which for broadcast or overlapping strides is more than the source spans.

use super::meta::Meta;

/// Copies the elements `meta` describes, in row-major order, to `target`.
///
/// # Safety
///
/// `meta` was validated by `Meta::from_dltensor` and describes live host memory not written during
/// the copy; `target` is valid for `meta.compact_bytes()` bytes of writes (which must be `Some`),
/// holds zeros where packed data leaves bits unused, and overlaps none of the source.
pub(crate) unsafe fn compact_copy(meta: &Meta, target: *mut u8) {
    if meta.numel == 0 {
        return;
    }
    let contiguous = meta.is_c_contiguous();
    if meta.item_size == 0 {
        // SAFETY: forwarded.
        unsafe { copy_packed(meta, contiguous, target) };
        return;
    }
    let bytes = meta.numel * meta.item_size; // `compact_bytes`, which fits (caller)
    if contiguous {
        // Row-major strides with unit extents can still step backwards, but only over extents of
        // 1, so the block starts at the first element; row-major means no element twice, so the
        // span is exactly the elements' bytes.
        // SAFETY: a row-major tensor's `numel · item_size` bytes start at its first element and lie
        // in its validated span; the target has room for them.
        unsafe { core::ptr::copy_nonoverlapping(meta.first().cast_const(), target, bytes) };
        return;
    }
    let strides: Vec<isize> = meta.strides().iter().map(|&s| s as isize * meta.item_size as isize).collect();
    let mut cursor = target;
    // SAFETY: forwarded: every source address lies in the validated span, and the destination
    // receives exactly `numel · item_size` bytes, one element per index.
    unsafe { copy_axis(meta.first().cast_const(), meta.shape(), &strides, meta.item_size, &mut cursor) };
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

/// Packed sub-byte data: value `k` of the copy takes bits `[k·bits, (k + 1)·bits)` of `target`;
/// the element at index `i` of the source lies `Σ i_j·s_j·bits` bits after the first element's
/// byte (a negative count reaches below it, where the validated span allows).
///
/// # Safety
///
/// As for [`compact_copy`], for packed data (`meta.item_size == 0`).
unsafe fn copy_packed(meta: &Meta, contiguous: bool, target: *mut u8) {
    let bits = meta.bits;
    let first = meta.first().cast_const();
    if contiguous {
        // Row-major packed data is the copy itself: `ceil(numel · bits / 8)` bytes from the first
        // element's byte, whose trailing bits beyond the last value are cleared.
        let total = meta.numel * bits;
        let bytes = total.div_ceil(8);
        // SAFETY: a row-major packed tensor's span is those bytes, from its first byte; the
        // target holds as many.
        unsafe { core::ptr::copy_nonoverlapping(first, target, bytes) };
        if !total.is_multiple_of(8) {
            // The last byte of the copy, written above: `wrapping_add` stays inside the target.
            let last = target.wrapping_add(bytes - 1);
            // SAFETY: a byte of the target, valid for reads and writes (caller).
            unsafe { *last &= (1u8 << (total % 8)) - 1 };
        }
        return;
    }
    let (shape, strides) = (meta.shape(), meta.strides());
    let rank = shape.len();
    let mut index = vec![0i64; rank];
    let mut offset = 0isize; // in elements, from index 0
    for k in 0..meta.numel {
        // SAFETY: the element at `offset` lies in the validated span (its bits, measured from the
        // first element's byte); value `k` of the target lies in its `compact_bytes`.
        unsafe { copy_bits(first, offset as i128 * bits as i128, target, k * bits, bits) };
        // The next index in row-major order.
        for axis in (0..rank).rev() {
            index[axis] += 1;
            offset += strides[axis] as isize;
            if index[axis] < shape[axis] {
                break;
            }
            offset -= strides[axis] as isize * index[axis] as isize;
            index[axis] = 0;
        }
    }
}

/// Copies `count` bits from bit `from` of `source` (a signed bit offset from the byte `source`
/// points to) to bit `to` of `target`, byte by byte, low bits first. The target's bits there must
/// be zero.
///
/// # Safety
///
/// The bytes holding bits `[from, from + count)` after `source` are readable, those holding bits
/// `[to, to + count)` after `target` writable, and the two do not overlap.
unsafe fn copy_bits(source: *const u8, from: i128, target: *mut u8, to: usize, count: usize) {
    let (mut from, mut to, mut left) = (from, to, count);
    while left > 0 {
        // Within the validated span, whose byte count fits `isize`.
        let (byte, shift) = (from.div_euclid(8) as isize, from.rem_euclid(8) as usize);
        let (out, out_shift) = (to / 8, to % 8);
        let take = left.min(8 - shift).min(8 - out_shift);
        // The bytes holding the value's bits, inside the source span and the target (caller).
        let (from_byte, to_byte) = (source.wrapping_offset(byte), target.wrapping_add(out));
        // SAFETY: a byte holding bits of the value, valid for reads (caller).
        let value = unsafe { from_byte.read() };
        let bits = (value >> shift) & (((1u16 << take) - 1) as u8);
        // SAFETY: a byte of the target holding bits of the value (caller), zero there.
        unsafe { *to_byte |= bits << out_shift };
        from += take as i128;
        to += take;
        left -= take;
    }
}
