//! Launch planning: the operands' axes merged, the kernel shape and index width chosen, and the
//! parameters the kernel reads. Pure arithmetic on extents, strides and addresses: the host-logic
//! tests run the very same plans.

use super::module::ModuleKey;
use crate::cuda::abi::{
    BLOCK, IndexWidth, KernelShape, MAX_KERNEL_RANK, MAX_OPERANDS, ParamOperand, Params, SCALAR_BYTES, ScalarArgs,
    TILE, TILE_MAX_ELEMENT,
};
use crate::cuda::error::CudaError;
use crate::kernel::{Executor, Instance, broadcast};

/// The most blocks a launch uses; the kernels' grid-stride loops cover any larger extent.
pub const MAX_GRID: u32 = 1 << 16;
/// The shortest axis worth tiling: below it most of a tile's threads would idle, and the strided
/// kernel's reads across the short axis stay within a few cache sectors.
pub const TILE_MIN_EXTENT: usize = 8;

/// One operand of a launch: the device address of the element at index 0, its strides in
/// elements, and its element size and alignment in bytes.
///
/// ```
/// use dlspan::cuda::kernel::Operand;
/// let column = Operand::new(0x1000, [1, 3], 4);
/// assert_eq!(column.strides, [1, 3]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand<const R: usize> {
    /// Address of the element at index `[0; R]`.
    pub address: u64,
    /// Strides in elements.
    pub strides: [isize; R],
    /// Element size in bytes.
    pub size: usize,
}

impl<const R: usize> Operand<R> {
    /// An operand.
    ///
    /// ```
    /// let op = dlspan::cuda::kernel::Operand::new(64, [0], 8);
    /// assert_eq!((op.address, op.size), (64, 8));
    /// ```
    pub const fn new(address: u64, strides: [isize; R], size: usize) -> Self {
        Self { address, strides, size }
    }
}

/// A planned launch: which kernel of the module, its parameters and its grid.
///
/// ```
/// use dlspan::cuda::kernel::{IndexWidth, KernelShape, Operand, plan};
/// // A 4x6 row-major f32 copy into a transposed (column-major) output.
/// let out = Operand::new(0x10000, [1, 4], 4);
/// let src = Operand::new(0x20000, [6, 1], 4);
/// let p = plan([4, 6], &[out, src])?.expect("not empty");
/// assert_eq!((p.shape, p.index), (KernelShape::Strided { rank: 2 }, IndexWidth::I32));
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The kernel shape.
    pub shape: KernelShape,
    /// The index width.
    pub index: IndexWidth,
    /// Blocks in the grid.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// The kernel's parameters (scalars still zero).
    pub params: Params,
}

impl Plan {
    /// A plan with every field zero (what [`plan_into`] fills).
    pub const EMPTY: Self = Self {
        shape: KernelShape::Flat { vector: 1 },
        index: IndexWidth::I32,
        grid: 0,
        block: 0,
        params: Params {
            n: 0,
            ndim: 0,
            reserved: 0,
            extent: [0; MAX_KERNEL_RANK],
            magic: [0; MAX_KERNEL_RANK],
            shift: [0; MAX_KERNEL_RANK],
            op: [ParamOperand { ptr: 0, stride: [0; MAX_KERNEL_RANK] }; MAX_OPERANDS],
            scalar: ScalarArgs([0; SCALAR_BYTES]),
        },
    };
}

