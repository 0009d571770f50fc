//! Element-wise operations in memory order: the fastest traversal of a view's memory, for
//! reductions and updates whose result does not depend on the visiting order (up to floating-point
//! rounding of reductions).
//!
//! Axes are visited from the largest stride to the smallest, and reversed axes (negative strides)
//! backwards, so memory is walked forwards; contiguous views fold over plain slices, which the
//! compiler vectorises. [`Mdspan::iter`] stays the logical-order traversal. The whole-view
//! operations `fill`, `copy_from` and `cast_from` run on them.
//!
//! ```
//! use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
//! let x: Vec<f32> = (0..6).map(|v| v as f32).collect();
//! let column_major = HostMdspan::<f32, 2, LayoutLeft>::from_slice(&x, [2, 3])?;
//! assert_eq!(column_major.fold_unordered(0.0, |sum, v| sum + v), 15.0);
//!
//! // axpy: y = 2·x + y, in the output's memory order.
//! let mut y = vec![1.0f32; 6];
//! let mut y_view = HostMdspanMut::<f32, 2, LayoutLeft>::from_slice(&mut y, [2, 3])?;
//! y_view.zip_with(&column_major, |y, &x| *y += 2.0 * x)?;
//! assert_eq!(y, [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
//! # Ok::<(), dlspan::DlpackError>(())
//! ```

use super::mdspan::{Mdspan, MdspanMut};
use super::sum::{
    Cascade, LANES, PARALLEL_SUM, pairwise_sum, pairwise_sum_strided, par_pairwise_sum, par_pairwise_sum_strided,
    short_sum,
};
use crate::dtype::{Numeric, cast};
use crate::error::DlpackError;
use crate::index::{Extents, Layout, Mapping};
use crate::space::HostAccessible;
use core::mem::size_of;
use core::ops::Add;
use core::ptr::NonNull;

/// A traversal plan: axes in memory order of the primary view, with each view's strides (signs
/// flipped on axes the primary view walks backwards) and start offsets.
struct Plan<const R: usize, const N: usize> {
    extents: [usize; R],
    strides: [[isize; R]; N],
    starts: [isize; N],
}

impl<const R: usize, const N: usize> Plan<R, N> {
    /// Orders the axes by the primary view's (index 0) stride magnitude, largest first, and turns
    /// its reversed axes around. Axes of extent 1 go outermost with stride 0: their stride reaches
    /// nothing, so it may be anything a validated mapping allows (up to `isize::MIN`), and an
    /// innermost unit axis would cut the runs to one element.
    fn new(extents: [usize; R], strides: [[isize; R]; N], offsets: [usize; N]) -> Self {
        let strides: [[isize; R]; N] =
            strides.map(|view| core::array::from_fn(|axis| if extents[axis] > 1 { view[axis] } else { 0 }));
        let mut order: [usize; R] = core::array::from_fn(|axis| axis);
        order.sort_by_key(|&axis| {
            core::cmp::Reverse(if extents[axis] > 1 { strides[0][axis].unsigned_abs() } else { usize::MAX })
        });
        let mut starts = offsets.map(|o| o as isize);
        let mut plan_strides = [[0isize; R]; N];
        let mut plan_extents = [0usize; R];
        let empty = extents.contains(&0);
        for (slot, &axis) in order.iter().enumerate() {
            plan_extents[slot] = extents[axis];
            let reverse = strides[0][axis] < 0;
            for view in 0..N {
                let stride = strides[view][axis];
                if reverse && !empty {
                    // Start at the last index of this axis and walk back: same elements, forwards.
                    // In range: the last index is reached by the validated mapping.
                    starts[view] += (extents[axis] as isize - 1) * stride;
                    plan_strides[view][slot] = -stride;
                } else {
                    plan_strides[view][slot] = stride;
                }
            }
        }
        Self { extents: plan_extents, strides: plan_strides, starts }
    }

