//! The values element-wise kernel bodies compute with, and how: [`Scalar`] (arithmetic, `min`,
//! `max`, `abs`), [`Float`] (the math functions), [`Compare`] (comparisons) and [`Cast`] (`as`).
//!
//! Each operation is defined once, here, and mirrored by the CUDA C++ of `cuda/kernel/elementwise.cu`
//! so that both sides give the same bits ([rule K3](crate::rules#k3)): integers wrap, division by
//! zero gives 0 and its remainder the dividend, `f32`/`f64` round each operation once (never
//! fused), `f16`/`bf16` compute in `f32` and round back after each operation, `min`/`max` return an
//! operand (the first of two equal ones, the other of a NaN), and casts are [`dtype::cast`].

use crate::dtype::{
    Bool, Float8E3m4, Float8E4m3, Float8E4m3b11fnuz, Float8E4m3fn, Float8E4m3fnuz, Float8E5m2, Float8E5m2fnuz,
    Float8E8m0fnu, Numeric, cast,
};
use half::{bf16, f16};

mod sealed {
    pub trait Sealed {}
}

/// A scalar type element-wise kernel bodies compute with: the integers `i8`–`i128` and `u8`–`u128`,
/// `f16`, `bf16`, `f32` and `f64`.
///
/// A kernel body's `+ - * / %`, unary `-`, `min`, `max` and `abs` need it: write `T: Scalar` on a
/// generic kernel. The operations are the kernel rules of [rule K3](crate::rules#k3), the same on the
/// CPU and on the GPU: integers wrap (also in debug builds), `x / 0` is 0 and `x % 0` is `x`,
/// floats round once per operation, `f16` and `bf16` compute in `f32` and round back.
///
/// ```
/// use dlspan::kernel::{Cpu, Scalar};
/// use dlspan::{HostMdspan, HostMdspanMut};
///
/// dlspan::elementwise! {
///     fn halve<T: Scalar>(x: &T, out: &mut T) {
///         *out = *x / (2 as T);
///     }
/// }
///
/// let x = [7u8, 8, 255];
/// let mut out = [0u8; 3];
/// halve.run(Cpu, &HostMdspan::<u8, 1>::from_slice(&x, [3])?, &mut HostMdspanMut::<u8, 1>::from_slice(&mut out, [3])?)?;
/// assert_eq!(out, [3, 4, 127]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a scalar type element-wise kernels compute with",
    label = "kernel arithmetic needs `dlspan::kernel::Scalar`",
    note = "kernel scalars: i8..i128, u8..u128, half::f16, half::bf16, f32, f64; bound a generic type with `T: dlspan::kernel::Scalar`"
)]
pub trait Scalar: Numeric + Compare + Cast + sealed::Sealed {
    #[doc(hidden)]
    fn k_add(self, rhs: Self) -> Self;
    #[doc(hidden)]
    fn k_sub(self, rhs: Self) -> Self;
    #[doc(hidden)]
    fn k_mul(self, rhs: Self) -> Self;
    #[doc(hidden)]
    fn k_div(self, rhs: Self) -> Self;
    #[doc(hidden)]
    fn k_rem(self, rhs: Self) -> Self;
    #[doc(hidden)]
    fn k_neg(self) -> Self;
    #[doc(hidden)]
    fn k_abs(self) -> Self;
    #[doc(hidden)]
    fn k_is_nan(self) -> bool;
    /// Whether an unsuffixed integer literal may take this type (integers only, as in Rust).
    #[doc(hidden)]
    const K_INTEGER: bool;
    /// The largest magnitude of a non-negative integer literal of this type.
    #[doc(hidden)]
    const K_MAX: u128;
    /// The largest magnitude of a negated integer literal of this type (0 when unsigned).
    #[doc(hidden)]
    const K_NEG_MAX: u128;
    /// The integer literal `magnitude` (negated when `negative`), already checked to fit.
    #[doc(hidden)]
    fn k_ilit(magnitude: u128, negative: bool) -> Self;
}

