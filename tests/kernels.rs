//! Element-wise kernels on the CPU (`dlspan::kernel::Cpu`): every test kernel against its own body
//! called in a plain loop over logical indices, on random layouts (transposed, reversed, gaps,
//! broadcast by shape and by stride, zero-size, rank 0); the kernel rules of the rules page
//! (section K) as the CPU computes them; broadcasting, shape errors; and how far the CPU's math
//! functions lie from the correctly rounded result.

#[macro_use]
mod kernels_support;

use dlspan::dtype::{Float8E4m3fn, cast};
use dlspan::half::{bf16, f16};
use dlspan::kernel::{Cpu, ops};
use dlspan::{DlpackError, HostMdspan, HostMdspanMut};
use kernels_support::*;

/// Every test kernel once at rank `R`.
fn every_kernel<const R: usize>(rng: &mut Rng, max: usize) {
    let shape = random_extents::<R>(rng, max, true);
    every_kernel_of(rng, shape);
}

/// Every test kernel once over `shape`, each view in a random layout of it.
fn every_kernel_of<const R: usize>(rng: &mut Rng, shape: [usize; R]) {
    let what = format!("rank {R}, shape {shape:?}");
    kernel_case!(rng, shape, Cpu, axpby::<f32>, &what; s a: f32, s b: f32, i x: f32, i y: f32, o out: f32);
    kernel_case!(rng, shape, Cpu, axpby::<f16>, &what; s a: f16, s b: f16, i x: f16, i y: f16, o out: f16);
    kernel_case!(rng, shape, Cpu, axpby::<i8>, &what; s a: i8, s b: i8, i x: i8, i y: i8, o out: i8);
    kernel_case!(rng, shape, Cpu, axpby::<i128>, &what; s a: i128, s b: i128, i x: i128, i y: i128, o out: i128);
    kernel_case!(rng, shape, Cpu, gray, &what; i px: Rgba, o out: u8);
    kernel_case!(rng, shape, Cpu, brighten, &what; o px: Rgba, s by: u8);
    kernel_case!(rng, shape, Cpu, soft::<bf16>, &what; i x: bf16, s limit: bf16, o out: bf16);
    kernel_case!(rng, shape, Cpu, soft::<f64>, &what; i x: f64, s limit: f64, o out: f64);
    let which = rng.below(UNARY as usize) as i32;
    kernel_case!(rng, shape, Cpu, unary::<f32>, &what; i x: f32, s which: i32 = which, o out: f32);
    let which = rng.below(BINARY as usize) as i32;
    kernel_case!(rng, shape, Cpu, binary::<f16>, &what; i x: f16, i y: f16, i z: f16, s which: i32 = which, o out: f16);
    kernel_case!(rng, shape, Cpu, integers::<u16>, &what; i x: u16, i y: u16, o quotient: u16, o other: u16);
    kernel_case!(rng, shape, Cpu, integers::<i64>, &what; i x: i64, i y: i64, o quotient: i64, o other: i64);
    kernel_case!(rng, shape, Cpu, mask::<f32>, &what; i x: f32, s low: f32, s high: f32, o out: bool);
    kernel_case!(rng, shape, Cpu, select::<u8>, &what; i m: bool, i a: u8, i b: u8, o out: u8);
    kernel_case!(rng, shape, Cpu, casts, &what; i x: f32, o i: i32, o h: f16, o b: bf16, o e: Float8E4m3fn, o m: Meters);
    kernel_case!(rng, shape, Cpu, copy::<Rgba>, &what; i x: Rgba, o out: Rgba);
    kernel_case!(rng, shape, Cpu, gelu::<f32>, &what; i x: f32, o out: f32);
    kernel_case!(rng, shape, Cpu, gelu::<bf16>, &what; i x: bf16, o out: bf16);
    kernel_case!(rng, shape, Cpu, literals::<i32>, &what; i x: i32, o out: i32, o negated: i32);
}

