//! # dlspan
//!
//! Typed, validated views of [DLPack](https://dmlc.github.io/dlpack/latest/) tensors.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod dtype;
pub mod ffi;

#[doc(hidden)]
pub mod __private;

pub use dlspan_macros::DlElement;
pub use dtype::DlElement;
pub use half;
pub use num_complex;

// Lets the derives' absolute `::dlspan` paths resolve inside this crate too (unit tests, doctests).
extern crate self as dlspan;