/// A floating-point kernel scalar: `f16`, `bf16`, `f32` and `f64`, with the math functions kernel
/// bodies may call ([rule K4](crate::rules#k4) lists them with their CUDA counterparts and how far
/// the GPU's results may lie from the CPU's).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a floating-point kernel scalar",
    label = "kernel math functions need `dlspan::kernel::Float`",
    note = "floating-point kernel scalars: half::f16, half::bf16, f32, f64; bound a generic type with `T: dlspan::kernel::Float`"
)]
pub trait Float: Scalar {
    #[doc(hidden)]
    fn k_unary(self, f: Unary) -> Self;
    #[doc(hidden)]
    fn k_powf(self, exponent: Self) -> Self;
    #[doc(hidden)]
    fn k_mul_add(self, a: Self, b: Self) -> Self;
    /// An unsuffixed float literal, given as Rust parses it for `f64` (`d`) and `f32` (`f`).
    #[doc(hidden)]
    fn k_flit(d: f64, f: f32) -> Self;
}

/// The one type an unsuffixed float literal beyond `f32`'s range may take: `f64`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this literal is out of range for `{Self}`",
    label = "beyond f32's range: only an f64 takes it",
    note = "an unsuffixed literal takes the type of the operand it meets; give the operand type f64"
)]
pub trait WideLiteral: Float {}
impl WideLiteral for f64 {}

/// The types kernel bodies compare with `==`, `!=`, `<`, `<=`, `>`, `>=`: every [`Scalar`] and `bool`.
/// `f16` and `bf16` compare as their `f32` values; NaN is unordered and unequal to itself.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be compared in an element-wise kernel",
    label = "kernel comparisons need `dlspan::kernel::Compare`",
    note = "kernel bodies compare scalars (integers, f16, bf16, f32, f64) and bool"
)]
pub trait Compare: Copy + PartialOrd + sealed::Sealed {}

/// The types a kernel body casts between with `as`: `bool`, [`Bool`], the integers, `f16`, `bf16`,
/// `f32`, `f64` and the eight FP8 formats. A cast is [`dtype::cast`](crate::dtype::cast) (one
/// rounding, Rust `as` into integers, NaN as the target's quiet NaN with the input's sign), as the
/// GPU's cast kernels compute it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be cast in an element-wise kernel",
    label = "kernel casts need `dlspan::kernel::Cast`",
    note = "kernel casts convert between bool, the integers, f16, bf16, f32, f64 and the FP8 formats"
)]
pub trait Cast: Numeric + sealed::Sealed {}

/// The one-argument math functions, for [`Float`]'s hidden method.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Sqrt,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Tanh,
    Floor,
    Ceil,
    Round,
    Trunc,
}

macro_rules! integers {
    ($($t:ty: $abs:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Compare for $t {}
        impl Cast for $t {}
        impl Scalar for $t {
            #[inline(always)]
            fn k_add(self, rhs: Self) -> Self { self.wrapping_add(rhs) }
            #[inline(always)]
            fn k_sub(self, rhs: Self) -> Self { self.wrapping_sub(rhs) }
            #[inline(always)]
            fn k_mul(self, rhs: Self) -> Self { self.wrapping_mul(rhs) }
            #[inline(always)]
            fn k_div(self, rhs: Self) -> Self { if rhs == 0 { 0 } else { self.wrapping_div(rhs) } }
            #[inline(always)]
            fn k_rem(self, rhs: Self) -> Self { if rhs == 0 { self } else { self.wrapping_rem(rhs) } }
            #[inline(always)]
            fn k_neg(self) -> Self { self.wrapping_neg() }
            #[inline(always)]
            fn k_abs(self) -> Self { let abs: fn(Self) -> Self = $abs; abs(self) }
            #[inline(always)]
            fn k_is_nan(self) -> bool { false }
            const K_INTEGER: bool = true;
            const K_MAX: u128 = <$t>::MAX as u128;
            const K_NEG_MAX: u128 = (<$t>::MIN as i128).unsigned_abs();
            #[inline(always)]
            fn k_ilit(magnitude: u128, negative: bool) -> Self {
                if negative { (magnitude as $t).wrapping_neg() } else { magnitude as $t }
            }
        }
    )*};
}

