//! Element-wise bodies with math on host views, timed in interleaved rounds (every variant once
//! per round, the order rotating, so the noise of a shared machine hits them alike):
//!
//!     cargo run --release -p dlspan-benches --bin body_time [-- ROUNDS [BODY]]
//!
//! The bodies issue "CPU kernels at PyTorch's speed" names, over 1024² f32, row-major, each view
//! over its own buffer: `exp(x)`, `tanh(x)`, sigmoid `1 / (1 + exp(−x))`, softplus
//! `ln(1 + exp(x))` (beyond the list: `ln`), `x·y + z`, and GELU
//! (tanh form) of `x + b` with `b` a row broadcast down the columns; then two layouts whose
//! inner runs are not contiguous in every view: `exp` of a transposed `x` (`exp(xᵀ)`) and the
//! GELU of `x + c` with `c` a column broadcast along the rows (stride 0 along the run). Each as an `elementwise!`
//! kernel run by `Cpu` beside the same body through ndarray's `Zip` (its math: the standard
//! library's, a libm call per element), both on one thread, then both on every thread of the
//! process (dlspan's pool, `DLSPAN_NUM_THREADS` or the cores; ndarray's `par_azip` on rayon's
//! global pool of as many). Prints each variant's median and the ratios (target ≤ 1.0×: issue
//! "CPU kernels at PyTorch's speed"). Run it pinned (`taskset -c 1` for the one-thread rows).

use dlspan::kernel::{Cpu, Float};
use dlspan::*;
use ndarray::{ArrayView2, ArrayViewMut2, Zip};
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1024;

dlspan::elementwise! {
    /// `exp(x)`.
    fn exp_body<T: Float>(x: &T, out: &mut T) {
        *out = x.exp();
    }
}
dlspan::elementwise! {
    /// `tanh(x)`.
    fn tanh_body<T: Float>(x: &T, out: &mut T) {
        *out = x.tanh();
    }
}
dlspan::elementwise! {
    /// `1 / (1 + exp(−x))`.
    fn sigmoid_body<T: Float>(x: &T, out: &mut T) {
        *out = 1.0 / (1.0 + (-*x).exp());
    }
}
dlspan::elementwise! {
    /// softplus, `ln(1 + exp(x))`.
    fn softplus_body<T: Float>(x: &T, out: &mut T) {
        *out = (1.0 + x.exp()).ln();
    }
}
dlspan::elementwise! {
    /// `x·y + z`, unfused.
    fn fma_body<T: Float>(x: &T, y: &T, z: &T, out: &mut T) {
        *out = *x * *y + *z;
    }
}
dlspan::elementwise! {
    /// GELU (tanh form) of `x + b`.
    fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        *out = 0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044_715 * v * v * v)).tanh());
    }
}

/// The standard library's forms of the same bodies (ndarray's peers).
fn gelu(x: f32, b: f32) -> f32 {
    let v = x + b;
    0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044_715 * v * v * v)).tanh())
}

/// The buffers of one measurement: three inputs, a bias row and an output.
struct Data {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    b: Vec<f32>,
    out: Vec<f32>,
}

impl Data {
    fn new() -> Self {
        let wave = |i: usize, k: f32| ((i % 4093) as f32 / 4093.0 - 0.5) * k;
        Self {
            x: (0..N * N).map(|i| wave(i, 8.0)).collect(),
            y: (0..N * N).map(|i| wave(i * 7, 2.0)).collect(),
            z: (0..N * N).map(|i| wave(i * 13, 2.0)).collect(),
            b: (0..N).map(|i| wave(i * 31, 1.0)).collect(),
            out: vec![0.0; N * N],
        }
    }
}

fn view(data: &[f32]) -> HostMdspan<'_, f32, 2> {
    HostMdspan::from_slice(data, [N, N]).unwrap()
}
fn view_mut(data: &mut [f32]) -> HostMdspanMut<'_, f32, 2> {
    HostMdspanMut::from_slice(data, [N, N]).unwrap()
}
fn nd(data: &[f32]) -> ArrayView2<'_, f32> {
    ArrayView2::from_shape((N, N), data).unwrap()
}
fn nd_mut(data: &mut [f32]) -> ArrayViewMut2<'_, f32> {
    ArrayViewMut2::from_shape((N, N), data).unwrap()
}

