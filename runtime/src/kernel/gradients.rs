//! Checking derivatives against central finite differences: what the `check_gradients` method of a
//! [`#[differentiable]`](crate::elementwise#differentiable-kernels) kernel runs.
//!
//! At each random point the check estimates the Jacobian of the forward by central differences
//! (in the kernel's own arithmetic: instantiate it with `f64` for an exact check), then compares
//!
//! - the backward's gradients, for random output gradients `g`, with `gᵀJ`;
//! - the tangent's output tangents, for random input tangents `v`, with `Jv`, and its primal
//!   outputs with the forward's, bit for bit;
//!
//! each within `tolerance · max(1, |expected|)`.

use core::fmt;

/// How [`check_gradients`] samples and compares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradientCheck {
    /// Random points tried.
    pub points: usize,
    /// The seed of the points, gradients and tangents drawn (the same seed, the same check).
    pub seed: u64,
    /// The interval each input is drawn from (keep it inside the body's domain: positive for `ln`).
    pub low: f64,
    /// The upper end of the interval.
    pub high: f64,
    /// The finite-difference step, relative to `max(1, |x|)`.
    pub step: f64,
    /// The largest error allowed, relative to `max(1, |expected|)`.
    pub tolerance: f64,
}

impl Default for GradientCheck {
    /// 64 points in `[-2, 2]`, step `1e-6`, tolerance `1e-6`: for kernels instantiated with `f64`.
    fn default() -> Self {
        Self { points: 64, seed: 0x5eed, low: -2.0, high: 2.0, step: 1e-6, tolerance: 1e-6 }
    }
}

impl GradientCheck {
    /// Inputs drawn from `[low, high]`.
    ///
    /// ```
    /// let check = dlspan::kernel::GradientCheck::default().range(0.1, 4.0);
    /// assert_eq!((check.low, check.high), (0.1, 4.0));
    /// ```
    #[must_use]
    pub fn range(self, low: f64, high: f64) -> Self {
        Self { low, high, ..self }
    }
}

/// What a passing check saw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradientReport {
    /// Points checked.
    pub points: usize,
    /// The largest relative error seen (backward and tangent together).
    pub max_error: f64,
}

/// Which derivative disagreed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derivative {
    /// The backward (a gradient of an input).
    Backward,
    /// The tangent (the tangent of an output).
    Tangent,
    /// The tangent kernel's primal output, which must equal the forward's.
    Primal,
}

/// A derivative that disagrees with the finite differences, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientMismatch {
    /// The derivative that disagreed.
    pub derivative: Derivative,
    /// The input (backward) or output (tangent, primal) concerned.
    pub name: &'static str,
    /// The inputs at the point.
    pub point: Vec<f64>,
    /// What the finite differences (or the forward) give.
    pub expected: f64,
    /// What the derived kernel gives.
    pub derived: f64,
}

impl fmt::Display for GradientMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.derivative {
            Derivative::Backward => "the gradient of input",
            Derivative::Tangent => "the tangent of output",
            Derivative::Primal => "the tangent kernel's output",
        };
        write!(
            f,
            "{what} `{}` is {} where finite differences give {} (inputs {:?})",
            self.name, self.derived, self.expected, self.point
        )
    }
}

impl std::error::Error for GradientMismatch {}

/// `backward(x, grad_out, grad_x)`, over `f64` values.
pub type BackwardFn<'a> = &'a dyn Fn(&[f64], &[f64], &mut [f64]);

/// `tangent(x, tangent_x, out, tangent_out)`, over `f64` values.
pub type TangentFn<'a> = &'a dyn Fn(&[f64], &[f64], &mut [f64], &mut [f64]);

/// A kernel's functions over `f64` values, as `check_gradients` passes them: each writes its
/// results into the last slice (or slices).
pub struct Functions<'a> {
    /// The differentiated inputs' names, in order.
    pub inputs: &'a [&'static str],
    /// The differentiated outputs' names, in order.
    pub outputs: &'a [&'static str],
    /// `forward(x, out)`.
    pub forward: &'a dyn Fn(&[f64], &mut [f64]),
    /// `backward(x, grad_out, grad_x)`.
    pub backward: BackwardFn<'a>,
    /// `tangent(x, tangent_x, out, tangent_out)`.
    pub tangent: TangentFn<'a>,
}