/// Plans an element-wise launch over `extents`: `operands[0]` is the output, the others inputs of
/// the same extents (zero strides broadcast), at most [`MAX_OPERANDS`]. `None` when there are no
/// elements.
///
/// Axes of extent 1 are dropped, the rest ordered by the output's stride (largest first) and merged
/// wherever every operand steps through them as through one axis. Every operand contiguous in the
/// same order gives a flat kernel with the widest aligned vector loads the element sizes allow. A
/// single input read fastest along another axis than the output (a transpose) gives the tiled
/// kernel when both axes have at least [`TILE_MIN_EXTENT`] elements and the elements at most
/// [`TILE_MAX_ELEMENT`] bytes: the input's axis moves next to the output's innermost in the
/// parameters. Anything else is a strided kernel of the merged rank. Index arithmetic is 32-bit
/// when the element count and every operand's reach fit `i32`.
///
/// # Errors
///
/// [`CudaError::RankTooLarge`] when more than [`MAX_KERNEL_RANK`] axes remain after merging.
///
/// ```
/// use dlspan::cuda::kernel::{KernelShape, Operand, plan};
/// let a = Operand::new(0x1000, [8, 1], 2);
/// let b = Operand::new(0x2000, [8, 1], 2);
/// let p = plan([4, 8], &[a, b])?.unwrap();
/// assert_eq!(p.shape, KernelShape::Flat { vector: 8 }); // 32 f16 as 16-byte packs
/// assert!(plan([0, 8], &[a, b])?.is_none());
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub fn plan<const R: usize>(extents: [usize; R], operands: &[Operand<R>]) -> Result<Option<Plan>, CudaError> {
    plan_with(extents, operands, true)
}

/// As [`plan`], with tiles only when `tiles` (the module has a tiled kernel: copies and casts;
/// element-wise modules have none).
///
/// # Errors
///
/// As [`plan`].
pub fn plan_with<const R: usize>(
    extents: [usize; R],
    operands: &[Operand<R>],
    tiles: bool,
) -> Result<Option<Plan>, CudaError> {
    let mut plan = Plan::EMPTY;
    Ok(plan_into(extents, operands, tiles, &mut plan)?.then_some(plan))
}

/// As [`plan_with`], into `plan` (what a launch does: the parameter block, 1.5 KB, is filled where
/// it is passed from): `false` when there are no elements. Fields the kernel does not read for this
/// launch (axes past `ndim`, operands past the last, scalar bytes between scalars) keep what `plan`
/// held ([`Plan::EMPTY`]'s zeros for a fresh plan).
///
/// # Errors
///
/// As [`plan`].
#[inline]
pub fn plan_into<const R: usize>(
    extents: [usize; R],
    operands: &[Operand<R>],
    tiles: bool,
    plan: &mut Plan,
) -> Result<bool, CudaError> {
    let count = operands.len();
    assert!((1..=MAX_OPERANDS).contains(&count), "a launch has one to {MAX_OPERANDS} operands");
    if extents.contains(&0) {
        return Ok(false);
    }
    let n: usize = extents.iter().product();
    // Axes of extent > 1, outermost (largest output stride) first.
    let mut axes = [(0usize, [0isize; MAX_OPERANDS]); R];
    let mut found = 0;
    for (axis, &extent) in extents.iter().enumerate() {
        if extent > 1 {
            let mut strides = [0isize; MAX_OPERANDS];
            for (slot, op) in strides.iter_mut().zip(operands) {
                *slot = op.strides[axis];
            }
            axes[found] = (extent, strides);
            found += 1;
        }
    }
    let axes = &mut axes[..found];
    axes.sort_by_key(|&(_, strides)| core::cmp::Reverse(strides[0].unsigned_abs()));
    let mut merged = [(0usize, [0isize; MAX_OPERANDS]); R];
    let mut rank = 0;
    for &(extent, strides) in axes.iter() {
        if rank > 0 {
            let outer = &mut merged[rank - 1];
            if (0..count).all(|k| outer.1[k] == strides[k] * extent as isize) {
                outer.0 *= extent;
                outer.1 = strides;
                continue;
            }
        }
        merged[rank] = (extent, strides);
        rank += 1;
    }
    if rank > MAX_KERNEL_RANK {
        return Err(CudaError::RankTooLarge { rank, max: MAX_KERNEL_RANK });
    }
    let merged = &mut merged[..rank];
    let flat = rank == 0 || (rank == 1 && (0..count).all(|k| merged[0].1[k] == 1));
    let tiled = match tile_axis(merged, operands) {
        Some(axis) if tiles && !flat => {
            // The input's axis moves next to the output's innermost (which stays last).
            merged[axis..rank - 1].rotate_left(1);
            true
        }
        _ => false,
    };

    // 32-bit indices: the element count and every operand's reach fit i32, and every extent has a
    // 32-bit divisor.
    let reach_fits = (0..count).all(|k| {
        merged
            .iter()
            .try_fold(0usize, |acc, &(e, s)| acc.checked_add((e - 1).checked_mul(s[k].unsigned_abs())?))
            .is_some_and(|reach| reach <= i32::MAX as usize)
    });
    // Only what the kernel reads is written: the axes below `ndim`, the operands it has.
    let params = &mut plan.params;
    params.n = n as u64;
    params.ndim = rank as i32;
    params.reserved = 0;
    for (slot, op) in params.op.iter_mut().zip(operands) {
        slot.ptr = op.address;
    }
    let mut divisors = n <= i32::MAX as usize && reach_fits;
    for (axis, &(extent, strides)) in merged.iter().enumerate() {
        params.extent[axis] = extent as i64;
        for (k, slot) in params.op.iter_mut().enumerate().take(count) {
            slot.stride[axis] = strides[k] as i64;
        }
        match divisor(extent) {
            Some((magic, shift)) => (params.magic[axis], params.shift[axis]) = (magic, shift),
            None => divisors = false,
        }
    }
    let index = if divisors { IndexWidth::I32 } else { IndexWidth::I64 };

    let shape = if tiled {
        KernelShape::Tiled
    } else if flat {
        let widest = operands.iter().map(|op| op.size).max().unwrap_or(1);
        let powers = operands.iter().all(|op| op.size.is_power_of_two());
        let mut vector = 16 / widest.max(1);
        while vector > 1 && !(powers && operands.iter().all(|op| op.address % (vector * op.size) as u64 == 0)) {
            vector /= 2;
        }
        KernelShape::Flat { vector: vector.max(1) as u8 }
    } else if rank <= 4 {
        KernelShape::Strided { rank: rank as u8 }
    } else {
        KernelShape::General
    };
    let work = match shape {
        KernelShape::Flat { vector } => n.div_ceil(usize::from(vector)),
        // One block per tile.
        KernelShape::Tiled => {
            let (batch, tiled_axes) = merged.split_at(rank - 2);
            let tiles = batch.iter().map(|&(e, _)| e).product::<usize>()
                * tiled_axes.iter().map(|&(e, _)| e.div_ceil(TILE)).product::<usize>();
            tiles * BLOCK as usize
        }
        _ => n,
    };
    let grid = work.div_ceil(BLOCK as usize).clamp(1, MAX_GRID as usize) as u32;
    (plan.shape, plan.index, plan.grid, plan.block) = (shape, index, grid, BLOCK);
    Ok(true)
}

