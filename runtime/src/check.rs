//! Pure validators of the import rules (`docs/rules.md`, section I): each takes plain numbers and
//! returns `Ok` or the rule's error.
//! No unsafe code here; the conversions read the raw `DLTensor` and call these in the spec's order.

use crate::error::{DlpackError, LayoutKind};
use crate::ffi::{DLDataType, DLDevice};

/// Rule I2: the device id of CUDA device and managed memory is a CUDA ordinal, never negative.
#[inline(always)]
pub(crate) fn device_id(device: DLDevice) -> Result<i32, DlpackError> {
    if device.device_id >= 0 { Ok(device.device_id) } else { Err(DlpackError::NegativeDeviceId { device }) }
}

/// Rule I3: `ndim` equals the rank (a negative `ndim` never does).
#[inline]
pub(crate) fn rank(ndim: i32, rank: usize) -> Result<(), DlpackError> {
    if usize::try_from(ndim).is_ok_and(|n| n == rank) {
        Ok(())
    } else {
        Err(DlpackError::RankMismatch { expected: rank, found: ndim })
    }
}

/// Rules I4 and I5: the data type matches exactly; for sub-byte types, packing matches too.
#[inline]
pub(crate) fn dtype(
    expected: DLDataType,
    element_padded: bool,
    found: DLDataType,
    tensor_padded: bool,
) -> Result<(), DlpackError> {
    if expected != found {
        return Err(DlpackError::DtypeMismatch { expected, found });
    }
    if found.bits < 8 && element_padded != tensor_padded {
        return Err(DlpackError::SubbytePacking { element_padded, tensor_padded });
    }
    Ok(())
}

/// Rule I7 (strict layouts): the first element's address, `data + byte_offset`, without wrapping.
#[inline]
pub(crate) fn first_element(data: usize, byte_offset: u64) -> Result<usize, DlpackError> {
    usize::try_from(byte_offset)
        .ok()
        .and_then(|offset| data.checked_add(offset))
        .ok_or(DlpackError::ByteOffsetOverflow { byte_offset })
}

/// Rule I7 (relaxed layout): `byte_offset` as a whole number of elements.
#[inline]
pub(crate) fn element_offset(byte_offset: u64, element_size: usize) -> Result<usize, DlpackError> {
    let size = element_size as u64;
    if size == 0 || !byte_offset.is_multiple_of(size) {
        return Err(DlpackError::ByteOffsetNotElementMultiple { byte_offset, element_size });
    }
    usize::try_from(byte_offset / size).map_err(|_| DlpackError::ByteOffsetOverflow { byte_offset })
}

/// Rule I8: the address is aligned for the element type. The alignment is the type's own
/// (`align_of`), which for DLPack's types equals the element size when that is a power of two and is
/// the lane alignment otherwise (an FP6×4 element is 3 bytes, aligned to 1).
#[inline]
pub(crate) fn aligned(address: usize, alignment: usize) -> Result<(), DlpackError> {
    if address.is_multiple_of(alignment) { Ok(()) } else { Err(DlpackError::Misaligned { address, alignment }) }
}

/// Rule I10: an extent is non-negative and fits `usize`.
#[inline]
pub(crate) fn extent(axis: usize, extent: i64) -> Result<usize, DlpackError> {
    if extent < 0 {
        return Err(DlpackError::NegativeExtent { axis, extent });
    }
    usize::try_from(extent).map_err(|_| DlpackError::SpanOverflow)
}

/// Rule I10 for every axis, the first failing one reported.
#[inline]
pub(crate) fn extents<const R: usize>(shape: &[i64; R]) -> Result<[usize; R], DlpackError> {
    let mut out = [0usize; R];
    for (axis, (&value, slot)) in shape.iter().zip(&mut out).enumerate() {
        *slot = extent(axis, value)?;
    }
    Ok(out)
}

/// A stride read from a tensor, as `isize` (it only fails to fit on 32-bit targets).
#[inline]
pub(crate) fn stride(stride: i64) -> Result<isize, DlpackError> {
    isize::try_from(stride).map_err(|_| DlpackError::SpanOverflow)
}

