//! NumPy's pairwise summation, for `Mdspan::sum`/`sum_with` and packed views' sums: blocks of
//! [`BLOCK`] values summed with [`LANES`] partial sums, longer runs halved, and the runs of a
//! strided view combined pairwise as they arrive ([`Cascade`]), so that rounding errors grow with
//! the logarithm of the number of values, and results equal NumPy's.

/// Values summed in one block of a pairwise sum (NumPy's `PW_BLOCKSIZE`): longer runs are halved,
/// shorter ones summed with [`LANES`] partial sums.
const BLOCK: usize = 128;

/// Partial sums of a block: independent additions, which the compiler turns into vector additions.
pub(super) const LANES: usize = 8;

/// The partial sums of a block combined as NumPy combines them: `((0+1)+(2+3)) + ((4+5)+(6+7))`.
/// Out of line: inlined, LLVM lays the partial sums out for this order (pairs of neighbours in one
/// vector), which costs shuffles in every step of the block's loop rather than once at its end.
#[inline(never)]
fn combine_lanes<A: Copy>(r: [A; LANES], add: &impl Fn(A, A) -> A) -> A {
    add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
}

/// The sum of at most [`BLOCK`] values of a slice, as NumPy sums a block: fewer than eight
/// sequentially from `identity`; otherwise eight partial sums started from the first eight values,
/// combined pairwise, then the values past the last multiple of eight.
#[inline(always)]
fn block_sum<T, A: Copy>(values: &[T], identity: A, map: &impl Fn(&T) -> A, add: &impl Fn(A, A) -> A) -> A {
    if values.len() < LANES {
        return values.iter().fold(identity, |sum, value| add(sum, map(value)));
    }
    let (first, rest) = values.split_at(LANES);
    let mut partial: [A; LANES] = core::array::from_fn(|lane| map(&first[lane]));
    let mut chunks = rest.chunks_exact(LANES);
    for chunk in &mut chunks {
        for lane in 0..LANES {
            partial[lane] = add(partial[lane], map(&chunk[lane]));
        }
    }
    chunks.remainder().iter().fold(combine_lanes(partial, add), |sum, value| add(sum, map(value)))
}

/// [`block_sum`] of fewer than `2 · LANES` values (a short row): the same additions in the same
/// order — sequential below eight values; else the first eight combined pairwise, then the rest —
/// written out so that it inlines into its caller (`combine_lanes` stays out of line for the long
/// loop's sake, and a call per row of eight values cost half the row's time).
#[inline(always)]
pub(super) fn short_sum<T, A: Copy>(values: &[T], identity: A, map: &impl Fn(&T) -> A, add: &impl Fn(A, A) -> A) -> A {
    debug_assert!(values.len() < 2 * LANES);
    match values.split_first_chunk::<LANES>() {
        None => values.iter().fold(identity, |sum, value| add(sum, map(value))),
        Some((r, rest)) => {
            let pair = |a: &T, b: &T| add(map(a), map(b));
            let lanes = add(add(pair(&r[0], &r[1]), pair(&r[2], &r[3])), add(pair(&r[4], &r[5]), pair(&r[6], &r[7])));
            rest.iter().fold(lanes, |sum, value| add(sum, map(value)))
        }
    }
}

