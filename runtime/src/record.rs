//! Member views of `#[repr(C)]` records: from a view of records, a zero-copy strided view of one
//! member, exportable to DLPack (the member's position travels in `byte_offset`).
//!
//! Array-of-structs members are not zero-copy in the usual array-library interop; here they are,
//! whenever the member's size divides the record's and its offset: then the member of record `i`
//! is element `i·(size_of::<Rec>() / size_of::<F>()) + offset / size_of::<F>()` of the record
//! buffer seen as `F`s.
//!
//! `#[derive(DlRecord)]` generates one [`Member`] constant per field (the field's name in
//! upper case) and proves the divisibility at compile time.
//!
//! ```
//! use dlspan::{DlElement, DlRecord, HostMdspan, to_dlpack_tensor};
//!
//! #[derive(Clone, Copy, DlRecord)]
//! #[repr(C)]
//! struct Particle {
//!     position: [f32; 3],
//!     mass: f32,
//!     id: u32,
//!     charge: f32,
//! }
//!
//! let particles: Vec<Particle> =
//!     (0..4).map(|i| Particle { position: [0.0; 3], mass: i as f32, id: i, charge: -1.0 }).collect();
//! let view = HostMdspan::<Particle, 1>::from_slice(&particles, [4])?;
//! let masses = view.member(Particle::MASS);
//! assert_eq!(masses.to_vec(), [0.0, 1.0, 2.0, 3.0]);
//! assert_eq!((masses.stride(0), masses.offset()), (6, 3)); // 24-byte records, mass at byte 12
//!
//! let dl = to_dlpack_tensor(&masses)?; // zero-copy: data = the records, byte_offset = 12
//! assert_eq!((dl.get().byte_offset, dl.strides()[0]), (12, 6));
//! # Ok::<(), dlspan::DlpackError>(())
//! ```

use crate::__private::{MemberProblem, member_problem};
use crate::index::{Dims, Extents, Layout, LayoutStrideRelaxed, Mapping};
use crate::space::MemorySpace;
use crate::view::{Mdspan, MdspanMut};
use core::fmt;
use core::marker::PhantomData;
use core::mem::size_of;
use core::ptr::NonNull;

/// A member of type `F` of the record type `Rec`, whose size divides the record's and its offset.
/// Made by `#[derive(DlRecord)]` (as `Rec::FIELD_NAME`).
///
/// ```
/// use dlspan::record::Member;
/// #[derive(Clone, Copy, dlspan::DlRecord)]
/// #[repr(C)]
/// struct Pair { a: u32, b: u32 }
/// let b: Member<Pair, u32> = Pair::B;
/// assert_eq!((b.offset(), b.stride()), (1, 2));
/// ```
pub struct Member<Rec, F> {
    /// Offset of the member from the record's start, in elements of `F`.
    offset: usize,
    _member: PhantomData<fn(&Rec) -> &F>,
}

impl<Rec, F> Clone for Member<Rec, F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<Rec, F> Copy for Member<Rec, F> {}

impl<Rec, F> PartialEq for Member<Rec, F> {
    fn eq(&self, other: &Self) -> bool {
        self.offset == other.offset
    }
}
impl<Rec, F> Eq for Member<Rec, F> {}

impl<Rec, F> fmt::Debug for Member<Rec, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Member").field("offset", &self.offset).field("stride", &Self::STRIDE).finish()
    }
}

impl<Rec, F> Member<Rec, F> {
    /// Elements of `F` per record: the stride multiplier of member views.
    ///
    /// ```
    /// # #[derive(Clone, Copy, dlspan::DlRecord)] #[repr(C)] struct Pair { a: u32, b: u32 }
    /// use dlspan::record::Member;
    /// assert_eq!(Member::<Pair, u32>::STRIDE, 2); // an 8-byte record holds two u32
    /// ```
    pub const STRIDE: usize = size_of::<Rec>() / size_of::<F>();

    /// The member at `byte_offset`.
    ///
    /// # Panics
    ///
    /// (At compile time in const contexts.) If the member's size is zero or does not divide the
    /// record's size and `byte_offset`.
    ///
    /// # Safety
    ///
    /// `Rec` has a field of type `F` at `byte_offset` (as `core::mem::offset_of!` gives it), so
    /// that in every valid `Rec` the bytes there are a valid `F`.
    ///
    /// ```
    /// #[derive(Clone, Copy)]
    /// #[repr(C)]
    /// struct Pair { a: u32, b: u32 }
    /// // SAFETY: `b` is a `u32` field at this offset.
    /// let b = unsafe { dlspan::record::Member::<Pair, u32>::new_unchecked(core::mem::offset_of!(Pair, b)) };
    /// assert_eq!((b.offset(), b.stride()), (1, 2));
    /// ```
    pub const unsafe fn new_unchecked(byte_offset: usize) -> Self {
        assert!(
            matches!(member_problem::<Rec, F>(byte_offset), MemberProblem::None),
            "a member view needs a member whose size divides the record's size and its offset"
        );
        Self { offset: byte_offset / size_of::<F>(), _member: PhantomData }
    }

