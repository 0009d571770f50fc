//! Constructors: raw parts, slices (compact, strided, any mapping, relaxed), and arrays of static
//! length (flat or nested).

use super::{Mdspan, MdspanMut};
use crate::error::DlpackError;
use crate::index::{Extents, Layout, LayoutRight, LayoutStrideRelaxed, Mapping, NestedArray};
use crate::space::{Host, MemorySpace};
use core::mem::size_of;
use core::ptr::NonNull;
use core::slice::{from_raw_parts, from_raw_parts_mut};

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
        unsafe { Self::from_parts_unchecked(ptr, mapping, S::origin(ordinal)) }
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
        Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, S::origin(ordinal)) })
    }
}

/// Checks that `mapping` fits in a slice of `len` elements.
fn fits_slice<const R: usize, E: Extents<R>, L: Layout>(
    mapping: &Mapping<R, E, L>,
    len: usize,
) -> Result<(), DlpackError> {
    let required = mapping.required_span_size();
    if required > len { Err(DlpackError::TooFewElements { required, found: len }) } else { Ok(()) }
}

/// Generates the slice constructors of one view type. `$mut_kw` is `"mut "` for the mutable view
/// and `""` for the shared one: the examples spell `let mut data` and `&mut data` with it.
macro_rules! slice_constructors {
    ($view:ident, $slice:ty, $array:ty, $nested:ty, $from_raw_parts:path, $unique:expr, $mut_kw:literal) => {
        impl<'a, T, const R: usize, E: Extents<R>, L: Layout> $view<'a, T, R, E, L, Host> {
            /// A view of the compact layout of `extents` over a slice of exactly that many elements
            /// (row-major, or column-major for `LayoutLeft`).
            ///
            /// # Errors
            ///
            /// [`DlpackError::LengthMismatch`] when the slice length differs from the number of
            /// elements ([rule V1](crate::rules#v1)); [`DlpackError::ExtentMismatch`] against static
            /// extents; [`DlpackError::SpanOverflow`].
            ///
            /// ```
            #[doc = concat!("use dlspan::Host", stringify!($view), ";")]
            #[doc = concat!("let ", $mut_kw, "data = [0, 1, 2, 3, 4, 5];")]
            #[doc = concat!("let view = Host", stringify!($view), "::<i32, 2>::from_slice(&", $mut_kw, "data, [2, 3])?;")]
            /// assert_eq!(view[[1, 0]], 3);
            #[doc = concat!("let longer = Host", stringify!($view), "::<i32, 2>::from_slice(&", $mut_kw, "data, [2, 2]);")]
            /// assert!(matches!(longer, Err(dlspan::DlpackError::LengthMismatch { expected: 4, found: 6 })));
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn from_slice(data: $slice, extents: [usize; R]) -> Result<Self, DlpackError> {
                let mapping = Mapping::compact(extents)?;
                if mapping.size() != data.len() {
                    return Err(DlpackError::LengthMismatch { expected: mapping.size(), found: data.len() });
                }
                Self::from_slice_mapping(data, mapping)
            }

            /// A view of `extents` and `strides` (in elements) over a slice that holds every element
            /// they reach; the first element is `data[0]`.
            ///
            /// # Errors
            ///
            /// The layout's stride rules (as [`Mapping::from_strides`]);
            /// [`DlpackError::TooFewElements`] ([rule V2](crate::rules#v2)); for mutable views
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
            /// [`DlpackError::TooFewElements`] ([rule V2](crate::rules#v2)); for mutable views
            /// [`DlpackError::OverlappingStrides`].
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

            /// A view of an array whose length the static extents fix (in the view's layout).
            ///
            /// A length that differs from the product of the extents is a compile error, raised when
            /// the compiler generates code (`cargo build`, `cargo test`), not by `cargo check`: stable
            /// Rust cannot state "`N` equals the product of the extents" as a trait bound, so it is a
            /// constant evaluated per instantiation. The error names the extents and both lengths,
            /// and its last note points at the call. For a check that `cargo check` sees, give the
            /// elements as a nested array to [`from_nested`](Self::from_nested).
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
                    if !matches!(E::STATIC_SIZE, Some(n) if n == N) {
                        panic!("{}", array_length_message(N, &E::STATIC).as_str());
                    }
                };
                let extents = E::STATIC.map(|e| e.unwrap_or(0));
                match Self::from_slice(data, extents) {
                    Ok(view) => view,
                    Err(err) => panic!("{err}"),
                }
            }
        }

        impl<'a, T, const R: usize, E: NestedArray<R>> $view<'a, T, R, E, LayoutRight, Host> {
            /// A row-major view of a nested array whose shape the static extents fix:
            /// `[[T; 3]; 2]` for `mdspan!(T; 2, 3)` (see [`NestedArray`]). Element `[i, j]` is
            /// `data[i][j]`. A wrong shape is a type error, which `cargo check` reports at the call.
            ///
            /// # Panics
            ///
            /// Never for element types with a size; for zero-sized `T`, if the shape holds more
            /// than `isize::MAX` elements.
            ///
            /// ```
            #[doc = concat!("let ", $mut_kw, "rows = [[1, 2, 3], [4, 5, 6]];")]
            #[doc = concat!("let view = <dlspan::mdspan!(", $mut_kw, "i32; 2, 3)>::from_nested(&", $mut_kw, "rows);")]
            /// assert_eq!((view.extents(), view[[1, 0]]), ([2, 3], 4));
            /// ```
            #[inline]
            pub fn from_nested(data: $nested) -> Self {
                let len = const {
                    match E::STATIC_SIZE {
                        Some(len) if len.checked_mul(size_of::<T>()).is_some() => {
                            assert!(len * size_of::<T>() == size_of::<E::Array<T>>());
                            len
                        }
                        _ => panic!("from_nested: the nested array holds more than usize::MAX elements"),
                    }
                };
                let extents = E::STATIC.map(|e| e.unwrap_or(0));
                let ptr = NonNull::from(data).cast::<T>();
                // SAFETY: `E::Array<T>` is the nested array `[[T; B]; A]` of the extents (the trait is
                // sealed through `Extents`): `len` elements of `T` in row-major order, contiguous and
                // without padding (asserted above), aligned for `T`; borrowed as `data` is for `'a`.
                let flat = unsafe { $from_raw_parts(ptr.as_ptr(), len) };
                match Self::from_slice(flat, extents) {
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
            /// [`DlpackError::TooFewElements`]; [`DlpackError::SpanOverflow`]; for mutable views
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

slice_constructors!(Mdspan, &'a [T], &'a [T; N], &'a E::Array<T>, from_raw_parts, false, "");
slice_constructors!(MdspanMut, &'a mut [T], &'a mut [T; N], &'a mut E::Array<T>, from_raw_parts_mut, true, "mut ");

/// A message composed at compile time: const panics print `&str` arguments, not numbers.
struct ConstMessage {
    bytes: [u8; 256],
    len: usize,
}

impl ConstMessage {
    const fn new() -> Self {
        Self { bytes: [0; 256], len: 0 }
    }

    const fn text(mut self, text: &str) -> Self {
        let text = text.as_bytes();
        let mut i = 0;
        while i < text.len() && self.len < self.bytes.len() {
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn number(mut self, mut value: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (value % 10) as u8;
            value /= 10;
            count += 1;
            if value == 0 {
                break;
            }
        }
        while count > 0 && self.len < self.bytes.len() {
            count -= 1;
            self.bytes[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    const fn as_str(&self) -> &str {
        // Only ASCII is ever written (the texts below, digits), so the bytes are UTF-8.
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "from_array: the array length differs from the view type's static extents",
        }
    }
}

/// Why `from_array` refuses an array of `len` elements for a view type whose extents are `axes`.
const fn array_length_message(len: usize, axes: &[Option<usize>]) -> ConstMessage {
    let mut message = ConstMessage::new().text("from_array: the view type's extents are [");
    let mut all_static = true;
    let mut size: Option<usize> = Some(1);
    let mut axis = 0;
    while axis < axes.len() {
        if axis > 0 {
            message = message.text(", ");
        }
        message = match axes[axis] {
            Some(extent) => {
                size = match size {
                    Some(size) => size.checked_mul(extent),
                    None => None,
                };
                message.number(extent)
            }
            None => {
                all_static = false;
                message.text("dyn")
            }
        };
        axis += 1;
    }
    message = message.text("]");
    match (all_static, size) {
        (false, _) => message.text(": from_array needs every extent static"),
        (true, Some(size)) => {
            message.text(", which hold ").number(size).text(" elements, but the array has ").number(len)
        }
        (true, None) => message.text(", which hold more than usize::MAX elements"),
    }
}
