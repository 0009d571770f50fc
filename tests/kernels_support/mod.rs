//! The element-wise kernels of the tests, and random layouts to run them on. Every tier runs these
//! kernels: the CPU path against a reference loop (`tests/kernels.rs`), the NVRTC tier compiles
//! every instantiation in [`instances`], the host-logic tier builds the translations with the host
//! C++ compiler and compares them with the CPU path bit for bit, and the GPU tier compares the
//! GPU with the CPU path.
#![allow(dead_code, unreachable_pub, missing_docs)]

// The CUDA tiers load this file through `cuda_support` too: one generator each.
#[allow(clippy::duplicate_mod)]
#[path = "../support/rng.rs"]
mod rng;
pub use rng::Rng;

use dlspan::dtype::Float8E4m3fn;
use dlspan::half::{bf16, f16};
use dlspan::kernel::{Float, Instance, Scalar};
use dlspan::{HostMdspan, HostMdspanMut, LayoutStrideRelaxed};

/// A derived element type: four `u8` lanes with names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, dlspan::DlElement)]
#[repr(C)]
pub struct Rgba {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: u8,
}

/// A derived newtype of `f32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, dlspan::DlElement)]
#[repr(transparent)]
pub struct Meters(pub f32);

dlspan::elementwise! {
    /// `out = a·x + b·y`.
    pub fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
        *out = a * *x + b * *y;
    }
}

dlspan::elementwise! {
    /// The mean of the colour lanes: field reads, casts, integer division by a literal.
    pub fn gray(px: &Rgba, out: &mut u8) {
        let sum = px.r as u32 + px.g as u32 + px.b as u32;
        *out = (sum / 3) as u8;
    }
}

dlspan::elementwise! {
    /// Brightens the colour lanes in place, saturating: field writes, `min`, wider arithmetic.
    pub fn brighten(px: &mut Rgba, by: u8) {
        px.r = (px.r as u16 + by as u16).min(255) as u8;
        px.g = (px.g as u16 + by as u16).min(255) as u8;
        (*px).b = ((*px).b as u16 + by as u16).min(255u16) as u8;
    }
}

dlspan::elementwise! {
    /// A soft clip: a math function, `if`/`else`, literals of the operand's type, casts, `+=`.
    /// The terms added to the math function's result have its sign (`abs`): a sum that cancels
    /// would magnify the platforms' few ulps of `tanh` into hundreds in the result (seen on a GPU:
    /// `tanh(x)·limit ≈ −1.53` plus 1.5).
    pub fn soft<T: Float>(x: &T, limit: T, out: &mut T) {
        let y: T = x.tanh() * limit;
        if y > limit {
            *out = limit;
        } else {
            *out = y.max(-limit).abs() + (0.5 as T);
        }
        *out += 1 as T;
    }
}

dlspan::elementwise! {
    /// Every one-argument math function, chosen by `which` (an `if`/`else if` chain).
    pub fn unary<T: Float>(x: &T, which: i32, out: &mut T) {
        let v = *x;
        *out = if which == 0 {
            v.sqrt()
        } else if which == 1 {
            v.exp()
        } else if which == 2 {
            v.exp2()
        } else if which == 3 {
            v.ln()
        } else if which == 4 {
            v.log2()
        } else if which == 5 {
            v.log10()
        } else if which == 6 {
            v.sin()
        } else if which == 7 {
            v.cos()
        } else if which == 8 {
            v.tan()
        } else if which == 9 {
            v.tanh()
        } else if which == 10 {
            v.floor()
        } else if which == 11 {
            v.ceil()
        } else if which == 12 {
            v.round()
        } else if which == 13 {
            v.trunc()
        } else if which == 14 {
            v.abs()
        } else {
            -v
        };
    }
}

/// How many functions `unary` chooses from.
pub const UNARY: i32 = 16;