#[test]
fn exact_runs_broadcast_no_axis_a_view_has() {
    // `out = 1·x + 1·y` over 2×3: a `[3]` row is taken by both runs (the leading axis it lacks is
    // broadcast), a `[1]` or `[2, 1]` view only by `run`.
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let xv = HostMdspan::<f32, 2>::from_slice(&x, [2, 3]).unwrap();
    let row = [10.0f32, 20.0, 30.0];
    let mut out = [0.0f32; 6];
    axpby
        .run_exact(
            Cpu,
            1.0,
            1.0,
            &xv,
            &HostMdspan::<f32, 1>::from_slice(&row, [3]).unwrap(),
            &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3]).unwrap(),
        )
        .unwrap();
    assert_eq!(out, [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    let one = [100.0f32];
    let column = [7.0f32, 8.0];
    for (view, axis) in [
        (HostMdspan::<f32, 2>::from_slice(&one, [1, 1]).unwrap(), 0u32),
        (HostMdspan::<f32, 2>::from_slice(&column, [2, 1]).unwrap(), 1),
    ] {
        let mut out = [0.0f32; 6];
        let error = axpby
            .run_exact(Cpu, 1.0, 1.0, &xv, &view, &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3]).unwrap())
            .unwrap_err();
        let expected = if axis == 0 { 2 } else { 3 };
        assert_eq!(error, DlpackError::KernelBroadcastRefused { view: "y", axis, expected });
        assert!(error.to_string().contains("view `y` has extent 1 on axis"), "{error}");
        assert_eq!(out, [0.0; 6], "nothing written");
        // `run` broadcasts it.
        axpby
            .run(Cpu, 1.0, 1.0, &xv, &view, &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3]).unwrap())
            .unwrap();
        assert_ne!(out, [0.0; 6]);
    }
    let rank_one = HostMdspan::<f32, 1>::from_slice(&one, [1]).unwrap();
    let error = axpby
        .run_exact(Cpu, 1.0, 1.0, &xv, &rank_one, &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3]).unwrap())
        .unwrap_err();
    assert_eq!(error, DlpackError::KernelBroadcastRefused { view: "y", axis: 1, expected: 3 });
    // Other extents are the shape errors of `run`.
    let wide = [0.0f32; 4];
    let error = axpby
        .run_exact(
            Cpu,
            1.0,
            1.0,
            &xv,
            &HostMdspan::<f32, 1>::from_slice(&wide, [4]).unwrap(),
            &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3]).unwrap(),
        )
        .unwrap_err();
    assert_eq!(error, DlpackError::KernelShapeMismatch { view: "y", axis: 1, expected: 3, found: 4 });
}

#[test]
#[allow(clippy::excessive_precision)] // the kernel's own literals, spelled as it spells them
fn unsuffixed_literals_take_the_operands_type_in_generic_bodies() {
    // The generic GELU beside the same formula written for each type with suffixed literals.
    let xs = [-7.0, -1.25, -0.1, 0.0, 0.3, 1.0, 2.5, 8.0];
    for &x in &xs {
        let (mut o32, mut o64, mut o16) = ([0.0f32], [0.0f64], [f16::ZERO]);
        gelu.run(
            Cpu,
            &HostMdspan::<f32, 0>::from_slice(&[x as f32], []).unwrap(),
            &mut HostMdspanMut::<f32, 0>::from_slice(&mut o32, []).unwrap(),
        )
        .unwrap();
        gelu.run(
            Cpu,
            &HostMdspan::<f64, 0>::from_slice(&[x], []).unwrap(),
            &mut HostMdspanMut::<f64, 0>::from_slice(&mut o64, []).unwrap(),
        )
        .unwrap();
        let h = f16::from_f64(x);
        gelu.run(
            Cpu,
            &HostMdspan::<f16, 0>::from_slice(&[h], []).unwrap(),
            &mut HostMdspanMut::<f16, 0>::from_slice(&mut o16, []).unwrap(),
        )
        .unwrap();
        let v = x as f32;
        let expected32 = if v < -6.0f32 {
            -0.0f32
        } else {
            0.5f32 * v * (1.0f32 + (0.7978845608f32 * (v + 0.044715f32 * v * v * v)).tanh())
        } + 0.0f32;
        let expected64 = if x < -6.0f64 {
            -0.0f64
        } else {
            0.5f64 * x * (1.0f64 + (0.7978845608f64 * (x + 0.044715f64 * x * x * x)).tanh())
        } + 0.0f64;
        assert_eq!(o32[0].to_bits(), expected32.to_bits(), "f32 at {x}");
        assert_eq!(o64[0].to_bits(), expected64.to_bits(), "f64 at {x}");
        // f16: each literal is its f32 value rounded to f16, each operation in f32 rounded back.
        let r = |v: f32| f16::from_f32(v);
        let l = |v: f32| r(v).to_f32();
        let hv = h.to_f32();
        let cube = r(r(r(l(0.044715) * hv).to_f32() * hv).to_f32() * hv).to_f32();
        let inner = r(l(0.7978845608) * r(hv + cube).to_f32()).to_f32();
        let tanh = r(inner.tanh()).to_f32();
        let expected16 = if hv < -6.0 { r(-0.0) } else { r(r(l(0.5) * hv).to_f32() * r(1.0 + tanh).to_f32()) };
        let expected16 = r(expected16.to_f32() + 0.0);
        assert_eq!(o16[0].to_bits(), expected16.to_bits(), "f16 at {x}");
    }
    // Integers: the literals are of the operand's type, wrapping as the kernel rules say.
    let x = [-100i8, -1, 0, 5, 9, 127];
    let (mut out, mut negated) = ([0i8; 6], [0i8; 6]);
    literals
        .run(
            Cpu,
            &HostMdspan::<i8, 1>::from_slice(&x, [6]).unwrap(),
            &mut HostMdspanMut::<i8, 1>::from_slice(&mut out, [6]).unwrap(),
            &mut HostMdspanMut::<i8, 1>::from_slice(&mut negated, [6]).unwrap(),
        )
        .unwrap();
    for (k, &x) in x.iter().enumerate() {
        assert_eq!(out[k], 3i8.wrapping_mul(x).wrapping_add(1).wrapping_sub(x.min(7)), "{x}");
        assert_eq!(negated[k], x.wrapping_mul(-2).wrapping_add(100), "{x}");
    }
}

