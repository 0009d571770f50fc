//! `#[differentiable]` element-wise kernels: the derived backward and tangent of every math
//! function, of `if`/`else`, `let mut`, several outputs, scalars and casts, checked against
//! central finite differences in f64 (`check_gradients`), and run over views of every layout.

#![allow(clippy::needless_range_loop)] // the tests index several arrays by one index

use dlspan::kernel::{Cpu, Float, GradientCheck};
use dlspan::{HostMdspan, HostMdspanMut, LayoutStrideRelaxed};

/// Every unary math function, each in a kernel of its own.
macro_rules! unary {
    ($($name:ident: $method:ident, $low:expr, $high:expr;)*) => {$(
        dlspan::elementwise! {
            #[differentiable]
            fn $name<T: Float>(x: &T, out: &mut T) {
                *out = x.$method();
            }
        }
    )*
        #[test]
        fn every_unary_math_function_matches_finite_differences() {
            $(
                let report = $name
                    .check_gradients::<f64>(&GradientCheck::default().range($low, $high))
                    .unwrap_or_else(|e| panic!("{}: {e}", stringify!($name)));
                assert_eq!(report.points, 64);
            )*
        }
    };
}

unary! {
    d_sqrt: sqrt, 0.1, 4.0;
    d_exp: exp, -2.0, 2.0;
    d_exp2: exp2, -2.0, 2.0;
    d_ln: ln, 0.1, 4.0;
    d_log2: log2, 0.1, 4.0;
    d_log10: log10, 0.1, 4.0;
    d_sin: sin, -3.0, 3.0;
    d_cos: cos, -3.0, 3.0;
    d_tan: tan, -1.2, 1.2;
    d_tanh: tanh, -3.0, 3.0;
    d_abs: abs, -2.0, 2.0;
}

dlspan::elementwise! {
    /// GELU (tanh form) of `x + b`.
    #[differentiable]
    fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        *out = 0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh());
    }
}

#[test]
fn gelu_with_a_bias() {
    gelu_bias.check_gradients::<f64>(&GradientCheck::default()).unwrap();
    // Along x and along b the derivative is the same.
    let (mut gx, mut gb) = (0.0f64, 0.0f64);
    gelu_bias_backward::element(&0.3, &-0.1, &2.0, &mut gx, &mut gb);
    assert_eq!(gx.to_bits(), gb.to_bits());
    assert!(gx > 0.0);
}

dlspan::elementwise! {
    /// Every two- and three-operand operation, with literals on either side.
    #[differentiable]
    fn arithmetic<T: Float>(x: &T, y: &T, z: &T, sum: &mut T) {
        let product = *x * *y * 3.0 * *z;
        let quotient = *x / *y + 1.0 / *z - *x / 4.0;
        let fused = x.mul_add(*y, *z) + (2.0 * *x).mul_add(0.5, *y) + y.mul_add(*z, 1.0);
        *sum = *x + *y - *z + 2.0 - (-*x) + product - quotient * fused;
    }
}

dlspan::elementwise! {
    /// `min`, `max` and `powf` on both operands, with literals.
    #[differentiable]
    fn two_operand<T: Float>(x: &T, y: &T, lo: &mut T, hi: &mut T) {
        *lo = x.min(*y) + x.min(0.5) + (0.25).min(*y) + (*x * 10.0) % *y;
        *hi = x.max(*y) + x.max(1.0) + x.powf(*y) + x.powf(2.0) + (1.5).powf(*y);
    }
}

#[test]
fn arithmetic_and_two_operand_functions_match_finite_differences() {
    arithmetic.check_gradients::<f64>(&GradientCheck::default().range(0.5, 3.0)).unwrap();
    two_operand.check_gradients::<f64>(&GradientCheck::default().range(0.5, 3.0)).unwrap();
}

dlspan::elementwise! {
    #[differentiable]
    fn tie<T: Float>(x: &T, y: &T, out: &mut T) {
        *out = x.min(*y);
    }
}

dlspan::elementwise! {
    #[differentiable]
    fn power<T: Float>(x: &T, y: &T, out: &mut T) {
        *out = x.powf(*y);
    }
}