dlspan::elementwise! {
    /// The arithmetic and the functions of several arguments, chosen by `which`.
    pub fn binary<T: Float>(x: &T, y: &T, z: &T, which: i32, out: &mut T) {
        if which == 0 {
            *out = *x + *y;
        } else if which == 1 {
            *out = *x - *y;
        } else if which == 2 {
            *out = *x * *y;
        } else if which == 3 {
            *out = *x / *y;
        } else if which == 4 {
            *out = *x % *y;
        } else if which == 5 {
            *out = x.powf(*y);
        } else if which == 6 {
            *out = x.min(*y);
        } else if which == 7 {
            *out = x.max(*y);
        } else {
            *out = x.mul_add(*y, *z);
        }
    }
}

/// How many operations `binary` chooses from.
pub const BINARY: i32 = 9;

dlspan::elementwise! {
    /// Integer arithmetic into two outputs: wrapping, division and remainder by zero and of MIN by
    /// -1, `abs`, negation, `min`/`max`, integer literals.
    pub fn integers<T: Scalar>(x: &T, y: &T, quotient: &mut T, other: &mut T) {
        *quotient = *x / *y;
        let r = *x % *y;
        *other = r * 3 as T - x.abs() + (-*y).max(r).min(*x) + 1 as T;
    }
}

dlspan::elementwise! {
    /// A `bool` view written from comparisons and logic.
    pub fn mask<T: Scalar>(x: &T, low: T, high: T, out: &mut bool) {
        *out = (*x >= low && *x < high) || !(*x == *x);
    }
}

dlspan::elementwise! {
    /// A `bool` view read, an `if` value.
    pub fn select<T: Scalar>(m: &bool, a: &T, b: &T, out: &mut T) {
        *out = if *m { *a } else { *b };
    }
}

dlspan::elementwise! {
    /// Casts from one input into five outputs of other types (FP8 and a derived newtype's field
    /// included), as `dtype::cast` rounds.
    pub fn casts(x: &f32, i: &mut i32, h: &mut f16, b: &mut bf16, e: &mut Float8E4m3fn, m: &mut Meters) {
        *i = *x as i32;
        *h = *x as f16;
        *b = (*x as f64 * 3.0) as bf16;
        *e = *x as Float8E4m3fn;
        m.0 = *x * 2.0;
    }
}

dlspan::elementwise! {
    /// GELU's tanh form, generic over the float types, with unsuffixed literals: each takes the
    /// type of the operand it meets, as in a concrete body (rule K2), a negated one too.
    pub fn gelu<T: Float>(x: &T, out: &mut T) {
        let v = *x;
        let inner = 0.7978845608 * (v + 0.044715 * v * v * v);
        *out = 0.5 * v * (1.0 + inner.tanh());
        if v < -6.0 {
            *out = -0.0;
        }
        *out += 0.0;
    }
}

dlspan::elementwise! {
    /// Integer literals of the operand's type in a generic body: `3·x + 1 − min(x, 7)`, `x·(−2)`.
    pub fn literals<T: Scalar>(x: &T, out: &mut T, negated: &mut T) {
        *out = 3 * *x + 1 - x.min(7);
        *negated = *x * -2 + 100;
    }
}

dlspan::elementwise! {
    /// A generic copy: any element type, no arithmetic.
    pub fn copy<T>(x: &T, out: &mut T) {
        *out = *x;
    }
}

dlspan::elementwise! {
    /// A differentiable body (a broadcast bias, math functions, `let mut` changed in an
    /// `if`/`else`, a detached step): its derived tangent and backward are kernels of every tier
    /// too.
    #[differentiable]
    pub fn smooth<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        let mut y = v.tanh() * (v * 0.5).exp();
        if v > 0.5 {
            y = y.min(v.sqrt()) / (1.0 + v * v);
        } else {
            y += v.abs().powf(1.5) - v.sin();
        }
        // A step whose derivative is taken as zero (`detach`), for the translation of `detach`.
        *out = y + (v * 4.0).floor().detach() * 0.125;
    }
}