integers!(
    i8: i8::wrapping_abs, i16: i16::wrapping_abs, i32: i32::wrapping_abs, i64: i64::wrapping_abs,
    i128: i128::wrapping_abs,
    u8: |x| x, u16: |x| x, u32: |x| x, u64: |x| x, u128: |x| x,
);

macro_rules! native_floats {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Compare for $t {}
        impl Cast for $t {}
        impl Scalar for $t {
            #[inline(always)]
            fn k_add(self, rhs: Self) -> Self { self + rhs }
            #[inline(always)]
            fn k_sub(self, rhs: Self) -> Self { self - rhs }
            #[inline(always)]
            fn k_mul(self, rhs: Self) -> Self { self * rhs }
            #[inline(always)]
            fn k_div(self, rhs: Self) -> Self { self / rhs }
            #[inline(always)]
            fn k_rem(self, rhs: Self) -> Self { self % rhs }
            #[inline(always)]
            fn k_neg(self) -> Self { -self }
            #[inline(always)]
            fn k_abs(self) -> Self { self.abs() }
            #[inline(always)]
            fn k_is_nan(self) -> bool { self.is_nan() }
            const K_INTEGER: bool = false;
            const K_MAX: u128 = 0;
            const K_NEG_MAX: u128 = 0;
            #[inline(always)]
            fn k_ilit(magnitude: u128, negative: bool) -> Self {
                let v = magnitude as $t;
                if negative { -v } else { v }
            }
        }
        impl Float for $t {
            #[inline(always)]
            fn k_unary(self, f: Unary) -> Self {
                match f {
                    Unary::Sqrt => self.sqrt(),
                    Unary::Exp => <$t as CpuMath>::exp_k(self),
                    Unary::Exp2 => self.exp2(),
                    Unary::Ln => <$t as CpuMath>::ln_k(self),
                    Unary::Log2 => <$t as CpuMath>::log2_k(self),
                    Unary::Log10 => <$t as CpuMath>::log10_k(self),
                    Unary::Sin => self.sin(),
                    Unary::Cos => self.cos(),
                    Unary::Tan => self.tan(),
                    Unary::Tanh => <$t as CpuMath>::tanh_k(self),
                    Unary::Floor => self.floor(),
                    Unary::Ceil => self.ceil(),
                    Unary::Round => self.round(),
                    Unary::Trunc => self.trunc(),
                }
            }
            #[inline(always)]
            fn k_powf(self, exponent: Self) -> Self { self.powf(exponent) }
            #[inline(always)]
            fn k_mul_add(self, a: Self, b: Self) -> Self { self.mul_add(a, b) }
            #[inline(always)]
            fn k_flit(d: f64, f: f32) -> Self { <$t as NativeLiteral>::pick(d, f) }
        }
    )*};
}

/// The CPU's `exp`, `tanh` and logarithms per native float: for `f32`, dlspan's own
/// (`kernel::math`: vectorisable `f32` arithmetic within 0.99, 1.33 and 0.87 ulp); for `f64`, the
/// platform's libm.
trait CpuMath {
    fn exp_k(self) -> Self;
    fn tanh_k(self) -> Self;
    fn ln_k(self) -> Self;
    fn log2_k(self) -> Self;
    fn log10_k(self) -> Self;
}
impl CpuMath for f32 {
    #[inline(always)]
    fn exp_k(self) -> Self {
        super::math::exp_f32(self)
    }
    #[inline(always)]
    fn tanh_k(self) -> Self {
        super::math::tanh_f32(self)
    }
    #[inline(always)]
    fn ln_k(self) -> Self {
        super::math::ln_f32(self)
    }
    #[inline(always)]
    fn log2_k(self) -> Self {
        super::math::log2_f32(self)
    }
    #[inline(always)]
    fn log10_k(self) -> Self {
        super::math::log10_f32(self)
    }
}
impl CpuMath for f64 {
    #[inline(always)]
    fn exp_k(self) -> Self {
        self.exp()
    }
    #[inline(always)]
    fn tanh_k(self) -> Self {
        self.tanh()
    }
    #[inline(always)]
    fn ln_k(self) -> Self {
        self.ln()
    }
    #[inline(always)]
    fn log2_k(self) -> Self {
        self.log2()
    }
    #[inline(always)]
    fn log10_k(self) -> Self {
        self.log10()
    }
}