/// The most blocks of a sum's first pass: its second pass is one block, whose threads add at most
/// `SUM_BLOCKS / BLOCK` partial sums each.
///
/// ```
/// use dlspan::cuda::kernel::{BLOCK, SUM_BLOCKS};
/// assert_eq!(SUM_BLOCKS / BLOCK, 4);
/// ```
pub const SUM_BLOCKS: u32 = 1024;

/// The two launches of a sum over `input` (the view's first element and strides, any layout):
/// the first reads the input (`op[0]`) and writes one partial sum per block at `partials` (an
/// array of [`SUM_BLOCKS`] + 1 accumulators), the second, one block, adds those partials (flat, from
/// `partials`) and writes the total at `partials + grid * acc_size` (the array's element after the
/// first pass's partials); `None` when there are no elements.
///
/// # Errors
///
/// [`CudaError::RankTooLarge`] when more than [`MAX_KERNEL_RANK`] axes remain after merging.
///
/// ```
/// use dlspan::cuda::kernel::{KernelShape, Operand, SUM_BLOCKS, sum_plans};
/// // A transposed f16 matrix is read as one contiguous run: the order of a sum's reads is free.
/// let transposed = Operand::new(0x1000, [1, 64], 2);
/// let (first, _, _) = sum_plans([64, 1000], transposed, 0x9000, 4)?.expect("not empty");
/// assert_eq!(first.shape, KernelShape::Flat { vector: 1 });
/// // Every other column of it is strided.
/// let columns = Operand::new(0x1000, [1, 128], 2);
/// let (first, second, total) = sum_plans([64, 1000], columns, 0x9000, 4)?.expect("not empty");
/// assert_eq!(first.shape, KernelShape::Strided { rank: 2 });
/// assert!(first.grid <= SUM_BLOCKS && second.grid == 1);
/// assert_eq!((second.params.op[0].ptr, second.params.n), (0x9000, u64::from(first.grid)));
/// assert_eq!(total, 0x9000 + 4 * u64::from(first.grid));
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub fn sum_plans<const R: usize>(
    extents: [usize; R],
    input: Operand<R>,
    partials: u64,
    acc_size: usize,
) -> Result<Option<(Plan, Plan, u64)>, CudaError> {
    let mut first = Plan::EMPTY;
    if !plan_into(extents, &[input], false, &mut first)? {
        return Ok(None);
    }
    if let KernelShape::Flat { .. } = first.shape {
        first.shape = KernelShape::Flat { vector: 1 };
    }
    let n = first.params.n as usize;
    first.grid = n.div_ceil(BLOCK as usize).clamp(1, SUM_BLOCKS as usize) as u32;
    first.params.op[1].ptr = partials;
    let total = partials + (first.grid as u64) * acc_size as u64;
    let mut second = Plan::EMPTY;
    second.shape = KernelShape::Flat { vector: 1 };
    second.index = IndexWidth::I32;
    (second.grid, second.block) = (1, BLOCK);
    second.params.n = u64::from(first.grid);
    second.params.ndim = 1;
    second.params.extent[0] = i64::from(first.grid);
    second.params.op[0].ptr = partials;
    second.params.op[0].stride[0] = 1;
    second.params.op[1].ptr = total;
    Ok(Some((first, second, total)))
}