/// SplitMix64: a small, fixed generator (the same seed draws the same points everywhere).
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn within(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.next()
    }
}

/// Compares a kernel's backward and tangent with central finite differences of its forward
/// (the module's documentation says how); the generated `check_gradients` methods call it.
///
/// ```
/// use dlspan::kernel::{Functions, GradientCheck, check_gradients};
///
/// // f(x, y) = x·y, with a right backward and a wrong tangent.
/// let forward = |x: &[f64], out: &mut [f64]| out[0] = x[0] * x[1];
/// let backward = |x: &[f64], g: &[f64], gx: &mut [f64]| {
///     gx[0] = g[0] * x[1];
///     gx[1] = g[0] * x[0];
/// };
/// let tangent = |x: &[f64], t: &[f64], out: &mut [f64], tout: &mut [f64]| {
///     out[0] = x[0] * x[1];
///     tout[0] = t[0] * x[1]; // misses x·dy
/// };
/// let functions = Functions { inputs: &["x", "y"], outputs: &["out"], forward: &forward, backward: &backward, tangent: &tangent };
/// let error = check_gradients(&functions, &GradientCheck::default()).unwrap_err();
/// assert_eq!(error.name, "out");
/// ```
pub fn check_gradients(functions: &Functions<'_>, check: &GradientCheck) -> Result<GradientReport, GradientMismatch> {
    let (n, m) = (functions.inputs.len(), functions.outputs.len());
    let mut draw = Draw(check.seed);
    let mut max_error = 0.0f64;
    let (mut plus, mut minus, mut out) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    let mut jacobian = vec![0.0; n * m];
    for _ in 0..check.points {
        let x: Vec<f64> = (0..n).map(|_| draw.within(check.low, check.high)).collect();
        let g: Vec<f64> = (0..m).map(|_| draw.within(-1.0, 1.0)).collect();
        let v: Vec<f64> = (0..n).map(|_| draw.within(-1.0, 1.0)).collect();
        let mut shifted = x.clone();
        for i in 0..n {
            let h = check.step * x[i].abs().max(1.0);
            shifted[i] = x[i] + h;
            (functions.forward)(&shifted, &mut plus);
            shifted[i] = x[i] - h;
            (functions.forward)(&shifted, &mut minus);
            shifted[i] = x[i];
            for k in 0..m {
                jacobian[k * n + i] = (plus[k] - minus[k]) / (2.0 * h);
            }
        }
        let mut compare = |derivative, name, expected: f64, derived: f64| {
            let error = (derived - expected).abs() / expected.abs().max(1.0);
            if error <= check.tolerance {
                max_error = max_error.max(error);
                Ok(())
            } else {
                Err(GradientMismatch { derivative, name, point: x.clone(), expected, derived })
            }
        };
        let mut gx = vec![0.0; n];
        (functions.backward)(&x, &g, &mut gx);
        for i in 0..n {
            let expected: f64 = (0..m).map(|k| g[k] * jacobian[k * n + i]).sum();
            compare(Derivative::Backward, functions.inputs[i], expected, gx[i])?;
        }
        let mut tout = vec![0.0; m];
        (functions.tangent)(&x, &v, &mut out, &mut tout);
        (functions.forward)(&x, &mut plus);
        for k in 0..m {
            if out[k].to_bits() != plus[k].to_bits() && !(out[k].is_nan() && plus[k].is_nan()) {
                return Err(GradientMismatch {
                    derivative: Derivative::Primal,
                    name: functions.outputs[k],
                    point: x.clone(),
                    expected: plus[k],
                    derived: out[k],
                });
            }
            let expected: f64 = (0..n).map(|i| jacobian[k * n + i] * v[i]).sum();
            compare(Derivative::Tangent, functions.outputs[k], expected, tout[k])?;
        }
    }
    Ok(GradientReport { points: check.points, max_error })
}