/// Strides read from a tensor, as `isize`.
#[inline]
pub(crate) fn strides<const R: usize>(strides: &[i64; R]) -> Result<[isize; R], DlpackError> {
    let mut out = [0isize; R];
    for (&value, slot) in strides.iter().zip(&mut out) {
        *slot = stride(value)?;
    }
    Ok(out)
}

/// The strides of a compact layout (`layout_right` row-major, `layout_left` column-major). A zero
/// extent counts as 1, so strides stay positive for empty tensors (PyTorch's convention); they are
/// the canonical strides whenever the tensor has elements. Overflow is an error.
#[inline]
pub(crate) fn compact_strides<const R: usize>(
    extents: &[usize; R],
    kind: LayoutKind,
) -> Result<[isize; R], DlpackError> {
    let mut out = [0isize; R];
    compact_strides_into(extents, kind, &mut out)?;
    Ok(out)
}

/// [`compact_strides`] for any rank, into `out` (as long as `extents`).
#[inline]
pub(crate) fn compact_strides_into(extents: &[usize], kind: LayoutKind, out: &mut [isize]) -> Result<(), DlpackError> {
    let rank = extents.len();
    let mut acc: usize = 1;
    let mut overflow = false;
    for k in 0..rank {
        let axis = if kind == LayoutKind::Left { k } else { rank - 1 - k };
        out[axis] = acc as isize;
        let (next, o) = acc.overflowing_mul(extents[axis].max(1));
        acc = next;
        overflow |= o;
    }
    // One test at the end: the running product only grows, so if the last fits isize, each stride
    // written on the way did too.
    if overflow || acc > isize::MAX as usize {
        return Err(DlpackError::SpanOverflow);
    }
    Ok(())
}

/// Rules I13 and I14 for compact layouts, in one pass: the strides are exactly the layout's (a tensor
/// without elements reaches nothing, so its strides are not compared), and the number of elements
/// fits `isize`. The first axis (in index order) that differs is reported.
#[inline(always)]
pub(crate) fn compact<const R: usize>(
    kind: LayoutKind,
    extents: &[usize; R],
    strides: &[isize; R],
) -> Result<Reach, DlpackError> {
    let expected = compact_strides(extents, kind)?;
    // The product of the extents counted as at least 1 fits isize, so the size does too.
    let size: usize = extents.iter().product();
    if size != 0 {
        for (axis, (&found, &expected)) in strides.iter().zip(&expected).enumerate() {
            if found != expected {
                let accepted_by =
                    if strides.iter().all(|&s| s > 0) { LayoutKind::Stride } else { LayoutKind::StrideRelaxed };
                return Err(DlpackError::StridesIncompatible {
                    layout: kind,
                    axis,
                    expected: expected as i64,
                    found: found as i64,
                    accepted_by,
                });
            }
        }
    }
    Ok(Reach { size, span: size })
}

/// Rule I13 (`layout_stride`): every stride is positive.
#[inline]
pub(crate) fn positive_strides(strides: &[isize]) -> Result<(), DlpackError> {
    match strides.iter().position(|&s| s <= 0) {
        None => Ok(()),
        Some(axis) => Err(DlpackError::NonPositiveStride { axis, stride: strides[axis] as i64 }),
    }
}

/// What a validated mapping reaches, relative to its base pointer (named in the hidden methods of
/// the sealed `Layout` trait, hence public through `__private`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    /// Number of elements (indices).
    pub size: usize,
    /// Elements from the base to one past the highest offset reached; 0 when empty.
    pub span: usize,
}