#[test]
fn kinks_follow_the_documented_conventions() {
    // abs at 0: 0. min/max at a tie: half to each. sqrt at 0: infinite.
    let mut g = 0.0f64;
    d_abs_backward::element(&0.0, &1.0, &mut g);
    assert_eq!(g, 0.0);
    d_abs_backward::element(&-0.0, &1.0, &mut g);
    assert_eq!(g, 0.0);
    d_abs_backward::element(&-3.0, &1.0, &mut g);
    assert_eq!(g, -1.0);
    let (mut gx, mut gy) = (0.0f64, 0.0f64);
    tie_backward::element(&2.0, &2.0, &1.0, &mut gx, &mut gy);
    assert_eq!((gx, gy), (0.5, 0.5));
    tie_backward::element(&2.0, &3.0, &1.0, &mut gx, &mut gy);
    assert_eq!((gx, gy), (1.0, 0.0));
    d_sqrt_backward::element(&0.0, &1.0, &mut g);
    assert_eq!(g, f64::INFINITY);
    // powf: no derivative along the exponent where the base is 0 and the exponent is not negative.
    power_backward::element(&0.0, &2.0, &1.0, &mut gx, &mut gy);
    assert_eq!((gx, gy), (0.0, 0.0));
    power_backward::element(&3.0, &0.0, &1.0, &mut gx, &mut gy);
    assert_eq!((gx, gy), (0.0, 3.0f64.ln()));
}

dlspan::elementwise! {
    /// `if`/`else` as a value and as statements, `let mut` reassigned in a branch, compound
    /// assignment, a scalar, casts and a detached floor.
    #[differentiable]
    fn control<T: Float>(x: &T, y: &T, s: T, out: &mut T, other: &mut T) {
        let mut acc = *x * s;
        if *x > *y {
            acc += y.exp();
            let t = acc * acc;
            acc = t - *x;
        } else if *y > 1.5 {
            acc = acc * 2.0;
        } else {
            acc -= 1.0;
        }
        let picked = if acc > 0.0 { acc.sqrt() } else { -acc };
        let wide = (picked as f64) * 2.0f64;
        *out = (wide as T) + x.floor().detach() * *y;
        let n = (*y * 3.0).floor().detach();
        if n > 2.0 {
            *other = *x;
        } else {
            *other = *y * n;
        }
    }
}

#[test]
fn control_flow_and_mutation_match_finite_differences() {
    control.check_gradients::<f64>(0.7, &GradientCheck::default().range(0.1, 2.0)).unwrap();
    control.check_gradients::<f64>(-1.3, &GradientCheck { points: 200, ..GradientCheck::default() }).unwrap();
}

#[test]
fn a_wrong_derivative_is_caught() {
    // The check is not vacuous: a forward whose backward is deliberately another's fails.
    use dlspan::kernel::{Functions, check_gradients};
    let forward = |x: &[f64], out: &mut [f64]| gelu_bias::element(&x[0], &x[1], &mut out[0]);
    let backward = |x: &[f64], g: &[f64], gx: &mut [f64]| {
        let (a, b) = gx.split_at_mut(1);
        gelu_bias_backward::element(&x[0], &x[1], &g[0], &mut a[0], &mut b[0]);
        b[0] *= 1.001;
    };
    let tangent = |x: &[f64], t: &[f64], out: &mut [f64], tout: &mut [f64]| {
        gelu_bias_tangent::element(&x[0], &x[1], &t[0], &t[1], &mut out[0], &mut tout[0]);
    };
    let functions =
        Functions { inputs: &["x", "b"], outputs: &["out"], forward: &forward, backward: &backward, tangent: &tangent };
    let error = check_gradients(&functions, &GradientCheck::default()).unwrap_err();
    assert_eq!((error.derivative, error.name), (dlspan::kernel::Derivative::Backward, "b"));
    check_gradients(
        &Functions {
            backward: &|x, g, gx| {
                let (a, b) = gx.split_at_mut(1);
                gelu_bias_backward::element(&x[0], &x[1], &g[0], &mut a[0], &mut b[0]);
            },
            ..functions
        },
        &GradientCheck::default(),
    )
    .unwrap();
}

