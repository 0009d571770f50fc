//! Helpers that the macros' generated code calls. Not public API: names may change with any
//! release, but they are kept stable enough to read well in diagnostics.

pub use crate::check::Reach;
use crate::dtype::{DlElement, PlainBits};
use crate::ffi::DLDataType;
use core::mem::size_of;

/// Compiles only when `T` is an element type; generated code spans the call at a field's type.
pub const fn assert_element<T: DlElement>() {}

/// Compiles only when `T` accepts every bit pattern; generated code spans the call at a field's type.
pub const fn assert_plain_bits<T: PlainBits>() {}

/// Whether `B` has the same data type and size as `A` (fields of one lanes element).
pub const fn same_element<A: DlElement, B: DlElement>() -> bool {
    let (a, b) = (A::DTYPE, B::DTYPE);
    a.code == b.code && a.bits == b.bits && a.lanes == b.lanes && size_of::<A>() == size_of::<B>()
}

/// Whether `count` fields of data type `inner` have at most `u16::MAX` lanes in all.
pub const fn lanes_fit(inner: DLDataType, count: usize) -> bool {
    (inner.lanes as usize).saturating_mul(count) <= u16::MAX as usize
}

/// The data type of `count` consecutive fields of data type `inner`; `lanes_fit` is asserted next to
/// every use.
pub const fn lanes_dtype(inner: DLDataType, count: usize) -> DLDataType {
    DLDataType { lanes: (inner.lanes as usize).wrapping_mul(count) as u16, ..inner }
}

/// The sum of `values` (field sizes, for the derive's padding proof; a loop, since generated `a + b`
/// chains trip lints in the user's crate).
pub const fn sum(values: &[usize]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < values.len() {
        total += values[i];
        i += 1;
    }
    total
}
