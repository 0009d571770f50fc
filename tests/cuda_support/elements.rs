//! Element values for the CUDA tests: random values of every element type the tests launch, and
//! arithmetic as the kernels define it.

use super::Rng;
use dlspan::DlElement;
use dlspan::half::{bf16, f16};

/// Random element values: `random` keeps floats finite (arithmetic results then do not depend on
/// NaN propagation, which the hardware defines); `any` is any valid bit pattern (NaNs and
/// infinities included), for copies and casts.
pub trait TestElement: DlElement + core::fmt::Debug {
    fn random(rng: &mut Rng) -> Self;

    fn any(rng: &mut Rng) -> Self {
        Self::random(rng)
    }
}

macro_rules! int_elements {
    ($($t:ty),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut Rng) -> Self {
                // Small values half the time (exact arithmetic), any bits otherwise (wrapping).
                if rng.chance(50) {
                    (rng.below(200) as i64 - 100) as $t
                } else {
                    ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) as $t
                }
            }
        }
    )*};
}
int_elements!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

impl TestElement for bool {
    fn random(rng: &mut Rng) -> Self {
        rng.chance(50)
    }
}

macro_rules! float_elements {
    ($($t:ty => $bits:ty, $eighth:expr),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut Rng) -> Self {
                loop {
                    // Multiples of 1/8 half the time (exact sums), any finite value otherwise.
                    let v = if rng.chance(50) { $eighth(rng.below(2001) as f32 - 1000.0) } else { Self::any(rng) };
                    if v.is_finite() {
                        return v;
                    }
                }
            }

            fn any(rng: &mut Rng) -> Self {
                <$t>::from_bits(rng.next_u64() as $bits)
            }
        }
    )*};
}
float_elements!(
    f32 => u32, |v: f32| v / 8.0,
    f64 => u64, |v: f32| f64::from(v) / 8.0,
    f16 => u16, |v: f32| f16::from_f32(v / 8.0),
    bf16 => u16, |v: f32| bf16::from_f32(v / 8.0)
);

/// Element types any of whose byte patterns is a valid value: random bytes.
macro_rules! byte_elements {
    ($($t:ty),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut Rng) -> Self {
                let mut value = <$t>::default();
                // SAFETY: every byte pattern is a valid value of this plain-bits type.
                let bytes = unsafe {
                    core::slice::from_raw_parts_mut((&mut value as *mut $t).cast::<u8>(), core::mem::size_of::<$t>())
                };
                for b in bytes {
                    *b = rng.next_u64() as u8;
                }
                value
            }
        }
    )*};
}
byte_elements!(
    dlspan::dtype::Bool,
    BoolBytes2,
    dlspan::dtype::Float8E3m4,
    dlspan::dtype::Float8E4m3,
    dlspan::dtype::Float8E4m3b11fnuz,
    dlspan::dtype::Float8E4m3fn,
    dlspan::dtype::Float8E4m3fnuz,
    dlspan::dtype::Float8E5m2,
    dlspan::dtype::Float8E5m2fnuz,
    dlspan::dtype::Float8E8m0fnu,
    dlspan::dtype::F32x4,
    dlspan::dtype::F64x4,
    dlspan::dtype::U8x4,
    dlspan::dtype::I16x2,
    dlspan::dtype::Float6E2m3fnX4
);

/// Two lanes of `kDLBool` holding any bytes (the storage a `#[repr(C)] struct { a: bool, b: bool }`
/// shares its kernels with).
#[derive(Clone, Copy, Debug, Default, dlspan::DlElement)]
#[dl(code = kDLBool, bits = 8, lanes = 2)]
#[repr(transparent)]
pub struct BoolBytes2(pub [u8; 2]);

/// Arithmetic as the kernels define it: wrapping integers, one rounding per float operation.
pub trait Arith: TestElement {
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
}

macro_rules! wrapping {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
        }
    )*};
}
wrapping!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

macro_rules! rounding {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, other: Self) -> Self { self + other }
            fn mul(self, other: Self) -> Self { self * other }
        }
    )*};
}
rounding!(f32, f64, f16, bf16);