/// Which parse of a float literal each native float takes.
trait NativeLiteral {
    fn pick(d: f64, f: f32) -> Self;
}
impl NativeLiteral for f32 {
    #[inline(always)]
    fn pick(_: f64, f: f32) -> Self {
        f
    }
}
impl NativeLiteral for f64 {
    #[inline(always)]
    fn pick(d: f64, _: f32) -> Self {
        d
    }
}

native_floats!(f32, f64);

/// `f16` and `bf16`: every operation in `f32`, rounded back once (negation and `abs` are exact).
macro_rules! half_floats {
    ($($t:ty: $sign:expr),*) => {$(
        impl sealed::Sealed for $t {}
        impl Compare for $t {}
        impl Cast for $t {}
        impl Scalar for $t {
            #[inline(always)]
            fn k_add(self, rhs: Self) -> Self { <$t>::from_f32(self.to_f32() + rhs.to_f32()) }
            #[inline(always)]
            fn k_sub(self, rhs: Self) -> Self { <$t>::from_f32(self.to_f32() - rhs.to_f32()) }
            #[inline(always)]
            fn k_mul(self, rhs: Self) -> Self { <$t>::from_f32(self.to_f32() * rhs.to_f32()) }
            #[inline(always)]
            fn k_div(self, rhs: Self) -> Self { <$t>::from_f32(self.to_f32() / rhs.to_f32()) }
            #[inline(always)]
            fn k_rem(self, rhs: Self) -> Self { <$t>::from_f32(self.to_f32() % rhs.to_f32()) }
            #[inline(always)]
            fn k_neg(self) -> Self { <$t>::from_bits(self.to_bits() ^ $sign) }
            #[inline(always)]
            fn k_abs(self) -> Self { <$t>::from_bits(self.to_bits() & !$sign) }
            #[inline(always)]
            fn k_is_nan(self) -> bool { self.is_nan() }
            const K_INTEGER: bool = false;
            const K_MAX: u128 = 0;
            const K_NEG_MAX: u128 = 0;
            #[inline(always)]
            fn k_ilit(magnitude: u128, negative: bool) -> Self {
                <$t>::from_f32(<f32 as Scalar>::k_ilit(magnitude, negative))
            }
        }
        impl Float for $t {
            #[inline(always)]
            fn k_unary(self, f: Unary) -> Self { <$t>::from_f32(self.to_f32().k_unary(f)) }
            #[inline(always)]
            fn k_powf(self, exponent: Self) -> Self { <$t>::from_f32(self.to_f32().powf(exponent.to_f32())) }
            #[inline(always)]
            fn k_mul_add(self, a: Self, b: Self) -> Self {
                <$t>::from_f32(self.to_f32().mul_add(a.to_f32(), b.to_f32()))
            }
            /// The literal's `f32` value rounded to this type (as the GPU's `dl_flit` converts it).
            #[inline(always)]
            fn k_flit(_: f64, f: f32) -> Self { <$t>::from_f32(f) }
        }
    )*};
}

half_floats!(f16: 0x8000, bf16: 0x8000);

impl sealed::Sealed for bool {}
impl Compare for bool {}
impl Cast for bool {}
impl sealed::Sealed for Bool {}
impl Cast for Bool {}

macro_rules! fp8_casts {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Cast for $t {}
    )*};
}