    /// Folds `f` over runs of the innermost axis: the element offsets of each run's first index in
    /// every view, the run's length, and whether every view's innermost stride is 1 (so the run is a
    /// slice in each).
    #[inline(always)]
    fn fold<B>(&self, init: B, mut f: impl FnMut(B, [isize; N], usize, bool) -> B) -> B {
        if self.extents.contains(&0) {
            return init;
        }
        if R == 0 {
            return f(init, self.starts, 1, true);
        }
        let last = R - 1;
        let run_length = self.extents[last];
        let unit = self.strides.iter().all(|s| s[last] == 1);
        let mut index = [0usize; R];
        let mut offsets = self.starts;
        let mut acc = init;
        loop {
            acc = f(acc, offsets, run_length, unit);
            // Advance the outer axes (odometer), innermost-but-one first.
            let mut axis = last;
            loop {
                if axis == 0 {
                    return acc;
                }
                axis -= 1;
                index[axis] += 1;
                // Wrapping: one step past an axis' last index may leave the range (and come back
                // below); offsets are only used while every index is in bounds.
                for (offset, strides) in offsets.iter_mut().zip(&self.strides) {
                    *offset = offset.wrapping_add(strides[axis]);
                }
                if index[axis] < self.extents[axis] {
                    break;
                }
                for (offset, strides) in offsets.iter_mut().zip(&self.strides) {
                    *offset = offset.wrapping_sub((self.extents[axis] as isize).wrapping_mul(strides[axis]));
                }
                index[axis] = 0;
            }
        }
    }

    /// The innermost stride of view `view` (0 for rank 0).
    fn inner_stride(&self, view: usize) -> isize {
        if R == 0 { 0 } else { self.strides[view][R - 1] }
    }
}

/// The first byte, in memory order, that is neither 0 nor 1 among the bytes of the elements that
/// `mapping` reaches from `base`, or `None` when each is 0 or 1: the check of elements made of
/// `bool`s ([rule I18](crate::rules#i18)). Only reached elements are read (gaps between strided
/// elements may hold anything), an axis of stride 0 once, and a contiguous view as one run of
/// bytes, eight kilobytes at a time OR-ed together (vectorised), searched only when a run holds
/// another byte.
///
/// # Safety
///
/// `base` and `mapping` are a validated view's (rules I7 to I15): every element the mapping reaches
/// lies in memory readable for the call, and its bytes are initialised.
#[inline(never)]
pub(crate) unsafe fn first_non_boolean_byte<T, const R: usize, E: Extents<R>, L: Layout>(
    base: NonNull<T>,
    mapping: &Mapping<R, E, L>,
) -> Option<u8> {
    if mapping.size() == 0 {
        return None;
    }
    let size = size_of::<T>() as isize;
    let bytes = base.as_ptr().cast::<u8>().cast_const();
    if mapping.is_contiguous() {
        let (low, high) = mapping.bounds();
        // SAFETY: a contiguous mapping reaches every element from `low` to `high`, each readable
        // (caller); their byte count fits isize (rule I14).
        let run = unsafe {
            core::slice::from_raw_parts(bytes.wrapping_add(low * size as usize), (high - low) * size as usize)
        };
        return first_in_run(run);
    }
    // The elements reached are those of the mapping with every stride-0 axis cut to one index.
    let strides = mapping.strides();
    let extents = mapping.extents();
    let extents = core::array::from_fn(|axis| if strides[axis] == 0 { 1 } else { extents[axis] });
    let plan = Plan::<R, 1>::new(extents, [strides], [mapping.offset()]);
    let stride = plan.inner_stride(0);
    plan.fold(None, |found, [start], len, unit| {
        if found.is_some() {
            return found;
        }
        if unit {
            // SAFETY: a run of `len` consecutive reached elements (caller), `len · size` bytes.
            let run = unsafe {
                core::slice::from_raw_parts(bytes.wrapping_offset(start.wrapping_mul(size)), len * size as usize)
            };
            return first_in_run(run);
        }
        // A strided run: its elements' bytes OR-ed together without a branch per element, and
        // searched element by element only when the OR exceeds 1.
        let element = |k: usize| {
            let first = bytes.wrapping_offset(start.wrapping_add((k as isize).wrapping_mul(stride)).wrapping_mul(size));
            // SAFETY: a reached element (caller), `size` bytes.
            unsafe { core::slice::from_raw_parts(first, size as usize) }
        };
        let any = (0..len).fold(0u8, |any, k| element(k).iter().fold(any, |any, &byte| any | byte));
        if any > 1 { (0..len).find_map(|k| first_in_run(element(k))) } else { None }
    })
}