    /// The member's offset from the record's start, in elements of `F`.
    ///
    /// ```
    /// # #[derive(Clone, Copy, dlspan::DlRecord)] #[repr(C)] struct Pair { a: u32, b: u32 }
    /// assert_eq!(Pair::B.offset(), 1);
    /// ```
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// Elements of `F` per record.
    ///
    /// ```
    /// # #[derive(Clone, Copy, dlspan::DlRecord)] #[repr(C)] struct Pair { a: u32, b: u32 }
    /// assert_eq!(Pair::A.stride(), 2);
    /// ```
    pub const fn stride(&self) -> usize {
        Self::STRIDE
    }
}

/// The member sub-mapping of a record mapping: strides scaled, offset moved to the member.
fn member_mapping<Rec, F, const R: usize, E: Extents<R>, L: Layout>(
    records: &Mapping<R, E, L>,
    member: Member<Rec, F>,
) -> Mapping<R, Dims<R>, LayoutStrideRelaxed> {
    let ratio = Member::<Rec, F>::STRIDE as isize;
    // No overflow on an axis that reaches a second record: every reachable record offset times the
    // ratio is a reachable byte offset divided by size_of::<F>(), and the record view's bytes fit
    // isize. An axis of extent 1 reaches nothing along it, and its stride may be anything a
    // validated mapping allows: where scaling it overflows, it becomes 0.
    let strides = records.strides().map(|s| s.checked_mul(ratio).unwrap_or(0));
    let offset = records.offset() * ratio as usize + member.offset;
    Mapping::assume_valid(records.extents(), strides, offset)
}

impl<'a, Rec, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, Rec, R, E, L, S> {
    /// The view of one member of every record: same extents, strides scaled by the records per
    /// member ratio, the member's position as the element offset (a relaxed view, exporting it in
    /// `byte_offset`). Zero-copy.
    ///
    /// ```
    /// # #[derive(Clone, Copy, dlspan::DlRecord)] #[repr(C)] struct Pair { a: u32, b: u32 }
    /// let pairs = [Pair { a: 1, b: 10 }, Pair { a: 2, b: 20 }];
    /// let view = dlspan::HostMdspan::<Pair, 1>::from_slice(&pairs, [2])?;
    /// assert_eq!(view.member(Pair::B).to_vec(), [10, 20]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn member<F>(&self, member: Member<Rec, F>) -> Mdspan<'a, F, R, Dims<R>, LayoutStrideRelaxed, S> {
        let map = member_mapping(self.mapping(), member);
        let ptr = NonNull::new(self.data_handle().cast_mut()).unwrap_or(NonNull::dangling()).cast::<F>();
        // SAFETY: every offset of the member mapping is the address of field `F` of a record the
        // record view reaches (Member's contract), so it is a valid `F`, readable for `'a` like the
        // record; the base is aligned for `Rec`, hence for its field `F`, and the offsets are whole
        // `F`s; the byte span is the record view's.
        unsafe { Mdspan::from_parts_unchecked(ptr, map, self.origin()) }
    }
}

impl<'a, Rec, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, Rec, R, E, L, S> {
    /// The mutable view of one member of every record, borrowing this view.
    ///
    /// ```
    /// # #[derive(Clone, Copy, dlspan::DlRecord)] #[repr(C)] struct Pair { a: u32, b: u32 }
    /// let mut pairs = [Pair { a: 1, b: 10 }, Pair { a: 2, b: 20 }];
    /// let mut view = dlspan::HostMdspanMut::<Pair, 1>::from_slice(&mut pairs, [2])?;
    /// view.member_mut(Pair::A).iter_mut().for_each(|a| *a += 100);
    /// assert_eq!((pairs[0].a, pairs[1].a, pairs[1].b), (101, 102, 20));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn member_mut<F>(&mut self, member: Member<Rec, F>) -> MdspanMut<'_, F, R, Dims<R>, LayoutStrideRelaxed, S> {
        self.reborrow().into_member(member)
    }

    /// The mutable view of one member of every record, consuming this view.
    ///
    /// ```
    /// # #[derive(Clone, Copy, dlspan::DlRecord)] #[repr(C)] struct Pair { a: u32, b: u32 }
    /// let mut pairs = [Pair { a: 1, b: 10 }];
    /// let view = dlspan::HostMdspanMut::<Pair, 1>::from_slice(&mut pairs, [1])?;
    /// let mut b = view.into_member(Pair::B);
    /// b[[0]] = 11;
    /// assert_eq!(pairs[0].b, 11);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn into_member<F>(self, member: Member<Rec, F>) -> MdspanMut<'a, F, R, Dims<R>, LayoutStrideRelaxed, S> {
        let map = member_mapping(self.mapping(), member);
        let ptr = NonNull::new(self.data_handle()).unwrap_or(NonNull::dangling()).cast::<F>();
        // SAFETY: as for `Mdspan::member`, for writes: distinct records (a unique mapping) have
        // distinct member fields, so the member mapping is unique too; `self` is consumed.
        unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.origin()) }
    }
}
