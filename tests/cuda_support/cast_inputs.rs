//! The inputs that test cast kernels against dlspan's CPU cast: every FP8 code, every `f16` and
//! `bf16` bit pattern, every 8- and 16-bit integer; `f32` and `f64` values at and next to every
//! value and rounding midpoint of `f16`, `bf16` and each FP8 format (and beyond their largest
//! value), around every power of two an integer bound or `f32` rounding meets, ±0, ±∞, NaNs with
//! payloads and signs, subnormals; wide integers at their extremes, powers of two and the
//! midpoints of every float precision; random values besides.

use super::{Rng, TestElement};
use dlspan::dtype::*;
use dlspan::half::{bf16, f16};

/// A source type of cast kernels, with its boundary inputs.
pub trait CastInput: Numeric + TestElement {
    fn boundary_inputs() -> Vec<Self>;
}

/// Runs `$body` once for every scalar type cast kernels convert between, with `$alias` naming
/// the type: `for_each_cast_scalar!(T => list.push(ElementType::of::<T>()))`. Nest two for every
/// (output, input) pair.
macro_rules! for_each_cast_scalar {
    ($alias:ident => $body:expr) => {
        for_each_cast_scalar!(@each $alias $body;
            bool, i8, i16, i32, i64, i128, u8, u16, u32, u64, u128,
            dlspan::half::f16, dlspan::half::bf16, f32, f64,
            dlspan::dtype::Float8E3m4, dlspan::dtype::Float8E4m3, dlspan::dtype::Float8E4m3b11fnuz,
            dlspan::dtype::Float8E4m3fn, dlspan::dtype::Float8E4m3fnuz, dlspan::dtype::Float8E5m2,
            dlspan::dtype::Float8E5m2fnuz, dlspan::dtype::Float8E8m0fnu)
    };
    (@each $alias:ident $body:expr; $($t:ty),*) => {
        $({
            type $alias = $t;
            $body;
        })*
    };
}

/// How many scalar types `for_each_cast_scalar!` visits.
pub const CAST_SCALARS: usize = 23;

/// The (output, input) pairs whose cast kernels run on random layouts (in the host-logic and GPU
/// tiers): every kind of conversion, and every element size of the tiled kernel. Calls
/// `$callback!(($($args)*) (Out, In), ...)`.
macro_rules! cast_layout_pairs {
    ($callback:ident!($($args:tt)*)) => {
        $callback!(($($args)*)
            (dlspan::half::f16, f32), (f32, dlspan::half::f16), (dlspan::half::bf16, f64),
            (dlspan::dtype::Float8E4m3fn, f32), (f32, dlspan::dtype::Float8E5m2),
            (dlspan::dtype::Float8E8m0fnu, dlspan::dtype::Float8E4m3fn), (i8, f32), (u64, f64),
            (i128, dlspan::half::f16), (f64, u128), (bool, dlspan::half::bf16), (f32, bool), (u8, i64),
            (dlspan::dtype::Float8E4m3fnuz, i32), (i16, dlspan::dtype::Float8E4m3b11fnuz),
            (f64, dlspan::dtype::Float8E3m4))
    };
}

const RANDOM: usize = 4096;

impl CastInput for bool {
    fn boundary_inputs() -> Vec<Self> {
        vec![false, true]
    }
}

/// Every byte: producers store any byte in a `kDLBool` element.
impl CastInput for Bool {
    fn boundary_inputs() -> Vec<Self> {
        (0..=u8::MAX).map(Bool::from_bits).collect()
    }
}

macro_rules! exhaustive_ints {
    ($($t:ty),*) => {$(
        impl CastInput for $t {
            fn boundary_inputs() -> Vec<Self> {
                (<$t>::MIN..=<$t>::MAX).collect()
            }
        }
    )*};
}
exhaustive_ints!(i8, i16, u8, u16);

macro_rules! wide_ints {
    ($($t:ty),*) => {$(
        impl CastInput for $t {
            fn boundary_inputs() -> Vec<Self> {
                let mut values = vec![0, 1, <$t>::MIN, <$t>::MAX, <$t>::MIN.wrapping_add(1), <$t>::MAX - 1];
                for k in 0..<$t>::BITS {
                    let power = (1 as $t) << k;
                    values.extend([power, power.wrapping_sub(1), power.wrapping_add(1)]);
                    // The midpoint between two floats of `p` significant bits in the binade of
                    // 2^k (FP8, bf16, f16, f32 and f64 precisions), and its neighbours.
                    for p in (1..=25).chain([53, 54]) {
                        if k >= p {
                            let mid = power | ((1 as $t) << (k - p));
                            values.extend([mid, mid.wrapping_sub(1), mid.wrapping_add(1), mid | 1, mid | (power >> 1)]);
                        }
                    }
                }
                let negated: Vec<$t> = values.iter().map(|v| v.wrapping_neg()).collect();
                values.extend(negated);
                let mut rng = Rng::new(<$t>::BITS.into());
                values.extend((0..RANDOM).map(|_| <$t>::random(&mut rng)));
                values
            }
        }
    )*};
}
wide_ints!(i32, i64, i128, u32, u64, u128);

impl CastInput for f16 {
    fn boundary_inputs() -> Vec<Self> {
        (0..=u16::MAX).map(f16::from_bits).collect()
    }
}