#[test]
fn every_kernel_matches_its_body_on_random_layouts() {
    let mut rng = Rng::new(20);
    for round in 0..60 {
        every_kernel::<0>(&mut rng, 1);
        every_kernel::<1>(&mut rng, 9);
        every_kernel::<2>(&mut rng, 7);
        every_kernel::<3>(&mut rng, 5);
        every_kernel::<4>(&mut rng, if round % 4 == 0 { 9 } else { 3 });
    }
}

/// Long runs that are not contiguous in every view (an input read transposed or broadcast along
/// the run, an output written transposed, an updated view, gaps) are staged through buffers in
/// chunks (rule K3's "the same bits"), far-strided ones in tiles: every test kernel against its
/// body on random layouts of shapes whose runs span one chunk and several (512 `f32` values to a
/// chunk), and of shapes tiled whole and in part.
#[test]
fn staged_runs_compute_the_bits_of_the_body() {
    let mut rng = Rng::new(31);
    for shape in [[2usize, 1100], [1100, 2], [9, 130], [130, 9], [1, 17]] {
        for _ in 0..4 {
            every_kernel_of(&mut rng, shape);
        }
    }
    every_kernel_of(&mut rng, [3usize, 2, 600]);
    // Far-strided runs (a transposed view, 64 bytes or more between its elements along the run)
    // are walked in tiles of 16 rows by 64 elements: whole tiles, partial ones, and a third axis.
    for _ in 0..3 {
        every_kernel_of(&mut rng, [70usize, 200]);
        every_kernel_of(&mut rng, [3usize, 20, 70]);
    }
}