/// The first byte of `run` that is neither 0 nor 1: chunks are OR-ed together (a reduction the
/// compiler vectorises), and only a chunk whose OR exceeds 1 is searched.
#[inline]
fn first_in_run(run: &[u8]) -> Option<u8> {
    for chunk in run.chunks(8192) {
        if chunk.iter().fold(0u8, |any, &byte| any | byte) > 1 {
            return chunk.iter().copied().find(|&byte| byte > 1);
        }
    }
    None
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> Mdspan<'a, T, R, E, L, S> {
    /// Folds every element in memory order (not logical order): the fastest traversal, for
    /// reductions whose result does not depend on the order.
    ///
    /// ```
    /// use dlspan::{HostMdspan, LayoutStride};
    /// let data: Vec<u64> = (0..12).collect();
    /// let transposed = HostMdspan::<u64, 2, LayoutStride>::from_slice_strided(&data, [4, 3], [1, 4])?;
    /// assert_eq!(transposed.fold_unordered(0, |sum, &v| sum + v), 66);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn fold_unordered<B>(&self, init: B, mut f: impl FnMut(B, &'a T) -> B) -> B {
        if let Some(slice) = self.as_slice() {
            return slice.iter().fold(init, f);
        }
        let base = self.data_handle();
        let plan = Plan::<R, 1>::new(self.extents(), [self.strides()], [self.offset()]);
        let stride = plan.inner_stride(0);
        plan.fold(init, |mut acc, [start], len, unit| {
            if unit {
                let first = base.wrapping_offset(start);
                // SAFETY: a run of `len` consecutive in-bounds elements of the view, valid for reads
                // for `'a` (struct invariant).
                let run = unsafe { core::slice::from_raw_parts(first, len) };
                run.iter().fold(acc, &mut f)
            } else {
                let mut offset = start;
                for _ in 0..len {
                    // SAFETY: an in-bounds element of the view, valid for reads for `'a`.
                    acc = f(acc, unsafe { &*base.wrapping_offset(offset) });
                    offset = offset.wrapping_add(stride);
                }
                acc
            }
        })
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> Mdspan<'a, T, R, E, L, S> {
    /// The sum of every element mapped into the accumulator type `A` by `map`, with `add` as the
    /// addition and `identity` as its zero: pairwise summation in memory order, whose rounding error
    /// grows with the logarithm of the size, not the size. [`sum`](Self::sum) is this with `A = T`;
    /// a wider accumulator, or a wrapping addition, is this with other arguments.
    ///
    /// Each run of the innermost axis is summed as NumPy sums a run: halved (at a multiple of eight)
    /// down to blocks of at most 128 values, each summed with eight partial sums (vector additions)
    /// and those combined pairwise; the sums of the runs are combined pairwise in turn. A contiguous
    /// view, and a one-axis strided one, thus give NumPy's `np.sum` bit for bit for the same
    /// accumulator type.
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let data: Vec<f32> = (0..1_000_000).map(|v| v as f32).collect();
    /// let view = HostMdspan::<f32, 1>::from_slice(&data, [data.len()])?;
    /// // In f64: exact for these values (the sum, 499999500000, is below 2^53).
    /// assert_eq!(view.sum_with(0.0f64, |&v| f64::from(v), |a, b| a + b), 499_999_500_000.0);
    /// // Wrapping 8-bit integers, as NumPy's `uint8` additions wrap.
    /// let bytes = [200u8, 100, 7];
    /// let bytes = HostMdspan::<u8, 1>::from_slice(&bytes, [3])?;
    /// assert_eq!(bytes.sum_with(0u8, |&v| v, u8::wrapping_add), 51);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn sum_with<A: Copy>(&self, identity: A, map: impl Fn(&T) -> A, add: impl Fn(A, A) -> A) -> A {
        if let Some(slice) = self.as_slice() {
            // A short slice (a row of a few values, summed once per row): inline, with no call.
            if slice.len() < 2 * LANES {
                return add(identity, short_sum(slice, identity, &map, &add));
            }
            return add(identity, pairwise_sum(slice, identity, &map, &add));
        }
        self.sum_runs(identity, &map, &add)
    }

    /// [`sum_with`](Self::sum_with) on the worker threads of dlspan's CPU kernels
    /// ([`kernel::num_threads`](crate::kernel::num_threads), rule [K12](crate::rules#k12)): a
    /// contiguous view, and each long run of a strided one, has the halves of its pairwise sum
    /// summed on different threads, down to pieces of 2¹⁶ values. The tree of additions is
    /// [`sum_with`](Self::sum_with)'s, so the result is its bits for every number of threads (for
    /// NumPy's `np.sum` too); views of fewer than 2¹⁷ elements, and the many short runs of a view
    /// whose innermost axis is short, are summed on the caller's thread. A call from inside the
    /// pool (a kernel's body, a nested sum) queues its halves on the same pool: no thread is added.
    ///
    /// ```
    /// use dlspan::{HostMdspan, LayoutStride};
    /// let data: Vec<f32> = (0..2_000_000).map(|v| (v % 1000) as f32 * 0.5).collect();
    /// let view = HostMdspan::<f32, 1>::from_slice(&data, [data.len()])?;
    /// let sum = |a: f32, b: f32| a + b;
    /// assert_eq!(view.par_sum_with(0.0, |&v| v, sum).to_bits(), view.sum_with(0.0, |&v| v, sum).to_bits());
    /// // Every other value: one strided run, split the same way.
    /// let odd = HostMdspan::<f32, 1, LayoutStride>::from_slice_strided(&data[1..], [999_999], [2])?;
    /// assert_eq!(odd.par_sum_with(0.0, |&v| v, sum).to_bits(), odd.sum().to_bits());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn par_sum_with<A: Copy + Send>(
        &self,
        identity: A,
        map: impl Fn(&T) -> A + Sync,
        add: impl Fn(A, A) -> A + Sync,
    ) -> A
    where
        T: Sync,
    {
        let pool = if self.size() >= 2 * PARALLEL_SUM { crate::kernel::threads::pool() } else { None };
        let Some(pool) = pool else {
            return self.sum_with(identity, map, add);
        };
        let (map, add) = (&map, &add);
        if let Some(slice) = self.as_slice() {
            return add(identity, pool.install(move || par_pairwise_sum(slice, identity, map, add)));
        }
        // The runs are found on the pool's thread; each long run's halves are handed to others.
        pool.install(move || {
            self.fold_runs(
                identity,
                add,
                |run| par_pairwise_sum(run, identity, map, add),
                // SAFETY: as `fold_runs` states, each element valid for reads for `'a` (from any
                // thread: `T: Sync`), while this call borrows the view.
                |first, len, stride| unsafe { par_pairwise_sum_strided(first, len, stride, identity, map, add) },
            )
        })
    }

    /// [`sum_with`](Self::sum_with) of a view that is no slice: the pairwise sums of its runs,
    /// combined by a [`Cascade`].
    fn sum_runs<A: Copy>(&self, identity: A, map: &impl Fn(&T) -> A, add: &impl Fn(A, A) -> A) -> A {
        self.fold_runs(
            identity,
            add,
            |run| pairwise_sum(run, identity, map, add),
            // SAFETY: as `fold_runs` states.
            |first, len, stride| unsafe { pairwise_sum_strided(first, len, stride, identity, map, add) },
        )
    }

    /// The sums of the view's runs in memory order, `contiguous` for a run of consecutive
    /// elements and `strided` for one of `len` elements `stride` apart from `first` (each a valid
    /// element, readable for `'a`), combined by a [`Cascade`].
    fn fold_runs<A: Copy>(
        &self,
        identity: A,
        add: &impl Fn(A, A) -> A,
        contiguous: impl Fn(&[T]) -> A,
        strided: impl Fn(*const T, usize, isize) -> A,
    ) -> A {
        let base = self.data_handle();
        let plan = Plan::<R, 1>::new(self.extents(), [self.strides()], [self.offset()]);
        let stride = plan.inner_stride(0);
        let mut cascade = Cascade::new(identity);
        plan.fold((), |(), [start], len, unit| {
            let first = base.wrapping_offset(start);
            let sum = if unit {
                // SAFETY: a run of `len` consecutive in-bounds elements of the view, valid for reads
                // for `'a` (struct invariant).
                contiguous(unsafe { core::slice::from_raw_parts(first, len) })
            } else {
                // The run's `len` elements, `stride` apart, are in-bounds elements of the view,
                // valid for reads for `'a`.
                strided(first, len, stride)
            };
            cascade.push(sum, add);
        });
        cascade.finish(identity, add)
    }
}

