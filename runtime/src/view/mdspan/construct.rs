//! Constructors: raw parts, slices (compact, strided, any mapping, relaxed) and arrays of static
//! length.

use super::{Mdspan, MdspanMut};
use crate::error::DlpackError;
use crate::space::{Host, MemorySpace};
use crate::view::extents::Extents;
use crate::view::layout::{Layout, LayoutStrideRelaxed};
use crate::view::mapping::Mapping;
use core::ptr::NonNull;

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
    /// A view from a raw pointer and a mapping (the `unsafe` twin of [`from_slice`](Self::from_slice)).
    ///
    /// # Safety
    ///
    /// - `ptr` is non-null and aligned for `T`;
    /// - every element offset `mapping` reaches, `[lowest, required_span_size)`, addresses a `T`
    ///   valid for reads for `'a` in `S`'s memory (host memory for [`Host`], device memory for
    ///   [`Device`](crate::Device), managed memory for [`Managed`](crate::Managed)), and no one
    ///   writes those elements during `'a`;
    /// - `mapping.required_span_size() * size_of::<T>()` fits `isize`, and the range does not
    ///   wrap around the address space;
    /// - for [`Device`](crate::Device), `ordinal` is the CUDA device that owns the memory.
    ///
    /// ```
    /// use dlspan::{Mdspan, Mapping, Dims, LayoutRight, Host};
    /// let data = [1u16, 2, 3, 4];
    /// let map = Mapping::<2, Dims<2>, LayoutRight>::compact([2, 2]).unwrap();
    /// // SAFETY: `data` holds the 4 elements the mapping reaches and outlives the view.
    /// let m: Mdspan<'_, u16, 2> = unsafe { Mdspan::from_raw_parts(data.as_ptr(), map, ()) };
    /// assert_eq!(m[[1, 0]], 3);
    /// ```
    #[inline]
    pub unsafe fn from_raw_parts(ptr: *const T, mapping: Mapping<R, E, L>, ordinal: S::Ordinal) -> Self {
        debug_assert!(!ptr.is_null() && ptr.is_aligned());
        // SAFETY: the caller guarantees `ptr` is non-null.
        let ptr = unsafe { NonNull::new_unchecked(ptr.cast_mut()) };
        // SAFETY: the caller guarantees the struct invariants.
        unsafe { Self::from_parts_unchecked(ptr, mapping, ordinal) }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, T, R, E, L, S> {
    /// A mutable view from a raw pointer and a mapping (the `unsafe` twin of
    /// [`from_slice`](Self::from_slice)).
    ///
    /// # Errors
    ///
    /// [`DlpackError::OverlappingStrides`] when the mapping is not unique.
    ///
    /// # Safety
    ///
    /// As for [`Mdspan::from_raw_parts`], with the elements valid for reads *and writes* for `'a`
    /// and not accessed through any other path during `'a`.
    ///
    /// ```
    /// use dlspan::{MdspanMut, Mapping, Dims, LayoutRight};
    /// let mut data = [0u16; 4];
    /// let map = Mapping::<2, Dims<2>, LayoutRight>::compact([2, 2]).unwrap();
    /// // SAFETY: `data` holds the 4 elements, is borrowed mutably by nothing else, outlives the view.
    /// let mut m: MdspanMut<'_, u16, 2> = unsafe { MdspanMut::from_raw_parts(data.as_mut_ptr(), map, ()) }.unwrap();
    /// m[[1, 1]] = 7;
    /// assert_eq!(data[3], 7);
    /// ```
    #[inline]
    pub unsafe fn from_raw_parts(
        ptr: *mut T,
        mapping: Mapping<R, E, L>,
        ordinal: S::Ordinal,
    ) -> Result<Self, DlpackError> {
        if !mapping.is_unique() {
            return Err(DlpackError::OverlappingStrides);
        }
        debug_assert!(!ptr.is_null() && ptr.is_aligned());
        // SAFETY: the caller guarantees `ptr` is non-null.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        // SAFETY: the caller guarantees the invariants; uniqueness was checked above.
        Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, ordinal) })
    }
}

/// Checks that `mapping` fits in a slice of `len` elements.
fn fits_slice<const R: usize, E: Extents<R>, L: Layout>(
    mapping: &Mapping<R, E, L>,
    len: usize,
) -> Result<(), DlpackError> {
    let required = mapping.required_span_size();
    if required > len { Err(DlpackError::SliceTooShort { required, len }) } else { Ok(()) }
}

