//! Index math: extents ([`Dims`], [`Static`], [`Dyn`]), layout policies, the [`Mapping`] from an
//! index to an element offset, ranks as types ([`Rank`], [`LowerRank`]) and sub-mappings. Nothing
//! here touches memory; [`view`](crate::view) re-exports what users name.

mod extents;
mod layout;
mod mapping;
mod rank;
mod sub;

pub use extents::{Dim, Dims, Dyn, Extents, MAX_STATIC_RANK, NestedArray, Static};
pub use layout::{Layout, LayoutLeft, LayoutRight, LayoutStride, LayoutStrideRelaxed, RelaxedStrides};
pub use mapping::Mapping;
pub use rank::{LowerRank, MAX_AXIS_RANK, Rank};
pub use sub::SubviewRanges;
pub(crate) use sub::{AxisParts, SubParts, axis_parts, sub_axis, sub_ranges};
