//! Host access of packed views: values read by value ([`get`](PackedMdspan::get), logical-order
//! iteration, [`to_vec`](PackedMdspan::to_vec)) and written by value ([`set`](PackedMdspanMut::set),
//! [`update`](PackedMdspanMut::update), [`fill`](PackedMdspanMut::fill)), for views in
//! host-accessible memory, through the bit addressing of `bits`.

use super::bits::{from_bits, read_bits, to_bits, write_bits};
use super::{PackedMdspan, PackedMdspanMut, compact_bytes};
use crate::dtype::{DlElement, PlainBits};
use crate::error::DlpackError;
use crate::index::{Extents, Layout};
use crate::space::HostAccessible;
use crate::view::iter::Cursor;
use crate::view::sum::pairwise_sum_iter;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// Logical-order iterator over the values of a packed view; see [`PackedMdspan::iter`].
///
/// ```
/// # let bytes = [0x21u8, 0x07];
/// # let view = dlspan::PackedMdspan::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
/// let mut values = view.iter();
/// assert_eq!(values.len(), 3);
/// assert_eq!(values.next().map(|x| x.to_f32()), Some(0.5));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub struct PackedIter<'a, T, const R: usize> {
    base: NonNull<u8>,
    start_bit: usize,
    cursor: Cursor<u8, R>,
    _borrow: PhantomData<&'a T>,
}

// SAFETY: reads only, as the shared view it comes from.
unsafe impl<T: Sync, const R: usize> Send for PackedIter<'_, T, R> {}
// SAFETY: as above.
unsafe impl<T: Sync, const R: usize> Sync for PackedIter<'_, T, R> {}

impl<T: DlElement + PlainBits, const R: usize> Iterator for PackedIter<'_, T, R> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        let offset = self.cursor.next_offset()?;
        // SAFETY: the offset of an in-bounds index of the validated mapping (non-negative), whose
        // bytes the view made valid for reads for `'a`.
        let bits = unsafe { read_bits(self.base, self.start_bit, offset as usize, T::DTYPE.bits as usize) };
        Some(from_bits(bits))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.cursor.len(), Some(self.cursor.len()))
    }
}

impl<T: DlElement + PlainBits, const R: usize> ExactSizeIterator for PackedIter<'_, T, R> {}
impl<T: DlElement + PlainBits, const R: usize> core::iter::FusedIterator for PackedIter<'_, T, R> {}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    PackedMdspan<'a, T, R, E, L, S>
{
    /// The value at `index`, or `None` when out of bounds.
    ///
    /// ```
    /// # let bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspan::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// assert_eq!(view.get([1]).map(|x| x.to_f32()), Some(1.0));
    /// assert_eq!(view.get([3]), None);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn get(&self, index: [usize; R]) -> Option<T> {
        let offset = self.map.index_offset(index)?;
        // SAFETY: an in-bounds index's offset (non-negative), whose bytes are valid for reads.
        let bits = unsafe { read_bits(self.base, self.start_bit, offset as usize, T::DTYPE.bits as usize) };
        Some(from_bits(bits))
    }

    /// Every value in logical (row-major index) order.
    ///
    /// ```
    /// # let bytes = [0x21u8, 0x43];
    /// let view = dlspan::HostPackedMdspan::<dlspan::dtype::Float4E2m1fn, 2, dlspan::LayoutLeft>::from_bytes(&bytes, [2, 2])?;
    /// let values: Vec<f32> = view.iter().map(|x| x.to_f32()).collect();
    /// assert_eq!(values, [0.5, 1.5, 1.0, 2.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn iter(&self) -> PackedIter<'a, T, R> {
        PackedIter {
            base: self.base,
            start_bit: self.start_bit,
            cursor: Cursor::new(self.base, &self.map),
            _borrow: PhantomData,
        }
    }

    /// The values in logical order, one per element of the `Vec` (unpacked).
    ///
    /// ```
    /// # let bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspan::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// assert_eq!(view.to_vec().len(), 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// The sum of every value mapped into the accumulator type `A` by `map`, with `add` as the
    /// addition and `identity` as its zero: pairwise summation, as
    /// [`Mdspan::sum_with`](crate::Mdspan::sum_with) (blocks of 128 values in logical order,
    /// combined pairwise), the values decoded one by one.
    ///
    /// ```
    /// # let bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspan::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// assert_eq!(view.sum_with(0.0f64, |x| f64::from(x.to_f32()), |a, b| a + b), 7.5);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn sum_with<A: Copy>(&self, identity: A, map: impl Fn(T) -> A, add: impl Fn(A, A) -> A) -> A {
        pairwise_sum_iter(self.iter(), identity, map, add)
    }

    /// The values packed compact row-major into bytes of their own, low bits first: the copy that
    /// [`to_managed_tensor`](Self::to_managed_tensor) exports.
    ///
    /// # Errors
    ///
    /// [`DlpackError::SpanOverflow`] when the bytes would not fit `isize`.
    pub(crate) fn compact_copy(&self) -> Result<Vec<u8>, DlpackError> {
        let bits = T::DTYPE.bits as usize;
        let mut bytes = vec![0u8; compact_bytes::<T>(self.size())?];
        let base = NonNull::from(&mut bytes[..]).cast::<u8>();
        for (k, value) in self.iter().enumerate() {
            // SAFETY: `bytes` holds `size` compact values; value `k` is among them.
            unsafe { write_bits(base, 0, k, bits, to_bits(value)) };
        }
        Ok(bytes)
    }
}

