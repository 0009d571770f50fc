//! Index math: extents ([`Dims`], [`Static`], [`Dyn`]), layout policies, the [`Mapping`] from an
//! index to an element offset, ranks as types ([`Rank`], [`LowerRank`]), sub-mappings, and the
//! per-axis values of a rank known only at run time. Nothing here touches memory;
//! [`view`](crate::view) re-exports what users name.

mod axes;
mod extents;
mod layout;
mod mapping;
mod rank;
mod sub;

pub(crate) use axes::{Axes, INLINE_AXES};
pub use extents::{Dim, Dims, Dyn, Extents, MAX_STATIC_EXTENTS_RANK, NestedArray, Static};
pub use layout::{Layout, LayoutLeft, LayoutRight, LayoutStride, LayoutStrideRelaxed, RelaxedStrides};
pub use mapping::Mapping;
pub use rank::{LowerRank, MAX_AXIS_REMOVAL_RANK, Rank};
pub use sub::SubviewRanges;
pub(crate) use sub::{AxisParts, SubParts, axis_parts, sub_axis, sub_ranges};
