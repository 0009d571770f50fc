//! `exp`, `tanh`, `ln`, `log2` and `log10` of `f32` for kernels on the CPU: branch-free `f32`
//! arithmetic, so that a kernel's loop over a contiguous run compiles to vector code of sixteen
//! (AVX-512), eight (AVX2) or four (SSE2) lanes (the platform's libm is a call per element, which
//! no compiler vectorises), at most 0.978 ulp (`exp`, 0.9775 at −59.92), 1.331 ulp (`tanh`,
//! 1.3303 at 0.6283), 0.835 ulp (`ln`, 0.8348 at 1.4055), 0.865 ulp (`log2`, 0.8642 at 0.6999)
//! and 0.832 ulp (`log10`, 0.8316 at 0.6567) from the correctly rounded result, measured over
//! every `f32` against `f64`'s libm (`benches/src/bin/math_ulps.rs`; glibc's `tanhf` lies 2.03
//! ulp from it, its `log10f` 1.61; CUDA documents 2 ulp for `exp`, `tanh` and `log10`, 1 for
//! `ln` and `log2`).
//!
//! Every step is an operation the vector units have (fused multiply-adds for the argument
//! reduction and the polynomials, multiplies, adds, one division for `tanh` and the logarithms,
//! compares that become selects, integer operations on the representation), in the same order on
//! every CPU, so a kernel computes the same bits at every vector width — and the host-logic tier's
//! C++ (`dl_host_expf`, `dl_host_tanhf`, `dl_host_logf`, `dl_host_log2f`, `dl_host_log10f`, with
//! `fmaf`) the same bits as the Rust. The fused steps (`mul_add`, rounded once) are one
//! instruction where the CPU has FMA (every x86-64 CPU since 2013, every AArch64 one); on an
//! x86-64 CPU without it (or under `DLSPAN_CPU_VECTORS=baseline`) each is a call of libm's `fmaf`,
//! the same bits some seven times slower.

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

/// `ln 2` in two parts for `ln`: the high part's low 7 bits are zero, so `k · LN2_HI_LOG` is
/// exact for every `k` of an `f32` (|k| ≤ 149).
const LN2_HI_LOG: f32 = 0.693_138_1;
const LN2_LO_LOG: f32 = 9.058_001e-6;
/// `1 / ln 2` and `1 / ln 10` in two parts (the high parts of 12 significant bits), and
/// `log₁₀ 2` in two parts (the high part's `k` multiples exact).
const INV_LN2_HI: f32 = 1.442_871_1;
const INV_LN2_LO: f32 = -1.760_528_5e-4;
const INV_LN10_HI: f32 = 4.343_261_7e-1;
const INV_LN10_LO: f32 = -3.168_997e-5;
const LOG10_2_HI: f32 = 3.010_292e-1;
const LOG10_2_LO: f32 = 7.903_415e-7;

/// The parts of a logarithm of `x` (FreeBSD's `logf`, `log2f` and `log10f`): `x = 2^k · m` with
/// `m` in [√½, √2) (subnormal `x` scaled by 2²⁵ first), `f = m − 1`, `s = f / (2 + f)`, and
/// `ln(1 + f) = f − f²/2 + s · (f²/2 + R(s²))`, `R` the polynomial of FreeBSD's `k_log1pf` (its
/// `Lg1`–`Lg4`), returned as `(f, f²/2, s · (f²/2 + R), k)`. Meaningless for `x` that is not
/// positive and finite: [`log_special`] selects those results.
#[inline(always)]
fn log_parts(x: f32) -> (f32, f32, f32, f32) {
    let small = x < f32::MIN_POSITIVE;
    let scaled = if small { x * 33_554_432.0 } else { x };
    // The representation moved so that the exponent field counts from √½, not 1.
    let ix = scaled.to_bits().wrapping_add(0x3f80_0000 - 0x3f35_04f3);
    let k = (ix >> 23) as i32 - 0x7f - if small { 25 } else { 0 };
    let m = f32::from_bits((ix & 0x007f_ffff) + 0x3f35_04f3);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * w.mul_add(0.242_790_79, 0.400_009_72);
    let t2 = z * w.mul_add(0.284_987_87, 0.666_666_6);
    let hfsq = 0.5 * f * f;
    (f, hfsq, s * (hfsq + (t2 + t1)), k as f32)
}

/// A logarithm's result `y` for positive finite `x`, or the special result: `+∞` at `+∞`, `−∞`
/// at `±0`, NaN below zero and at NaN (comparisons, so that NaN passes through the selects).
#[inline(always)]
fn log_special(x: f32, y: f32) -> f32 {
    let y = if x == f32::INFINITY { x } else { y };
    let y = if x == 0.0 { f32::NEG_INFINITY } else { y };
    if x < 0.0 || x.is_nan() { f32::NAN } else { y }
}

