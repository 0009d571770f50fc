//! The bit addressing of packed sub-byte values: where the value at element offset `k` lies, and
//! reading and writing its bits without touching its neighbours' in the same bytes. The packed
//! views' unsafe memory access is all here, to be reviewed on its own: callers vouch that the bytes
//! of the values they name are valid (and, for writes, reached through nothing else).

use crate::dtype::PlainBits;
use core::ptr::NonNull;

/// The byte and the bit in it where element offset `k` starts, `start_bit + k·bits` bits after the
/// base, computed without the bit count itself (which may not fit `usize` where the bytes do).
#[inline]
fn position(start_bit: usize, k: usize, bits: usize) -> (usize, usize) {
    // Eight values take exactly `bits` bytes.
    let low = start_bit + (k % 8) * bits;
    ((k / 8) * bits + low / 8, low % 8)
}

/// The bits of the element at element offset `k`.
///
/// # Safety
///
/// The bytes holding bits `[start_bit + k·bits, start_bit + (k + 1)·bits)` after `base` are valid
/// for reads; `bits < 8`.
#[inline]
pub(super) unsafe fn read_bits(base: NonNull<u8>, start_bit: usize, k: usize, bits: usize) -> u8 {
    let (byte, shift) = position(start_bit, k, bits);
    // SAFETY: the first byte holding the value lies in the bytes the caller vouches for.
    let first = unsafe { base.add(byte) };
    // SAFETY: as above, valid for reads.
    let mut word = u16::from(unsafe { first.read() });
    if shift + bits > 8 {
        // SAFETY: the value straddles into the next byte, which holds its high bits (caller).
        let second = unsafe { first.add(1) };
        // SAFETY: as above, valid for reads.
        word |= u16::from(unsafe { second.read() }) << 8;
    }
    ((word >> shift) & ((1 << bits) - 1)) as u8
}

/// Writes the low `bits` bits of `value` as the element at element offset `k`, keeping the other
/// bits of its bytes.
///
/// # Safety
///
/// As for [`read_bits`], with the bytes valid for writes and reached through nothing else.
#[inline]
pub(super) unsafe fn write_bits(base: NonNull<u8>, start_bit: usize, k: usize, bits: usize, value: u8) {
    let (byte, shift) = position(start_bit, k, bits);
    let mask = ((1u16 << bits) - 1) << shift;
    let value = (u16::from(value) << shift) & mask;
    // SAFETY: the first byte holding the value lies in the bytes the caller vouches for.
    let first = unsafe { base.add(byte) };
    // SAFETY: valid for reads and writes, reached through nothing else (caller).
    unsafe { replace_bits(first, mask as u8, value as u8) };
    if shift + bits > 8 {
        // SAFETY: the value straddles into the next byte (caller).
        let second = unsafe { first.add(1) };
        // SAFETY: as above.
        unsafe { replace_bits(second, (mask >> 8) as u8, (value >> 8) as u8) };
    }
}

/// Replaces the bits of `*byte` under `mask` with those of `value`.
///
/// # Safety
///
/// `byte` is valid for reads and writes and reached through nothing else.
#[inline]
unsafe fn replace_bits(byte: NonNull<u8>, mask: u8, value: u8) {
    // SAFETY: valid for reads (caller).
    let old = unsafe { byte.read() };
    // SAFETY: valid for writes (caller).
    unsafe { byte.write((old & !mask) | (value & mask)) };
}

/// A value of `T` from its bits.
#[inline]
pub(super) fn from_bits<T: PlainBits>(bits: u8) -> T {
    debug_assert_eq!(size_of::<T>(), 1);
    // SAFETY: `T` is one byte (packable, checked by every constructor) that accepts any bits.
    unsafe { core::mem::transmute_copy::<u8, T>(&bits) }
}

/// The bits of a value of `T`.
#[inline]
pub(super) fn to_bits<T: PlainBits>(value: T) -> u8 {
    debug_assert_eq!(size_of::<T>(), 1);
    // SAFETY: `T` is one byte without padding (packable and `PlainBits`).
    unsafe { core::mem::transmute_copy::<T, u8>(&value) }
}