/// One body: the dlspan kernel and ndarray's `Zip` and `par_azip`.
struct Body {
    name: &'static str,
    dlspan: fn(&mut Data),
    zip: fn(&mut Data),
    par: fn(&mut Data),
}

#[inline(never)]
fn exp_dlspan(d: &mut Data) {
    exp_body.run(Cpu, black_box(&view(&d.x)), &mut view_mut(&mut d.out)).unwrap();
}
#[inline(never)]
fn exp_zip(d: &mut Data) {
    Zip::from(nd_mut(&mut d.out)).and(black_box(nd(&d.x))).for_each(|o, &x| *o = x.exp());
}
#[inline(never)]
fn exp_par(d: &mut Data) {
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x))) *o = x.exp());
}
#[inline(never)]
fn tanh_dlspan(d: &mut Data) {
    tanh_body.run(Cpu, black_box(&view(&d.x)), &mut view_mut(&mut d.out)).unwrap();
}
#[inline(never)]
fn tanh_zip(d: &mut Data) {
    Zip::from(nd_mut(&mut d.out)).and(black_box(nd(&d.x))).for_each(|o, &x| *o = x.tanh());
}
#[inline(never)]
fn tanh_par(d: &mut Data) {
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x))) *o = x.tanh());
}
#[inline(never)]
fn sigmoid_dlspan(d: &mut Data) {
    sigmoid_body.run(Cpu, black_box(&view(&d.x)), &mut view_mut(&mut d.out)).unwrap();
}
#[inline(never)]
fn sigmoid_zip(d: &mut Data) {
    Zip::from(nd_mut(&mut d.out)).and(black_box(nd(&d.x))).for_each(|o, &x| *o = 1.0 / (1.0 + (-x).exp()));
}
#[inline(never)]
fn sigmoid_par(d: &mut Data) {
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x))) *o = 1.0 / (1.0 + (-x).exp()));
}
#[inline(never)]
fn fma_dlspan(d: &mut Data) {
    let out = &mut view_mut(&mut d.out);
    fma_body.run(Cpu, black_box(&view(&d.x)), &view(&d.y), &view(&d.z), out).unwrap();
}
#[inline(never)]
fn fma_zip(d: &mut Data) {
    Zip::from(nd_mut(&mut d.out))
        .and(black_box(nd(&d.x)))
        .and(nd(&d.y))
        .and(nd(&d.z))
        .for_each(|o, &x, &y, &z| *o = x * y + z);
}
#[inline(never)]
fn fma_par(d: &mut Data) {
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x)), &y in nd(&d.y), &z in nd(&d.z)) *o = x * y + z);
}
#[inline(never)]
fn softplus_dlspan(d: &mut Data) {
    softplus_body.run(Cpu, black_box(&view(&d.x)), &mut view_mut(&mut d.out)).unwrap();
}
#[inline(never)]
fn softplus_zip(d: &mut Data) {
    Zip::from(nd_mut(&mut d.out)).and(black_box(nd(&d.x))).for_each(|o, &x| *o = (1.0 + x.exp()).ln());
}
#[inline(never)]
fn softplus_par(d: &mut Data) {
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x))) *o = (1.0 + x.exp()).ln());
}

#[inline(never)]
fn gelu_dlspan(d: &mut Data) {
    let b = HostMdspan::<f32, 1>::from_slice(&d.b, [N]).unwrap();
    let out = &mut view_mut(&mut d.out);
    gelu_bias.run(Cpu, black_box(&view(&d.x)), &b, out).unwrap();
}
#[inline(never)]
fn gelu_zip(d: &mut Data) {
    let b = ndarray::ArrayView1::from(&d.b[..]);
    Zip::from(nd_mut(&mut d.out)).and(black_box(nd(&d.x))).and_broadcast(b).for_each(|o, &x, &b| *o = gelu(x, b));
}
#[inline(never)]
fn gelu_par(d: &mut Data) {
    let row = ndarray::ArrayView1::from(&d.b[..]);
    let b = row.broadcast((N, N)).unwrap();
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x)), &b in b) *o = gelu(x, b));
}

