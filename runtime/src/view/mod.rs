//! Typed multi-dimensional views: extents, layouts, mappings, the view types and their iterators.
//!
//! ```
//! use dlspan::view::{HostMdspan, LayoutStride};
//! let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
//! let m = HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(&data, [3, 2], [4, 2]).unwrap();
//! assert_eq!(m.to_vec(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
//! ```

mod aligned;
mod axis_iter;
mod dynamic;
mod elementwise;
mod extents;
mod fmt;
mod iter;
mod layout;
mod mapping;
mod mdspan;
#[cfg(test)]
mod origin_tests;
mod packed;
mod rank;

pub use aligned::{Aligned, AlignedView};
pub use axis_iter::{AxisIter, AxisIterMut};
pub use dynamic::{DynDlpackTensor, DynMdspan, DynMdspanMut};
pub(crate) use elementwise::first_non_boolean_byte;
pub use extents::{Dim, Dims, Dyn, Extents, MAX_STATIC_RANK, NestedArray, Static};
pub use iter::{Iter, IterMut};
pub use layout::{Layout, LayoutLeft, LayoutRight, LayoutStride, LayoutStrideRelaxed, RelaxedStrides};
pub use mapping::Mapping;
pub use mdspan::{
    DeviceMdspan, DeviceMdspanMut, HostMdspan, HostMdspanMut, ManagedMdspan, ManagedMdspanMut, Mdspan, MdspanMut,
    SubviewRanges,
};
pub use packed::{
    DevicePackedMdspan, DevicePackedMdspanMut, HostPackedMdspan, HostPackedMdspanMut, PackedIter, PackedMdspan,
    PackedMdspanMut,
};
pub use rank::{LowerRank, MAX_AXIS_RANK, Rank};
