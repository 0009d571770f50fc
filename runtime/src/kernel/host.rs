//! [`Cpu`]: element-wise kernels run as Rust on host and managed views, in the output's memory
//! order: axes ordered by the output's strides, reversed axes walked forwards, axes every view
//! steps through as one merged, and runs where every view is contiguous handed to zipped slice
//! iterators (which the compiler vectorises), as `MdspanMut::zip2_with` does for two inputs. On
//! x86-64 the walk has builds for CPUs with AVX2 and FMA and with AVX-512, the widest the CPU has
//! picked at run time ([`CpuVectors`](super::CpuVectors)): the same operations in the same order,
//! so the same bits, on 256- and 512-bit vectors. Runs that are not contiguous in every view (a
//! transposed input, an input broadcast along the run) are staged through buffers in chunks and
//! walked as slices too, in tiles of the two inner axes where a view is far-strided along the run
//! ([rule K13](crate::rules#k13)). A call of at least
//! [`PARALLEL_ELEMENTS`](super::PARALLEL_ELEMENTS) elements is split over the process's worker
//! threads ([rule K12](crate::rules#k12)), by ranges of its outermost merged axis.

use super::cxx;
use super::def::Call;
use super::operand::{
    Element, Executor, Operand, RawArg, RawOperand, STAGE_BYTES, ViewArgs, argument_block, broadcast, sealed,
};
use super::raw::{KernelError, LaunchConfig, RawInstance};
use super::vectors::CpuVectors;
use crate::error::DlpackError;
use core::mem::MaybeUninit;

/// Runs element-wise kernels on the CPU, over host and managed views: the kernel's Rust body,
/// which rustc compiled and checked, called once per element in the output's memory order, on
/// [`num_threads`](super::num_threads) threads for calls of at least
/// [`PARALLEL_ELEMENTS`](super::PARALLEL_ELEMENTS) elements (the same bits for every count).
///
/// ```
/// use dlspan::kernel::{Cpu, Scalar};
/// use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
///
/// dlspan::elementwise! {
///     fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
///         *out = a * *x + b * *y;
///     }
/// }
///
/// let (x, y) = ([1.0f32, 2.0, 3.0, 4.0], [10.0f32; 2]);
/// let x = HostMdspan::<f32, 2, LayoutLeft>::from_slice(&x, [2, 2])?; // column-major
/// let y = HostMdspan::<f32, 1>::from_slice(&y, [2])?; // broadcast along axis 0
/// let mut out = [0.0f32; 4];
/// axpby.run(Cpu, 2.0, 0.5, &x, &y, &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 2])?)?;
/// assert_eq!(out, [7.0, 11.0, 9.0, 13.0]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cpu;

impl sealed::Sealed for Cpu {}

impl Executor for Cpu {
    type Error = DlpackError;
    type Extra<'a> = ();