#[inline(never)]
fn exp_t_dlspan(d: &mut Data) {
    let xt = HostMdspan::<f32, 2, LayoutStride>::from_slice_strided(&d.x, [N, N], [1, N as isize]).unwrap();
    exp_body.run(Cpu, black_box(&xt), &mut view_mut(&mut d.out)).unwrap();
}
#[inline(never)]
fn exp_t_zip(d: &mut Data) {
    Zip::from(nd_mut(&mut d.out)).and(black_box(nd(&d.x)).t()).for_each(|o, &x| *o = x.exp());
}
#[inline(never)]
fn exp_t_par(d: &mut Data) {
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x)).t()) *o = x.exp());
}
#[inline(never)]
fn gelu_column_dlspan(d: &mut Data) {
    let b = HostMdspan::<f32, 2>::from_slice(&d.b, [N, 1]).unwrap();
    gelu_bias.run(Cpu, black_box(&view(&d.x)), &b, &mut view_mut(&mut d.out)).unwrap();
}
#[inline(never)]
fn gelu_column_zip(d: &mut Data) {
    let b = ArrayView2::from_shape((N, 1), &d.b[..]).unwrap();
    Zip::from(nd_mut(&mut d.out)).and(black_box(nd(&d.x))).and_broadcast(b).for_each(|o, &x, &b| *o = gelu(x, b));
}
#[inline(never)]
fn gelu_column_par(d: &mut Data) {
    let column = ArrayView2::from_shape((N, 1), &d.b[..]).unwrap();
    let b = column.broadcast((N, N)).unwrap();
    ndarray::par_azip!((o in nd_mut(&mut d.out), &x in black_box(nd(&d.x)), &b in b) *o = gelu(x, b));
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Medians (µs) of each of `variants`, interleaved over `rounds`.
fn measure(data: &mut Data, variants: &[fn(&mut Data)], rounds: usize) -> Vec<f64> {
    let mut times = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for k in (0..variants.len()).map(|k| (k + round) % variants.len()) {
            let start = Instant::now();
            for _ in 0..5 {
                variants[k](data);
            }
            times[k].push(start.elapsed().as_secs_f64() / 5.0 * 1e6);
        }
    }
    times.into_iter().map(median).collect()
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(15);
    let only = std::env::args().nth(2).unwrap_or_default();
    let threads = dlspan::kernel::num_threads();
    let bodies = [
        Body { name: "exp(x)", dlspan: exp_dlspan, zip: exp_zip, par: exp_par },
        Body { name: "tanh(x)", dlspan: tanh_dlspan, zip: tanh_zip, par: tanh_par },
        Body { name: "sigmoid(x)", dlspan: sigmoid_dlspan, zip: sigmoid_zip, par: sigmoid_par },
        Body { name: "softplus(x)", dlspan: softplus_dlspan, zip: softplus_zip, par: softplus_par },
        Body { name: "x*y + z", dlspan: fma_dlspan, zip: fma_zip, par: fma_par },
        Body { name: "gelu(x + b)", dlspan: gelu_dlspan, zip: gelu_zip, par: gelu_par },
        Body { name: "exp(xᵀ)", dlspan: exp_t_dlspan, zip: exp_t_zip, par: exp_t_par },
        Body { name: "gelu(x + c)", dlspan: gelu_column_dlspan, zip: gelu_column_zip, par: gelu_column_par },
    ];
    let vectors = dlspan::kernel::cpu_vectors();
    println!(
        "median of {rounds} interleaved rounds, {N}×{N} f32, µs per call; all threads: {threads}; vectors: {vectors:?}"
    );
    println!(
        "{:<12} {:>10} {:>10} {:>8} | {:>10} {:>10} {:>8}",
        "body", "1 thread", "Zip", "ratio", "threads", "par_azip", "ratio"
    );
    let mut data = Data::new();
    for body in bodies.iter().filter(|b| only.is_empty() || b.name.starts_with(&only)) {
        dlspan::kernel::set_num_threads(1);
        let one = measure(&mut data, &[body.dlspan, body.zip], rounds);
        dlspan::kernel::set_num_threads(threads);
        let all = measure(&mut data, &[body.dlspan, body.par], rounds);
        println!(
            "{:<12} {:>10.1} {:>10.1} {:>7.3}× | {:>10.1} {:>10.1} {:>7.3}×",
            body.name,
            one[0],
            one[1],
            one[0] / one[1],
            all[0],
            all[1],
            all[0] / all[1]
        );
    }
}
