//! The compile-fail and must-compile cases live in `tests/ui.rs`. This library target exists so
//! that trybuild builds the cases with this crate's features (`cuda` enables dlspan's CUDA views).