    #[inline]
    fn run_views<const R: usize, const N: usize, V: ViewArgs<Self, R, N>>(
        self,
        call: &Call<'_>,
        mut operands: [Operand<'_, Self, R>; N],
        body: impl for<'a> Element<V::Items<'a>>,
    ) -> Result<(), DlpackError> {
        let primary = operands.iter().position(|op| op.writes).expect("an element-wise kernel writes a view");
        let shape = broadcast(&mut operands, call.instance.def())?;
        if shape.contains(&0) {
            return Ok(());
        }
        let walk =
            Walk::<R, N>::new(shape, &operands.map(|op| op.raw), operands.each_ref().map(|op| op.writes), primary);
        let vectors = super::cpu_vectors();
        let elements: usize = walk.extents[..walk.rank].iter().product();
        if walk.rank > 0
            && elements >= super::threads::PARALLEL_ELEMENTS
            && let Some(pool) = super::threads::pool()
        {
            let parts = pool.current_num_threads().min(walk.extents[0]);
            if parts > 1 {
                let body = &body;
                let outer = walk.extents[0];
                let pieces: Vec<Part<R, N>> =
                    (0..parts).map(|k| Part(walk.part(outer * k / parts, outer * (k + 1) / parts))).collect();
                pool.scope(move |scope| {
                    for piece in pieces {
                        scope.spawn(move |_| {
                            let piece = piece;
                            // SAFETY: as below, for this part's indices: the parts split the
                            // outermost merged axis into disjoint ranges, so no element of a
                            // written operand is visited by two threads (a written view's
                            // elements are unique, and no two written views share one), and
                            // read operands are only read; the scope ends before the call
                            // returns, while the views are borrowed.
                            unsafe { piece.0.run_any::<V>(vectors, body) };
                        });
                    }
                });
                return Ok(());
            }
        }
        // SAFETY: every operand is a validated view of the shape (inputs broadcast with stride 0),
        // borrowed by the call for its duration (written ones uniquely, and no two written views
        // share an element: mutable views are unique and the borrow checker keeps them apart);
        // the walk visits each index once, in bounds.
        unsafe { walk.run_any::<V>(vectors, &body) };
        Ok(())
    }

    type RawError = KernelError;

    unsafe fn run_raw(
        self,
        instance: RawInstance,
        config: &LaunchConfig,
        views: &mut [RawArg<'_, Self>],
        scalars: &[&[u8]],
    ) -> Result<(), KernelError> {
        let args = argument_block(&instance, views, scalars, |view| view.ptr.expose_provenance() as u64)?;
        // SAFETY: every address is a host-accessible view's first element with its own extents and
        // strides, borrowed by the call for its duration (written views uniquely); the caller's
        // contract covers the body's accesses.
        unsafe { cxx::run(&instance, config, &args) }
    }
}

/// A part of a walk, handed to a worker thread.
struct Part<const R: usize, const N: usize>(Walk<R, N>);

// SAFETY: a part holds the operands' addresses for indices no other part visits (`Walk::part`);
// the thread it is sent to reads and writes only those, while the call that made it waits for
// every part (the pool's scope) and keeps the views borrowed.
unsafe impl<const R: usize, const N: usize> Send for Part<R, N> {}

/// A memory-order walk of `N` operands over merged axes.
#[derive(Clone, Copy)]
struct Walk<const R: usize, const N: usize> {
    /// Merged axes (the first `rank` entries), outermost first.
    rank: usize,
    extents: [usize; R],
    /// Byte strides per merged axis and operand.
    strides: [[isize; N]; R],
    /// The first element each operand visits.
    starts: [*mut u8; N],
    /// Each operand's element size in bytes.
    sizes: [isize; N],
    /// Which operands the kernel writes.
    writes: [bool; N],
}

impl<const R: usize, const N: usize> Walk<R, N> {
    /// Orders the axes of extent above 1 by the primary operand's stride, largest first; turns the
    /// axes it walks backwards around (for every operand); merges neighbours every operand steps
    /// through as one.
    #[inline]
    fn new(shape: [usize; R], operands: &[RawOperand<R>; N], writes: [bool; N], primary: usize) -> Self {
        let mut axes: [usize; R] = core::array::from_fn(|axis| axis);
        let mut count = 0;
        for (axis, &extent) in shape.iter().enumerate() {
            if extent > 1 {
                axes[count] = axis;
                count += 1;
            }
        }
        axes[..count].sort_unstable_by_key(|&axis| core::cmp::Reverse(operands[primary].strides[axis].unsigned_abs()));
        let mut starts: [*mut u8; N] = core::array::from_fn(|k| operands[k].ptr);
        let mut extents = [0usize; R];
        let mut strides = [[0isize; N]; R];
        let mut rank = 0;
        for &axis in &axes[..count] {
            let extent = shape[axis];
            let reverse = operands[primary].strides[axis] < 0;
            let mut step = [0isize; N];
            for k in 0..N {
                let bytes = operands[k].strides[axis].wrapping_mul(operands[k].size as isize);
                if reverse {
                    // Start at the last index and walk back: the same elements, forwards for the
                    // primary operand (in bounds: the last index is one of the view's).
                    starts[k] = starts[k].wrapping_offset(bytes.wrapping_mul(extent as isize - 1));
                    step[k] = bytes.wrapping_neg();
                } else {
                    step[k] = bytes;
                }
            }
            if rank > 0 && (0..N).all(|k| strides[rank - 1][k] == step[k].wrapping_mul(extent as isize)) {
                extents[rank - 1] *= extent;
                strides[rank - 1] = step;
            } else {
                extents[rank] = extent;
                strides[rank] = step;
                rank += 1;
            }
        }
        Self { rank, extents, strides, starts, sizes: operands.map(|op| op.size as isize), writes }
    }

    /// The walk of indices `lo..hi` of the outermost merged axis (the others whole).
    fn part(&self, lo: usize, hi: usize) -> Self {
        let mut part = *self;
        part.extents[0] = hi - lo;
        for k in 0..N {
            part.starts[k] = self.starts[k].wrapping_offset(self.strides[0][k].wrapping_mul(lo as isize));
        }
        part
    }

    /// Runs the walk with the build of `vectors`.
    ///
    /// # Safety
    ///
    /// As [`run`](Self::run); `vectors` at most what the CPU has (`cpu_vectors()`).
    #[inline(always)]
    unsafe fn run_any<V: ViewArgs<Cpu, R, N>>(&self, vectors: CpuVectors, body: &impl for<'a> Element<V::Items<'a>>) {
        #[cfg(target_arch = "x86_64")]
        match vectors {
            // SAFETY: the caller's contract; the CPU has AVX-512 (F, VL, BW, DQ), AVX2 and FMA,
            // which `run_avx512` is compiled for.
            CpuVectors::Avx512 => return unsafe { self.run_avx512::<V>(body) },
            // SAFETY: the caller's contract; the CPU has AVX2 and FMA, which `run_avx2` is
            // compiled for.
            CpuVectors::Avx2 => return unsafe { self.run_avx2::<V>(body) },
            CpuVectors::Baseline => {}
        }
        let _ = vectors;
        // SAFETY: the caller's contract.
        unsafe { self.run::<V>(body) }
    }

    /// [`run`](Self::run) compiled for AVX2 and FMA (256-bit vectors).
    ///
    /// # Safety
    ///
    /// As [`run`](Self::run), on a CPU with AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2<V: ViewArgs<Cpu, R, N>>(&self, body: &impl for<'a> Element<V::Items<'a>>) {
        // SAFETY: the caller's contract, which is `run`'s; `run` (and the kernel's body, inlined
        // into it) compiled for AVX2 and FMA, which the caller checked the CPU has.
        unsafe { self.run::<V>(body) }
    }

    /// [`run`](Self::run) compiled for AVX-512 (512-bit vectors).
    ///
    /// # Safety
    ///
    /// As [`run`](Self::run), on a CPU with AVX-512 F, VL, BW and DQ, AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    unsafe fn run_avx512<V: ViewArgs<Cpu, R, N>>(&self, body: &impl for<'a> Element<V::Items<'a>>) {
        // SAFETY: the caller's contract, which is `run`'s; `run` (and the kernel's body, inlined
        // into it) compiled for those features, which the caller checked the CPU has.
        unsafe { self.run::<V>(body) }
    }

