//! Helpers that the macros' generated code calls, all here. Not public API: names may change with
//! any release, but they are kept stable enough to read well in diagnostics.
//!
//! They check element types and record members, so this module sits just above `dtype` and below
//! everything else (`record` asserts the member rule defined here).

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

/// Whether `size` bytes per element match `dtype` under [`DlElement`]'s size condition (the
/// derive's proof for `#[dl]` storage types).
pub const fn storage_matches(dtype: DLDataType, size: usize) -> bool {
    crate::dtype::storage_matches(dtype, size)
}

/// Whether `dtype`'s bits are the one width DLPack gives its code, where it gives one (8 for `bool`
/// and the FP8 codes, 6 for FP6, 4 for FP4): the derive's proof for `#[dl]` storage types.
pub const fn width_matches(dtype: DLDataType) -> bool {
    crate::dtype::width_fits(dtype)
}

/// Why a field cannot be a member view; [`member_problem`] returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberProblem {
    /// The field fits.
    None,
    /// The field has no size.
    ZeroSized,
    /// The field's size does not divide the record's.
    SizeDoesNotDivide,
    /// The field's size does not divide its offset.
    OffsetNotMultiple,
}

/// Whether a field of type `F` at `byte_offset` in `Rec` can be a member view: `#[derive(DlRecord)]`
/// asserts it at compile time with a message per problem, and
/// [`Member::new_unchecked`](crate::record::Member::new_unchecked) asserts it too.
pub const fn member_problem<Rec, F>(byte_offset: usize) -> MemberProblem {
    let (record, member) = (size_of::<Rec>(), size_of::<F>());
    if member == 0 {
        MemberProblem::ZeroSized
    } else if record % member != 0 {
        MemberProblem::SizeDoesNotDivide
    } else if !byte_offset.is_multiple_of(member) {
        MemberProblem::OffsetNotMultiple
    } else {
        MemberProblem::None
    }
}