impl<'a, T: Copy + Default + Add<Output = T>, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    Mdspan<'a, T, R, E, L, S>
{
    /// The sum of every element: pairwise summation in memory order ([`sum_with`](Self::sum_with)
    /// in `T`, from `T::default()`, the zero), vectorised, whose rounding error grows with the
    /// logarithm of the size; contiguous views give NumPy's `np.sum` bit for bit, signed zeros
    /// included (NumPy starts from `+0.0`: an empty sum, or one of `-0.0`s, is `+0.0`, where
    /// `Iterator::sum` gives `-0.0`). Floating-point results differ from a sequential
    /// logical-order sum by rounding only (and are usually closer to the exact sum).
    ///
    /// ```
    /// use dlspan::{HostMdspan, LayoutStrideRelaxed};
    /// let data: Vec<f64> = (1..=100).map(f64::from).collect();
    /// let reversed = HostMdspan::<f64, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [10, 10], [-10, 1], 90)?;
    /// assert_eq!(reversed.sum(), 5050.0);
    /// // Rows 2-3 of the reversed view are data rows 7 and 6.
    /// assert_eq!(reversed.subview((2..4, 5..)).sum(), (76..=80).chain(66..=70).map(f64::from).sum::<f64>());
    /// // A million float32 values: NumPy's 499999506432; a sequential sum gives 499940360192.
    /// let big: Vec<f32> = (0..1_000_000).map(|v| v as f32).collect();
    /// assert_eq!(HostMdspan::<f32, 1>::from_slice(&big, [big.len()])?.sum(), 499_999_506_432.0);
    /// // NumPy's signed zeros: `np.sum` of no values, or of negative zeros, is +0.0.
    /// let negative_zeros = [-0.0f32; 20];
    /// let sum = HostMdspan::<f32, 1>::from_slice(&negative_zeros, [20])?.sum();
    /// assert!(sum == 0.0 && sum.is_sign_positive());
    /// assert!(HostMdspan::<f64, 1>::from_slice(&[], [0])?.sum().is_sign_positive());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn sum(&self) -> T {
        self.sum_with(T::default(), |&value| value, |a, b| a + b)
    }
}