    #[inline(always)]
    unsafe fn run<V: ViewArgs<Cpu, R, N>>(&self, body: &impl for<'a> Element<V::Items<'a>>) {
        if self.rank == 0 {
            // SAFETY: one element, index 0 of each operand.
            body.call(unsafe { V::items(self.starts) });
            return;
        }
        let inner = self.rank - 1;
        let len = self.extents[inner];
        let step = self.strides[inner];
        let unit = (0..N).all(|k| step[k] == self.sizes[k]);
        // A run that is not contiguous in every operand (a transposed view, an input broadcast
        // along it) is staged when long enough: copied in chunks to buffers, walked as slices.
        let staged = !unit && V::STAGED && len >= STAGE_MIN;
        if staged && self.rank >= 2 && step.iter().any(|s| s.unsigned_abs() >= FAR) {
            // An operand steps a cache line or more along the run (a transposed view): tiles.
            // SAFETY: the caller's contract.
            unsafe { self.run_tiled::<V>(body) };
            return;
        }
        let mut index = [0usize; R];
        let mut ptrs = self.starts;
        loop {
            if unit {
                // SAFETY: a run of `len` consecutive elements of each operand.
                unsafe { V::for_each_run(ptrs, len, body) };
            } else if staged {
                // SAFETY: a run of `len` elements of each operand, `step` bytes apart.
                unsafe { self.run_staged::<V>(ptrs, len, &step, body) };
            } else {
                let mut at = ptrs;
                for _ in 0..len {
                    // SAFETY: an element of each operand, visited once.
                    body.call(unsafe { V::items(at) });
                    for k in 0..N {
                        at[k] = at[k].wrapping_offset(step[k]);
                    }
                }
            }
            // The next run: an odometer over the outer axes, innermost-but-one first.
            if !self.advance(inner, &mut index, &mut ptrs) {
                return;
            }
        }
    }
}