/// [`block_sum`] of the `len ≤ BLOCK` elements `first + k·stride` (a strided run), read through
/// pointer steps (a version reading through an index closure was 1.26× slower in all). It runs at
/// the speed of NumPy's loop, one scalar load per element: vector loads would read the gaps between
/// the elements, which another view may be writing.
///
/// # Safety
///
/// For every `k < len`, `first.wrapping_offset(k · stride)` points to a `T` valid for reads.
#[inline(always)]
unsafe fn block_sum_strided<T, A: Copy>(
    first: *const T,
    len: usize,
    stride: isize,
    identity: A,
    map: &impl Fn(&T) -> A,
    add: &impl Fn(A, A) -> A,
) -> A {
    let at = |p: *const T, lane: usize| {
        // SAFETY: the caller's element `k + lane` for a `p` at element `k`, with `k + lane < len`.
        map(unsafe { &*p.wrapping_offset((lane as isize).wrapping_mul(stride)) })
    };
    if len < LANES {
        return (0..len).fold(identity, |sum, k| add(sum, at(first, k)));
    }
    // The partial sums in pairs: LLVM then gathers the strided loads two to a vector, with fewer
    // shuffles than four to a vector (measured at stride 2: 1.09x faster).
    let mut pairs: [[A; 2]; LANES / 2] = core::array::from_fn(|pair| [at(first, 2 * pair), at(first, 2 * pair + 1)]);
    let whole = len - len % LANES;
    let step = (LANES as isize).wrapping_mul(stride);
    let mut p = first.wrapping_offset(step);
    let mut k = LANES;
    while k < whole {
        for (pair, sums) in pairs.iter_mut().enumerate() {
            sums[0] = add(sums[0], at(p, 2 * pair));
            sums[1] = add(sums[1], at(p, 2 * pair + 1));
        }
        p = p.wrapping_offset(step);
        k += LANES;
    }
    // NumPy's combination, `((0+1)+(2+3)) + ((4+5)+(6+7))`, inlined: here it matches the layout of
    // the pairs, and saves [`combine_lanes`]'s call and spill (1.04x).
    let pair = |[a, b]: [A; 2]| add(a, b);
    let combined = add(add(pair(pairs[0]), pair(pairs[1])), add(pair(pairs[2]), pair(pairs[3])));
    (0..len - whole).fold(combined, |sum, k| add(sum, at(p, k)))
}

/// Where a pairwise sum halves a run of `len > BLOCK` values: at half, rounded down to a multiple of
/// [`LANES`] (NumPy's split, so that contiguous and single-strided sums match NumPy's bit for bit).
#[inline(always)]
fn split(len: usize) -> usize {
    let half = len / 2;
    half - half % LANES
}

/// The pairwise sum of a slice: halved until blocks of at most [`BLOCK`] values, each summed by
/// [`block_sum`]. The rounding error grows with the logarithm of the length rather than with the
/// length, as a sequential sum's does.
pub(super) fn pairwise_sum<T, A: Copy>(
    values: &[T],
    identity: A,
    map: &impl Fn(&T) -> A,
    add: &impl Fn(A, A) -> A,
) -> A {
    if values.len() <= BLOCK {
        return block_sum(values, identity, map, add);
    }
    let (low, high) = values.split_at(split(values.len()));
    add(pairwise_sum(low, identity, map, add), pairwise_sum(high, identity, map, add))
}

/// The pairwise sum of the `len` elements `first + k·stride` (a strided run), split as
/// [`pairwise_sum`].
///
/// # Safety
///
/// For every `k < len`, `first.wrapping_offset(k · stride)` points to a `T` valid for reads.
pub(super) unsafe fn pairwise_sum_strided<T, A: Copy>(
    first: *const T,
    len: usize,
    stride: isize,
    identity: A,
    map: &impl Fn(&T) -> A,
    add: &impl Fn(A, A) -> A,
) -> A {
    if len <= BLOCK {
        // SAFETY: the caller's elements.
        return unsafe { block_sum_strided(first, len, stride, identity, map, add) };
    }
    let low = split(len);
    let high = first.wrapping_offset((low as isize).wrapping_mul(stride));

    // SAFETY: the first `low` of the caller's elements.
    let low_sum = unsafe { pairwise_sum_strided(first, low, stride, identity, map, add) };
    // SAFETY: the caller's elements from `low` on.
    let high_sum = unsafe { pairwise_sum_strided(high, len - low, stride, identity, map, add) };
    add(low_sum, high_sum)
}

/// Sums of consecutive runs, combined pairwise as they arrive (a binary counter: level `k` holds the
/// sum of `2^k` runs), so that the error of a view made of many runs grows with the logarithm of
/// their number too.
pub(super) struct Cascade<A> {
    levels: [A; 64],
    /// Bit `k` set: level `k` holds a sum.
    occupied: u64,
}

impl<A: Copy> Cascade<A> {
    /// An empty cascade (`identity` fills the unused levels).
    #[inline]
    pub(crate) fn new(identity: A) -> Self {
        Self { levels: [identity; 64], occupied: 0 }
    }

    /// Adds the sum of one more run.
    #[inline]
    pub(crate) fn push(&mut self, mut sum: A, add: &impl Fn(A, A) -> A) {
        let mut level = 0;
        while self.occupied & (1 << level) != 0 {
            sum = add(self.levels[level], sum);
            self.occupied &= !(1 << level);
            level += 1;
        }
        self.levels[level] = sum;
        self.occupied |= 1 << level;
    }

