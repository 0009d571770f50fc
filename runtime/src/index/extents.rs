//! Extents: which axes of a view type have a static (compile-time) length.
//!
//! A view always stores its extents at run time; the extents *type* says which of them are fixed by
//! the type. [`Dims<R>`] is all-dynamic (CCCL's `dims<Rank>`); tuples of [`Static<N>`] and [`Dyn`]
//! (what `mdspan!` spells) fix some axes. A view with static extents is only ever built from data
//! whose extents match: conversions check it at run time, [`Mdspan::from_nested`] in the type
//! system (`cargo check`), and [`Mdspan::from_array`] when the code is generated (`cargo build`).
//! `extent(i)` of a static axis is a constant the compiler can fold.
//!
//! [`Mdspan::from_array`]: crate::Mdspan::from_array
//! [`Mdspan::from_nested`]: crate::Mdspan::from_nested
//!
//! ```
//! use dlspan::{Dims, Dyn, Extents, Static};
//! assert_eq!(<(Static<2>, Dyn, Static<4>) as Extents<3>>::STATIC, [Some(2), None, Some(4)]);
//! assert_eq!(<(Static<2>, Static<4>) as Extents<2>>::STATIC_SIZE, Some(8));
//! assert_eq!(<Dims<3> as Extents<3>>::STATIC_SIZE, None);
//! ```

use crate::error::DlpackError;
use core::fmt::Debug;

mod sealed {
    pub trait Sealed {}
}

/// The extents type of a view of rank `R`: which axes are static, and their lengths.
///
/// ```
/// use dlspan::{Dyn, Extents, Static};
/// type E = (Static<4>, Dyn);
/// assert_eq!(<E as Extents<2>>::STATIC, [Some(4), None]);
/// assert_eq!((<E as Extents<2>>::RANK_DYNAMIC, <E as Extents<2>>::STATIC_SIZE), (1, None));
/// ```
pub trait Extents<const R: usize>: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {
    /// For each axis, `Some(n)` when the type fixes its length to `n`, `None` when it is dynamic.
    const STATIC: [Option<usize>; R];

    /// The number of elements when every axis is static (`None` otherwise, or on overflow).
    const STATIC_SIZE: Option<usize> = static_size(&Self::STATIC);

    /// The number of dynamic axes.
    const RANK_DYNAMIC: usize = rank_dynamic(&Self::STATIC);
}

const fn static_size(axes: &[Option<usize>]) -> Option<usize> {
    let mut size: usize = 1;
    let mut i = 0;
    while i < axes.len() {
        match axes[i] {
            Some(n) => match size.checked_mul(n) {
                Some(s) => size = s,
                None => return None,
            },
            None => return None,
        }
        i += 1;
    }
    Some(size)
}

const fn rank_dynamic(axes: &[Option<usize>]) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < axes.len() {
        if axes[i].is_none() {
            count += 1;
        }
        i += 1;
    }
    count
}

/// Checks run-time extents against a type's static extents. Free for all-dynamic types: the
/// early return is decided at compile time (iterating `E::STATIC` by value instead leaves a loop
/// of stack copies in the import path that LLVM does not remove).
#[inline(always)]
pub(crate) fn check_static<const R: usize, E: Extents<R>>(extents: &[usize; R]) -> Result<(), DlpackError> {
    if E::RANK_DYNAMIC == R {
        return Ok(());
    }
    for (axis, &found) in extents.iter().enumerate() {
        if let Some(expected) = E::STATIC[axis]
            && found != expected
        {
            return Err(DlpackError::ExtentMismatch { axis, expected, found });
        }
    }
    Ok(())
}

/// All `R` extents dynamic: the extents type of [`HostMdspan`](crate::HostMdspan) and of every
/// `DLTensor` conversion.
///
/// ```
/// use dlspan::{Dims, Extents};
/// assert_eq!(<Dims<2> as Extents<2>>::RANK_DYNAMIC, 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dims<const R: usize>;

impl<const R: usize> sealed::Sealed for Dims<R> {}
impl<const R: usize> Extents<R> for Dims<R> {
    const STATIC: [Option<usize>; R] = [None; R];
}

/// One axis of a tuple extents type: [`Static<N>`] or [`Dyn`].
///
/// ```
/// use dlspan::{Dim, Dyn, Static};
/// fn length<D: Dim>() -> Option<usize> {
///     D::STATIC
/// }
/// assert_eq!((length::<Static<3>>(), length::<Dyn>()), (Some(3), None));
/// ```
pub trait Dim: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {
    /// `Some(N)` for [`Static<N>`], `None` for [`Dyn`].
    const STATIC: Option<usize>;
}

