//! The element-wise kernels behind `cuda::Stream`'s `fill`, `add`, `mul`, `scale` and `axpy`, declared with
//! [`elementwise!`](crate::elementwise) as any user kernel is: one way to make an element-wise
//! kernel in the crate. They run on the CPU too (`builtin::axpy.run(Cpu, ..)`); the streams launch
//! them for any element type their rules allow, checked at run time (`CudaError::Unsupported`).

use super::Scalar;

dlspan_macros::elementwise! {
    /// `out = value` (any element type).
    pub fn fill<T>(value: T, out: &mut T) {
        *out = value;
    }
}

dlspan_macros::elementwise! {
    /// `out = a + b` (integers wrap; floats round once; `f16`/`bf16` through `f32`).
    pub fn add<T: Scalar>(a: &T, b: &T, out: &mut T) {
        *out = *a + *b;
    }
}

dlspan_macros::elementwise! {
    /// `out = a * b` (integers wrap; floats round once; `f16`/`bf16` through `f32`).
    pub fn mul<T: Scalar>(a: &T, b: &T, out: &mut T) {
        *out = *a * *b;
    }
}

dlspan_macros::elementwise! {
    /// `x = alpha * x`, in place.
    pub fn scale<T: Scalar>(alpha: T, x: &mut T) {
        *x = alpha * *x;
    }
}

dlspan_macros::elementwise! {
    /// `y = alpha * x + y`, in place, unfused (two roundings, as Rust computes `alpha * x + y`).
    pub fn axpy<T: Scalar>(alpha: T, x: &T, y: &mut T) {
        *y = alpha * *x + *y;
    }
}