#[test]
fn the_backward_runs_over_every_layout_as_its_element_computes() {
    // x: [3, 4] column-major; b: [4], broadcast along the rows; the output's gradient reversed.
    let xs: Vec<f64> = (0..12).map(|k| f64::from(k) * 0.37 - 2.0).collect();
    let bs = [0.5, -0.25, 1.0, 0.0];
    let gs: Vec<f64> = (0..12).map(|k| 1.0 - f64::from(k) * 0.1).collect();
    let x = HostMdspan::<f64, 2, LayoutStrideRelaxed>::from_slice_relaxed(&xs, [3, 4], [1, 3], 0).unwrap();
    let b = HostMdspan::<f64, 1>::from_slice(&bs, [4]).unwrap();
    let g = HostMdspan::<f64, 2, LayoutStrideRelaxed>::from_slice_relaxed(&gs, [3, 4], [-4, -1], 11).unwrap();
    let (mut gx, mut gb) = (vec![f64::NAN; 12], vec![f64::NAN; 12]);
    gelu_bias_backward
        .run(
            Cpu,
            &x,
            &b,
            &g,
            &mut HostMdspanMut::<f64, 2>::from_slice(&mut gx, [3, 4]).unwrap(),
            &mut HostMdspanMut::<f64, 2>::from_slice(&mut gb, [3, 4]).unwrap(),
        )
        .unwrap();
    for i in 0..3 {
        for j in 0..4 {
            let (mut ex, mut eb) = (0.0, 0.0);
            gelu_bias_backward::element(&x[[i, j]], &bs[j], &g[[i, j]], &mut ex, &mut eb);
            assert_eq!((gx[i * 4 + j].to_bits(), gb[i * 4 + j].to_bits()), (ex.to_bits(), eb.to_bits()));
        }
    }
    // The bias's gradient: summed over the rows it is broadcast along, as a sequential sum of the
    // three rows gives (pairwise and sequential agree on three values: ((a + b) + c)).
    let mut bias = [f64::NAN; 4];
    HostMdspan::<f64, 2>::from_slice(&gb, [3, 4])
        .unwrap()
        .sum_to(&mut HostMdspanMut::<f64, 1>::from_slice(&mut bias, [4]).unwrap())
        .unwrap();
    for j in 0..4 {
        assert_eq!(bias[j].to_bits(), ((gb[j] + gb[4 + j]) + gb[8 + j]).to_bits());
    }
    // Zero-size and 0-d views.
    let mut empty: Vec<f64> = Vec::new();
    gelu_bias_backward
        .run(
            Cpu,
            &HostMdspan::<f64, 2>::from_slice(&[], [0, 4]).unwrap(),
            &b,
            &HostMdspan::<f64, 2>::from_slice(&[], [0, 4]).unwrap(),
            &mut HostMdspanMut::<f64, 2>::from_slice(&mut empty, [0, 4]).unwrap(),
            &mut HostMdspanMut::<f64, 2>::from_slice(&mut Vec::new(), [0, 4]).unwrap(),
        )
        .unwrap();
    let (mut one_x, mut one_b, mut out, mut tangent) = ([0.0], [0.0], [0.0], [0.0]);
    gelu_bias_tangent
        .run(
            Cpu,
            &HostMdspan::<f64, 0>::from_slice(&[0.5], []).unwrap(),
            &HostMdspan::<f64, 0>::from_slice(&[0.25], []).unwrap(),
            &HostMdspan::<f64, 0>::from_slice(&[1.0], []).unwrap(),
            &HostMdspan::<f64, 0>::from_slice(&[1.0], []).unwrap(),
            &mut HostMdspanMut::<f64, 0>::from_slice(&mut out, []).unwrap(),
            &mut HostMdspanMut::<f64, 0>::from_slice(&mut tangent, []).unwrap(),
        )
        .unwrap();
    gelu_bias_backward::element(&0.5, &0.25, &1.0, &mut one_x[0], &mut one_b[0]);
    // Along x + b with both tangents 1, the tangent is twice the derivative.
    assert!((tangent[0] - 2.0 * one_x[0]).abs() < 1e-15, "{} {}", tangent[0], one_x[0]);
}

#[test]
fn half_precision_backwards_stay_within_the_documented_bound_of_f32() {
    use dlspan::half::{bf16, f16};
    for k in 0..200 {
        let x = -3.0 + 6.0 * f64::from(k) / 199.0;
        let (mut g32x, mut g32b) = (0.0f32, 0.0f32);
        gelu_bias_backward::element(&(x as f32), &0.0f32, &1.0f32, &mut g32x, &mut g32b);
        let (mut ghx, mut ghb) = (f16::ZERO, f16::ZERO);
        gelu_bias_backward::element(&f16::from_f64(x), &f16::ZERO, &f16::ONE, &mut ghx, &mut ghb);
        let (mut gbx, mut gbb) = (bf16::ZERO, bf16::ZERO);
        gelu_bias_backward::element(&bf16::from_f64(x), &bf16::ZERO, &bf16::ONE, &mut gbx, &mut gbb);
        // f16 and bf16 round after each operation: within a few of their epsilons of f32 (the
        // derivative of GELU lies in [-0.2, 1.2]).
        assert!((ghx.to_f32() - g32x).abs() <= 8.0 * f32::from(f16::EPSILON), "f16 at {x}: {ghx} against {g32x}");
        assert!((gbx.to_f32() - g32x).abs() <= 8.0 * f32::from(bf16::EPSILON), "bf16 at {x}: {gbx} against {g32x}");
    }
}