/// An axis of static length `N`.
///
/// ```
/// use dlspan::{Dim, Static};
/// assert_eq!(<Static<7> as Dim>::STATIC, Some(7));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Static<const N: usize>;

/// An axis whose length is known only at run time.
///
/// ```
/// use dlspan::{Dim, Dyn};
/// assert_eq!(<Dyn as Dim>::STATIC, None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dyn;

impl<const N: usize> sealed::Sealed for Static<N> {}
impl<const N: usize> Dim for Static<N> {
    const STATIC: Option<usize> = Some(N);
}
impl sealed::Sealed for Dyn {}
impl Dim for Dyn {
    const STATIC: Option<usize> = None;
}

/// Implements `Extents<R>` for tuples of `Dim`s, and counts the supported ranks.
macro_rules! tuple_extents {
    ($( $rank:literal => ($($axis:ident),+); )*) => {$(
        impl<$($axis: Dim),+> sealed::Sealed for ($($axis,)+) {}
        impl<$($axis: Dim),+> Extents<$rank> for ($($axis,)+) {
            const STATIC: [Option<usize>; $rank] = [$($axis::STATIC),+];
        }
    )*};
}

tuple_extents! {
    1 => (A);
    2 => (A, B);
    3 => (A, B, C);
    4 => (A, B, C, D);
    5 => (A, B, C, D, E);
    6 => (A, B, C, D, E, F);
    7 => (A, B, C, D, E, F, G);
    8 => (A, B, C, D, E, F, G, H);
    9 => (A, B, C, D, E, F, G, H, I);
    10 => (A, B, C, D, E, F, G, H, I, J);
    11 => (A, B, C, D, E, F, G, H, I, J, K);
    12 => (A, B, C, D, E, F, G, H, I, J, K, L);
}

/// An all-static extents type's nested array: `(Static<A>, Static<B>)` is `[[T; B]; A]` (axis 0
/// outermost), the row-major memory of `A·B` elements with the shape in its type. Views take it in
/// [`from_nested`](crate::Mdspan::from_nested), where a wrong shape is a type error that
/// `cargo check` reports.
///
/// ```
/// use dlspan::{Static, view::NestedArray};
/// type Nested = <(Static<2>, Static<3>) as NestedArray<2>>::Array<f32>;
/// let rows: Nested = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
/// assert_eq!(size_of::<Nested>(), 6 * size_of::<f32>());
/// # let _ = rows;
/// ```
pub trait NestedArray<const R: usize>: Extents<R> {
    /// The nested array of `T` whose shape is these extents.
    type Array<T>;
}

/// The nested array type `[[T; B]; A]` of the axes `A B`, outermost first.
macro_rules! nested_array {
    ($t:ty;) => { $t };
    ($t:ty; $first:ident $($rest:ident)*) => { [nested_array!($t; $($rest)*); $first] };
}

/// Implements `NestedArray` for the all-static tuples of each rank.
macro_rules! static_tuples {
    ($( $rank:literal => ($($axis:ident),+); )*) => {$(
        impl<$(const $axis: usize),+> NestedArray<$rank> for ($(Static<$axis>,)+) {
            type Array<T> = nested_array!(T; $($axis)+);
        }
    )*};
}

static_tuples! {
    1 => (A);
    2 => (A, B);
    3 => (A, B, C);
    4 => (A, B, C, D);
    5 => (A, B, C, D, E);
    6 => (A, B, C, D, E, F);
    7 => (A, B, C, D, E, F, G);
    8 => (A, B, C, D, E, F, G, H);
    9 => (A, B, C, D, E, F, G, H, I);
    10 => (A, B, C, D, E, F, G, H, I, J);
    11 => (A, B, C, D, E, F, G, H, I, J, K);
    12 => (A, B, C, D, E, F, G, H, I, J, K, L);
}

/// The highest rank a tuple extents type (and `mdspan!` with static extents) supports; [`Dims<R>`]
/// has no limit. One of the crate's [rank limits](crate::rules#limits); the macros crate's copy of
/// it is tested against this one.
///
/// ```
/// use dlspan::view::MAX_STATIC_EXTENTS_RANK;
/// let data = [0u8];
/// let view = <dlspan::mdspan!(u8; 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)>::from_array(&data);
/// assert_eq!(view.rank(), MAX_STATIC_EXTENTS_RANK);
/// ```
pub const MAX_STATIC_EXTENTS_RANK: usize = 12;