#[test]
fn results_follow_the_kernel_rules() {
    // `+ - * /` as Rust computes them, once each, never fused.
    let (x, y) = ([1.5f32, 1e-8, 3.0e38], [2.0f32, 1.0, 3.0e38]);
    let mut out = [0.0f32; 3];
    axpby
        .run(
            Cpu,
            0.1,
            3.0,
            &HostMdspan::<f32, 1>::from_slice(&x, [3]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&y, [3]).unwrap(),
            &mut HostMdspanMut::<f32, 1>::from_slice(&mut out, [3]).unwrap(),
        )
        .unwrap();
    for k in 0..3 {
        assert_eq!(out[k].to_bits(), (0.1 * x[k] + 3.0 * y[k]).to_bits());
    }
    assert_eq!(out[2], f32::INFINITY);
    // f16 through f32, rounded after each operation.
    let h = |v: f32| f16::from_f32(v);
    let mut out = [h(0.0)];
    axpby
        .run(
            Cpu,
            h(3.0),
            h(1.0),
            &HostMdspan::<f16, 0>::from_slice(&[h(0.1)], []).unwrap(),
            &HostMdspan::<f16, 0>::from_slice(&[h(2048.0)], []).unwrap(),
            &mut HostMdspanMut::<f16, 0>::from_slice(&mut out, []).unwrap(),
        )
        .unwrap();
    assert_eq!(out[0], h(h(3.0 * h(0.1).to_f32()).to_f32() + 2048.0));
    // Integers wrap; division by zero is 0, its remainder the dividend; MIN / -1 wraps.
    let (x, y) = ([i8::MIN, 7, -7, 100], [-1i8, 0, 2, 3]);
    let (mut q, mut other) = ([0i8; 4], [0i8; 4]);
    integers
        .run(
            Cpu,
            &HostMdspan::<i8, 1>::from_slice(&x, [4]).unwrap(),
            &HostMdspan::<i8, 1>::from_slice(&y, [4]).unwrap(),
            &mut HostMdspanMut::<i8, 1>::from_slice(&mut q, [4]).unwrap(),
            &mut HostMdspanMut::<i8, 1>::from_slice(&mut other, [4]).unwrap(),
        )
        .unwrap();
    assert_eq!(q, [i8::MIN, 0, -3, 33]);
    // r = x % y: 0, 7, -1, 1; other = r*3 - |x| + min(max(-y, r), x) + 1 (wrapping).
    let expect = |r: i8, x: i8, y: i8| {
        r.wrapping_mul(3).wrapping_sub(x.wrapping_abs()).wrapping_add(y.wrapping_neg().max(r).min(x)).wrapping_add(1)
    };
    assert_eq!(other, [expect(0, i8::MIN, -1), expect(7, 7, 0), expect(-1, -7, 2), expect(1, 100, 3)]);
    // Casts are dtype::cast: one rounding, saturating `as` into integers.
    let x = [1e10f32, -2.5, 0.1, f32::NAN];
    let (mut i, mut hh, mut b, mut e, mut m) =
        ([0i32; 4], [h(0.0); 4], [bf16::ZERO; 4], [Float8E4m3fn::from_bits(0); 4], [Meters(0.0); 4]);
    casts
        .run(
            Cpu,
            &HostMdspan::<f32, 1>::from_slice(&x, [4]).unwrap(),
            &mut HostMdspanMut::<i32, 1>::from_slice(&mut i, [4]).unwrap(),
            &mut HostMdspanMut::<f16, 1>::from_slice(&mut hh, [4]).unwrap(),
            &mut HostMdspanMut::<bf16, 1>::from_slice(&mut b, [4]).unwrap(),
            &mut HostMdspanMut::<Float8E4m3fn, 1>::from_slice(&mut e, [4]).unwrap(),
            &mut HostMdspanMut::<Meters, 1>::from_slice(&mut m, [4]).unwrap(),
        )
        .unwrap();
    assert_eq!(i, [i32::MAX, -2, 0, 0]);
    for k in 0..4 {
        assert_eq!(hh[k].to_bits(), cast::<f32, f16>(x[k]).to_bits());
        assert_eq!(b[k].to_bits(), cast::<f64, bf16>(f64::from(x[k]) * 3.0).to_bits());
        assert_eq!(e[k].to_bits(), cast::<f32, Float8E4m3fn>(x[k]).to_bits());
    }
    // min and max return an operand: the other of a NaN, the first of two equal zeros.
    let (x, y) = ([f32::NAN, 1.0, -0.0, 0.0], [1.0f32, f32::NAN, 0.0, -0.0]);
    let z = [0.0f32; 4];
    for (which, expected) in [(6, [1.0f32, 1.0, -0.0, 0.0]), (7, [1.0, 1.0, -0.0, 0.0])] {
        let mut out = [0.0f32; 4];
        binary
            .run(
                Cpu,
                &HostMdspan::<f32, 1>::from_slice(&x, [4]).unwrap(),
                &HostMdspan::<f32, 1>::from_slice(&y, [4]).unwrap(),
                &HostMdspan::<f32, 1>::from_slice(&z, [4]).unwrap(),
                which,
                &mut HostMdspanMut::<f32, 1>::from_slice(&mut out, [4]).unwrap(),
            )
            .unwrap();
        assert_eq!(out.map(f32::to_bits), expected.map(f32::to_bits), "which {which}");
    }
}

