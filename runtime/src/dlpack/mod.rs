//! The DLPack engine, behind [`convert`](crate::convert), its public face: the typed import
//! (`import`) and the dynamic one (`dyn_import`), the export wrappers (`export`), the sealed
//! [`FromDlTensor`] trait, and one file per view kind with its DLPack doors (`mdspan`, `packed`,
//! `aligned`, `dynamic`: `from_dltensor*`, exports, typed conversions), and `lanes`, views whose
//! last axis becomes an element's lanes and back, through the typed import. It sits above the views
//! it builds and below the owned tensors that lend them.

mod aligned;
mod dyn_import;
mod dynamic;
mod export;
mod from_dltensor;
mod import;
mod lanes;
mod mdspan;
mod packed;

pub use export::{DlTensorRef, DlpackTensor, DynDlpackTensor, ToDlpackTensor, to_dlpack_tensor};
pub use from_dltensor::FromDlTensor;
pub(crate) use import::Element;
pub use import::ImportOptions;