fp8_casts!(
    Float8E3m4,
    Float8E4m3,
    Float8E4m3b11fnuz,
    Float8E4m3fn,
    Float8E4m3fnuz,
    Float8E5m2,
    Float8E5m2fnuz,
    Float8E8m0fnu
);

/// What the macro's Rust translation of a kernel body calls for each operator and math function:
/// the operations above as free functions (the translation spans each call at the user's token, so
/// a type error points there). Not public API.
#[doc(hidden)]
pub mod ops {
    use super::*;

    macro_rules! binary {
        ($($name:ident => $method:ident),*) => {$(
            #[inline(always)]
            pub fn $name<T: Scalar>(a: T, b: T) -> T { a.$method(b) }
        )*};
    }
    binary!(add => k_add, sub => k_sub, mul => k_mul, div => k_div, rem => k_rem);

    /// Unary `-`.
    #[inline(always)]
    pub fn neg<T: Scalar>(a: T) -> T {
        a.k_neg()
    }

    /// `a.abs()`.
    #[inline(always)]
    pub fn abs<T: Scalar>(a: T) -> T {
        a.k_abs()
    }

    /// `a.min(b)`: `b` when it is below `a` or `a` is NaN, else `a`.
    #[inline(always)]
    pub fn min<T: Scalar>(a: T, b: T) -> T {
        if b < a || a.k_is_nan() { b } else { a }
    }

    /// `a.max(b)`: `b` when it is above `a` or `a` is NaN, else `a`.
    #[inline(always)]
    pub fn max<T: Scalar>(a: T, b: T) -> T {
        if b > a || a.k_is_nan() { b } else { a }
    }

    /// `!b`, on `bool` only (a kernel has no bitwise operators).
    #[inline(always)]
    pub fn not(b: bool) -> bool {
        !b
    }

    macro_rules! comparisons {
        ($($name:ident => $op:tt),*) => {$(
            #[inline(always)]
            pub fn $name<T: Compare>(a: T, b: T) -> bool { a $op b }
        )*};
    }
    comparisons!(eq => ==, ne => !=, lt => <, le => <=, gt => >, ge => >=);

    macro_rules! unary {
        ($($name:ident => $f:ident),*) => {$(
            #[inline(always)]
            pub fn $name<T: Float>(a: T) -> T { a.k_unary(Unary::$f) }
        )*};
    }
    unary!(
        sqrt => Sqrt, exp => Exp, exp2 => Exp2, ln => Ln, log2 => Log2, log10 => Log10, sin => Sin,
        cos => Cos, tan => Tan, tanh => Tanh, floor => Floor, ceil => Ceil, round => Round, trunc => Trunc
    );

    /// `a.powf(b)`.
    #[inline(always)]
    pub fn powf<T: Float>(a: T, b: T) -> T {
        a.k_powf(b)
    }

    /// `a.mul_add(b, c)`: `a * b + c` rounded once.
    #[inline(always)]
    pub fn mul_add<T: Float>(a: T, b: T, c: T) -> T {
        a.k_mul_add(b, c)
    }

    /// `x.detach()`: `x` itself, whose derivative a `#[differentiable]` kernel takes as zero.
    #[inline(always)]
    pub fn detach<T: Copy>(x: T) -> T {
        x
    }

    /// `x.zero_like()`: the value of `x`'s type whose bytes are all zero (`0`, `0.0`, `false`, every
    /// field of a derived type zero), what a `#[differentiable]` kernel's backward writes for the
    /// fields of a derived-type gradient the body never reads. Its derivative is zero.
    ///
    /// ```
    /// assert_eq!(dlspan::kernel::ops::zero_like(2.5f32), 0.0);
    /// assert!(!dlspan::kernel::ops::zero_like(true));
    /// ```
    #[inline(always)]
    pub fn zero_like<T: crate::DlElement>(x: T) -> T {
        let _ = x;
        // SAFETY: every `DlElement` is valid for all-zero bytes: its validity contract (rule 3 of
        // the trait's safety section) is `AnyBits` — every bit pattern — or `BoolBytes`, every
        // element whose bytes are each 0 or 1, which all-zero bytes are; the bytes are `T`'s
        // size, so nothing is read past them.
        unsafe { core::mem::zeroed() }
    }

