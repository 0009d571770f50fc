//! The element cast against NumPy's and ml_dtypes' `astype` for every pair of the scalar types
//! both know (bool, integers to 64 bits, `f16`, `bf16`, `f32`, `f64`, complex, every FP8 code, FP6,
//! FP4), on boundary values and random bit patterns, compared bit for bit (any NaN equal to any NaN:
//! NumPy keeps payloads, dlspan's canonical NaNs are checked by the unit tests).
//!
//! Where the reference itself is not what dlspan promises, the input is left out, and each such
//! rule says why: NumPy's float → integer cast of NaN and of values out of the target's range is
//! platform-defined (dlspan saturates like Rust `as`); ml_dtypes casts integers and `float64` to
//! its types through `float32`, which rounds twice for integers beyond 2^24 and for `float64`
//! values that `float32` does not hold (dlspan rounds once); NaN into FP6/FP4 is dlspan's
//! documented choice. The rounding-once cases are checked against exact arithmetic in the unit
//! tests of `dtype::cast`.

mod support;

use dlspan::dtype::*;
use dlspan::half::{bf16, f16};
use dlspan::num_complex::Complex;
use std::path::Path;
use support::rng::Rng;

/// What the test knows of each type.
trait Sample: Numeric {
    /// The NumPy or ml_dtypes name.
    const NAME: &'static str;
    /// An integer type's range, as `f64`: the lowest value and the first one above the highest.
    const INT_RANGE: Option<(f64, f64)> = None;
    /// Whether ml_dtypes rounds integer and `float64` sources through `float32` into this type.
    const REFERENCE_VIA_F32: bool = false;
    /// Inputs: boundaries and random values.
    fn samples(rng: &mut Rng) -> Vec<Self>;
}

const RANDOM: usize = 2048;

impl Sample for bool {
    const NAME: &'static str = "bool";
    fn samples(_: &mut Rng) -> Vec<Self> {
        vec![false, true]
    }
}

macro_rules! integers {
    ($($ty:ty => $name:literal),* $(,)?) => {$(
        impl Sample for $ty {
            const NAME: &'static str = $name;
            // `MAX as f64` rounds up to 2^bits for the 64-bit types, where adding 1 changes nothing.
            const INT_RANGE: Option<(f64, f64)> = Some((<$ty>::MIN as f64, <$ty>::MAX as f64 + 1.0));
            fn samples(rng: &mut Rng) -> Vec<Self> {
                let mut values = vec![0, 1, <$ty>::MIN, <$ty>::MAX, <$ty>::MIN.wrapping_add(1), <$ty>::MAX - 1];
                for shift in 0..<$ty>::BITS {
                    let power = (1 as $ty) << shift;
                    values.extend([power, power.wrapping_add(1), power.wrapping_sub(1), power.wrapping_neg()]);
                }
                // Halfway cases of narrow floats: 2^k + 2^(k-8) (+1), 3·2^k.
                for shift in 9..<$ty>::BITS.min(63) {
                    let power = 1u64 << shift;
                    values.extend([(power + (power >> 8)) as $ty, (power + (power >> 8) + 1) as $ty, (3 * (power >> 1)) as $ty]);
                }
                values.extend((0..RANDOM).map(|i| {
                    let bits = rng.next_u64();
                    // Half of them small, half any bit pattern.
                    if i % 2 == 0 { (bits % 512) as $ty } else { bits as $ty }
                }));
                values
            }
        }
    )*};
}

integers! {
    i8 => "int8", i16 => "int16", i32 => "int32", i64 => "int64",
    u8 => "uint8", u16 => "uint16", u32 => "uint32", u64 => "uint64",
}

/// Special and random `f64` values: the sources of every floating-point sample.
fn float_values(rng: &mut Rng) -> Vec<f64> {
    let mut values = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        0.5,
        1.5,
        2.5,
        -2.5,
        127.5,
        255.9,
        -128.7,
        65504.0,
        65520.0,
        448.0,
        464.0,
        57344.0,
        2f64.powi(31),
        -(2f64.powi(31)),
        2f64.powi(63),
        1e300,
        f64::from_bits(1),
    ];
    for _ in 0..RANDOM {
        let bits = rng.next_u64();
        values.push(f64::from_bits(bits));
        // A value in the ranges of the small formats and the integers.
        let exponent = (bits >> 56) as i32 % 80 - 30;
        let sign = if bits & 1 == 1 { -1.0 } else { 1.0 };
        values.push(sign * (1.0 + (bits >> 12 & 0xFFFF_FFFF) as f64 / 2f64.powi(32)) * 2f64.powi(exponent));
    }
    values
}