#[test]
fn sums_to_a_broadcast_shape_on_every_layout() {
    // A [3, 4, 5] gradient summed to [4, 1], [1, 5], [5], [] and to itself, from several layouts,
    // against a sum in logical order (exact: small integers).
    let data: Vec<f64> = (0..60).map(f64::from).collect();
    let layouts: [([usize; 3], [isize; 3], usize); 3] =
        [([3, 4, 5], [20, 5, 1], 0), ([3, 4, 5], [1, 3, 12], 0), ([3, 4, 5], [-20, 5, -1], 44)];
    for (extents, strides, offset) in layouts {
        let full =
            HostMdspan::<f64, 3, LayoutStrideRelaxed>::from_slice_relaxed(&data, extents, strides, offset).unwrap();
        let value = |i: usize, j: usize, k: usize| full[[i, j, k]];
        let mut a = [0.0; 4];
        full.sum_to(&mut HostMdspanMut::<f64, 2>::from_slice(&mut a, [4, 1]).unwrap()).unwrap();
        for j in 0..4 {
            assert_eq!(
                a[j],
                (0..3).flat_map(|i| (0..5).map(move |k| (i, k))).map(|(i, k)| value(i, j, k)).sum::<f64>()
            );
        }
        let mut b = [0.0; 5];
        full.sum_to(&mut HostMdspanMut::<f64, 2>::from_slice(&mut b, [1, 5]).unwrap()).unwrap();
        let mut c = [0.0; 5];
        full.sum_to(&mut HostMdspanMut::<f64, 1>::from_slice(&mut c, [5]).unwrap()).unwrap();
        for k in 0..5 {
            let expected: f64 = (0..3).flat_map(|i| (0..4).map(move |j| (i, j))).map(|(i, j)| value(i, j, k)).sum();
            assert_eq!((b[k], c[k]), (expected, expected));
        }
        let mut total = [0.0];
        full.sum_to(&mut HostMdspanMut::<f64, 0>::from_slice(&mut total, []).unwrap()).unwrap();
        assert_eq!(total[0], (0..60).map(f64::from).sum::<f64>());
        let mut same = [0.0; 60];
        full.sum_to(&mut HostMdspanMut::<f64, 3>::from_slice(&mut same, [3, 4, 5]).unwrap()).unwrap();
        assert_eq!(same[7], value(0, 1, 2));
    }
    let full = HostMdspan::<f64, 2>::from_slice(&data[..12], [3, 4]).unwrap();
    let mut wrong = [0.0; 3];
    let error = full.sum_to(&mut HostMdspanMut::<f64, 1>::from_slice(&mut wrong, [3]).unwrap()).unwrap_err();
    assert_eq!(error, dlspan::DlpackError::ShapeMismatch { axis: 1, expected: 4, found: 3 });
    let mut empty: [f64; 0] = [];
    full.sum_to(&mut HostMdspanMut::<f64, 1>::from_slice(&mut empty, [0]).unwrap()).unwrap_err();
    let zero_rows = HostMdspan::<f64, 2>::from_slice(&[], [0, 4]).unwrap();
    let mut sums = [f64::NAN; 4];
    zero_rows.sum_to(&mut HostMdspanMut::<f64, 1>::from_slice(&mut sums, [4]).unwrap()).unwrap();
    assert_eq!(sums, [0.0; 4]);
}

/// A derived element type of three `f32` lanes, one of which the kernel below never reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, dlspan::DlElement)]
#[repr(C)]
struct Polar {
    r: f32,
    theta: f32,
    unused: f32,
}

dlspan::elementwise! {
    /// Cartesian coordinates of a polar point, scaled and shifted: a derived-type input read field
    /// by field.
    #[differentiable]
    fn cartesian(p: &Polar, s: &f32, x: &mut f32, y: &mut f32) {
        *x = p.r * p.theta.cos() * *s;
        *y = p.r * p.theta.sin() + *s;
    }
}