impl<T: Copy + Default + Add<Output = T>, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    Mdspan<'_, T, R, E, L, S>
{
    /// Sums this view down to `out`'s shape, as PyTorch's `sum_to_size`: the gradient of an input
    /// that was broadcast to this view's shape. `out`'s axes align with this view's last ones;
    /// each is this view's extent (kept) or 1 (summed over), and this view's leading axes that
    /// `out` lacks are summed over. Each element of `out` is the pairwise sum
    /// ([`sum`](Self::sum), in `T`) of the elements it gathers, in a fixed order: the same inputs
    /// give the same bits. Another shape is [`DlpackError::ShapeMismatch`] (its axis in this
    /// view's numbering), before anything is written.
    ///
    /// ```
    /// use dlspan::{HostMdspan, HostMdspanMut};
    /// // The per-element gradient of a [3] bias broadcast over 2 rows: summed over the rows.
    /// let per_element = [1.0f32, 2.0, 3.0, 10.0, 20.0, 30.0];
    /// let mut bias = [0.0f32; 3];
    /// HostMdspan::<f32, 2>::from_slice(&per_element, [2, 3])?
    ///     .sum_to(&mut HostMdspanMut::<f32, 1>::from_slice(&mut bias, [3])?)?;
    /// assert_eq!(bias, [11.0, 22.0, 33.0]);
    /// // Kept as a [2, 1] column: summed over the columns.
    /// let mut rows = [0.0f32; 2];
    /// HostMdspan::<f32, 2>::from_slice(&per_element, [2, 3])?
    ///     .sum_to(&mut HostMdspanMut::<f32, 2>::from_slice(&mut rows, [2, 1])?)?;
    /// assert_eq!(rows, [6.0, 60.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn sum_to<const Q: usize, E2: Extents<Q>, L2: Layout, S2: HostAccessible>(
        &self,
        out: &mut MdspanMut<'_, T, Q, E2, L2, S2>,
    ) -> Result<(), DlpackError> {
        let (full, kept) = (self.extents(), out.extents());
        if Q > R {
            return Err(DlpackError::ShapeMismatch { axis: 0, expected: R, found: Q });
        }
        let lead = R - Q;
        for (q, &extent) in kept.iter().enumerate() {
            if extent != full[lead + q] && extent != 1 {
                return Err(DlpackError::ShapeMismatch { axis: lead + q, expected: full[lead + q], found: extent });
            }
        }
        if kept.contains(&0) {
            return Ok(());
        }
        // Each element of `out`: the sub-view of this one that its index gathers.
        let mut index = [0usize; Q];
        loop {
            let ranges: [core::ops::Range<usize>; R] = core::array::from_fn(|axis| {
                if axis < lead || (kept[axis - lead] == 1 && full[axis] != 1) {
                    0..full[axis]
                } else {
                    index[axis - lead]..index[axis - lead] + 1
                }
            });
            out[index] = self.subview(ranges).sum();
            // The next index of `out`, the last axis fastest.
            let mut axis = Q;
            loop {
                if axis == 0 {
                    return Ok(());
                }
                axis -= 1;
                index[axis] += 1;
                if index[axis] < kept[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
    }
}

impl<T: Copy + Default + Add<Output = T>, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    MdspanMut<'_, T, R, E, L, S>
{
    /// The sum of every element; see [`Mdspan::sum`].
    ///
    /// ```
    /// let mut data = [1u32, 2, 3, 4];
    /// let view = dlspan::HostMdspanMut::<u32, 2>::from_slice(&mut data, [2, 2])?;
    /// assert_eq!(view.sum(), 10);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn sum(&self) -> T {
        self.as_view().sum()
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> MdspanMut<'a, T, R, E, L, S> {
    /// Calls `f` on every element in memory order (not logical order).
    ///
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let mut view = dlspan::HostMdspanMut::<i32, 2, dlspan::LayoutLeft>::from_slice(&mut data, [2, 2])?;
    /// view.for_each_unordered(|v| *v *= 10);
    /// assert_eq!(data, [10, 20, 30, 40]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn for_each_unordered(&mut self, mut f: impl FnMut(&mut T)) {
        if let Some(slice) = self.as_mut_slice() {
            slice.iter_mut().for_each(f);
            return;
        }
        let base = self.data_handle();
        let plan = Plan::<R, 1>::new(self.extents(), [self.strides()], [self.offset()]);
        let stride = plan.inner_stride(0);
        plan.fold((), |(), [start], len, unit| {
            if unit {
                let first = base.wrapping_offset(start);
                // SAFETY: a run of `len` consecutive in-bounds elements, valid for writes and unique
                // (a mutable view's mapping is), borrowed through `&mut self`.
                let run = unsafe { core::slice::from_raw_parts_mut(first, len) };
                run.iter_mut().for_each(&mut f);
            } else {
                let mut offset = start;
                for _ in 0..len {
                    // SAFETY: an in-bounds element, visited once (unique mapping), borrowed through
                    // `&mut self`.
                    f(unsafe { &mut *base.wrapping_offset(offset) });
                    offset = offset.wrapping_add(stride);
                }
            }
        });
    }

    /// Calls `f` on every pair of elements with the same index in this view and `other`, in this
    /// view's memory order: `y.zip_with(&x, |y, &x| *y += a * x)` is axpy. When both views lay
    /// their elements out the same way, contiguous runs are zipped as slices (vectorised).
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`] when the extents differ (nothing is visited).
    ///
    /// ```
    /// use dlspan::{HostMdspan, HostMdspanMut, DlpackError};
    /// let x = [1.0f64, 2.0, 3.0];
    /// let x_view = HostMdspan::<f64, 1>::from_slice(&x, [3])?;
    /// let mut y = [10.0f64; 3];
    /// let mut y_view = HostMdspanMut::<f64, 1>::from_slice(&mut y, [3])?;
    /// y_view.zip_with(&x_view, |y, &x| *y -= x)?;
    /// let short = HostMdspan::<f64, 1>::from_slice(&x[..2], [2])?;
    /// assert!(matches!(y_view.zip_with(&short, |_, _| ()), Err(DlpackError::ShapeMismatch { .. })));
    /// assert_eq!(y, [9.0, 8.0, 7.0]);
    /// # Ok::<(), DlpackError>(())
    /// ```
    pub fn zip_with<U, E2: Extents<R>, L2: Layout, S2: HostAccessible>(
        &mut self,
        other: &Mdspan<'_, U, R, E2, L2, S2>,
        mut f: impl FnMut(&mut T, &U),
    ) -> Result<(), DlpackError> {
        let (extents, other_extents) = (self.extents(), other.extents());
        if let Some(axis) = (0..R).find(|&axis| extents[axis] != other_extents[axis]) {
            return Err(DlpackError::ShapeMismatch { axis, expected: extents[axis], found: other_extents[axis] });
        }
        if self.strides() == other.strides()
            && self.is_contiguous()
            && let (Some(theirs), Some(ours)) = (other.as_slice(), self.as_mut_slice())
        {
            ours.iter_mut().zip(theirs).for_each(|(y, x)| f(y, x));
            return Ok(());
        }
        let (ours, theirs) = (self.data_handle(), other.data_handle());
        let plan = Plan::<R, 2>::new(extents, [self.strides(), other.strides()], [self.offset(), other.offset()]);
        let (our_stride, their_stride) = (plan.inner_stride(0), plan.inner_stride(1));
        plan.fold((), |(), [start, other_start], len, unit| {
            if unit {
                let (first, other_first) = (ours.wrapping_offset(start), theirs.wrapping_offset(other_start));
                // SAFETY: a run of `len` consecutive in-bounds elements of this view, valid for
                // writes, unique, borrowed through `&mut self` (so `other`, a shared view, cannot
                // reach them).
                let run = unsafe { core::slice::from_raw_parts_mut(first, len) };
                // SAFETY: a run of `len` consecutive in-bounds elements of `other`, valid for reads.
                let other_run = unsafe { core::slice::from_raw_parts(other_first, len) };
                run.iter_mut().zip(other_run).for_each(|(y, x)| f(y, x));
            } else {
                let (mut offset, mut other_offset) = (start, other_start);
                for _ in 0..len {
                    // SAFETY: an in-bounds element of this view, visited once, borrowed uniquely.
                    let y = unsafe { &mut *ours.wrapping_offset(offset) };
                    // SAFETY: an in-bounds element of `other`, valid for reads.
                    let x = unsafe { &*theirs.wrapping_offset(other_offset) };
                    f(y, x);
                    offset = offset.wrapping_add(our_stride);
                    other_offset = other_offset.wrapping_add(their_stride);
                }
            }
        });
        Ok(())
    }

    /// Calls `f` on every triple of elements with the same index in this view, `a` and `b`, in this
    /// view's memory order, in one pass: `out.zip2_with(&a, &b, |o, &a, &b| *o = a + b)` is
    /// `add(a, b, out=out)`. When all three lay their elements out the same way, contiguous runs
    /// are zipped as slices (vectorised).
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`] when the extents of `a` or `b` differ from this view's
    /// (nothing is visited).
    ///
    /// ```
    /// use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
    /// let a = [1, 2, 3, 4];
    /// let b = [10, 20, 30, 40];
    /// let a = HostMdspan::<i32, 2>::from_slice(&a, [2, 2])?;
    /// let b = HostMdspan::<i32, 2, LayoutLeft>::from_slice(&b, [2, 2])?; // b transposed in memory
    /// let mut out = [0; 4];
    /// HostMdspanMut::<i32, 2>::from_slice(&mut out, [2, 2])?.zip2_with(&a, &b, |o, &a, &b| *o = a + b)?;
    /// assert_eq!(out, [11, 32, 23, 44]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn zip2_with<
        U,
        V,
        E2: Extents<R>,
        L2: Layout,
        S2: HostAccessible,
        E3: Extents<R>,
        L3: Layout,
        S3: HostAccessible,
    >(
        &mut self,
        a: &Mdspan<'_, U, R, E2, L2, S2>,
        b: &Mdspan<'_, V, R, E3, L3, S3>,
        mut f: impl FnMut(&mut T, &U, &V),
    ) -> Result<(), DlpackError> {
        let extents = self.extents();
        for other in [a.extents(), b.extents()] {
            if let Some(axis) = (0..R).find(|&axis| extents[axis] != other[axis]) {
                return Err(DlpackError::ShapeMismatch { axis, expected: extents[axis], found: other[axis] });
            }
        }
        if self.strides() == a.strides() && self.strides() == b.strides() {
            // Contiguous alike: the same elements in the same memory order in all three.
            if let (Some(xs), Some(ys), Some(ours)) = (a.as_slice(), b.as_slice(), self.as_mut_slice()) {
                ours.iter_mut().zip(xs).zip(ys).for_each(|((o, x), y)| f(o, x, y));
                return Ok(());
            }
        }
        let (ours, xs, ys) = (self.data_handle(), a.data_handle(), b.data_handle());
        let plan = Plan::<R, 3>::new(
            extents,
            [self.strides(), a.strides(), b.strides()],
            [self.offset(), a.offset(), b.offset()],
        );
        let strides = [plan.inner_stride(0), plan.inner_stride(1), plan.inner_stride(2)];
        plan.fold((), |(), [start, a_start, b_start], len, unit| {
            if unit {
                let (first, a_first, b_first) =
                    (ours.wrapping_offset(start), xs.wrapping_offset(a_start), ys.wrapping_offset(b_start));
                // SAFETY: a run of `len` consecutive in-bounds elements of this view, valid for
                // writes, unique, borrowed through `&mut self` (so the shared views cannot reach them).
                let run = unsafe { core::slice::from_raw_parts_mut(first, len) };
                // SAFETY: a run of `len` consecutive in-bounds elements of `a`, valid for reads.
                let a_run = unsafe { core::slice::from_raw_parts(a_first, len) };
                // SAFETY: as above, of `b`.
                let b_run = unsafe { core::slice::from_raw_parts(b_first, len) };
                run.iter_mut().zip(a_run).zip(b_run).for_each(|((o, x), y)| f(o, x, y));
            } else {
                let [mut offset, mut a_offset, mut b_offset] = [start, a_start, b_start];
                for _ in 0..len {
                    // SAFETY: an in-bounds element of this view, visited once, borrowed uniquely.
                    let o = unsafe { &mut *ours.wrapping_offset(offset) };
                    // SAFETY: an in-bounds element of `a`, valid for reads.
                    let x = unsafe { &*xs.wrapping_offset(a_offset) };
                    // SAFETY: an in-bounds element of `b`, valid for reads.
                    let y = unsafe { &*ys.wrapping_offset(b_offset) };
                    f(o, x, y);
                    offset += strides[0];
                    a_offset += strides[1];
                    b_offset += strides[2];
                }
            }
        });
        Ok(())
    }
}

/// The whole-view operations, by the names the crate uses for them everywhere (`dst.fill(value)`,
/// `dst.copy_from(&src)`, `dst.cast_from(&src)`: the view written is the receiver).
impl<T: Clone, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> MdspanMut<'_, T, R, E, L, S> {
    /// Writes `value` into every element, in memory order.
    ///
    /// ```
    /// use dlspan::{HostMdspanMut, LayoutStride};
    /// let mut data = [0u8; 6];
    /// let mut every_other = HostMdspanMut::<u8, 1, LayoutStride>::from_slice_strided(&mut data, [3], [2])?;
    /// every_other.fill(7);
    /// assert_eq!(data, [7, 0, 7, 0, 7, 0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn fill(&mut self, value: T) {
        self.for_each_unordered(|element| element.clone_from(&value));
    }

    /// Overwrites every element with the element at the same index of `source` (any layout and
    /// strides; one shape), in this view's memory order; views that lay their elements out alike
    /// and contiguously are copied as one slice.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`] when the extents differ (nothing is written).
    ///
    /// ```
    /// use dlspan::{DlpackError, HostMdspan, HostMdspanMut, LayoutLeft};
    /// let source = [1, 2, 3, 4, 5, 6];
    /// let source = HostMdspan::<i32, 2>::from_slice(&source, [2, 3])?;
    /// let mut columns = [0; 6];
    /// let mut target = HostMdspanMut::<i32, 2, LayoutLeft>::from_slice(&mut columns, [2, 3])?;
    /// target.copy_from(&source)?;
    /// let transposed = HostMdspan::<i32, 2>::from_slice(&[0; 6], [3, 2])?;
    /// assert!(matches!(target.copy_from(&transposed), Err(DlpackError::ShapeMismatch { axis: 0, .. })));
    /// assert_eq!(columns, [1, 4, 2, 5, 3, 6]); // the same matrix, column-major
    /// # Ok::<(), DlpackError>(())
    /// ```
    pub fn copy_from<E2: Extents<R>, L2: Layout, S2: HostAccessible>(
        &mut self,
        source: &Mdspan<'_, T, R, E2, L2, S2>,
    ) -> Result<(), DlpackError> {
        self.zip_with(source, |target, value| target.clone_from(value))
    }
}