#[test]
fn inputs_broadcast_to_the_output_shape() {
    // `y` of rank 1 is a row added to every row; `x` of extent 1 on axis 1 a column.
    let x = [1.0f64, 2.0];
    let y = [10.0f64, 20.0, 30.0];
    let mut out = [0.0f64; 6];
    axpby
        .run(
            Cpu,
            1.0,
            1.0,
            &HostMdspan::<f64, 2>::from_slice(&x, [2, 1]).unwrap(),
            &HostMdspan::<f64, 1>::from_slice(&y, [3]).unwrap(),
            &mut HostMdspanMut::<f64, 2>::from_slice(&mut out, [2, 3]).unwrap(),
        )
        .unwrap();
    assert_eq!(out, [11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
    // A scalar view (rank 0) broadcasts to anything.
    let mut out = [0.0f64; 6];
    axpby
        .run(
            Cpu,
            1.0,
            2.0,
            &HostMdspan::<f64, 0>::from_slice(&[5.0], []).unwrap(),
            &HostMdspan::<f64, 1>::from_slice(&y, [3]).unwrap(),
            &mut HostMdspanMut::<f64, 2>::from_slice(&mut out, [2, 3]).unwrap(),
        )
        .unwrap();
    assert_eq!(out, [25.0, 45.0, 65.0, 25.0, 45.0, 65.0]);
}

#[test]
fn shapes_that_do_not_broadcast_are_refused_before_anything_is_written() {
    let x = [1.0f32; 4];
    let mut out = [7.0f32; 6];
    let err = axpby
        .run(
            Cpu,
            1.0,
            1.0,
            &HostMdspan::<f32, 1>::from_slice(&x, [4]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&x[..3], [3]).unwrap(),
            &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3]).unwrap(),
        )
        .unwrap_err();
    assert_eq!(err, DlpackError::KernelShapeMismatch { view: "x", axis: 1, expected: 3, found: 4 });
    assert!(err.to_string().contains("view `x`"), "{err}");
    assert_eq!(out, [7.0; 6]);
    // Written views have the primary view's shape exactly: no broadcast of outputs.
    let (mut q, mut r) = ([0u8; 6], [0u8; 3]);
    let ones = [1u8; 6];
    let err = integers
        .run(
            Cpu,
            &HostMdspan::<u8, 2>::from_slice(&ones, [2, 3]).unwrap(),
            &HostMdspan::<u8, 2>::from_slice(&ones, [2, 3]).unwrap(),
            &mut HostMdspanMut::<u8, 2>::from_slice(&mut q, [2, 3]).unwrap(),
            &mut HostMdspanMut::<u8, 2>::from_slice(&mut r, [1, 3]).unwrap(),
        )
        .unwrap_err();
    assert_eq!(err, DlpackError::KernelShapeMismatch { view: "other", axis: 0, expected: 2, found: 1 });
}

#[test]
fn kernels_record_their_translation() {
    let def = axpby::def();
    assert_eq!((def.name, def.file), ("axpby", "tests/kernels_support/mod.rs"));
    assert!(def.source.contains("dl_assign(v_out, dl_add(dl_mul(v_a, dl_load(v_x)), dl_mul(v_b, dl_load(v_y))));"));
    assert!(def.source.contains("#line"), "statements carry #line directives");
    assert!(def.lines.iter().any(|(_, text)| *text == "*out = a * *x + b * *y;"), "{:?}", def.lines);
    // `gray` names Rgba, u8 and u32 (a cast target); `brighten` reads and writes fields.
    assert_eq!(gray::def().types, 3);
    assert!(brighten::def().fields);
    assert_eq!(brighten::instance().ty(0).fields, ["r", "g", "b", "a"]);
    // Kernels that access no field share modules across derived types of one layout.
    assert!(copy::instance::<Rgba>().ty(0).fields.is_empty());
}

