//! The CPU's `exp`, `tanh`, `ln`, `log2` and `log10` of `f32` (rule K4) measured over every `f32` input, as element-wise
//! kernels compute them (the vectorised walk), against `f64`'s libm rounded to the result's ulp:
//!
//!     cargo run --release -p dlspan-benches --bin math_ulps [-- exp|tanh|ln|log2|log10]
//!
//! Prints each function's largest error in units in the last place of the correctly rounded
//! result and where it is, and the inputs whose result is not the expected special value (NaN for
//! NaN, the limits at the infinities). The bounds the rules page and `kernel::math` state come from
//! this program. About a minute per function on one core.

use dlspan::kernel::{Cpu, Float};
use dlspan::{HostMdspan, HostMdspanMut};

dlspan::elementwise! {
    /// `exp(x)`.
    fn exp_body<T: Float>(x: &T, out: &mut T) {
        *out = x.exp();
    }
}
dlspan::elementwise! {
    /// `tanh(x)`.
    fn tanh_body<T: Float>(x: &T, out: &mut T) {
        *out = x.tanh();
    }
}
dlspan::elementwise! {
    /// `ln(x)`.
    fn ln_body<T: Float>(x: &T, out: &mut T) {
        *out = x.ln();
    }
}
dlspan::elementwise! {
    /// `log2(x)`.
    fn log2_body<T: Float>(x: &T, out: &mut T) {
        *out = x.log2();
    }
}
dlspan::elementwise! {
    /// `log10(x)`.
    fn log10_body<T: Float>(x: &T, out: &mut T) {
        *out = x.log10();
    }
}

/// The ulps between `ours` and the exact `reference`, in units of the rounded reference's ulp
/// (`None` where the rounded reference is zero, infinite or NaN: checked apart).
fn ulps(ours: f32, reference: f64) -> Option<f64> {
    let rounded = reference as f32;
    if !rounded.is_finite() || rounded == 0.0 {
        return None;
    }
    let ulp = f64::from(f32::from_bits(rounded.abs().to_bits() + 1) - rounded.abs());
    Some((f64::from(ours) - reference).abs() / ulp)
}

fn main() {
    const CHUNK: usize = 1 << 20;
    let mut input = vec![0.0f32; CHUNK];
    let mut output = vec![0.0f32; CHUNK];
    type Kernel = fn(&HostMdspan<'_, f32, 1>, &mut HostMdspanMut<'_, f32, 1>);
    type Function = (&'static str, Kernel, fn(f64) -> f64);
    let functions: [Function; 5] = [
        ("exp", |x, out| exp_body.run(Cpu, x, out).unwrap(), f64::exp),
        ("tanh", |x, out| tanh_body.run(Cpu, x, out).unwrap(), f64::tanh),
        ("ln", |x, out| ln_body.run(Cpu, x, out).unwrap(), f64::ln),
        ("log2", |x, out| log2_body.run(Cpu, x, out).unwrap(), f64::log2),
        ("log10", |x, out| log10_body.run(Cpu, x, out).unwrap(), f64::log10),
    ];
    let only = std::env::args().nth(1).unwrap_or_default();
    println!("vectors: {:?}", dlspan::kernel::cpu_vectors());
    for (name, kernel, reference) in functions.into_iter().filter(|f| only.is_empty() || f.0 == only) {
        let (mut worst, mut at, mut wrong) = (0.0f64, 0.0f32, 0u64);
        for start in (0..1u64 << 32).step_by(CHUNK) {
            for (k, x) in input.iter_mut().enumerate() {
                *x = f32::from_bits((start + k as u64) as u32);
            }
            kernel(
                &HostMdspan::from_slice(&input, [CHUNK]).unwrap(),
                &mut HostMdspanMut::from_slice(&mut output, [CHUNK]).unwrap(),
            );
            for (&x, &ours) in input.iter().zip(&output) {
                let exact = reference(f64::from(x));
                match ulps(ours, exact) {
                    Some(e) if e > worst => (worst, at) = (e, x),
                    Some(_) => {}
                    // Zero, infinite and NaN results: the same class, sign included.
                    None => {
                        let rounded = exact as f32;
                        let same = if rounded.is_nan() {
                            ours.is_nan()
                        } else {
                            ours == rounded && ours.is_sign_negative() == rounded.is_sign_negative()
                                || rounded == 0.0 && ours.abs() <= f32::from_bits(1)
                        };
                        wrong += u64::from(!same);
                    }
                }
            }
        }
        println!("{name}: at most {worst:.4} ulp (at {at:e}, {:#010x}); special results wrong: {wrong}", at.to_bits());
    }
}