impl CastInput for bf16 {
    fn boundary_inputs() -> Vec<Self> {
        (0..=u16::MAX).map(bf16::from_bits).collect()
    }
}

macro_rules! fp8_inputs {
    ($($t:ty),*) => {$(
        impl CastInput for $t {
            fn boundary_inputs() -> Vec<Self> {
                (0..=u8::MAX).map(<$t>::from_bits).collect()
            }
        }
    )*};
}
fp8_inputs!(
    Float8E3m4,
    Float8E4m3,
    Float8E4m3b11fnuz,
    Float8E4m3fn,
    Float8E4m3fnuz,
    Float8E5m2,
    Float8E5m2fnuz,
    Float8E8m0fnu
);

/// The non-negative finite values of a format, ascending, from its codes' values.
fn ascending(values: impl Iterator<Item = f32>) -> Vec<f64> {
    let mut values: Vec<f64> = values.filter(|v| v.is_finite() && *v >= 0.0).map(f64::from).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    values
}

/// Every value of `f16`, `bf16` and each FP8 format, the midpoints between neighbours (where
/// rounding to nearest ties), and the midpoint past the largest value (where it overflows); all
/// exact in `f32`.
fn narrow_points() -> Vec<f64> {
    let formats: Vec<Vec<f64>> = vec![
        ascending((0..=u16::MAX).map(|b| f16::from_bits(b).to_f32())),
        ascending((0..=u16::MAX).map(|b| bf16::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E3m4::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E4m3::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E4m3b11fnuz::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E4m3fn::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E4m3fnuz::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E5m2::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E5m2fnuz::from_bits(b).to_f32())),
        ascending((0..=u8::MAX).map(|b| Float8E8m0fnu::from_bits(b).to_f32())),
    ];
    let mut points = Vec::new();
    for values in formats {
        for pair in values.windows(2) {
            points.extend([pair[0], (pair[0] + pair[1]) / 2.0]);
        }
        let n = values.len();
        points.extend([values[n - 1], values[n - 1] + (values[n - 1] - values[n - 2]) / 2.0]);
    }
    points
}

/// Powers of two from 2^-1100 to 2^1100 where integer bounds and float ranges meet, with halves.
fn power_points() -> Vec<f64> {
    let mut points = vec![0.5, 1.5, 2.5, 0.999_999, 1e-45, 1e-40, 1e-300, 1e39, 1e300, f64::MAX, f64::MIN_POSITIVE];
    for k in -150..=130 {
        let power = 2f64.powi(k);
        points.extend([power, power * 1.5, power * 1.25 + 0.5]);
    }
    points
}

fn random_f32(rng: &mut Rng) -> f32 {
    f32::from_bits(rng.next_u64() as u32)
}

/// A float and its neighbours by bit pattern, of both signs.
macro_rules! around {
    ($out:expr, $x:expr, $t:ty) => {{
        let x: $t = $x;
        if x.is_finite() {
            let bits = x.abs().to_bits();
            for b in [bits, bits + 1, bits.saturating_sub(1)] {
                let v = <$t>::from_bits(b);
                $out.extend([v, -v]);
            }
        }
    }};
}

impl CastInput for f32 {
    fn boundary_inputs() -> Vec<Self> {
        let mut values: Vec<f32> = [0x7FC0_0000, 0xFFC0_0000, 0x7F80_0001, 0xFFBF_FFFF, 0x7FC0_1234, 0xFF81_2345]
            .into_iter()
            .map(f32::from_bits)
            .collect();
        values.extend([f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN_POSITIVE]);
        for x in narrow_points().into_iter().chain(power_points()) {
            around!(values, x as f32, f32);
        }
        for bits in [1u32, 2, 3, 0x40_0000, 0x7F_FFFF] {
            around!(values, f32::from_bits(bits), f32);
        }
        let mut rng = Rng::new(32);
        values.extend((0..RANDOM).map(|_| random_f32(&mut rng)));
        values
    }
}

impl CastInput for f64 {
    fn boundary_inputs() -> Vec<Self> {
        let mut values: Vec<f64> =
            [0x7FF8_0000_0000_0000, 0xFFF8_0000_0000_0000, 0x7FF0_0000_0000_0001, 0xFFF8_DEAD_BEEF_0000]
                .into_iter()
                .map(f64::from_bits)
                .collect();
        values.extend([f64::INFINITY, f64::NEG_INFINITY, f64::MAX, f64::MIN_POSITIVE, f64::from_bits(1)]);
        // The f32 boundaries exactly, and one f64 ulp beside them: a value that f32 would round
        // onto a midpoint (rounding twice) must round once.
        values.extend(f32::boundary_inputs().into_iter().map(f64::from));
        for x in narrow_points().into_iter().chain(power_points()) {
            around!(values, x, f64);
        }
        // f64 -> f32 rounding: midpoints between neighbouring f32 values in every binade.
        let mut rng = Rng::new(64);
        for exponent in 1..255u32 {
            for mantissa in [0u32, 1, 0x40_0000, 0x7F_FFFE, rng.next_u64() as u32 & 0x7F_FFFF] {
                let low = f64::from(f32::from_bits(exponent << 23 | mantissa));
                let high = f64::from(f32::from_bits((exponent << 23 | mantissa) + 1));
                around!(values, (low + high) / 2.0, f64);
            }
        }
        values.extend((0..RANDOM).map(|_| f64::from_bits(rng.next_u64())));
        values
    }
}