/// Generates the slice constructors of one view type. `$mut_kw` is `"mut "` for the mutable view
/// and `""` for the shared one: the examples spell `let mut data` and `&mut data` with it.
macro_rules! slice_constructors {
    ($view:ident, $slice:ty, $array:ty, $unique:expr, $mut_kw:literal) => {
        impl<'a, T, const R: usize, E: Extents<R>, L: Layout> $view<'a, T, R, E, L, Host> {
            /// A view of the compact layout of `extents` over a slice of exactly that many elements
            /// (row-major, or column-major for `LayoutLeft`).
            ///
            /// # Errors
            ///
            /// [`DlpackError::SliceTooShort`] when the slice length differs from the number of
            /// elements; [`DlpackError::ExtentMismatch`] against static extents;
            /// [`DlpackError::SpanOverflow`].
            ///
            /// ```
            #[doc = concat!("use dlspan::Host", stringify!($view), ";")]
            #[doc = concat!("let ", $mut_kw, "data = [0, 1, 2, 3, 4, 5];")]
            #[doc = concat!("let view = Host", stringify!($view), "::<i32, 2>::from_slice(&", $mut_kw, "data, [2, 3])?;")]
            /// assert_eq!(view[[1, 0]], 3);
            #[doc = concat!("assert!(Host", stringify!($view), "::<i32, 2>::from_slice(&", $mut_kw, "data, [2, 2]).is_err());")]
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn from_slice(data: $slice, extents: [usize; R]) -> Result<Self, DlpackError> {
                let mapping = Mapping::compact(extents)?;
                if mapping.size() != data.len() {
                    return Err(DlpackError::SliceTooShort { required: mapping.size(), len: data.len() });
                }
                Self::from_slice_mapping(data, mapping)
            }

            /// A view of `extents` and `strides` (in elements) over a slice that holds every element
            /// they reach; the first element is `data[0]`.
            ///
            /// # Errors
            ///
            /// The layout's stride rules (as [`Mapping::from_strides`]);
            /// [`DlpackError::SliceTooShort`]; for mutable views
            /// [`DlpackError::OverlappingStrides`].
            ///
            /// ```
            #[doc = concat!("use dlspan::{Host", stringify!($view), ", LayoutStride};")]
            #[doc = concat!("let ", $mut_kw, "data = [1, 2, 3, 0, 4, 5, 6, 0]; // rows padded to 4")]
            #[doc = concat!(
                "let view = Host", stringify!($view),
                "::<i32, 2, LayoutStride>::from_slice_strided(&", $mut_kw, "data, [2, 3], [4, 1])?;"
            )]
            /// assert_eq!(view.to_vec(), [1, 2, 3, 4, 5, 6]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn from_slice_strided(data: $slice, extents: [usize; R], strides: [isize; R]) -> Result<Self, DlpackError> {
                let mapping = Mapping::from_strides(extents, strides)?;
                Self::from_slice_mapping(data, mapping)
            }

            /// A view of a mapping over a slice that holds every element it reaches.
            ///
            /// # Errors
            ///
            /// [`DlpackError::SliceTooShort`]; for mutable views [`DlpackError::OverlappingStrides`].
            ///
            /// ```
            #[doc = concat!("use dlspan::{Dims, Host", stringify!($view), ", LayoutLeft, Mapping};")]
            #[doc = concat!("let ", $mut_kw, "data = [1, 4, 2, 5, 3, 6];")]
            /// let map = Mapping::<2, Dims<2>, LayoutLeft>::compact([2, 3])?;
            #[doc = concat!("let view = Host", stringify!($view), "::<i32, 2, LayoutLeft>::from_slice_mapping(&", $mut_kw, "data, map)?;")]
            /// assert_eq!(view[[1, 2]], 6);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            pub fn from_slice_mapping(data: $slice, mapping: Mapping<R, E, L>) -> Result<Self, DlpackError> {
                fits_slice(&mapping, data.len())?;
                if $unique && !mapping.is_unique() {
                    return Err(DlpackError::OverlappingStrides);
                }
                let ptr = NonNull::from(data).cast::<T>();
                // SAFETY: the slice is valid for `'a` (and, for the mutable view, borrowed uniquely),
                // holds every element the mapping reaches (`fits_slice`), and as a slice its bytes fit
                // `isize` without wrapping; its pointer is non-null and aligned; the mapping is unique
                // for mutable views.
                Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, ()) })
            }

            /// A view of an array whose length the static extents fix: a mismatch is a compile error.
            ///
            /// # Panics
            ///
            /// Never for element types with a size; for zero-sized `T`, if `N` exceeds `isize::MAX`.
            ///
            /// ```
            #[doc = concat!("let ", $mut_kw, "data = [0, 1, 2, 3, 4, 5];")]
            #[doc = concat!("let view = <dlspan::mdspan!(", $mut_kw, "i32; 2, 3)>::from_array(&", $mut_kw, "data);")]
            /// assert_eq!((view.extents(), view[[1, 2]]), ([2, 3], 5));
            /// ```
            #[inline]
            pub fn from_array<const N: usize>(data: $array) -> Self {
                const {
                    assert!(
                        matches!(E::STATIC_SIZE, Some(n) if n == N),
                        "from_array: the array length must equal the product of the view type's static extents (and every extent must be static)"
                    )
                };
                let extents = E::STATIC.map(|e| e.unwrap_or(0));
                match Self::from_slice(data, extents) {
                    Ok(view) => view,
                    Err(err) => panic!("{err}"),
                }
            }
        }

        impl<'a, T, const R: usize, E: Extents<R>> $view<'a, T, R, E, LayoutStrideRelaxed, Host> {
            /// A relaxed view over a slice: any strides (zero, negative) and the element offset of
            /// index 0 from `data[0]`.
            ///
            /// # Errors
            ///
            /// [`DlpackError::NegativeReach`] when an index reaches below `data[0]`;
            /// [`DlpackError::SliceTooShort`]; [`DlpackError::SpanOverflow`]; for mutable views
            /// [`DlpackError::OverlappingStrides`].
            ///
            /// ```
            #[doc = concat!("use dlspan::{Host", stringify!($view), ", LayoutStrideRelaxed};")]
            #[doc = concat!("let ", $mut_kw, "data = [1, 2, 3, 4, 5];")]
            #[doc = concat!(
                "let reversed = Host", stringify!($view),
                "::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&", $mut_kw, "data, [5], [-1], 4)?;"
            )]
            /// assert_eq!(reversed.to_vec(), [5, 4, 3, 2, 1]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            pub fn from_slice_relaxed(
                data: $slice,
                extents: [usize; R],
                strides: [isize; R],
                offset: usize,
            ) -> Result<Self, DlpackError> {
                let mapping = Mapping::from_parts(extents, strides, offset)?;
                Self::from_slice_mapping(data, mapping)
            }
        }
    };
}

slice_constructors!(Mdspan, &'a [T], &'a [T; N], false, "");
slice_constructors!(MdspanMut, &'a mut [T], &'a mut [T; N], true, "mut ");