/// The shortest run the walk stages (below it, a run is walked element by element in place).
const STAGE_MIN: usize = 16;

/// The step (bytes) along the run from which an operand is far-strided: a cache line.
const FAR: usize = 64;
/// A tile of the two innermost merged axes, when an operand is far-strided along the run: rows of
/// the next axis by elements of the run (fewer for elements above 4 bytes: `TILE_BYTES`).
const TILE_ROWS: usize = 16;
const TILE_COLS: usize = 64;

/// The bytes of one operand's tile buffer ([`Walk::run_tiled`]).
const TILE_BYTES: usize = 4096;

/// One operand's tile buffer, aligned as [`Stage`].
#[repr(C, align(64))]
struct Tile([MaybeUninit<u8>; TILE_BYTES]);

/// One operand's staging buffer: [`STAGE_BYTES`] bytes, aligned for any element that
/// [`stage_fits`](super::operand::stage_fits).
#[repr(C, align(64))]
struct Stage([MaybeUninit<u8>; STAGE_BYTES]);

impl<const R: usize, const N: usize> Walk<R, N> {
    /// Steps `index` (and each operand's pointer with it) to the next index of the axes before
    /// `axes`, the last of them fastest, as an odometer; false once every index was visited.
    #[inline(always)]
    fn advance(&self, axes: usize, index: &mut [usize; R], ptrs: &mut [*mut u8; N]) -> bool {
        let mut axis = axes;
        loop {
            if axis == 0 {
                return false;
            }
            axis -= 1;
            index[axis] += 1;
            for (ptr, &stride) in ptrs.iter_mut().zip(&self.strides[axis]) {
                *ptr = ptr.wrapping_offset(stride);
            }
            if index[axis] < self.extents[axis] {
                return true;
            }
            for (ptr, &stride) in ptrs.iter_mut().zip(&self.strides[axis]) {
                let back = stride.wrapping_mul(self.extents[axis] as isize);
                *ptr = ptr.wrapping_offset(back.wrapping_neg());
            }
            index[axis] = 0;
        }
    }

