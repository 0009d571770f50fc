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

/// How [`plain_sum`] sums a slice of `T`s: through explicit vector code for `f32` and `f64` on
/// x86-64, generically otherwise. Found once per sum, outside its loops.
#[derive(Clone, Copy)]
pub(super) enum Plain {
    /// `T` is `f32`.
    F32,
    /// `T` is `f64`.
    F64,
    /// Another type: [`pairwise_sum`].
    Generic,
}

impl Plain {
    /// The way for `T`. `typeid::of` compares types that need not be `'static` (lifetimes erased;
    /// `f32` and `f64` have none, so equality means `T` is that type).
    #[inline]
    pub(super) fn of<T: ?Sized>() -> Self {
        if !cfg!(all(target_arch = "x86_64", target_feature = "sse2")) {
            Plain::Generic
        } else if typeid::of::<T>() == typeid::of::<f32>() {
            Plain::F32
        } else if typeid::of::<T>() == typeid::of::<f64>() {
            Plain::F64
        } else {
            Plain::Generic
        }
    }
}

/// `pairwise_sum(values, T::default(), |&v| v, +)`, bit for bit (NaN payloads aside: an addition
/// of two NaNs may keep either's), through [`simd`] for `f32` and `f64` (`how` is
/// [`Plain::of::<T>()`](Plain::of)): the same tree of additions, its blocks summed four (`f32`)
/// or two (`f64`) side by side, so that the additions of different blocks overlap rather than
/// wait on one another.
#[inline(always)]
pub(super) fn plain_sum<T: Copy + Default + core::ops::Add<Output = T>>(values: &[T], how: Plain) -> T {
    if values.len() < 2 * LANES {
        return short_sum(values, T::default(), &|&v| v, &|a, b| a + b);
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    match how {
        Plain::F32 => {
            // SAFETY: `how` is `F32` only where `T` is `f32` (`Plain::of`): the same type.
            let values = unsafe { &*(values as *const [T] as *const [f32]) };
            let sum = simd::sum_f32(values);
            // SAFETY: as above, an `f32` is a `T`.
            return unsafe { core::mem::transmute_copy::<f32, T>(&sum) };
        }
        Plain::F64 => {
            // SAFETY: `how` is `F64` only where `T` is `f64` (`Plain::of`): the same type.
            let values = unsafe { &*(values as *const [T] as *const [f64]) };
            let sum = simd::sum_f64(values);
            // SAFETY: as above, an `f64` is a `T`.
            return unsafe { core::mem::transmute_copy::<f64, T>(&sum) };
        }
        Plain::Generic => {}
    }
    let _ = how;
    pairwise_sum(values, T::default(), &|&v| v, &|a, b| a + b)
}

/// [`plain_sum`] with the halves of runs of at least `2 · PARALLEL_SUM` values summed on two
/// threads of the current rayon pool, as [`par_pairwise_sum`] splits them: the same bits.
pub(super) fn par_plain_sum<T: Copy + Default + core::ops::Add<Output = T> + Send + Sync>(
    values: &[T],
    how: Plain,
) -> T {
    if values.len() < 2 * PARALLEL_SUM {
        return plain_sum(values, how);
    }
    let (low, high) = values.split_at(split(values.len()));
    let (low, high) = rayon::join(move || par_plain_sum(low, how), move || par_plain_sum(high, how));
    low + high
}

/// NumPy's pairwise sum of `f32`s and `f64`s in explicit SSE2 vectors (part of every x86-64
/// CPU): the tree of [`pairwise_sum`], with the blocks of a node whose leaves are all blocks
/// summed side by side — four `f32` blocks at once (eight vectors of partial sums), or two `f64`
/// blocks. Each block's eight partial sums, its combination `((0+1)+(2+3)) + ((4+5)+(6+7))` and
/// the values past its last multiple of eight are NumPy's; only the order in which independent
/// additions are issued changes, which is what lets them overlap (a block alone is a chain of
/// additions, each waiting for the last: measured 1.6x faster on 5·10⁴ `f32` in the cache).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod simd {
    use super::{BLOCK, LANES, pairwise_sum, split};
    use core::arch::x86_64::{
        __m128, __m128d, _MM_HINT_T0, _mm_add_pd, _mm_add_ps, _mm_loadu_pd, _mm_loadu_ps, _mm_movehl_ps, _mm_movelh_ps,
        _mm_prefetch, _mm_storeu_pd, _mm_storeu_ps, _mm_unpackhi_pd, _mm_unpackhi_ps, _mm_unpacklo_pd, _mm_unpacklo_ps,
    };

    /// Safe forms of the SSE2 operations used here, each one instruction on registers.
    macro_rules! sse2 {
        ($($(#[$doc:meta])* fn $name:ident($a:ident: $ta:ty, $b:ident: $tb:ty) -> $r:ty = $op:ident;)*) => {$(
            $(#[$doc])*
            #[inline(always)]
            fn $name($a: $ta, $b: $tb) -> $r {
                // SAFETY: an SSE2 operation on values in registers; `simd` exists only where this
                // build enables SSE2 (every x86-64 target does).
                unsafe { $op($a, $b) }
            }
        )*};
    }

    sse2! {
        /// `a + b`, four `f32` lanes.
        fn add_ps(a: __m128, b: __m128) -> __m128 = _mm_add_ps;
        /// Lanes `a0 b0 a1 b1`.
        fn unpacklo_ps(a: __m128, b: __m128) -> __m128 = _mm_unpacklo_ps;
        /// Lanes `a2 b2 a3 b3`.
        fn unpackhi_ps(a: __m128, b: __m128) -> __m128 = _mm_unpackhi_ps;
        /// Lanes `a0 a1 b0 b1`.
        fn movelh_ps(a: __m128, b: __m128) -> __m128 = _mm_movelh_ps;
        /// Lanes `b2 b3 a2 a3`.
        fn movehl_ps(a: __m128, b: __m128) -> __m128 = _mm_movehl_ps;
        /// `a + b`, two `f64` lanes.
        fn add_pd(a: __m128d, b: __m128d) -> __m128d = _mm_add_pd;
        /// Lanes `a0 b0`.
        fn unpacklo_pd(a: __m128d, b: __m128d) -> __m128d = _mm_unpacklo_pd;
        /// Lanes `a1 b1`.
        fn unpackhi_pd(a: __m128d, b: __m128d) -> __m128d = _mm_unpackhi_pd;
    }

    /// Four `f32`s as a vector.
    #[inline(always)]
    fn load4(values: &[f32; 4]) -> __m128 {
        // SAFETY: an unaligned SSE2 load of the four `f32`s `values` holds.
        unsafe { _mm_loadu_ps(values.as_ptr()) }
    }

    /// Two `f64`s as a vector.
    #[inline(always)]
    fn load2(values: &[f64; 2]) -> __m128d {
        // SAFETY: an unaligned SSE2 load of the two `f64`s `values` holds.
        unsafe { _mm_loadu_pd(values.as_ptr()) }
    }

    /// A vector's four `f32`s.
    #[inline(always)]
    fn lanes_ps(v: __m128) -> [f32; 4] {
        let mut lanes = [0.0; 4];
        // SAFETY: an unaligned SSE2 store of four `f32`s into `lanes`, which holds four.
        unsafe { _mm_storeu_ps(lanes.as_mut_ptr(), v) };
        lanes
    }

    /// A vector's two `f64`s.
    #[inline(always)]
    fn lanes_pd(v: __m128d) -> [f64; 2] {
        let mut lanes = [0.0; 2];
        // SAFETY: an unaligned SSE2 store of two `f64`s into `lanes`, which holds two.
        unsafe { _mm_storeu_pd(lanes.as_mut_ptr(), v) };
        lanes
    }

    /// The pairwise sum of `f32`s (from zero), as `pairwise_sum` gives it.
    pub(super) fn sum_f32(values: &[f32]) -> f32 {
        if values.len() <= BLOCK {
            return pairwise_sum(values, 0.0, &|&v| v, &|a, b| a + b);
        }
        let (low, high) = values.split_at(split(values.len()));
        if low.len() <= BLOCK && high.len() <= BLOCK {
            // Two blocks: summed as four, the last two again (their sums unused).
            let [a, b, _, _] = blocks4_f32([low, high, low, high]);
            return a + b;
        }
        if low.len() > BLOCK && high.len() > BLOCK && low.len() <= 2 * BLOCK && high.len() <= 2 * BLOCK {
            let (l0, l1) = low.split_at(split(low.len()));
            let (h0, h1) = high.split_at(split(high.len()));
            // `l0` and `h0` are at most `l1` and `h1` long.
            if l1.len() <= BLOCK && h1.len() <= BLOCK {
                let [a, b, c, d] = blocks4_f32([l0, l1, h0, h1]);
                return (a + b) + (c + d);
            }
        }
        sum_f32(low) + sum_f32(high)
    }

    /// How far ahead of a block's loads [`prefetch`] asks for the cache line: 2 KiB, about one
    /// node of four blocks. Four (or two) blocks side by side read four (two) short streams at
    /// once, which the CPU's own prefetcher follows poorly: out of the cache, 10⁶ `f32` took as
    /// long as the generic sum's single chain (130 µs) without this, 98 µs with it.
    const AHEAD: usize = 2048;

    /// Asks for the cache line [`AHEAD`] bytes past `chunk` (a hint: it reads nothing, and no
    /// address faults, in bounds or not).
    #[inline(always)]
    fn prefetch<T>(chunk: &T) {
        let ahead = (chunk as *const T).cast::<i8>().wrapping_add(AHEAD);
        // SAFETY: SSE2 (`simd` exists only where this build enables it); a prefetch reads nothing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(ahead) };
    }

    /// Loads eight `f32`s as two vectors.
    #[inline(always)]
    fn load8(chunk: &[f32; LANES]) -> (__m128, __m128) {
        let halves = chunk.as_chunks::<4>().0;
        (load4(&halves[0]), load4(&halves[1]))
    }

    /// NumPy's block sums of four blocks of 64 to 128 values each, side by side.
    #[inline(always)]
    fn blocks4_f32(blocks: [&[f32]; 4]) -> [f32; 4] {
        let chunks = blocks.map(|block| block.as_chunks::<LANES>().0);
        let common = chunks.iter().map(|c| c.len()).min().unwrap_or(0);
        if common == 0 {
            // Not reached (blocks of a halved run hold at least 64 values); the plain way.
            return blocks.map(|block| pairwise_sum(block, 0.0, &|&v| v, &|a, b| a + b));
        }
        let (mut a0, mut a1) = load8(&chunks[0][0]);
        let (mut b0, mut b1) = load8(&chunks[1][0]);
        let (mut c0, mut c1) = load8(&chunks[2][0]);
        let (mut d0, mut d1) = load8(&chunks[3][0]);
        let heads = chunks.map(|c| &c[1..common]);
        for (((a, b), c), d) in heads[0].iter().zip(heads[1]).zip(heads[2]).zip(heads[3]) {
            prefetch(a);
            prefetch(b);
            prefetch(c);
            prefetch(d);
            let (x0, x1) = load8(a);
            (a0, a1) = (add_ps(a0, x0), add_ps(a1, x1));
            let (x0, x1) = load8(b);
            (b0, b1) = (add_ps(b0, x0), add_ps(b1, x1));
            let (x0, x1) = load8(c);
            (c0, c1) = (add_ps(c0, x0), add_ps(c1, x1));
            let (x0, x1) = load8(d);
            (d0, d1) = (add_ps(d0, x0), add_ps(d1, x1));
        }
        let rest = |(mut p0, mut p1): (__m128, __m128), chunks: &[[f32; LANES]]| {
            for chunk in &chunks[common..] {
                let (x0, x1) = load8(chunk);
                (p0, p1) = (add_ps(p0, x0), add_ps(p1, x1));
            }
            (p0, p1)
        };
        (a0, a1) = rest((a0, a1), chunks[0]);
        (b0, b1) = rest((b0, b1), chunks[1]);
        (c0, c1) = rest((c0, c1), chunks[2]);
        (d0, d1) = rest((d0, d1), chunks[3]);
        // `(0+1)+(2+3)` of four blocks' first (or last) four partial sums at once: transposed,
        // lane `j` of `l_k` is block `j`'s partial sum `k`.
        let half = |a: __m128, b: __m128, c: __m128, d: __m128| {
            let (ab_lo, ab_hi) = (unpacklo_ps(a, b), unpackhi_ps(a, b));
            let (cd_lo, cd_hi) = (unpacklo_ps(c, d), unpackhi_ps(c, d));
            let (l0, l1) = (movelh_ps(ab_lo, cd_lo), movehl_ps(cd_lo, ab_lo));
            let (l2, l3) = (movelh_ps(ab_hi, cd_hi), movehl_ps(cd_hi, ab_hi));
            add_ps(add_ps(l0, l1), add_ps(l2, l3))
        };
        let lanes = add_ps(half(a0, b0, c0, d0), half(a1, b1, c1, d1));
        let mut sums = lanes_ps(lanes);
        for (sum, (block, chunks)) in sums.iter_mut().zip(blocks.iter().zip(chunks)) {
            *sum = block[chunks.len() * LANES..].iter().fold(*sum, |sum, &v| sum + v);
        }
        sums
    }

    /// The pairwise sum of `f64`s (from zero), as `pairwise_sum` gives it.
    pub(super) fn sum_f64(values: &[f64]) -> f64 {
        if values.len() <= BLOCK {
            return pairwise_sum(values, 0.0, &|&v| v, &|a, b| a + b);
        }
        let (low, high) = values.split_at(split(values.len()));
        if low.len() <= BLOCK && high.len() <= BLOCK {
            let [a, b] = blocks2_f64([low, high]);
            return a + b;
        }
        sum_f64(low) + sum_f64(high)
    }

    /// Loads eight `f64`s as four vectors.
    #[inline(always)]
    fn load8d(chunk: &[f64; LANES]) -> [__m128d; 4] {
        let pairs = chunk.as_chunks::<2>().0;
        [load2(&pairs[0]), load2(&pairs[1]), load2(&pairs[2]), load2(&pairs[3])]
    }

    /// Eight partial sums plus eight values.
    #[inline(always)]
    fn add8d(p: [__m128d; 4], x: [__m128d; 4]) -> [__m128d; 4] {
        [add_pd(p[0], x[0]), add_pd(p[1], x[1]), add_pd(p[2], x[2]), add_pd(p[3], x[3])]
    }

    /// NumPy's block sums of two blocks of 64 to 128 values each, side by side.
    #[inline(always)]
    fn blocks2_f64(blocks: [&[f64]; 2]) -> [f64; 2] {
        let chunks = blocks.map(|block| block.as_chunks::<LANES>().0);
        let common = chunks[0].len().min(chunks[1].len());
        if common == 0 {
            // Not reached (blocks of a halved run hold at least 64 values); the plain way.
            return blocks.map(|block| pairwise_sum(block, 0.0, &|&v| v, &|a, b| a + b));
        }
        let (mut a, mut b) = (load8d(&chunks[0][0]), load8d(&chunks[1][0]));
        for (x, y) in chunks[0][1..common].iter().zip(&chunks[1][1..common]) {
            prefetch(x);
            prefetch(y);
            (a, b) = (add8d(a, load8d(x)), add8d(b, load8d(y)));
        }
        for x in &chunks[0][common..] {
            a = add8d(a, load8d(x));
        }
        for y in &chunks[1][common..] {
            b = add8d(b, load8d(y));
        }
        // `k + (k+1)` of both blocks at once: lane 0 is the first block's, lane 1 the second's.
        let pair = |x: __m128d, y: __m128d| add_pd(unpacklo_pd(x, y), unpackhi_pd(x, y));
        let lanes = add_pd(add_pd(pair(a[0], b[0]), pair(a[1], b[1])), add_pd(pair(a[2], b[2]), pair(a[3], b[3])));
        let mut sums = lanes_pd(lanes);
        for (sum, (block, chunks)) in sums.iter_mut().zip(blocks.iter().zip(chunks)) {
            *sum = block[chunks.len() * LANES..].iter().fold(*sum, |sum, &v| sum + v);
        }
        sums
    }
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

#[cfg(test)]
mod tests {
    use super::{PARALLEL_SUM, Plain, pairwise_sum, par_plain_sum, plain_sum};

    /// A xorshift stream of floats in [-1, 1) scaled by `scale`, with every `special`-th value
    /// one of a few special ones (signed zeros, a subnormal, huge values, an infinity).
    fn values(len: usize, seed: u64, special: usize) -> Vec<f64> {
        let mut state = seed | 1;
        let specials = [0.0, -0.0, 1e-310, 1e300, -1e300, f64::INFINITY];
        (0..len)
            .map(|k| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if special != 0 && k % special == special - 1 {
                    specials[(state % specials.len() as u64) as usize]
                } else {
                    ((state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * 1000.0
                }
            })
            .collect()
    }

    /// Equal bits, or both NaN (an addition of two NaNs may keep either's payload); `f32`s
    /// compared through `f64`, which keeps every other value's bits (signed zeros included).
    fn same(a: impl Into<f64>, b: impl Into<f64>) -> bool {
        let (a, b) = (a.into(), b.into());
        a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
    }

    fn lengths() -> Vec<usize> {
        let mut lengths: Vec<usize> =
            if cfg!(miri) { (0..40).chain([127, 128, 129, 255, 300, 517]).collect() } else { (0..2100).collect() };
        if !cfg!(miri) {
            lengths.extend([4095, 4096, 4097, 10_000, 65_536, 100_003, 262_144 + 13]);
        }
        lengths
    }

    #[test]
    fn the_vector_sums_give_the_generic_pairwise_sums_bits() {
        // Every length up to 2100 (each shape of the tree's nodes: two blocks, four, three, and the
        // leftovers of the last block), at two offsets, plain and with special values.
        let data = values(262_144 + 20, 7, 0);
        let odd = values(262_144 + 20, 11, 37);
        for len in lengths() {
            for (data, offset) in [(&data, 0), (&data, 3), (&odd, 1)] {
                let v64 = &data[offset..offset + len];
                let expected = pairwise_sum(v64, 0.0, &|&v| v, &|a, b| a + b);
                assert!(same(plain_sum(v64, Plain::of::<f64>()), expected), "f64, {len} values");
                let v32: Vec<f32> = v64.iter().map(|&v| v as f32).collect();
                let expected = pairwise_sum(&v32, 0.0, &|&v| v, &|a, b| a + b);
                assert!(same(plain_sum(&v32, Plain::of::<f32>()), expected), "f32, {len} values");
                assert!(same(plain_sum(&v32, Plain::Generic), expected), "f32 generic, {len} values");
            }
        }
    }

    #[test]
    fn plain_is_found_for_f32_and_f64_only() {
        let x86 = cfg!(all(target_arch = "x86_64", target_feature = "sse2"));
        assert_eq!(matches!(Plain::of::<f32>(), Plain::F32), x86);
        assert_eq!(matches!(Plain::of::<f64>(), Plain::F64), x86);
        assert!(matches!(Plain::of::<u32>(), Plain::Generic));
        assert!(matches!(Plain::of::<i64>(), Plain::Generic));
        assert!(matches!(Plain::of::<half::f16>(), Plain::Generic));
        assert!(matches!(Plain::of::<&'static f32>(), Plain::Generic));
    }

    #[test]
    #[cfg_attr(miri, ignore = "a sum of 2^17 values and more, over threads: too slow under Miri")]
    fn the_threaded_vector_sum_gives_the_same_bits() {
        let data: Vec<f32> = values(3 * PARALLEL_SUM + 5, 3, 0).iter().map(|&v| v as f32).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let expected = pairwise_sum(&data, 0.0, &|&v| v, &|a, b| a + b);
        let threaded = pool.install(|| par_plain_sum(&data, Plain::of::<f32>()));
        assert_eq!(threaded.to_bits(), expected.to_bits());
    }
}