/// `f − f²/2` split into a high part of 12 significant bits and the rest, for `log2` and
/// `log10`, whose products with the high parts of their factors are then exact.
#[inline(always)]
fn log_split(f: f32, hfsq: f32, r: f32) -> (f32, f32) {
    let hi = f32::from_bits((f - hfsq).to_bits() & 0xffff_f000);
    (hi, (f - hi) - hfsq + r)
}

/// `ln(x)` of an `f32` ([`log_parts`]): the terms summed smallest first, `k · ln 2` in two parts.
#[inline(always)]
pub(crate) fn ln_f32(x: f32) -> f32 {
    let (f, hfsq, r, dk) = log_parts(x);
    log_special(x, r + dk * LN2_LO_LOG - hfsq + f + dk * LN2_HI_LOG)
}

/// `log₂(x)` of an `f32` ([`log_parts`], [`log_split`]): `k` added last, exactly.
#[inline(always)]
pub(crate) fn log2_f32(x: f32) -> f32 {
    let (f, hfsq, r, dk) = log_parts(x);
    let (hi, lo) = log_split(f, hfsq, r);
    log_special(x, (lo + hi) * INV_LN2_LO + lo * INV_LN2_HI + hi * INV_LN2_HI + dk)
}

/// `log₁₀(x)` of an `f32` ([`log_parts`], [`log_split`]): `k · log₁₀ 2` in two parts.
#[inline(always)]
pub(crate) fn log10_f32(x: f32) -> f32 {
    let (f, hfsq, r, dk) = log_parts(x);
    let (hi, lo) = log_split(f, hfsq, r);
    let y = dk * LOG10_2_LO + (lo + hi) * INV_LN10_LO + lo * INV_LN10_HI + hi * INV_LN10_HI + dk * LOG10_2_HI;
    log_special(x, y)
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
        for log in [ln_f32, log2_f32, log10_f32] {
            assert_eq!(log(1.0).to_bits(), 0.0f32.to_bits());
            assert_eq!(log(0.0), f32::NEG_INFINITY);
            assert_eq!(log(-0.0), f32::NEG_INFINITY);
            assert_eq!(log(f32::INFINITY), f32::INFINITY);
            for x in [-1.0, -f32::MIN_POSITIVE, f32::NEG_INFINITY, f32::NAN] {
                assert!(log(x).is_nan(), "{x}");
            }
        }
        // Exact where the result is an integer: powers of two and of ten.
        for k in -149i32..128 {
            let bits = if k >= -126 { ((k + 127) as u32) << 23 } else { 1 << (k + 149) };
            assert_eq!(log2_f32(f32::from_bits(bits)), k as f32, "{k}");
        }
        for (k, x) in
            [1e-30f32, 1e-3, 0.1, 10.0, 100.0, 1e4, 1e7, 1e10, 1e30].into_iter().zip([-30, -3, -1, 1, 2, 4, 7, 10, 30])
        {
            assert_eq!(log10_f32(k), x as f32);
        }
        assert_eq!(tanh_f32(1e-30), 1e-30);
        assert_eq!(tanh_f32(f32::from_bits(1)), f32::from_bits(1));
    }

    /// Every function against `f64`'s libm (within 1 ulp of the exact value in `f64`, far below
    /// an `f32` ulp) on a grid over their whole range, within the bounds the module states (which
    /// hold over every `f32`: the grid samples them).
    #[test]
    fn within_the_stated_ulps() {
        let mut worst = [0.0f64; 5];
        let mut x = -110.0f32;
        while x < 100.0 {
            // The logarithms over [2⁻¹⁶⁰, 2⁵⁰] (subnormals included), on the same grid's steps.
            let y = x.mul_add(1.5, -5.0).exp2();
            let results = [
                (exp_f32(x), f64::from(x).exp()),
                (tanh_f32(x), f64::from(x).tanh()),
                (ln_f32(y), f64::from(y).ln()),
                (log2_f32(y), f64::from(y).log2()),
                (log10_f32(y), f64::from(y).log10()),
            ];
            for (k, (ours, reference)) in results.into_iter().enumerate() {
                let rounded = reference as f32;
                if rounded.is_finite() && rounded != 0.0 {
                    let ulp = f64::from(f32::from_bits(rounded.abs().to_bits() + 1) - rounded.abs());
                    worst[k] = worst[k].max((f64::from(ours) - reference).abs() / ulp);
                }
            }
            x += 0.000_731;
        }
        assert!(
            worst[0] <= 0.978 && worst[1] <= 1.331 && worst[2] <= 0.835 && worst[3] <= 0.865 && worst[4] <= 0.832,
            "{worst:?}"
        );
    }
}