/// The units in the last place between `x` and the correctly rounded `reference` (an `f64` of the
/// exact value's first 53 bits: f32 results within 2^-29 ulp of it).
fn ulps(x: f32, reference: f64) -> f64 {
    if x.is_nan() && reference.is_nan() {
        return 0.0;
    }
    let rounded = reference as f32;
    if x.is_infinite() || rounded.is_infinite() {
        return if x == rounded { 0.0 } else { f64::INFINITY };
    }
    let ulp =
        if rounded == 0.0 { f32::from_bits(1) } else { f32::from_bits(rounded.abs().to_bits() + 1) - rounded.abs() };
    (f64::from(x) - reference).abs() / f64::from(ulp)
}

/// How far the CPU's `f32` math functions, as kernels compute them (`kernel::ops`: dlspan's own
/// `exp`, `tanh`, `ln`, `log2` and `log10`, the platform's libm for the others, through Rust's
/// `f32` methods), lie from the correctly rounded result, over a million inputs each (a tenth in
/// debug builds); the rules page (K4) reports these figures (glibc 2.36 on x86-64: at most 0.51
/// ulp but `sin`/`cos` 0.56, `tan` 0.91) beside CUDA's documented bounds. Asserts glibc's
/// documented bounds (2 ulp, 0.5 for `sqrt`) and dlspan's (0.99 for `exp`, 1.33 for `tanh`, 0.835
/// for `ln`, 0.865 for `log2`, 0.832 for `log10`, measured over every `f32`), with room for the
/// measurement's own rounding.
#[test]
fn cpu_math_functions_lie_near_the_correctly_rounded_result() {
    type F = (&'static str, fn(f32) -> f32, fn(f64) -> f64, f32, f32);
    let functions: [F; 10] = [
        ("exp", ops::exp::<f32>, f64::exp, -87.0, 88.0),
        ("exp2", ops::exp2::<f32>, f64::exp2, -126.0, 127.0),
        ("ln", ops::ln::<f32>, f64::ln, 1e-30, 1e30),
        ("log2", ops::log2::<f32>, f64::log2, 1e-30, 1e30),
        ("log10", ops::log10::<f32>, f64::log10, 1e-30, 1e30),
        ("sin", ops::sin::<f32>, f64::sin, -1e4, 1e4),
        ("cos", ops::cos::<f32>, f64::cos, -1e4, 1e4),
        ("tan", ops::tan::<f32>, f64::tan, -1e4, 1e4),
        ("tanh", ops::tanh::<f32>, f64::tanh, -20.0, 20.0),
        ("sqrt", ops::sqrt::<f32>, f64::sqrt, 0.0, 1e30),
    ];
    let mut rng = Rng::new(4);
    let mut report = String::new();
    for (name, f, reference, low, high) in functions {
        let mut worst = 0.0f64;
        for k in 0..if cfg!(debug_assertions) { 100_000 } else { 1_000_000 } {
            let x = if k % 2 == 0 {
                low + (high - low) * (rng.next_u64() as f64 / u64::MAX as f64) as f32
            } else {
                // Uniform in the bits between the bounds' magnitudes.
                let bits = f32::from_bits(rng.next_u64() as u32);
                if bits.is_finite() && bits >= low && bits <= high { bits } else { continue }
            };
            worst = worst.max(ulps(f(x), reference(f64::from(x))));
        }
        report += &format!("{name}: {worst:.3} ulp; ");
        // dlspan's own exp, tanh and logarithms (rule K4): their bounds over every f32.
        let bound = match name {
            "sqrt" => 0.5,
            "exp" => 0.991,
            "tanh" => 1.331,
            "ln" => 0.835,
            "log2" => 0.865,
            "log10" => 0.832,
            _ => 2.1,
        };
        assert!(worst <= bound, "f32::{name} lies {worst} ulp from the correctly rounded result");
    }
    let mut worst = 0.0f64;
    for _ in 0..200_000 {
        let (x, y) = ((rng.next_u64() % 1000) as f32 / 100.0, (rng.next_u64() % 4000) as f32 / 100.0 - 20.0);
        worst = worst.max(ulps(x.powf(y), f64::from(x).powf(f64::from(y))));
    }
    report += &format!("powf: {worst:.3} ulp");
    assert!(worst <= 1.0, "f32::powf lies {worst} ulp from the correctly rounded result");
    println!(
        "CPU f32 math (kernel ops: dlspan's exp, tanh and logarithms, the platform's libm) against the correctly rounded result: {report}"
    );
}

/// Long contiguous runs take the vectorised loops, in every build of the walk this CPU can run
/// (the baseline's, AVX2 with FMA, AVX-512: `CpuVectors`): every math function and operation
/// gives the bits of the body called element by element (compiled for the baseline CPU).
#[test]
fn long_contiguous_runs_compute_the_bits_of_the_body() {
    use dlspan::kernel::{CpuVectors, cpu_vectors, set_max_cpu_vectors};
    let levels = [CpuVectors::Baseline, CpuVectors::Avx2, CpuVectors::Avx512];
    for level in levels.into_iter().filter(|&level| level <= CpuVectors::widest()) {
        set_max_cpu_vectors(level);
        assert_eq!(cpu_vectors(), level);
        check_every_operation();
    }
    set_max_cpu_vectors(CpuVectors::Avx512);
    println!("the walk's builds compared: up to {:?}", CpuVectors::widest());
}

fn check_every_operation() {
    fn check<T: dlspan::kernel::Float + dlspan::DlElement + Default + core::fmt::Debug>(values: impl Fn(usize) -> T) {
        let n = 4099;
        let x: Vec<T> = (0..n).map(&values).collect();
        let y: Vec<T> = (0..n).map(|k| values(n - 1 - k)).collect();
        let z: Vec<T> = (0..n).map(|k| values((k * 7) % n)).collect();
        let bits = |v: &T| dlspan::kernel::scalar_bytes(v).to_vec();
        fn view<T>(v: &[T]) -> HostMdspan<'_, T, 1> {
            HostMdspan::<T, 1>::from_slice(v, [v.len()]).unwrap()
        }
        for which in 0..UNARY {
            let mut out = vec![T::default(); n];
            unary.run(Cpu, &view(&x), which, &mut HostMdspanMut::<T, 1>::from_slice(&mut out, [n]).unwrap()).unwrap();
            for k in 0..n {
                let mut expected = T::default();
                unary::element(&x[k], which, &mut expected);
                assert_eq!(bits(&out[k]), bits(&expected), "unary {which} at {:?}", x[k]);
            }
        }
        for which in 0..BINARY {
            let mut out = vec![T::default(); n];
            let mut view_out = HostMdspanMut::<T, 1>::from_slice(&mut out, [n]).unwrap();
            binary.run(Cpu, &view(&x), &view(&y), &view(&z), which, &mut view_out).unwrap();
            for k in 0..n {
                let mut expected = T::default();
                binary::element(&x[k], &y[k], &z[k], which, &mut expected);
                assert_eq!(bits(&out[k]), bits(&expected), "binary {which} at {:?}", (x[k], y[k], z[k]));
            }
        }
    }
    check::<f32>(|k| (k as f32 - 2000.0) * 0.0123);
    check::<f64>(|k| (k as f64 - 2000.0) * 0.0123);
    check::<f16>(|k| f16::from_f32((k as f32 - 2000.0) * 0.004));
}