    /// `x as To`: [`dtype::cast`](crate::dtype::cast).
    #[inline(always)]
    pub fn cast<To: Cast, From: Cast>(x: From) -> To {
        super::cast(x)
    }

    /// An unsuffixed float literal, of the type of the operand it meets (rule K2): `f` (Rust's
    /// parse of it as `f32`) for `f32`, `d` for `f64`, `f` rounded for `f16` and `bf16`.
    #[inline(always)]
    pub fn flit<T: Float>(d: f64, f: f32) -> T {
        T::k_flit(d, f)
    }

    /// An unsuffixed float literal beyond `f32`'s range: only an `f64` operand takes it.
    #[inline(always)]
    pub fn flit64<T: WideLiteral>(d: f64) -> T {
        T::k_flit(d, 0.0)
    }

    /// An unsuffixed integer literal `V` (negated when `NEG`), of the type of the operand it meets
    /// (rule K2): a compile error when it does not fit that type, when it is negated and the type
    /// is unsigned, or when the operand is a float (as in Rust: write `2.0`).
    #[inline(always)]
    pub fn ilit<T: Scalar, const V: u128, const NEG: bool>() -> T {
        const {
            assert!(
                T::K_INTEGER && if NEG { V <= T::K_NEG_MAX && T::K_NEG_MAX > 0 } else { V <= T::K_MAX },
                "an unsuffixed integer literal does not fit the type of the operand it meets (out of its range, \
                 negated for an unsigned type, or meeting a float: write `2.0`)"
            )
        };
        T::k_ilit(V, NEG)
    }
}

#[cfg(test)]
mod tests {
    use super::ops::*;
    use super::*;

    #[test]
    fn integers_wrap_and_divide_by_zero_as_documented() {
        assert_eq!(add(250u8, 10), 4);
        assert_eq!(div(i32::MIN, -1), i32::MIN);
        assert_eq!(rem(i32::MIN, -1), 0);
        assert_eq!(div(7i16, 0), 0);
        assert_eq!(rem(7i16, 0), 7);
        assert_eq!(abs(i8::MIN), i8::MIN);
        assert_eq!(neg(1u8), 255);
    }

    #[test]
    fn min_and_max_return_an_operand() {
        assert_eq!(min(f32::NAN, 1.0), 1.0);
        assert!(min(1.0, f32::NAN) == 1.0);
        assert_eq!(min(-0.0f32, 0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(min(0.0f32, -0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(max(2u8, 3), 3);
    }

    #[test]
    fn literals_take_the_type_they_meet() {
        assert_eq!(flit::<f32>(0.1, 0.1f32).to_bits(), 0.1f32.to_bits());
        assert_eq!(flit::<f64>(0.1, 0.1f32).to_bits(), 0.1f64.to_bits());
        assert_eq!(flit::<f16>(0.1, 0.1f32), f16::from_f32(0.1));
        assert_eq!(flit64::<f64>(1e300), 1e300);
        assert_eq!(ilit::<u8, 255, false>(), 255);
        assert_eq!(ilit::<i8, 128, true>(), -128);
        assert_eq!(ilit::<i128, { 1u128 << 127 }, true>(), i128::MIN);
        assert_eq!(ilit::<u128, { u128::MAX }, false>(), u128::MAX);
    }

    #[test]
    fn half_floats_compute_in_f32() {
        let (a, b) = (f16::from_f32(2048.0), f16::ONE);
        assert_eq!(add(a, b), a); // a tie to even
        assert_eq!(neg(bf16::ONE).to_f32(), -1.0);
        assert_eq!(sqrt(f16::from_f32(4.0)).to_f32(), 2.0);
        assert_eq!(super::ops::cast::<f32, f16>(f16::from_f32(0.5)), 0.5);
    }
}