/// Rules I14 and I15: every reachable offset `offset + Σ i_k·s_k` (0 ≤ i_k < e_k) fits `isize`,
/// none is below the base, and so does the number of elements. Axes of extent 1 contribute nothing,
/// whatever their stride; a tensor without elements reaches nothing. One pass; overflow is
/// collected in a flag and reported once emptiness is known.
///
/// With `POSITIVE`, it is also rule I13 of `layout_stride` (every stride positive), checked in the
/// same pass and reported first.
#[inline(always)]
pub(crate) fn reach<const POSITIVE: bool>(
    extents: &[usize],
    strides: &[isize],
    offset: usize,
) -> Result<Reach, DlpackError> {
    let mut not_positive = false;
    let mut size: usize = 1;
    let mut overflow = offset > isize::MAX as usize;
    let (mut low, mut high) = (offset as isize, offset as isize);
    for (&e, &s) in extents.iter().zip(strides) {
        not_positive |= POSITIVE & (s <= 0);
        let (next, o) = size.overflowing_mul(e);
        size = next;
        overflow |= o;
        // For e == 0 the term is meaningless (nothing is reached); for e >= 1 it is (e - 1)·s.
        let (term, o) = (e.saturating_sub(1) as isize).overflowing_mul(s);
        overflow |= o | (e > isize::MAX as usize);
        if term > 0 {
            let (next, o) = high.overflowing_add(term);
            high = next;
            overflow |= o;
        } else {
            let (next, o) = low.overflowing_add(term);
            low = next;
            overflow |= o;
        }
    }
    if not_positive {
        return positive_strides(strides).map(|()| Reach { size: 0, span: 0 });
    }
    if extents.contains(&0) {
        // Empty: reaches nothing, whatever the other extents and the strides are (a wrapped product
        // can be zero too, so the product cannot decide this). The offset must still be a valid
        // element offset: relaxed mappings store it, and moving a pointer by it must stay in isize.
        return if offset > isize::MAX as usize {
            Err(DlpackError::SpanOverflow)
        } else {
            Ok(Reach { size: 0, span: 0 })
        };
    }
    if overflow || size > isize::MAX as usize {
        return Err(DlpackError::SpanOverflow);
    }
    if low < 0 {
        return Err(DlpackError::NegativeReach { lowest: low as i64 });
    }
    match high.checked_add(1) {
        Some(span) => Ok(Reach { size, span: span as usize }),
        None => Err(DlpackError::SpanOverflow),
    }
}

/// The most bytes a view accepted by the fast import path spans: with every number within
/// [`fast_bound`], its mapping reaches fewer than `(rank + 1)·B²` elements, at most this many bytes.
/// So the fast path computes no span: its bytes fit `isize`, and a range starting below `2^63`
/// cannot wrap the address space.
pub(crate) const FAST_SPAN_BYTES: usize = 1 << 62;

/// The bound of the fast import path for rank `rank` and elements of `size` bytes: the largest
/// power of two `B` with `(rank + 1)·B²·size ≤` [`FAST_SPAN_BYTES`] (0 when there is none).
///
/// A tensor whose extents lie in `[1, B]`, whose strides lie in `[0, B)` (`[1, B]` where they must
/// be positive) and whose element offset lies below `B` needs no overflow check in its offset
/// arithmetic: every term `(e - 1)·s` is below `B²` and the offset below `B`, so the highest offset
/// reached is below `(rank + 1)·B²`, and a product of two bounded numbers is exact. Only the number
/// of elements (a product of up to `rank` extents) can still overflow, from rank 3 on. Anything
/// outside the bound (empty tensors, negative strides, which are huge as unsigned numbers, large
/// numbers) takes the ordered path, which decides precisely.
pub(crate) const fn fast_bound(rank: usize, size: usize) -> usize {
    // ceil(log2(x)) for x >= 1.
    const fn ceil_log2(x: usize) -> u32 {
        usize::BITS - (x - 1).leading_zeros()
    }
    if size == 0 {
        return 0;
    }
    match FAST_SPAN_BYTES.trailing_zeros().checked_sub(ceil_log2(size) + ceil_log2(rank + 1)) {
        Some(bits) => 1 << (bits / 2),
        None => 0,
    }
}