/// A derived element type of three `f32` lanes: a polar point and a spare lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, dlspan::DlElement)]
#[repr(C)]
pub struct Polar {
    pub r: f32,
    pub theta: f32,
    pub spare: f32,
}

dlspan::elementwise! {
    /// A differentiable body over a derived-type input read field by field: its backward writes
    /// the gradient of each field it reads, and zero (`zero_like`) in the spare lane, which it
    /// does not read.
    #[differentiable]
    pub fn cartesian(p: &Polar, s: &f32, x: &mut f32, y: &mut f32) {
        *x = p.r * p.theta.cos() * *s;
        *y = p.r * p.theta.sin() + *s;
    }
}

/// Every instantiation the tests launch, for the NVRTC tier to compile.
pub fn instances() -> Vec<Instance> {
    vec![
        axpby::instance::<f16>(),
        axpby::instance::<bf16>(),
        axpby::instance::<f32>(),
        axpby::instance::<f64>(),
        axpby::instance::<i8>(),
        axpby::instance::<u32>(),
        axpby::instance::<i128>(),
        gray::instance(),
        brighten::instance(),
        soft::instance::<f16>(),
        soft::instance::<bf16>(),
        soft::instance::<f32>(),
        soft::instance::<f64>(),
        unary::instance::<f16>(),
        unary::instance::<bf16>(),
        unary::instance::<f32>(),
        unary::instance::<f64>(),
        binary::instance::<f16>(),
        binary::instance::<bf16>(),
        binary::instance::<f32>(),
        binary::instance::<f64>(),
        integers::instance::<i8>(),
        integers::instance::<u16>(),
        integers::instance::<i32>(),
        integers::instance::<u64>(),
        integers::instance::<i128>(),
        mask::instance::<f32>(),
        mask::instance::<i16>(),
        select::instance::<f64>(),
        select::instance::<u8>(),
        casts::instance(),
        gelu::instance::<f16>(),
        gelu::instance::<bf16>(),
        gelu::instance::<f32>(),
        gelu::instance::<f64>(),
        literals::instance::<i8>(),
        literals::instance::<i32>(),
        literals::instance::<i64>(),
        copy::instance::<Rgba>(),
        copy::instance::<dlspan::dtype::F32x4>(),
        copy::instance::<bool>(),
        cartesian::instance(),
        cartesian_tangent::instance(),
        cartesian_backward::instance(),
        smooth::instance::<f32>(),
        smooth_tangent::instance::<f16>(),
        smooth_tangent::instance::<f32>(),
        smooth_tangent::instance::<f64>(),
        smooth_backward::instance::<bf16>(),
        smooth_backward::instance::<f32>(),
        smooth_backward::instance::<f64>(),
    ]
}

/// One view's memory: extents (1 on the axes it broadcasts by shape), strides (0 on the axes it
/// broadcasts by stride), the offset of index 0 and the buffer length.
#[derive(Clone, Copy, Debug)]
pub struct Layout<const R: usize> {
    pub extents: [usize; R],
    pub strides: [isize; R],
    pub offset: usize,
    pub len: usize,
}

impl<const R: usize> Layout<R> {
    /// The buffer index of logical index `index` of the broadcast shape.
    pub fn at(&self, index: [usize; R]) -> usize {
        let mut at = self.offset as isize;
        for ((&i, &extent), &stride) in index.iter().zip(&self.extents).zip(&self.strides) {
            let i = if extent == 1 { 0 } else { i };
            at += i as isize * stride;
        }
        at as usize
    }

    /// A shared view of `buffer`.
    pub fn view<'a, T>(&self, buffer: &'a [T]) -> HostMdspan<'a, T, R, LayoutStrideRelaxed> {
        HostMdspan::from_slice_relaxed(buffer, self.extents, self.strides, self.offset).expect("a valid layout")
    }

    /// A mutable view of `buffer`.
    pub fn view_mut<'a, T>(&self, buffer: &'a mut [T]) -> HostMdspanMut<'a, T, R, LayoutStrideRelaxed> {
        HostMdspanMut::from_slice_relaxed(buffer, self.extents, self.strides, self.offset).expect("a valid layout")
    }
}

