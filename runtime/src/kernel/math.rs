//! `exp` and `tanh` of `f32` for kernels on the CPU: branch-free `f32` arithmetic, so that a
//! kernel's loop over a contiguous run compiles to vector code of sixteen (AVX-512), eight (AVX2)
//! or four (SSE2) lanes (the platform's libm is a call per element, which no compiler vectorises),
//! at most 0.978 ulp (`exp`, 0.9775 at −59.92) and 1.331 ulp (`tanh`, 1.3303 at 0.6283) from the
//! correctly rounded result, measured over every `f32` against `f64`'s libm
//! (`benches/src/bin/math_ulps.rs`; glibc's `tanhf` lies 2.03 ulp from it; CUDA documents 2 ulp
//! for both).
//!
//! Every step is an operation the vector units have (fused multiply-adds for the argument
//! reduction and the polynomials, multiplies, adds, one division for `tanh`, compares that become
//! selects, integer operations on the representation), in the same order on every CPU, so a
//! kernel computes the same bits at every vector width — and the host-logic tier's C++
//! (`dl_host_expf`, `dl_host_tanhf`, with `fmaf`) the same bits as the Rust. The fused steps
//! (`mul_add`, rounded once) are one instruction where the CPU has FMA (every x86-64 CPU since
//! 2013, every AArch64 one); on an x86-64 CPU without it (or under `DLSPAN_CPU_VECTORS=baseline`)
//! each is a call of libm's `fmaf`, the same bits some seven times slower.

/// `1.5 · 2²³`: added to an `f32` of magnitude below 2²², it leaves the value rounded to an
/// integer (to nearest, ties to even) in the low bits of the sum's representation.
const ROUND: f32 = 12_582_912.0;
/// `ln 2` in two parts: the high part has 9 significant bits, so `k · LN2_HI` is exact for the
/// `k` used here (|k| ≤ 150).
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
const LOG2_E: f32 = core::f32::consts::LOG2_E;

/// `2ⁿ` for `n` in [−126, 127].
#[inline(always)]
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

/// `exp(x)` for `x` in [−104, 89]: `2^k · e^r` with `k = round(x · log₂e)` (the product fused
/// into the rounding addition), `r = x − k · ln 2` in two fused steps, `|r| ≤ ln 2 / 2`
/// (about), `e^r` by a degree-7 polynomial (`1 + r + r² · p(r)`, `p` by Horner's scheme in fused
/// steps, its coefficients those of the Cephes library's `expf`), `2^k` applied in two halves so
/// that results below `f32`'s smallest normal are rounded once.
#[inline(always)]
fn exp_core(x: f32) -> f32 {
    let (e, n) = exp_parts(x);
    let half = n >> 1;
    e * pow2(half) * pow2(n - half)
}

/// `exp(x) = e · 2ⁿ`: `e = e^r` and `n = k` of [`exp_core`], for callers whose result is a
/// normal `f32` (then `e · 2ⁿ` is exact, and the two halves' product the same bits).
#[inline(always)]
fn exp_parts(x: f32) -> (f32, i32) {
    let biased = x.mul_add(LOG2_E, ROUND);
    let k = biased - ROUND;
    let r = k.mul_add(-LN2_LO, k.mul_add(-LN2_HI, x));
    let mut p: f32 = 1.987_569_2e-4;
    p = p.mul_add(r, 1.398_199_9e-3);
    p = p.mul_add(r, 8.333_452e-3);
    p = p.mul_add(r, 4.166_579_6e-2);
    p = p.mul_add(r, 1.666_666_5e-1);
    p = p.mul_add(r, 0.5);
    let e = p * (r * r) + r + 1.0;
    // `k` from the low bits of `biased` (its significand holds `2²² + k`).
    let n = (biased.to_bits() & 0x007f_ffff) as i32 - (1 << 22);
    (e, n)
}

/// `exp(x)` of an `f32` (the argument clamped to [−104, 89], where results are already 0 and
/// infinite). NaN gives NaN.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    // Comparisons, so that NaN passes through unchanged.
    let x = if x > 89.0 { 89.0 } else { x };
    let x = if x < -104.0 { -104.0 } else { x };
    exp_core(x)
}

/// `tanh(x)` of an `f32`: below |x| = 0.625 an odd polynomial, `x + x³ · p(x²)` (the Cephes
/// library's `tanhf` coefficients), else `1 − 2/(e^{2|x|} + 1)` with the sign of `x` (|x| clamped
/// to 10, where the result is ±1), both computed on |x| and the sign of `x` put on the one taken
/// (the odd function's rounding is symmetric). `-0.0` stays `-0.0`, NaN gives NaN.
#[inline(always)]
pub(crate) fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    let z = a * a;
    let mut p: f32 = -5.704_988_7e-3;
    p = p.mul_add(z, 2.063_909e-2);
    p = p.mul_add(z, -5.373_971_6e-2);
    p = p.mul_add(z, 1.333_144_2e-1);
    p = p.mul_add(z, -3.333_328e-1);
    let small = (p * z).mul_add(a, a);
    let clamped = if a > 10.0 { 10.0 } else { a };
    // `e^{2|x|}` with `2|x| ≤ 20`: a normal result, scaled by `2ⁿ` once.
    let (e, n) = exp_parts(2.0 * clamped);
    let large = 1.0 - 2.0 / (e * pow2(n) + 1.0);
    // The sign of `x` on the result: `-0.0` stays `-0.0` (the sum gives `+0.0` there).
    (if a < 0.625 { small } else { large }).copysign(x)
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
        // Subnormal results, within an ulp of the exact value.
        for x in [-88.0f32, -95.5, -100.0, -103.0] {
            let (ours, exact) = (exp_f32(x), f64::from(x).exp());
            assert!((f64::from(ours) - exact).abs() <= f64::from(f32::from_bits(1)), "{x}");
        }
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
    /// an `f32` ulp) on a grid over their whole range, within the bounds the module states (which
    /// hold over every `f32`: the grid samples them).
    #[test]
    fn within_the_stated_ulps() {
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
        assert!(worst[0] <= 0.978 && worst[1] <= 1.331, "{worst:?}");
    }
}