/// A relaxed mapping's element offset, for the fast path: `byte_offset / size` when `byte_offset`
/// is a whole number of elements, and a number at or above any [`fast_bound`] when it is not (for a
/// power-of-two size, one rotation moves the remainder into the top bits).
#[inline(always)]
pub(crate) fn element_offset_fast(byte_offset: u64, size: usize) -> usize {
    let byte_offset = byte_offset as usize;
    if size.is_power_of_two() {
        // A remainder (below 2^trailing_zeros) lands at bit 64 - trailing_zeros or above: beyond
        // the bound, which is below 2^31 and shrinks as the size grows.
        byte_offset.rotate_right(size.trailing_zeros())
    } else if byte_offset.checked_rem(size) == Some(0) {
        byte_offset / size
    } else {
        usize::MAX
    }
}

/// `magnitudes` or'ed with `extent - 1` of every axis: below a bound `B` only if every extent lies in
/// `[1, B]` (0 and negative extents wrap to huge numbers), for one comparison with the bound.
#[inline(always)]
pub(crate) fn extents_fast<const R: usize>(extents: &[usize; R], magnitudes: usize) -> usize {
    extents.iter().fold(magnitudes, |acc, &e| acc | e.wrapping_sub(1))
}

/// The fast path of [`reach`] for tensors within [`fast_bound`] `bound`: `true` when `reach`
/// accepts the tensor, `false` when it might not or the tensor is outside the bound (the caller then
/// runs `reach`). The span is not computed: under the bound it is at most [`FAST_SPAN_BYTES`].
#[inline(always)]
pub(crate) fn reach_fast<const R: usize, const POSITIVE: bool>(
    extents: &[usize; R],
    strides: &[isize; R],
    offset: usize,
    bound: usize,
) -> bool {
    // A stride that must be positive and is 0 (or any negative stride) is huge as unsigned here.
    let magnitudes = strides.iter().fold(extents_fast(extents, offset), |acc, &s| {
        acc | if POSITIVE { (s as usize).wrapping_sub(1) } else { s as usize }
    });
    // The number of elements fits isize: each pair's product is exact under the bound, so only
    // combining pairs (rank 3 on) can overflow.
    let mut size = 1isize;
    let mut size_overflow = false;
    for pair in extents.chunks(2) {
        let pair = pair.iter().fold(1usize, |acc, &e| acc.wrapping_mul(e));
        let (next, overflow) = size.overflowing_mul(pair as isize);
        size = next;
        size_overflow |= overflow;
    }
    (magnitudes < bound) & !size_overflow
}

/// Rule I14 for a view's bytes, its positions counted in bits (packed sub-byte elements): `span`
/// elements of `element_bits` bits starting `start_bit` bits after `address`, rounded up to whole
/// bytes, fit `isize`, and the range does not wrap around the address space. Returns the number of
/// bytes from `address` to the end of the last element.
#[inline]
pub(crate) fn bit_range(
    address: usize,
    start_bit: usize,
    span: usize,
    element_bits: usize,
) -> Result<usize, DlpackError> {
    // In 128 bits: a span that fits isize in bytes may not in bits.
    let end_bit = span as u128 * element_bits as u128 + start_bit as u128;
    let bytes = end_bit.div_ceil(8);
    if bytes > isize::MAX as u128 {
        return Err(DlpackError::SpanOverflow);
    }
    address.checked_add(bytes as usize).map(|_| bytes as usize).ok_or(DlpackError::SpanOverflow)
}

/// The element offsets a validated mapping reaches: `(lowest, one past the highest)`, or `(0, 0)`
/// without elements.
#[inline]
pub(crate) fn bounds(extents: &[usize], strides: &[isize], offset: usize) -> (usize, usize) {
    if extents.contains(&0) {
        return (0, 0);
    }
    let (mut low, mut high) = (offset, offset);
    for (&e, &s) in extents.iter().zip(strides) {
        // Validated: every term and partial sum fits isize and low stays >= 0.
        let term = (e - 1) * s.unsigned_abs();
        if s > 0 {
            high += term;
        } else {
            low -= term;
        }
    }
    (low, high + 1)
}