impl Sample for f64 {
    const NAME: &'static str = "float64";
    fn samples(rng: &mut Rng) -> Vec<Self> {
        float_values(rng)
    }
}

impl Sample for f32 {
    const NAME: &'static str = "float32";
    fn samples(rng: &mut Rng) -> Vec<Self> {
        let mut values: Vec<f32> = float_values(rng).into_iter().map(|v| v as f32).collect();
        values.extend((0..RANDOM).map(|_| f32::from_bits(rng.next_u64() as u32)));
        values
    }
}

impl Sample for f16 {
    const NAME: &'static str = "float16";
    fn samples(_: &mut Rng) -> Vec<Self> {
        (0..=u16::MAX).map(f16::from_bits).collect()
    }
}

impl Sample for bf16 {
    const NAME: &'static str = "bfloat16";
    const REFERENCE_VIA_F32: bool = true;
    fn samples(_: &mut Rng) -> Vec<Self> {
        (0..=u16::MAX).map(bf16::from_bits).collect()
    }
}

macro_rules! complexes {
    ($($part:ty => $name:literal),* $(,)?) => {$(
        impl Sample for Complex<$part> {
            const NAME: &'static str = $name;
            fn samples(rng: &mut Rng) -> Vec<Self> {
                let parts = <$part>::samples(rng);
                parts.iter().zip(parts.iter().rev()).map(|(&re, &im)| Complex::new(re, im)).collect()
            }
        }
    )*};
}

complexes!(f32 => "complex64", f64 => "complex128");

macro_rules! minifloats {
    ($($ty:ident => $name:literal, $codes:expr;)*) => {$(
        impl Sample for $ty {
            const NAME: &'static str = $name;
            const REFERENCE_VIA_F32: bool = true;
            fn samples(_: &mut Rng) -> Vec<Self> {
                (0..$codes).map(|code: u16| $ty::from_bits(code as u8)).collect()
            }
        }
    )*};
}

minifloats! {
    Float8E3m4 => "float8_e3m4", 256;
    Float8E4m3 => "float8_e4m3", 256;
    Float8E4m3b11fnuz => "float8_e4m3b11fnuz", 256;
    Float8E4m3fn => "float8_e4m3fn", 256;
    Float8E4m3fnuz => "float8_e4m3fnuz", 256;
    Float8E5m2 => "float8_e5m2", 256;
    Float8E5m2fnuz => "float8_e5m2fnuz", 256;
    Float8E8m0fnu => "float8_e8m0fnu", 256;
    Float6E2m3fn => "float6_e2m3fn", 64;
    Float6E3m2fn => "float6_e3m2fn", 64;
    Float4E2m1fn => "float4_e2m1fn", 16;
}

fn bytes_of<T: Numeric>(values: &[T]) -> Vec<u8> {
    // SAFETY: element types are plain bytes without padding (`DlElement`); the slice is live.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }.to_vec()
}

fn values_of<T: Numeric>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(size_of::<T>())
        // SAFETY: the reference writes valid values of `T` (bools as 0 and 1, minifloats any byte).
        .map(|chunk| unsafe { chunk.as_ptr().cast::<T>().read_unaligned() })
        .collect()
}

fn is_nan<T: Numeric>(value: T) -> bool {
    let value: Complex<f64> = cast(value);
    value.re.is_nan() || value.im.is_nan()
}

/// Why an input is left out of the comparison for this pair, if it is.
fn left_out<S: Sample, D: Sample>(value: S) -> Option<&'static str> {
    let exact: Complex<f64> = cast(value);
    let real = exact.re;
    let float_source = S::INT_RANGE.is_none() && S::NAME != "bool";
    if let Some((low, high)) = D::INT_RANGE
        && float_source
        && !(real.trunc() >= low && real.trunc() < high)
    {
        return Some("NumPy's float to integer cast is platform-defined out of range");
    }
    if D::REFERENCE_VIA_F32 && S::INT_RANGE.is_some() && real.abs() > 2f64.powi(24) {
        return Some("ml_dtypes rounds integers through float32");
    }
    if D::REFERENCE_VIA_F32 && S::NAME.contains("64") && f64::from(real as f32) != real && !real.is_nan() {
        return Some("ml_dtypes rounds float64 through float32");
    }
    if D::REFERENCE_VIA_F32 && S::NAME.contains("complex") && f64::from(exact.re as f32) != exact.re {
        return Some("ml_dtypes rounds complex parts through float32");
    }
    if real.is_nan() && D::NAME.starts_with("float6") || real.is_nan() && D::NAME.starts_with("float4") {
        return Some("dlspan's NaN into FP6/FP4 is the largest value");
    }
    None
}