/// Random extents `1..=max` per axis, one in eight empty when `empty`.
pub fn random_extents<const R: usize>(rng: &mut Rng, max: usize, empty: bool) -> [usize; R] {
    let mut extents: [usize; R] = core::array::from_fn(|_| 1 + rng.below(max));
    if empty && R > 0 && rng.chance(12) {
        extents[rng.below(R)] = 0;
    }
    extents
}

/// A random layout of `shape`: a random axis order, gaps between axes, reversed axes; for inputs
/// (`broadcast`), axes of extent 1 or stride 0 (read for every index of the shape).
pub fn random_layout<const R: usize>(rng: &mut Rng, shape: [usize; R], broadcast: bool) -> Layout<R> {
    let mut extents = shape;
    let mut order: Vec<usize> = (0..R).collect();
    for i in (1..R).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut strides = [0isize; R];
    let mut step = 1isize;
    let contiguous = rng.chance(35);
    for &axis in order.iter().rev() {
        if broadcast && rng.chance(25) {
            if rng.chance(50) {
                extents[axis] = 1; // broadcast by shape
            }
            continue; // stride 0
        }
        strides[axis] = step;
        let gap = if contiguous { 0 } else { rng.below(3) as isize };
        step *= extents[axis].max(1) as isize + gap;
    }
    let mut offset = 0usize;
    for axis in 0..R {
        if !contiguous && rng.chance(25) && strides[axis] != 0 && extents[axis] > 0 {
            offset += (extents[axis] - 1) * strides[axis] as usize;
            strides[axis] = -strides[axis];
        }
    }
    let empty = extents.contains(&0);
    let high: usize = if empty {
        0
    } else {
        (0..R).filter(|&a| strides[a] > 0).map(|a| (extents[a] - 1) * strides[a] as usize).sum()
    };
    let lead = if contiguous { rng.below(2) * 8 } else { rng.below(3) };
    let offset = if empty { 0 } else { offset + lead };
    Layout { extents, strides, offset, len: offset + high + 1 + rng.below(3) }
}

/// Calls `f` with every index of `extents`, in logical order.
pub fn for_each_index<const R: usize>(extents: [usize; R], mut f: impl FnMut([usize; R])) {
    if extents.contains(&0) {
        return;
    }
    let mut index = [0usize; R];
    loop {
        f(index);
        let mut axis = R;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < extents[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

/// Random values of the kernels' element types (finite floats, with zeros, halves, large and tiny
/// values), and the equality the tiers compare results by: the same bytes, or two NaNs (a NaN's
/// payload follows the hardware and the compiler's operand order, rule K3).
pub trait Value: Copy + core::fmt::Debug + dlspan::DlElement {
    fn random(rng: &mut Rng) -> Self;

    fn same(&self, other: &Self) -> bool {
        bytes(core::slice::from_ref(self)) == bytes(core::slice::from_ref(other))
    }

    /// The units in the last place between two values of a float type (0 for the same bits or two
    /// NaNs); for other types 0 when `same`, else infinity.
    fn ulps(&self, other: &Self) -> f64 {
        if self.same(other) { 0.0 } else { f64::INFINITY }
    }
}

/// A float's bits as a monotonic integer (the order of the values, -0 next to +0).
fn ordered(bits: u64, width: u32) -> i128 {
    let sign = 1u64 << (width - 1);
    let magnitude = i128::from(bits & (sign - 1));
    if bits & sign != 0 { -magnitude } else { magnitude }
}

macro_rules! int_values {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn random(rng: &mut Rng) -> Self {
                match rng.below(4) {
                    0 => (rng.below(7) as i64 - 3) as $t, // zeros and -1s for division
                    1 => <$t>::MIN,
                    _ => ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) as $t,
                }
            }
        }
    )*};
}
int_values!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

