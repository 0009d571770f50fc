//! The launch ABI every kernel shares: the operations, how a kernel walks its elements, the width
//! of its index arithmetic, the limits, and the parameter block that `include/dlspan.cuh`'s
//! `dl_params` mirrors field for field.
//!
//! A leaf (it uses nothing of the crate): the error type names the operations, the code generator
//! writes kernels of these shapes and limits, and the planner fills the parameter block, each from
//! this one definition.

use core::fmt;

/// An operation with a kernel.
///
/// ```
/// use dlspan::cuda::KernelKind;
/// assert_eq!(KernelKind::ALL.len(), 8);
/// assert_eq!(KernelKind::Fill.inputs(), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// `out = a` (any element type).
    Copy,
    /// `out = value` (any element type).
    Fill,
    /// `out = a + b` (integers wrap; floats round once).
    Add,
    /// `out = a * b` (integers wrap; floats round once).
    Mul,
    /// `x = alpha * x`, in place.
    Scale,
    /// `y = alpha * x + y`, in place, unfused (two roundings, as Rust computes it).
    Axpy,
    /// `out = a` converted to the output's scalar type, as [`dtype::cast`](crate::dtype::cast).
    Cast,
    /// The sum of every element of the input, in the output's (accumulator) type: per-thread
    /// partial sums (compensated for floats), a tree in each block, then the blocks' partials
    /// reduced by one block (two launches).
    Sum,
}

impl KernelKind {
    /// Every operation.
    pub const ALL: [Self; 8] =
        [Self::Copy, Self::Fill, Self::Add, Self::Mul, Self::Scale, Self::Axpy, Self::Cast, Self::Sum];

    /// How many input views the operation reads.
    ///
    /// ```
    /// assert_eq!(dlspan::cuda::KernelKind::Axpy.inputs(), 2);
    /// ```
    pub const fn inputs(self) -> usize {
        match self {
            Self::Fill => 0,
            Self::Copy | Self::Scale | Self::Cast | Self::Sum => 1,
            Self::Add | Self::Mul | Self::Axpy => 2,
        }
    }

    /// How many scalar arguments the operation takes.
    ///
    /// ```
    /// assert_eq!(dlspan::cuda::KernelKind::Scale.scalars(), 1);
    /// ```
    pub const fn scalars(self) -> usize {
        match self {
            Self::Fill | Self::Scale | Self::Axpy => 1,
            Self::Copy | Self::Add | Self::Mul | Self::Cast | Self::Sum => 0,
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Copy => "copy",
            Self::Fill => "fill",
            Self::Add => "add",
            Self::Mul => "mul",
            Self::Scale => "scale",
            Self::Axpy => "axpy",
            Self::Cast => "cast",
            Self::Sum => "sum",
        })
    }
}

/// A kernel's shape: how it walks its elements (one module holds a kernel of each shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelShape {
    /// Every operand contiguous in the same order: one linear index, `vector` elements per aligned
    /// load and store.
    Flat {
        /// Elements per load (a power of two, at most 16 bytes of the widest element).
        vector: u8,
    },
    /// Strided, with this many merged axes (1 to 4), the index loop unrolled.
    Strided {
        /// Merged axes.
        rank: u8,
    },
    /// Strided, any number of merged axes up to [`MAX_KERNEL_RANK`].
    General,
    /// Strided through shared-memory tiles of [`TILE`] x [`TILE`] elements, for one input whose
    /// innermost axis is not the output's (transposes, permutations): reads and writes both
    /// coalesced. Operations of one input, elements of at most [`TILE_MAX_ELEMENT`] bytes.
    Tiled,
}

/// The integer width of a kernel's index arithmetic (the `_i32` and `_i64` suffixes of its entry
/// points).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    /// Every index and element offset fits `i32`: offsets computed in `int`, linear indices in
    /// `unsigned int`, divisions by multiplication.
    I32,
    /// Offsets in 64-bit signed integers, linear indices in 64-bit unsigned ones.
    I64,
}

/// The most axes a kernel indexes: an operation's views may have any rank, but after its axes are
/// merged (axes of extent 1 dropped, axes every operand steps through as one joined) at most this
/// many may remain, else [`CudaError::RankTooLarge`](crate::cuda::CudaError::RankTooLarge). The
/// length of the parameter block's extent and stride arrays (`DL_MAX_RANK` in the preamble).
///
/// ```
/// assert_eq!(dlspan::cuda::MAX_KERNEL_RANK, 16);
/// ```
pub const MAX_KERNEL_RANK: usize = 16;

/// Threads per block of every kernel (the preamble's `__launch_bounds__`).
pub const BLOCK: u32 = 256;

/// The side of the tiled kernels' shared-memory tile, in elements (a warp's width: one warp reads a
/// tile row, another writes a tile column).
pub const TILE: usize = 32;

/// The largest element, in bytes, the tiled kernel takes (a tile of them is 16.5 KiB of shared
/// memory); one larger element already fills a 32-byte memory sector, so strided reads waste little.
pub const TILE_MAX_ELEMENT: usize = 16;

/// One operand as the kernels read it: the address of index 0 and the strides of the merged axes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamOperand {
    /// Address of the element at index 0.
    pub ptr: u64,
    /// Strides in elements, outermost merged axis first.
    pub stride: [i64; MAX_KERNEL_RANK],
}

/// The most operands (views) a kernel indexes: the output and the inputs of the built-in kernels, the
/// views of an element-wise kernel (`dlspan::kernel::MAX_VIEWS`, kept equal by an assertion).
pub const MAX_OPERANDS: usize = 8;

/// The bytes of scalar arguments a kernel takes in all (a fill value, the `alpha` of `scale` and
/// `axpy`, an element-wise kernel's scalars, each at an offset aligned to its alignment, up to 16).
pub const SCALAR_BYTES: usize = 128;

/// Scalar arguments, as the bytes of their element types.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarArgs(pub [u8; SCALAR_BYTES]);

/// The kernel parameters, mirroring the preamble's `dl_params` field for field.
///
/// ```
/// assert_eq!(core::mem::size_of::<dlspan::cuda::kernel::Params>(), 1488);
/// ```
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Number of elements.
    pub n: u64,
    /// Number of merged axes.
    pub ndim: i32,
    /// Unused (keeps the C layout explicit).
    pub reserved: i32,
    /// Extents of the merged axes, outermost first.
    pub extent: [i64; MAX_KERNEL_RANK],
    /// Multipliers of the 32-bit division by each extent.
    pub magic: [u32; MAX_KERNEL_RANK],
    /// Shifts of the 32-bit division by each extent.
    pub shift: [u32; MAX_KERNEL_RANK],
    /// The operands: the output (the primary view) first.
    pub op: [ParamOperand; MAX_OPERANDS],
    /// Scalar arguments.
    pub scalar: ScalarArgs,
}

const _: () = assert!(core::mem::size_of::<Params>() == 1488);

// SAFETY: `Params` is `#[repr(C)]` plain data laid out exactly as the kernels' `dl_params` (the
// size is asserted on both sides), passed by value as a kernel parameter.
unsafe impl cudarc::driver::DeviceRepr for Params {}