/// Calls of at least `PARALLEL_ELEMENTS` elements are split over the pool's threads: every thread
/// count gives the bits one thread gives, on contiguous, transposed, reversed and broadcast
/// layouts, and calls made from several threads at once (the pool shared, none oversubscribed)
/// give them too.
#[test]
fn every_thread_count_computes_the_bits_of_one_thread() {
    use dlspan::kernel::{PARALLEL_ELEMENTS, num_threads, set_num_threads};
    use dlspan::{LayoutStride, LayoutStrideRelaxed};
    let before = num_threads();
    let (rows, cols) = (515usize, 257usize); // 132 355 elements, rows not a multiple of the parts
    assert!(rows * cols >= PARALLEL_ELEMENTS);
    let mut rng = Rng::new(11);
    let x: Vec<f32> = buffer(&mut rng, rows * cols);
    let y: Vec<f32> = buffer(&mut rng, cols);
    let run = |which: i32| -> [Vec<u32>; 3] {
        let mut contiguous = vec![0.0f32; rows * cols];
        let xv = HostMdspan::<f32, 2>::from_slice(&x, [rows, cols]).unwrap();
        // `y` broadcast along the rows (stride 0), `x` read transposed and reversed.
        let yv = HostMdspan::<f32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&y, [rows, cols], [0, 1], 0).unwrap();
        binary
            .run(
                Cpu,
                &xv,
                &yv,
                &xv,
                which,
                &mut HostMdspanMut::<f32, 2>::from_slice(&mut contiguous, [rows, cols]).unwrap(),
            )
            .unwrap();
        let mut transposed = vec![0.0f32; rows * cols];
        let xt = HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(&x, [cols, rows], [1, cols as isize]).unwrap();
        let mut out = HostMdspanMut::<f32, 2>::from_slice(&mut transposed, [cols, rows]).unwrap();
        unary.run(Cpu, &xt, 9, &mut out).unwrap();
        let mut reversed = vec![0.0f32; rows * cols];
        let last = rows * cols - 1;
        let xr = HostMdspan::<f32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&x, [rows * cols], [-1], last).unwrap();
        let mut out = HostMdspanMut::<f32, 1>::from_slice(&mut reversed, [rows * cols]).unwrap();
        unary.run(Cpu, &xr, 1, &mut out).unwrap();
        [contiguous, transposed, reversed].map(|v| v.iter().map(|f| f.to_bits()).collect())
    };
    set_num_threads(1);
    let reference: Vec<[Vec<u32>; 3]> = (0..BINARY).map(run).collect();
    for threads in [2, 3, 8] {
        set_num_threads(threads);
        assert_eq!(num_threads(), threads);
        for which in 0..BINARY {
            assert!(run(which) == reference[which as usize], "{threads} threads, binary {which}");
        }
    }
    // Four callers at once, sharing the pool.
    std::thread::scope(|scope| {
        for which in 0..4 {
            let (run, reference) = (&run, &reference);
            scope.spawn(move || assert!(run(which) == reference[which as usize], "concurrent caller {which}"));
        }
    });
    set_num_threads(before);
}