impl<T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    PackedMdspanMut<'_, T, R, E, L, S>
{
    /// The value at `index`, or `None` when out of bounds.
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.get([2]).map(|x| x.to_f32()), Some(6.0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn get(&self, index: [usize; R]) -> Option<T> {
        self.as_view().get(index)
    }

    /// Every value in logical order; see [`PackedMdspan::iter`].
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.iter().count(), 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn iter(&self) -> PackedIter<'_, T, R> {
        self.as_view().iter()
    }

    /// The values in logical order, unpacked.
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.to_vec()[0].to_f32(), 0.5);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn to_vec(&self) -> Vec<T> {
        self.as_view().to_vec()
    }

    /// Writes `value` at `index` and returns the value it replaces, or `None` (writing nothing)
    /// when out of bounds. Only the value's bits change (`T`'s bits above the format's width are
    /// dropped).
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0x21u8, 0x07];
    /// let mut view = dlspan::PackedMdspanMut::<Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// let old = view.set([1], Float4E2m1fn::from_f32(-6.0));
    /// assert_eq!(old.map(|x| x.to_f32()), Some(1.0));
    /// assert_eq!(view.set([3], Float4E2m1fn::from_f32(1.0)), None);
    /// assert_eq!(bytes, [0xF1, 0x07]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn set(&mut self, index: [usize; R], value: T) -> Option<T> {
        let offset = self.map.index_offset(index)? as usize;
        let bits = T::DTYPE.bits as usize;
        // SAFETY: an in-bounds index's offset, whose bytes are valid for reads and writes and
        // reached through nothing else while `self` is borrowed mutably.
        let old = unsafe { read_bits(self.base, self.start_bit, offset, bits) };
        // SAFETY: as above.
        unsafe { write_bits(self.base, self.start_bit, offset, bits, to_bits(value)) };
        Some(from_bits(old))
    }

    /// Replaces every value with `f(value)`, in logical order.
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0x21u8, 0x07];
    /// let mut view = dlspan::PackedMdspanMut::<Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// view.update(|x| Float4E2m1fn::from_f32(x.to_f32() * 2.0)); // 6.0 · 2 saturates to 6.0
    /// assert_eq!(view.to_vec().iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [1.0, 2.0, 6.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn update(&mut self, mut f: impl FnMut(T) -> T) {
        let bits = T::DTYPE.bits as usize;
        let mut cursor = Cursor::<u8, R>::new(self.base, &self.map);
        while let Some(offset) = cursor.next_offset() {
            // SAFETY: the offsets of in-bounds indices (non-negative), each visited once (a unique
            // mapping), in bytes valid for reads and writes, reached only through `self`.
            let old = unsafe { read_bits(self.base, self.start_bit, offset as usize, bits) };
            let new = to_bits(f(from_bits(old)));
            // SAFETY: as above.
            unsafe { write_bits(self.base, self.start_bit, offset as usize, bits, new) };
        }
    }

    /// Writes `value` everywhere.
    ///
    /// ```
    /// use dlspan::dtype::Float6E2m3fn;
    /// let mut bytes = [0u8; 3];
    /// let mut view = dlspan::PackedMdspanMut::<Float6E2m3fn, 1>::from_bytes(&mut bytes, [4])?;
    /// view.fill(Float6E2m3fn::from_f32(1.0)); // 0b001000, four times
    /// assert_eq!(bytes, [0x08, 0x82, 0x20]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn fill(&mut self, value: T) {
        self.update(|_| value);
    }
}