    /// Walks the index space in tiles of the two innermost merged axes (up to [`TILE_ROWS`]
    /// indices of the next-to-innermost by up to [`TILE_COLS`] of the innermost). Each view that
    /// is not contiguous along the run is copied tile by tile into a buffer of its own, column by
    /// column — the elements of one index of the run down the tile's rows, which for a transposed
    /// view are consecutive: its cache lines are read whole, once — and each row of the tile is
    /// then walked as slices ([`ViewArgs::for_each_run`]: vector code); written views are copied
    /// back the same way. Every index is visited once, each element with the body's operations on
    /// its own values (the bits of the walk in place).
    ///
    /// # Safety
    ///
    /// As [`run`](Self::run), with `rank ≥ 2` and every view's element staged (`V::STAGED`).
    #[inline(always)]
    unsafe fn run_tiled<V: ViewArgs<Cpu, R, N>>(&self, body: &impl for<'a> Element<V::Items<'a>>) {
        let inner = self.rank - 1;
        let outer = inner - 1;
        let (len, rows) = (self.extents[inner], self.extents[outer]);
        let (step, down) = (self.strides[inner], self.strides[outer]);
        let staged: [bool; N] = core::array::from_fn(|k| step[k] != self.sizes[k]);
        // The tile's width: as many indices of the run as a tile of the widest staged element
        // fits in a buffer (at least two: elements are at most `STAGE_BYTES / 16` bytes).
        let widest = (0..N).filter(|&k| staged[k]).map(|k| self.sizes[k].unsigned_abs()).max().unwrap_or(1);
        let cols = TILE_COLS.min(TILE_BYTES / (TILE_ROWS * widest)).max(1);
        let mut tiles: [Tile; N] = [const { Tile([MaybeUninit::uninit(); TILE_BYTES]) }; N];
        // One raw pointer to the buffers, from which each operand's is derived.
        let base = tiles.as_mut_ptr();
        let buffers: [*mut u8; N] = core::array::from_fn(|k| base.wrapping_add(k).cast::<u8>());
        let mut index = [0usize; R];
        let mut ptrs = self.starts;
        loop {
            let mut r0 = 0;
            while r0 < rows {
                let height = TILE_ROWS.min(rows - r0);
                let mut c0 = 0;
                while c0 < len {
                    let width = cols.min(len - c0);
                    // The tile's corner in each operand.
                    let corner: [*mut u8; N] = core::array::from_fn(|k| {
                        ptrs[k]
                            .wrapping_offset(down[k].wrapping_mul(r0 as isize))
                            .wrapping_offset(step[k].wrapping_mul(c0 as isize))
                    });
                    // A row of a buffer holds `width` elements.
                    let pitch: [isize; N] = core::array::from_fn(|k| self.sizes[k].wrapping_mul(width as isize));
                    for k in (0..N).filter(|&k| staged[k]) {
                        for c in 0..width {
                            let column = corner[k].wrapping_offset(step[k].wrapping_mul(c as isize));
                            let place = buffers[k].wrapping_offset(self.sizes[k].wrapping_mul(c as isize));
                            // SAFETY: the tile's `height` elements of operand `k` at index `c0 + c`
                            // of the run (in bounds: `r0 + height ≤ rows`, `c0 + width ≤ len`),
                            // into column `c` of its own buffer: `height · width` elements of at
                            // most `TILE_BYTES` bytes in all (`cols`), aligned (`Tile`'s
                            // alignment, `V::STAGED`), no operand's memory.
                            unsafe { V::gather(k, column, down[k], height, place, pitch[k]) };
                        }
                    }
                    for r in 0..height {
                        let at: [*mut u8; N] = core::array::from_fn(|k| {
                            if staged[k] {
                                buffers[k].wrapping_offset(pitch[k].wrapping_mul(r as isize))
                            } else {
                                corner[k].wrapping_offset(down[k].wrapping_mul(r as isize))
                            }
                        });
                        // SAFETY: `width` consecutive elements from each `at[k]`: the operand's own
                        // (row `r0 + r` of the tile, contiguous along the run) or its buffer's
                        // copies of them, which no other reference reaches.
                        unsafe { V::for_each_run(at, width, body) };
                    }
                    for k in (0..N).filter(|&k| staged[k] && self.writes[k]) {
                        for c in 0..width {
                            let column = corner[k].wrapping_offset(step[k].wrapping_mul(c as isize));
                            let place = buffers[k].wrapping_offset(self.sizes[k].wrapping_mul(c as isize));
                            // SAFETY: the tile's elements of written operand `k` at index `c0 + c`
                            // of the run, unaliased (caller), from the buffer the body wrote.
                            unsafe { V::scatter(k, place, pitch[k], column, down[k], height) };
                        }
                    }
                    c0 += width;
                }
                r0 += height;
            }
            // The next pair of inner axes: an odometer over the outer ones.
            if !self.advance(outer, &mut index, &mut ptrs) {
                return;
            }
        }
    }