macro_rules! float_values {
    ($($t:ty => $from:expr),*) => {$(
        impl Value for $t {
            fn random(rng: &mut Rng) -> Self {
                loop {
                    let f = match rng.below(8) {
                        0 => (rng.below(17) as f64 - 8.0) / 4.0,
                        1 => [0.0, -0.0, 1.0, -1.0, 0.5, 1e-3, 3.0e38, 65504.0][rng.below(8)],
                        2 => f64::from(f32::from_bits(rng.next_u64() as u32)),
                        _ => (rng.next_u64() as i64 as f64) / 2f64.powi(rng.below(100) as i32),
                    };
                    let v: $t = $from(f);
                    if v.is_finite() {
                        return v;
                    }
                }
            }

            fn same(&self, other: &Self) -> bool {
                self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
            }

            fn ulps(&self, other: &Self) -> f64 {
                if self.same(other) {
                    return 0.0;
                }
                if self.is_nan() || other.is_nan() {
                    return f64::INFINITY;
                }
                let width = 8 * core::mem::size_of::<$t>() as u32;
                let (a, b) = (ordered(u64::from(self.to_bits()), width), ordered(u64::from(other.to_bits()), width));
                (a - b).unsigned_abs() as f64
            }
        }
    )*};
}
float_values!(f32 => |f: f64| f as f32, f64 => |f: f64| f, f16 => f16::from_f64, bf16 => bf16::from_f64);

impl Value for bool {
    fn random(rng: &mut Rng) -> Self {
        rng.chance(50)
    }
}

impl Value for Rgba {
    fn random(rng: &mut Rng) -> Self {
        let v = rng.next_u64().to_le_bytes();
        Rgba { r: v[0], g: v[1], b: v[2], a: v[3] }
    }
}

impl Value for Polar {
    fn random(rng: &mut Rng) -> Self {
        Polar { r: f32::random(rng), theta: f32::random(rng), spare: f32::random(rng) }
    }

    fn same(&self, other: &Self) -> bool {
        self.r.same(&other.r) && self.theta.same(&other.theta) && self.spare.same(&other.spare)
    }

    fn ulps(&self, other: &Self) -> f64 {
        self.r.ulps(&other.r).max(self.theta.ulps(&other.theta)).max(self.spare.ulps(&other.spare))
    }
}

impl Value for Meters {
    fn random(rng: &mut Rng) -> Self {
        Meters(f32::random(rng))
    }

    fn same(&self, other: &Self) -> bool {
        self.0.same(&other.0)
    }
}

impl Value for Float8E4m3fn {
    fn random(rng: &mut Rng) -> Self {
        Float8E4m3fn::from_bits(rng.next_u64() as u8)
    }
}

impl Value for dlspan::dtype::F32x4 {
    fn random(rng: &mut Rng) -> Self {
        dlspan::dtype::F32x4::from([f32::random(rng), f32::random(rng), f32::random(rng), f32::random(rng)])
    }
}

/// A buffer of `len` random values.
pub fn buffer<T: Value>(rng: &mut Rng, len: usize) -> Vec<T> {
    (0..len).map(|_| T::random(rng)).collect()
}

/// The bytes of a slice of elements.
pub fn bytes<T: dlspan::DlElement>(values: &[T]) -> &[u8] {
    // SAFETY: element types have no padding bytes: the slice's bytes are initialised.
    unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), core::mem::size_of_val(values)) }
}

/// An output view of a case: its layout, its buffer before the run (random values, which the
/// elements outside the view keep), and the buffers of the two runs compared.
pub struct Output<T, const R: usize> {
    pub layout: Layout<R>,
    pub before: Vec<T>,
    pub actual: Vec<T>,
    pub expected: Vec<T>,
}