/// Compares the cast of every source value with the reference; returns how many were compared and
/// how many left out.
fn compare<S: Sample, D: Sample>(dir: &Path, sources: &[S]) -> (usize, usize) {
    let path = dir.join(format!("{}.{}.bin", S::NAME, D::NAME));
    let Ok(bytes) = std::fs::read(&path) else { return (0, 0) };
    let reference = values_of::<D>(&bytes);
    assert_eq!(reference.len(), sources.len(), "{}", path.display());
    let (mut compared, mut skipped) = (0, 0);
    for (&value, &expected) in sources.iter().zip(&reference) {
        if left_out::<S, D>(value).is_some() {
            skipped += 1;
            continue;
        }
        let ours: D = cast(value);
        let same = bytes_of(&[ours]) == bytes_of(&[expected]) || (is_nan(ours) && is_nan(expected));
        assert!(same, "{} {value:?} -> {}: dlspan {ours:?}, reference {expected:?}", S::NAME, D::NAME);
        compared += 1;
    }
    (compared, skipped)
}

/// Calls `$body` with the type alias `$t` bound to each sampled type.
macro_rules! each_type {
    ($t:ident => $body:expr) => {{
        each_type!(@ $t => $body; bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, Complex<f32>,
            Complex<f64>, Float8E3m4, Float8E4m3, Float8E4m3b11fnuz, Float8E4m3fn, Float8E4m3fnuz, Float8E5m2,
            Float8E5m2fnuz, Float8E8m0fnu, Float6E2m3fn, Float6E3m2fn, Float4E2m1fn)
    }};
    (@ $t:ident => $body:expr; $($ty:ty),*) => {{
        $({
            type $t = $ty;
            $body;
        })*
    }};
}

/// Counts of one source type against every target: casts compared, inputs left out, pairs.
fn compare_from<S: Sample>(dir: &Path, rng: &mut Rng) -> [usize; 3] {
    let sources = S::samples(rng);
    let mut counts = [0; 3];
    each_type!(D => {
        let (compared, skipped) = compare::<S, D>(dir, &sources);
        counts[0] += compared;
        counts[1] += skipped;
        counts[2] += usize::from(compared > 0);
    });
    counts
}

#[test]
fn casts_match_numpy_and_ml_dtypes() {
    let Some(python) = support::ml_dtypes_python() else { return };
    let dir = support::scratch_dir("cast_reference");
    let mut names = Vec::new();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    each_type!(T => {
        std::fs::write(dir.join(format!("{}.bin", T::NAME)), bytes_of(&T::samples(&mut rng))).unwrap();
        names.push(T::NAME);
    });
    std::fs::write(dir.join("types.txt"), names.join("\n")).unwrap();
    support::run_python(&python, "cast_reference.py", &[&dir]);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let [mut compared, mut skipped, mut pairs] = [0; 3];
    each_type!(S => {
        let [c, s, p] = compare_from::<S>(&dir, &mut rng);
        compared += c;
        skipped += s;
        pairs += p;
    });
    println!("compared {compared} casts over {pairs} type pairs with NumPy and ml_dtypes ({skipped} inputs left out)");
    // Most of those are random float bit patterns beyond the integer types' ranges; the rules must
    // not grow to swallow the test.
    assert!(skipped < compared / 4, "{skipped} of {compared} inputs left out");
    // Every pair of the 26 types but the complex → ml_dtypes ones NumPy refuses.
    assert!(pairs >= 26 * 26 - 2 * 12, "only {pairs} pairs compared");
}

#[test]
fn cast_copy_between_views_of_any_strides() {
    use dlspan::{DlpackError, HostMdspan, HostMdspanMut, LayoutLeft, LayoutStrideRelaxed};
    let source: Vec<f64> = (0..12).map(|i| f64::from(i) * 37.5 - 100.0).collect();
    let source = HostMdspan::<f64, 2, LayoutLeft>::from_slice(&source, [3, 4]).unwrap();
    let mut codes = vec![Float8E4m3fn::default(); 12];
    // Rows reversed: row 0 is the last memory row.
    let mut target =
        HostMdspanMut::<Float8E4m3fn, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut codes, [3, 4], [-4, 1], 8)
            .unwrap();
    target.cast_from(&source).unwrap();
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(target[[i, j]], cast::<f64, Float8E4m3fn>(source[[i, j]]), "[{i}, {j}]");
        }
    }
    let short = HostMdspan::<f64, 2>::from_slice(&[0.0; 6], [3, 2]).unwrap();
    assert!(matches!(target.cast_from(&short), Err(DlpackError::ShapeMismatch { axis: 1, .. })));
    // Index [0, 0] is the first element of the last memory row; -100 ties between -96 and -104.
    assert_eq!(codes[8].to_f32(), -96.0);
}