/// Whether distinct indices always reach distinct elements. A sufficient test (as NumPy's and
/// ndarray's): sorted by stride magnitude, each axis' stride exceeds everything the smaller axes
/// reach. Axes of extent ≤ 1 are ignored; a zero stride on a longer axis is never unique. Some
/// exotic interleaved layouts that are unique fail this test; none that alias pass it.
pub(crate) fn unique(extents: &[usize], strides: &[isize]) -> bool {
    if extents.contains(&0) {
        return true;
    }
    // One axis, the common case of element-wise code: the general search below costs a hundred
    // instructions for the same answer.
    if let ([extent], [stride]) = (extents, strides) {
        return *extent <= 1 || *stride != 0;
    }
    // The axes of extent > 1 by increasing stride magnitude (ties by axis), found one at a time:
    // no buffer, any rank, and few axes in practice.
    let mut reached: usize = 0;
    let mut previous: Option<(usize, usize)> = None;
    loop {
        let next = (0..extents.len())
            .filter(|&axis| extents[axis] > 1)
            .map(|axis| (strides[axis].unsigned_abs(), axis))
            .filter(|&key| previous.is_none_or(|p| key > p))
            .min();
        let Some((stride, axis)) = next else {
            return true;
        };
        if stride <= reached {
            return false;
        }
        // For a validated mapping the sum stays below 2·isize::MAX; saturate for any other input.
        reached = reached.saturating_add((extents[axis] - 1).saturating_mul(stride));
        previous = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_one_axis() {
        assert!(unique(&[4], &[1]) && unique(&[4], &[-3]) && unique(&[1], &[0]) && unique(&[0], &[0]));
        assert!(!unique(&[2], &[0]));
    }

    #[test]
    fn compact_strides_of_empty_and_unit_axes() {
        assert_eq!(compact_strides(&[2, 3, 4], LayoutKind::Right), Ok([12, 4, 1]));
        assert_eq!(compact_strides(&[2, 3, 4], LayoutKind::Left), Ok([1, 2, 6]));
        assert_eq!(compact_strides(&[3, 0], LayoutKind::Right), Ok([1, 1]));
        assert_eq!(compact_strides::<0>(&[], LayoutKind::Right), Ok([]));
        assert_eq!(compact_strides(&[usize::MAX / 2, 4], LayoutKind::Right), Err(DlpackError::SpanOverflow));
    }

    #[test]
    fn reach_of_relaxed_mappings() {
        assert_eq!(reach::<false>(&[5], &[-1], 4), Ok(Reach { size: 5, span: 5 }));
        assert_eq!(reach::<false>(&[5], &[-1], 3), Err(DlpackError::NegativeReach { lowest: -1 }));
        assert_eq!(reach::<false>(&[3, 4], &[0, 1], 0), Ok(Reach { size: 12, span: 4 }));
        assert_eq!(reach::<false>(&[1, 4], &[isize::MAX, 1], 0), Ok(Reach { size: 4, span: 4 }));
        assert_eq!(reach::<false>(&[2, 0], &[isize::MAX, 1], 0), Ok(Reach { size: 0, span: 0 }));
        assert_eq!(reach::<false>(&[3], &[isize::MAX], 0), Err(DlpackError::SpanOverflow));
        assert_eq!(reach::<false>(&[1 << 40, 1 << 40], &[0, 0], 0), Err(DlpackError::SpanOverflow));
    }

    #[test]
    fn uniqueness() {
        assert!(unique(&[2, 3], &[3, 1]));
        assert!(unique(&[2, 3], &[1, 2]));
        assert!(unique(&[2, 3], &[-3, -1]));
        assert!(!unique(&[2, 3], &[0, 1]));
        assert!(!unique(&[3, 3], &[1, 1]));
        assert!(unique(&[1, 3], &[0, 1]));
        assert!(unique(&[0, 3], &[0, 0]));
        assert!(!unique(&[2, 2], &[2, 1].map(|s: isize| s - 1)));
    }

    #[test]
    fn byte_offsets() {
        assert_eq!(first_element(usize::MAX - 3, 4), Err(DlpackError::ByteOffsetOverflow { byte_offset: 4 }));
        assert_eq!(element_offset(16, 4), Ok(4));
        assert_eq!(
            element_offset(6, 4),
            Err(DlpackError::ByteOffsetNotElementMultiple { byte_offset: 6, element_size: 4 })
        );
    }
}