impl<T: Value, const R: usize> Output<T, R> {
    pub fn new(rng: &mut Rng, shape: [usize; R]) -> Self {
        let layout = random_layout(rng, shape, false);
        let before = buffer::<T>(rng, layout.len);
        Self { layout, actual: before.clone(), expected: before.clone(), before }
    }

    /// Compares the two runs' whole buffers, element by element ([`Value::same`]).
    pub fn check(&self, what: &str) {
        self.check_within(what, 0.0);
    }

    /// Compares the two runs' whole buffers, element by element, within `ulps` units in the last
    /// place (0: [`Value::same`]).
    pub fn check_within(&self, what: &str, ulps: f64) {
        for (k, (a, e)) in self.actual.iter().zip(&self.expected).enumerate() {
            assert!(
                a.ulps(e) <= ulps,
                "{what}: buffer element {k} is {a:?}, expected {e:?} (within {ulps} ulp; layout {:?}, before {:?})",
                self.layout,
                self.before[k]
            );
        }
    }
}

/// An input view of a case: its layout (broadcast on some axes) and buffer.
pub struct Input<T, const R: usize> {
    pub layout: Layout<R>,
    pub buffer: Vec<T>,
}

impl<T: Value, const R: usize> Input<T, R> {
    pub fn new(rng: &mut Rng, shape: [usize; R]) -> Self {
        let layout = random_layout(rng, shape, true);
        Self { buffer: buffer::<T>(rng, layout.len), layout }
    }
}

/// One random case of a kernel at the rank of `$shape`: each argument, in the kernel's order, a
/// scalar (`s name: T`, random, or `s name: T = value`), an input view (`i name: T`) or an output
/// view (`o name: T`). Runs the
/// kernel's `run` into each output's `actual` and `$expected` into its `expected`, then compares:
///
/// - `reference`: the kernel's `element` called in a plain loop over the logical indices;
/// - any other expression: a closure run with the case (`|case| ...`), see the tiers.
#[macro_export]
macro_rules! kernel_case {
    ($rng:expr, $shape:expr, $on:expr, $kernel:ident $(::<$g:ty>)?, $what:expr; $($kind:ident $name:ident: $t:ty $(= $value:expr)?),* $(,)?) => {{
        let shape = $shape;
        $(kernel_case!(@make $kind $rng, shape, $name, $t, $($value)?);)*
        $kernel.run($on, $(kernel_case!(@arg $kind $name)),*).expect("the kernel runs");
        for_each_index(shape, |i| $kernel::element $(::<$g>)? ($(kernel_case!(@element $kind $name i)),*));
        $(kernel_case!(@check $kind $name $what);)*
    }};
    (@make s $rng:expr, $shape:expr, $name:ident, $t:ty, $value:expr) => { let $name: $t = $value; };
    (@make s $rng:expr, $shape:expr, $name:ident, $t:ty,) => { let $name: $t = <$t as $crate::kernels_support::Value>::random($rng); };
    (@make i $rng:expr, $shape:expr, $name:ident, $t:ty,) => { let $name = $crate::kernels_support::Input::<$t, _>::new($rng, $shape); };
    (@make o $rng:expr, $shape:expr, $name:ident, $t:ty,) => { let mut $name = $crate::kernels_support::Output::<$t, _>::new($rng, $shape); };
    (@arg s $name:ident) => { $name };
    (@arg i $name:ident) => { &$name.layout.view(&$name.buffer) };
    (@arg o $name:ident) => { &mut $name.layout.view_mut(&mut $name.actual) };
    (@element s $name:ident $i:ident) => { $name };
    (@element i $name:ident $i:ident) => { &$name.buffer[$name.layout.at($i)] };
    (@element o $name:ident $i:ident) => { &mut $name.expected[$name.layout.at($i)] };
    (@check s $name:ident $what:expr) => {};
    (@check i $name:ident $what:expr) => {};
    (@check o $name:ident $what:expr) => { $name.check(&format!("{} output `{}`", $what, stringify!($name))) };
}