/// `par_sum_with` splits the halves of each long run's pairwise sum over the pool's threads: the
/// bits of `sum_with` (and so NumPy's) for every thread count, on a contiguous view, one strided
/// run, a reversed one, and a 2-D view whose long rows are runs of their own.
#[test]
fn sums_split_over_threads_compute_the_bits_of_one_thread() {
    use dlspan::kernel::{num_threads, set_num_threads};
    use dlspan::{LayoutStride, LayoutStrideRelaxed};
    let before = num_threads();
    // Values of one magnitude, whose sum's last bits depend on the order of the additions.
    let data: Vec<f32> = (0..1_200_003usize).map(|k| ((k * 7919) % 10007) as f32 * 1e-3 + 0.1).collect();
    let add = |a: f32, b: f32| a + b;
    let sums = || {
        let contiguous = HostMdspan::<f32, 1>::from_slice(&data, [data.len()]).unwrap();
        let strided = HostMdspan::<f32, 1, LayoutStride>::from_slice_strided(&data, [600_001], [2]).unwrap();
        let last = data.len() - 1;
        let reversed =
            HostMdspan::<f32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [data.len()], [-1], last).unwrap();
        let rows = HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(&data, [3, 300_000], [400_000, 1]).unwrap();
        [
            contiguous.par_sum_with(0.0, |&v| v, add),
            strided.par_sum_with(0.0, |&v| v, add),
            reversed.par_sum_with(0.0, |&v| v, add),
            rows.par_sum_with(0.0, |&v| v, add),
            // In f64, the accumulator of a wider sum.
            contiguous.par_sum_with(0.0f64, |&v| f64::from(v), |a, b| a + b) as f32,
        ]
        .map(f32::to_bits)
    };
    set_num_threads(1);
    let one = sums();
    let contiguous = HostMdspan::<f32, 1>::from_slice(&data, [data.len()]).unwrap();
    assert_eq!(one[0], contiguous.sum().to_bits(), "par_sum_with on one thread is sum_with");
    for threads in [2, 3, 4, 7] {
        set_num_threads(threads);
        assert_eq!(sums(), one, "{threads} threads");
    }
    set_num_threads(before);
}
