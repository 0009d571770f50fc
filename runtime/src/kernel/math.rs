//! `exp` and `tanh` of `f32` for kernels on the CPU: branch-free arithmetic in `f64`, so that a
//! kernel's loop over a contiguous run compiles to vector code (the platform's libm is a call per
//! element, which no compiler vectorises), and correctly rounded but for inputs within about
//! 10⁻¹⁴ of a rounding boundary (the `f64` result, within about 2⁻⁵⁰ of the exact value, is
//! rounded once to `f32`): at most 0.501 ulp, where glibc's `tanhf` lies 2 ulp from it.
//!
//! Every step is an operation the vector units have (multiplies, adds, one division for `tanh`,
//! compares that become selects, bit operations on the `f64` representation); no `mul_add`
//! (a library call where the CPU has no FMA), and the same operations in the same order on every
//! CPU, so a kernel computes the same bits at every vector width.

/// `1.5 · 2⁵²`: added to an `f64` of magnitude below 2⁵¹, it leaves the value rounded to an
/// integer (to nearest, ties to even) in the low bits of the sum's representation.
const ROUND: f64 = 6_755_399_441_055_744.0;
/// `ln 2` in two parts: the high part has 32 significant bits, so `k · LN2_HI` is exact for the
/// `k` used here (|k| < 2¹¹).
const LN2_HI: f64 = 0.693_147_180_369_123_8;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
const LOG2_E: f64 = core::f64::consts::LOG2_E;

/// `exp(x)` in `f64` for `x` in about [−700, 700], relative error below 2⁻⁴⁹: `2^k · e^r` with
/// `k = round(x / ln 2)`, `|r| ≤ ln 2 / 2`, `e^r` by its Taylor polynomial of degree 11 (the first
/// term left out is below 2⁻⁵⁷ of the sum).
#[inline(always)]
fn exp_f64_core(x: f64) -> f64 {
    let biased = x * LOG2_E + ROUND;
    let k = biased - ROUND;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0 / 39_916_800.0;
    p = p * r + 1.0 / 3_628_800.0;
    p = p * r + 1.0 / 362_880.0;
    p = p * r + 1.0 / 40_320.0;
    p = p * r + 1.0 / 5_040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // 2^k: `k + 1023` in the exponent field (the low bits of `biased` hold `k`, two's complement).
    let scale = f64::from_bits(biased.to_bits().wrapping_add(1023) << 52);
    p * scale
}

/// `exp(x)` of an `f32`: `exp` in `f64` (the argument clamped to [−110, 100], where `f32` results
/// are already 0 and infinite), rounded once. NaN gives NaN.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    let x = f64::from(x);
    // Comparisons, so that NaN passes through unchanged.
    let x = if x > 100.0 { 100.0 } else { x };
    let x = if x < -110.0 { -110.0 } else { x };
    exp_f64_core(x) as f32
}

/// `tanh(x)` of an `f32`: in `f64`, `x − x³/3 + 2x⁵/15 − 17x⁷/315 + 62x⁹/2835` below |x| = 1/16
/// (the first term left out is below 2⁻⁴⁶ of the sum there), else `1 − 2/(e^{2|x|} + 1)` with the
/// sign of `x` (|x| clamped to 10, where the `f32` result is ±1); rounded once. `-0.0` stays
/// `-0.0`, NaN gives NaN.
#[inline(always)]
pub(crate) fn tanh_f32(x: f32) -> f32 {
    let x = f64::from(x);
    let a = x.abs();
    let s = x * x;
    let mut p = 62.0 / 2835.0;
    p = p * s - 17.0 / 315.0;
    p = p * s + 2.0 / 15.0;
    p = p * s - 1.0 / 3.0;
    let small = x * (1.0 + s * p);
    let clamped = if a > 10.0 { 10.0 } else { a };
    let large = 1.0 - 2.0 / (exp_f64_core(2.0 * clamped) + 1.0);
    let large = if x < 0.0 { -large } else { large };
    let t = if a < 0.0625 { small } else { large };
    t as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values() {
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert_eq!(exp_f32(-104.0), 0.0);
        // The smallest subnormal results round as the exact value does.
        assert_eq!(exp_f32(-103.0).to_bits(), ((-103.0f64).exp() as f32).to_bits());
        assert_eq!(tanh_f32(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(tanh_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh_f32(20.0), 1.0);
        assert!(tanh_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(1e-30), 1e-30);
        assert_eq!(tanh_f32(f32::from_bits(1)), f32::from_bits(1));
    }

    /// Both functions against `f64`'s libm (within 1 ulp of the exact value in `f64`, far below
    /// an `f32` ulp) on a grid over their whole range: rounded as the exact value but within a
    /// hair of a boundary.
    #[test]
    fn correctly_rounded_but_at_boundaries() {
        let mut worst = [0.0f64; 2];
        let mut x = -110.0f32;
        while x < 100.0 {
            for (k, (ours, reference)) in
                [(exp_f32(x), f64::from(x).exp()), (tanh_f32(x), f64::from(x).tanh())].into_iter().enumerate()
            {
                let rounded = reference as f32;
                if rounded.is_finite() && rounded != 0.0 {
                    let ulp = f64::from(f32::from_bits(rounded.abs().to_bits() + 1) - rounded.abs());
                    worst[k] = worst[k].max((f64::from(ours) - reference).abs() / ulp);
                }
            }
            x += 0.000_731;
        }
        assert!(worst[0] < 0.501 && worst[1] < 0.501, "{worst:?}");
    }
}