/// Everything a launch does on the host before the driver call, but the module lookup: the plan of
/// `key`'s kernel over `operands` (output first, slot order for element-wise kernels), with
/// `scalars` (declaration order) placed where the kernel reads them; `None` when there are no
/// elements. Copies and casts take no scalar.
///
/// # Errors
///
/// [`CudaError::RankTooLarge`], [`CudaError::ScalarTooLarge`].
///
/// ```
/// use dlspan::cuda::KernelKind;
/// use dlspan::cuda::kernel::{KernelShape, ModuleKey, Operand, prepare};
/// let key = ModuleKey::new::<f32, f32>(KernelKind::Fill)?;
/// let out = Operand::new(0x1000, [4, 1], 4);
/// let plan = prepare(&key, [3, 4], &[out], &[&2.5f32.to_ne_bytes()])?.expect("not empty");
/// assert_eq!(plan.shape, KernelShape::Flat { vector: 4 });
/// assert_eq!(plan.params.scalar.0[..4], 2.5f32.to_ne_bytes());
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
pub fn prepare<const R: usize>(
    key: &ModuleKey,
    extents: [usize; R],
    operands: &[Operand<R>],
    scalars: &[&[u8]],
) -> Result<Option<Plan>, CudaError> {
    let mut plan = Plan::EMPTY;
    Ok(prepare_into(key, extents, operands, scalars, &mut plan)?.then_some(plan))
}

/// As [`prepare`], into `plan` ([`plan_into`]): `false` when there are no elements.
///
/// # Errors
///
/// As [`prepare`].
#[inline]
pub fn prepare_into<const R: usize>(
    key: &ModuleKey,
    extents: [usize; R],
    operands: &[Operand<R>],
    scalars: &[&[u8]],
    plan: &mut Plan,
) -> Result<bool, CudaError> {
    if !plan_into(extents, operands, key.tiles(), plan)? {
        return Ok(false);
    }
    if let ModuleKey::Elementwise(instance) = key {
        let mut end = 0usize;
        for (p, bytes) in instance.def().scalars().zip(scalars) {
            let ty = instance.ty(p.ty);
            debug_assert_eq!(bytes.len(), ty.size, "scalar `{}`", p.name);
            let offset = end.next_multiple_of(ty.align.clamp(1, 16));
            end = offset + bytes.len();
            let slot = plan
                .params
                .scalar
                .0
                .get_mut(offset..end)
                .ok_or(CudaError::ScalarTooLarge { size: end, max: SCALAR_BYTES })?;
            slot.copy_from_slice(bytes);
        }
    }
    Ok(true)
}

