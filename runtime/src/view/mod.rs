//! Typed multi-dimensional views: the view types ([`Mdspan`], [`MdspanMut`], the packed, aligned
//! and dynamic views), their iterators and element-wise operations, with the index math they stand
//! on (extents, layouts, mappings, ranks), re-exported here. The ranks that features generated per
//! rank reach are listed on the rules page ([rank limits](crate::rules#limits)).
//!
//! ```
//! use dlspan::view::{HostMdspan, LayoutStride};
//! let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
//! let m = HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(&data, [3, 2], [4, 2]).unwrap();
//! assert_eq!(m.to_vec(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
//! ```

mod aligned;
mod dynamic;
mod elementwise;
mod fmt;
mod iter;
mod mdspan;
#[cfg(test)]
mod origin_tests;
mod packed;
mod sum;

pub use crate::index::{
    Dim, Dims, Dyn, Extents, Layout, LayoutLeft, LayoutRight, LayoutStride, LayoutStrideRelaxed, LowerRank,
    MAX_AXIS_REMOVAL_RANK, MAX_STATIC_EXTENTS_RANK, Mapping, NestedArray, Rank, RelaxedStrides, Static, SubviewRanges,
};
pub use aligned::{Aligned, AlignedView};
pub(crate) use dynamic::DynParts;
pub use dynamic::{DynMdspan, DynMdspanMut};
pub(crate) use elementwise::first_non_boolean_byte;
pub use iter::{Iter, IterMut};
pub use mdspan::{
    AxisIter, AxisIterMut, DeviceMdspan, DeviceMdspanMut, HostMdspan, HostMdspanMut, ManagedMdspan, ManagedMdspanMut,
    Mdspan, MdspanMut,
};
pub(crate) use packed::assert_packable;
pub use packed::{
    DevicePackedMdspan, DevicePackedMdspanMut, HostPackedMdspan, HostPackedMdspanMut, PackedIter, PackedMdspan,
    PackedMdspanMut,
};