#[test]
fn a_derived_type_input_gets_its_gradient_field_by_field() {
    let points = [
        Polar { r: 2.0, theta: 0.5, unused: 7.0 },
        Polar { r: -1.5, theta: 2.0, unused: f32::NAN },
        Polar { r: 0.25, theta: -1.0, unused: 1e30 },
    ];
    let scales = [1.5f32, -0.5, 3.0];
    let (gx, gy) = ([1.0f32, 0.5, -2.0], [0.25f32, -1.0, 4.0]);
    let mut grad_p = [Polar { r: 9.0, theta: 9.0, unused: 9.0 }; 3];
    let mut grad_s = [9.0f32; 3];
    cartesian_backward
        .run(
            Cpu,
            &HostMdspan::<Polar, 1>::from_slice(&points, [3]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&scales, [3]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&gx, [3]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&gy, [3]).unwrap(),
            &mut HostMdspanMut::<Polar, 1>::from_slice(&mut grad_p, [3]).unwrap(),
            &mut HostMdspanMut::<f32, 1>::from_slice(&mut grad_s, [3]).unwrap(),
        )
        .unwrap();
    for k in 0..3 {
        let (p, s) = (points[k], scales[k]);
        let (c, n) = (p.theta.cos(), p.theta.sin());
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * (1.0 + b.abs());
        assert!(close(grad_p[k].r, gx[k] * c * s + gy[k] * n), "{k}: {:?}", grad_p[k]);
        assert!(close(grad_p[k].theta, gx[k] * (-p.r * n * s) + gy[k] * (p.r * c)), "{k}: {:?}", grad_p[k]);
        assert_eq!(grad_p[k].unused.to_bits(), 0, "the field the body never reads has gradient +0.0");
        assert!(close(grad_s[k], gx[k] * p.r * c + gy[k]), "{k}: {}", grad_s[k]);
    }
}

/// Two `f32` lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq, dlspan::DlElement)]
#[repr(C)]
struct Pair {
    a: f32,
    b: f32,
}

dlspan::elementwise! {
    /// A derived-type output written field by field.
    #[differentiable]
    fn rotate(p: &Pair, t: &f32, out: &mut Pair) {
        out.a = p.a * t.cos() - p.b * t.sin();
        out.b = p.a * t.sin() + p.b * t.cos();
    }
}

#[test]
fn a_derived_type_output_gets_its_gradient_field_by_field() {
    let (p, t) = ([Pair { a: 1.0, b: 2.0 }, Pair { a: -0.5, b: 0.25 }], [0.3f32, -1.2]);
    let g = [Pair { a: 1.0, b: 0.0 }, Pair { a: 0.5, b: -2.0 }];
    let mut grad_p = [Pair::default(); 2];
    let mut grad_t = [0.0f32; 2];
    rotate_backward
        .run(
            Cpu,
            &HostMdspan::<Pair, 1>::from_slice(&p, [2]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&t, [2]).unwrap(),
            &HostMdspan::<Pair, 1>::from_slice(&g, [2]).unwrap(),
            &mut HostMdspanMut::<Pair, 1>::from_slice(&mut grad_p, [2]).unwrap(),
            &mut HostMdspanMut::<f32, 1>::from_slice(&mut grad_t, [2]).unwrap(),
        )
        .unwrap();
    for k in 0..2 {
        let (c, s) = (t[k].cos(), t[k].sin());
        let close = |x: f32, y: f32| (x - y).abs() <= 1e-5 * (1.0 + y.abs());
        // The transpose of the rotation applied to the gradient.
        assert!(close(grad_p[k].a, g[k].a * c + g[k].b * s), "{k}: {:?}", grad_p[k]);
        assert!(close(grad_p[k].b, -g[k].a * s + g[k].b * c), "{k}: {:?}", grad_p[k]);
        let dt = g[k].a * (-p[k].a * s - p[k].b * c) + g[k].b * (p[k].a * c - p[k].b * s);
        assert!(close(grad_t[k], dt), "{k}: {}", grad_t[k]);
    }
    // The tangent agrees with the backward: ⟨g, J v⟩ = ⟨Jᵀ g, v⟩ for a direction v.
    let (tp, tt) = ([Pair { a: 0.5, b: -1.0 }, Pair { a: 2.0, b: 0.25 }], [1.5f32, -0.75]);
    let (mut out, mut tout) = ([Pair::default(); 2], [Pair::default(); 2]);
    rotate_tangent
        .run(
            Cpu,
            &HostMdspan::<Pair, 1>::from_slice(&p, [2]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&t, [2]).unwrap(),
            &HostMdspan::<Pair, 1>::from_slice(&tp, [2]).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&tt, [2]).unwrap(),
            &mut HostMdspanMut::<Pair, 1>::from_slice(&mut out, [2]).unwrap(),
            &mut HostMdspanMut::<Pair, 1>::from_slice(&mut tout, [2]).unwrap(),
        )
        .unwrap();
    for k in 0..2 {
        let left = g[k].a * tout[k].a + g[k].b * tout[k].b;
        let right = grad_p[k].a * tp[k].a + grad_p[k].b * tp[k].b + grad_t[k] * tt[k];
        assert!((left - right).abs() <= 1e-5 * (1.0 + right.abs()), "{k}: {left} against {right}");
    }
}
