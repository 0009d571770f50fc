//! Rank arithmetic in types: [`Rank<R>`]` : `[`LowerRank<Q>`] holds exactly when `Q = R - 1`, so
//! methods that remove an axis (`index_axis`, `outer_iter`, `axis_iter`) name their result's rank
//! without a turbofish: stable Rust cannot write `R - 1` in a type, but it infers `Q` from the one
//! impl that matches `Rank<R>`.
//!
//! ```
//! use dlspan::HostMdspan;
//! let data: Vec<i32> = (0..6).collect();
//! let m = HostMdspan::<i32, 2>::from_slice(&data, [2, 3])?;
//! let row = m.index_axis(0, 1); // a rank-1 view, inferred
//! assert_eq!(row.to_vec(), [3, 4, 5]);
//! # Ok::<(), dlspan::DlpackError>(())
//! ```
//!
//! Generic code over the rank states the bound itself:
//!
//! ```
//! use dlspan::view::{LowerRank, Rank};
//! use dlspan::HostMdspan;
//!
//! fn first_slice<const R: usize, const Q: usize>(m: HostMdspan<'_, f32, R>) -> usize
//! where
//!     Rank<R>: LowerRank<Q>,
//! {
//!     m.index_axis(0, 0).size()
//! }
//! let data = [0.0f32; 24];
//! assert_eq!(first_slice(HostMdspan::<f32, 3>::from_slice(&data, [2, 3, 4]).unwrap()), 12);
//! ```

/// A rank as a type, for [`LowerRank`].
///
/// ```
/// use dlspan::view::{LowerRank, Rank};
/// fn lower<const R: usize, const Q: usize>(_: Rank<R>) -> usize where Rank<R>: LowerRank<Q> { Q }
/// assert_eq!(lower(Rank::<4>), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rank<const R: usize>;

/// `Rank<R>: LowerRank<Q>` holds exactly when `Q = R - 1`, for `R` from 1 to
/// [`MAX_AXIS_REMOVAL_RANK`]: the bound of every method that removes one axis of a view.
///
/// No other implementations can exist (the trait and [`Rank`] are both this crate's), so the bound
/// proves `Q + 1 == R` to the compiler and to unsafe code alike.
///
/// ```
/// use dlspan::view::{LowerRank, Rank};
/// fn check<const R: usize, const Q: usize>() where Rank<R>: LowerRank<Q> {}
/// check::<1, 0>();
/// check::<64, 63>();
/// ```
#[diagnostic::on_unimplemented(
    message = "removing one axis of a view of `{Self}` gives a view of one rank less, not of rank {Q}",
    label = "this removes one axis",
    note = "views of rank 1 to 64 have sub-views of one rank less (a rank-0 view has no axis to remove); let the compiler infer the result's rank, or write `where Rank<R>: LowerRank<Q>` in generic code"
)]
pub trait LowerRank<const Q: usize> {}

/// The highest rank of views that can remove one axis: `index_axis`, `outer_iter`, `axis_iter` and
/// their mutable forms, bounded by [`LowerRank`] (NumPy's limit on dimensions). One of the crate's
/// [rank limits](crate::rules#limits).
///
/// ```
/// assert_eq!(dlspan::view::MAX_AXIS_REMOVAL_RANK, 64);
/// ```
pub const MAX_AXIS_REMOVAL_RANK: usize = 64;

macro_rules! lower_rank {
    ($($r:literal => $q:literal),* $(,)?) => {$(
        impl LowerRank<$q> for Rank<$r> {}
    )*};
}

lower_rank! {
    1 => 0, 2 => 1, 3 => 2, 4 => 3, 5 => 4, 6 => 5, 7 => 6, 8 => 7, 9 => 8, 10 => 9, 11 => 10,
    12 => 11, 13 => 12, 14 => 13, 15 => 14, 16 => 15, 17 => 16, 18 => 17, 19 => 18, 20 => 19,
    21 => 20, 22 => 21, 23 => 22, 24 => 23, 25 => 24, 26 => 25, 27 => 26, 28 => 27, 29 => 28,
    30 => 29, 31 => 30, 32 => 31, 33 => 32, 34 => 33, 35 => 34, 36 => 35, 37 => 36, 38 => 37,
    39 => 38, 40 => 39, 41 => 40, 42 => 41, 43 => 42, 44 => 43, 45 => 44, 46 => 45, 47 => 46,
    48 => 47, 49 => 48, 50 => 49, 51 => 50, 52 => 51, 53 => 52, 54 => 53, 55 => 54, 56 => 55,
    57 => 56, 58 => 57, 59 => 58, 60 => 59, 61 => 60, 62 => 61, 63 => 62, 64 => 63,
}