impl<'a, T: Numeric, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> MdspanMut<'a, T, R, E, L, S> {
    /// Overwrites every element with the [`cast`] of the element at the same index of `source`
    /// (any element type, layout and strides; one shape), in this view's memory order.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`] when the extents differ (nothing is written).
    ///
    /// ```
    /// use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
    /// use dlspan::dtype::Float8E4m3fn;
    /// let source = [0.3f32, 1.0, 1000.0, -2.0, 0.0, 448.0];
    /// let source = HostMdspan::<f32, 2>::from_slice(&source, [2, 3])?;
    /// let mut codes = [Float8E4m3fn::default(); 6];
    /// let mut target = HostMdspanMut::<Float8E4m3fn, 2, LayoutLeft>::from_slice(&mut codes, [2, 3])?;
    /// target.cast_from(&source)?;
    /// assert_eq!(target[[0, 0]].to_f32(), 0.3125);
    /// assert!(target[[0, 2]].is_nan()); // e4m3fn has no infinity
    /// assert_eq!(codes[5].to_f32(), 448.0); // column-major: [1, 2] is the last element
    /// let mut short = [Float8E4m3fn::default(); 3];
    /// let mut short = HostMdspanMut::<Float8E4m3fn, 2>::from_slice(&mut short, [1, 3])?;
    /// assert!(matches!(short.cast_from(&source), Err(dlspan::DlpackError::ShapeMismatch { .. })));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn cast_from<U: Numeric, E2: Extents<R>, L2: Layout, S2: HostAccessible>(
        &mut self,
        source: &Mdspan<'_, U, R, E2, L2, S2>,
    ) -> Result<(), DlpackError> {
        self.zip_with(source, |target, &value| *target = cast(value))
    }
}