/// The module and plan of an element-wise kernel's launch over `operands` (declaration order, the
/// views of any executor): the inputs broadcast to the primary (first written) view's shape, the
/// views passed in slot order (the primary first), the scalars (declaration order) placed; `None`
/// when there are no elements. The launch path of a stream, and the host-logic tier's.
///
/// # Errors
///
/// [`DlpackError::KernelShapeMismatch`](crate::DlpackError::KernelShapeMismatch) (in
/// [`CudaError::View`]) for a view that is not the primary view's shape (written views) or does not broadcast to it (read
/// views); [`CudaError::RankTooLarge`], [`CudaError::ScalarTooLarge`].
pub fn elementwise_plan<E: Executor, const R: usize>(
    instance: Instance,
    operands: &mut [crate::kernel::Operand<'_, E, R>],
    scalars: &[&[u8]],
) -> Result<Option<(ModuleKey, Plan)>, CudaError> {
    let mut plan = Plan::EMPTY;
    Ok(elementwise_plan_into(instance, operands, scalars, &mut plan)?
        .then_some((ModuleKey::Elementwise(instance), plan)))
}

/// As [`elementwise_plan`], into `plan`: `false` when there are no elements.
///
/// # Errors
///
/// As [`elementwise_plan`].
#[inline]
pub fn elementwise_plan_into<E: Executor, const R: usize>(
    instance: Instance,
    operands: &mut [crate::kernel::Operand<'_, E, R>],
    scalars: &[&[u8]],
    plan: &mut Plan,
) -> Result<bool, CudaError> {
    let def = instance.def();
    let shape = broadcast(operands, def)?;
    let mut kernel_operands = [Operand::new(0, [0; R], 1); MAX_OPERANDS];
    for (slot, k) in def.slots().enumerate() {
        let raw = operands[k].raw;
        kernel_operands[slot] = Operand::new(raw.ptr.addr() as u64, raw.strides, raw.size);
    }
    prepare_into(&ModuleKey::Elementwise(instance), shape, &kernel_operands[..operands.len()], scalars, plan)
}

/// The merged axis to tile with the output's innermost (the last) in a launch of one input: the
/// axis the input is read along fastest (its smallest nonzero stride), when that is not the
/// output's innermost, both axes are long enough for a tile and the elements small enough.
fn tile_axis<const R: usize>(merged: &[(usize, [isize; MAX_OPERANDS])], operands: &[Operand<R>]) -> Option<usize> {
    let [out, input] = operands else { return None };
    if merged.len() < 2 || out.size.max(input.size) > TILE_MAX_ELEMENT {
        return None;
    }
    let inner = merged.len() - 1;
    let along_inner = merged[inner].1[1].unsigned_abs();
    // An input broadcast along the output's innermost axis is one address per warp: coalesced.
    if along_inner == 0 {
        return None;
    }
    let (axis, along_axis) = merged[..inner]
        .iter()
        .enumerate()
        .filter(|(_, (_, strides))| strides[1] != 0)
        .map(|(axis, (_, strides))| (axis, strides[1].unsigned_abs()))
        .min_by_key(|&(_, stride)| stride)?;
    let long_enough = merged[inner].0 >= TILE_MIN_EXTENT && merged[axis].0 >= TILE_MIN_EXTENT;
    (along_axis < along_inner && long_enough).then_some(axis)
}

/// The multiplier and shift of the 32-bit division by `d` (`q = (umulhi(x, m) + x) >> s` for
/// every `x < 2^31`), or `None` when `d` is too large for it.
fn divisor(d: usize) -> Option<(u32, u32)> {
    if d == 0 || d > i32::MAX as usize {
        return None;
    }
    if d.is_power_of_two() {
        // (umulhi(x, 1) + x) >> log2(d) = x >> log2(d), with no division to make the multiplier.
        return Some((1, d.trailing_zeros()));
    }
    let d = d as u64;
    let shift = 64 - (d - 1).leading_zeros() as u64;
    let shift = if d == 1 { 0 } else { shift };
    let magic = ((1u64 << 32) * ((1u64 << shift) - d)) / d + 1;
    u32::try_from(magic).ok().map(|m| (m, shift as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisor_divides_like_integer_division() {
        for d in (1..2000usize).chain([65535, 65536, 1 << 20, (1 << 30) + 7, i32::MAX as usize]) {
            let Some((m, s)) = divisor(d) else { continue };
            for x in [0u32, 1, 2, 3, d as u32 - 1, d as u32, d as u32 + 1, 123_456_789, i32::MAX as u32] {
                let hi = ((u64::from(x) * u64::from(m)) >> 32) as u32;
                assert_eq!((hi + x) >> s, x / d as u32, "x = {x}, d = {d}");
            }
        }
    }

    #[test]
    fn merges_contiguous_axes_and_keeps_transposes() {
        let out = Operand::new(0, [12, 4, 1], 4);
        let p = plan([2, 3, 4], &[out, out]).unwrap().unwrap();
        assert_eq!(p.shape, KernelShape::Flat { vector: 4 });
        let t = Operand::new(0, [1, 2, 6], 4);
        let p = plan([2, 3, 4], &[out, t]).unwrap().unwrap();
        assert_eq!(p.shape, KernelShape::Strided { rank: 3 });
    }

    /// The plan of a copy `out <- input` of 4-byte elements.
    fn copy<const R: usize>(extents: [usize; R], out: [isize; R], input: [isize; R]) -> Plan {
        plan(extents, &[Operand::new(0, out, 4), Operand::new(1 << 20, input, 4)]).unwrap().unwrap()
    }

    #[test]
    fn transposes_are_tiled_with_the_inputs_axis_next_to_the_outputs() {
        // A 2-d transpose: the output is row-major, the input column-major.
        let p = copy([64, 100], [100, 1], [1, 64]);
        assert_eq!(p.shape, KernelShape::Tiled);
        assert_eq!((p.params.ndim, p.params.extent[..2].to_vec()), (2, vec![64, 100]));
        assert_eq!((p.params.op[1].stride[0], p.params.op[1].stride[1]), (1, 64));
        // One block per 32 x 32 tile: 2 x 4.
        assert_eq!(p.grid, 8);
        // A 3-d permutation: the output's innermost is axis 2, the input's axis 0; axis 1 numbers
        // the tiles and comes first.
        let p = copy([40, 5, 50], [250, 50, 1], [1, 40, 200]);
        assert_eq!(p.shape, KernelShape::Tiled);
        assert_eq!(p.params.extent[..3], [5, 40, 50]);
        assert_eq!(p.params.op[0].stride[..3], [50, 250, 1]);
        assert_eq!(p.params.op[1].stride[..3], [40, 1, 200]);
        assert_eq!(p.grid, 5 * 2 * 2);
    }

    #[test]
    fn tiles_only_where_they_help() {
        // Both read fastest along the same axis (a strided sub-view): no tile.
        assert_eq!(copy([64, 100], [100, 1], [200, 1]).shape, KernelShape::Strided { rank: 2 });
        // An axis shorter than a useful tile.
        assert_eq!(copy([4, 100], [100, 1], [1, 4]).shape, KernelShape::Strided { rank: 2 });
        assert_eq!(copy([100, TILE_MIN_EXTENT - 1], [7, 1], [1, 100]).shape, KernelShape::Strided { rank: 2 });
        assert_eq!(copy([100, TILE_MIN_EXTENT], [8, 1], [1, 100]).shape, KernelShape::Tiled);
        // An input broadcast along the output's innermost axis is read one address per warp.
        assert_eq!(copy([64, 100], [100, 1], [1, 0]).shape, KernelShape::Strided { rank: 2 });
        // Two inputs (add, axpy) and large elements are not tiled.
        let (out, a) = (Operand::new(0, [100, 1], 4), Operand::new(1 << 20, [1, 64], 4));
        assert_eq!(plan([64, 100], &[out, a, a]).unwrap().unwrap().shape, KernelShape::Strided { rank: 2 });
        let big = |strides| Operand::new(0, strides, TILE_MAX_ELEMENT + 1);
        assert_eq!(
            plan([64, 100], &[big([100, 1]), big([1, 64])]).unwrap().unwrap().shape,
            KernelShape::Strided { rank: 2 }
        );
        let largest = |strides| Operand::new(0, strides, TILE_MAX_ELEMENT);
        assert_eq!(plan([64, 100], &[largest([100, 1]), largest([1, 64])]).unwrap().unwrap().shape, KernelShape::Tiled);
    }
}