    /// Walks one run whose operands are not all contiguous: in chunks, each operand whose step is
    /// not its element size copied into its own buffer ([`ViewRef::gather`]; an input broadcast
    /// along the run, step 0, once for the whole run), the chunk walked through slices as a
    /// contiguous run is ([`ViewArgs::for_each_run`]: vector code), and the written operands'
    /// chunks copied back ([`ViewRef::scatter`]). Each element gets the body's operations on its
    /// own values, so the bits are those of the walk in place.
    ///
    /// # Safety
    ///
    /// For each operand `k`, `ptrs[k] + i·step[k]` (bytes) for `i < len` are elements of its
    /// operand, as [`run`](Self::run) states for the run; the written ones are unaliased and
    /// overlap no other operand's (`run_views`' contract).
    ///
    /// [`ViewRef::gather`]: super::ViewRef::gather
    /// [`ViewRef::scatter`]: super::ViewRef::scatter
    #[inline(always)]
    unsafe fn run_staged<V: ViewArgs<Cpu, R, N>>(
        &self,
        ptrs: [*mut u8; N],
        len: usize,
        step: &[isize; N],
        body: &impl for<'a> Element<V::Items<'a>>,
    ) {
        let mut stages: [Stage; N] = [const { Stage([MaybeUninit::uninit(); STAGE_BYTES]) }; N];
        // One raw pointer to the buffers, from which each operand's is derived (no later borrow of
        // `stages` invalidates them).
        let base = stages.as_mut_ptr();
        let buffers: [*mut u8; N] = core::array::from_fn(|k| base.wrapping_add(k).cast::<u8>());
        // Elements per chunk: as many as the widest staged element fits.
        let chunk = (0..N)
            .filter(|&k| step[k] != self.sizes[k])
            .fold(STAGE_BYTES, |c, k| c.min(STAGE_BYTES / self.sizes[k].unsigned_abs()));
        let mut repeated = [false; N];
        let mut done = 0;
        while done < len {
            let n = chunk.min(len - done);
            let here: [*mut u8; N] =
                core::array::from_fn(|k| ptrs[k].wrapping_offset(step[k].wrapping_mul(done as isize)));
            let mut at = here;
            for k in 0..N {
                if step[k] == self.sizes[k] {
                    continue;
                }
                at[k] = buffers[k];
                if step[k] == 0 && repeated[k] {
                    // The same element, already repeated through the buffer (the first chunk is
                    // the longest).
                    continue;
                }
                // SAFETY: `n` elements of operand `k` from `here[k]`, `step[k]` apart (of the
                // caller's run), into its own buffer: at most `STAGE_BYTES` bytes (`chunk`),
                // aligned for the element (`Stage`'s alignment, `V::STAGED`), and no operand's
                // memory.
                unsafe { V::gather(k, here[k], step[k], n, buffers[k], self.sizes[k]) };
                repeated[k] = true;
            }
            // SAFETY: `n` consecutive elements from each `at[k]`: the operand's own where it
            // steps by its element, else its buffer's copies, which no other reference reaches.
            unsafe { V::for_each_run(at, n, body) };
            for k in 0..N {
                if self.writes[k] && step[k] != self.sizes[k] {
                    // SAFETY: the chunk's elements of written operand `k`, unaliased (caller), and
                    // the buffer the body wrote them to.
                    unsafe { V::scatter(k, buffers[k], self.sizes[k], here[k], step[k], n) };
                }
            }
            done += n;
        }
    }
}

/// The operand impls of an executor of host and managed views (`Extra = ()`): shared and mutable
/// views read, mutable views of the output's rank written.
macro_rules! host_operands {
    ($executor:ty) => {
        impl<
            T: $crate::dtype::DlElement,
            const Q: usize,
            const R: usize,
            E: $crate::view::Extents<Q>,
            L: $crate::view::Layout,
            S: $crate::space::HostAccessible,
        > $crate::kernel::Read<$executor, R> for $crate::view::Mdspan<'_, T, Q, E, L, S>
        {
            type Elem = T;

            #[inline(always)]
            fn operand(&self) -> $crate::kernel::Operand<'_, $executor, R> {
                $crate::kernel::Operand {
                    raw: $crate::kernel::widen(self.data_handle(), self.mapping()),
                    writes: false,
                    rank: Q,
                    extra: (),
                }
            }
        }

        impl<
            T: $crate::dtype::DlElement,
            const Q: usize,
            const R: usize,
            E: $crate::view::Extents<Q>,
            L: $crate::view::Layout,
            S: $crate::space::HostAccessible,
        > $crate::kernel::Read<$executor, R> for $crate::view::MdspanMut<'_, T, Q, E, L, S>
        {
            type Elem = T;

            #[inline(always)]
            fn operand(&self) -> $crate::kernel::Operand<'_, $executor, R> {
                Operand {
                    raw: $crate::kernel::widen(self.data_handle().cast_const(), self.mapping()),
                    writes: false,
                    rank: Q,
                    extra: (),
                }
            }
        }

        impl<
            T: $crate::dtype::DlElement,
            const R: usize,
            E: $crate::view::Extents<R>,
            L: $crate::view::Layout,
            S: $crate::space::HostAccessible,
        > $crate::kernel::Write<$executor, R> for $crate::view::MdspanMut<'_, T, R, E, L, S>
        {
            #[inline(always)]
            fn operand_mut(&mut self) -> $crate::kernel::Operand<'_, $executor, R> {
                Operand {
                    raw: $crate::kernel::widen(self.data_handle().cast_const(), self.mapping()),
                    writes: true,
                    rank: R,
                    extra: (),
                }
            }
        }
    };
}
#[cfg(feature = "cuda")]
pub(crate) use host_operands;

host_operands!(Cpu);