    /// The total: the levels combined from the smallest up, added to `identity` (as NumPy adds a
    /// pairwise sum to the reduction's initial zero, which turns a sum of `-0.0`s into `0.0`).
    #[inline]
    pub(crate) fn finish(self, identity: A, add: &impl Fn(A, A) -> A) -> A {
        let mut total: Option<A> = None;
        for level in 0..64 {
            if self.occupied & (1 << level) != 0 {
                total = Some(total.map_or(self.levels[level], |low| add(self.levels[level], low)));
            }
        }
        total.map_or(identity, |total| add(identity, total))
    }
}

/// The pairwise sum of the values an iterator yields in blocks of [`BLOCK`], the blocks combined by
/// a [`Cascade`]: for packed views, read value by value.
pub(crate) fn pairwise_sum_iter<T, A: Copy>(
    values: impl Iterator<Item = T>,
    identity: A,
    map: impl Fn(T) -> A,
    add: impl Fn(A, A) -> A,
) -> A {
    let mut cascade = Cascade::new(identity);
    let mut block = [identity; BLOCK];
    let mut len = 0;
    for value in values {
        block[len] = map(value);
        len += 1;
        if len == BLOCK {
            cascade.push(block_sum(&block, identity, &|&a| a, &add), &add);
            len = 0;
        }
    }
    if len > 0 {
        cascade.push(block_sum(&block[..len], identity, &|&a| a, &add), &add);
    }
    cascade.finish(identity, &add)
}

/// The size from which [`par_pairwise_sum`] and [`par_pairwise_sum_strided`] hand a half of a run
/// to another thread of the pool: 2¹⁶ values (a sum is a few additions per value, so a piece
/// smaller than this costs about what handing it over saves).
pub(super) const PARALLEL_SUM: usize = 1 << 16;

/// [`pairwise_sum`], its two halves summed on two threads of the current rayon pool while they
/// are at least [`PARALLEL_SUM`] long: the same halves, split at the same places and added in the
/// same order, so the same bits for every number of threads.
pub(super) fn par_pairwise_sum<T: Sync, A: Copy + Send>(
    values: &[T],
    identity: A,
    map: &(impl Fn(&T) -> A + Sync),
    add: &(impl Fn(A, A) -> A + Sync),
) -> A {
    if values.len() < 2 * PARALLEL_SUM {
        return pairwise_sum(values, identity, map, add);
    }
    let (low, high) = values.split_at(split(values.len()));
    let (low, high) = rayon::join(
        move || par_pairwise_sum(low, identity, map, add),
        move || par_pairwise_sum(high, identity, map, add),
    );
    add(low, high)
}

/// The first element of a strided run, handed to another thread (which only reads from it).
#[derive(Clone, Copy)]
struct Shared<T>(*const T);

// SAFETY: the address is only read through, as `&T` (`T: Sync`), by the threads of one
// `rayon::join` that the caller waits for while the memory is borrowed.
unsafe impl<T: Sync> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Shared<T> {}

/// [`pairwise_sum_strided`], split over the current rayon pool as [`par_pairwise_sum`].
///
/// # Safety
///
/// As [`pairwise_sum_strided`]; the elements are valid for reads from every thread of the pool
/// (`T: Sync`) until the call returns.
pub(super) unsafe fn par_pairwise_sum_strided<T: Sync, A: Copy + Send>(
    first: *const T,
    len: usize,
    stride: isize,
    identity: A,
    map: &(impl Fn(&T) -> A + Sync),
    add: &(impl Fn(A, A) -> A + Sync),
) -> A {
    if len < 2 * PARALLEL_SUM {
        // SAFETY: the caller's elements.
        return unsafe { pairwise_sum_strided(first, len, stride, identity, map, add) };
    }
    let low = split(len);
    let (first, high) = (Shared(first), Shared(first.wrapping_offset((low as isize).wrapping_mul(stride))));
    let (low_sum, high_sum) = rayon::join(
        // SAFETY: the first `low` of the caller's elements.
        move || unsafe { par_pairwise_sum_strided({ first }.0, low, stride, identity, map, add) },
        // SAFETY: the caller's elements from `low` on.
        move || unsafe { par_pairwise_sum_strided({ high }.0, len - low, stride, identity, map, add) },
    );
    add(low_sum, high_sum)
}
