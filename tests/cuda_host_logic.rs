//! The kernels' logic without a GPU: the generated CUDA C++ (the very modules NVRTC compiles)
//! built for the host with `DLSPAN_HOST`, run on random shapes and strides (transposes, reversed
//! and broadcast axes, gaps, every axis order, flat, strided and tiled shapes, both index widths,
//! grids too small for the data), each output element compared bit for bit with the Rust CPU
//! reference, and every byte outside the output view checked untouched (outputs are poisoned
//! first). Cast kernels are also run on every pair of scalar types over the boundary inputs of
//! `cuda_support::cast_inputs` against dlspan's CPU cast.
#![cfg(feature = "cuda")]

#[macro_use]
mod cuda_support;
#[macro_use]
mod kernels_support;

use core::mem::size_of;
use cuda_support::{
    BoolBytes2, CAST_SCALARS, Case, CastInput, HostKernels, Layout, Reference, Rng, TestElement, arithmetic, bytes,
    cast, cxx_or_skip, movement,
};
use dlspan::DlElement;
use dlspan::cuda::kernel::{
    IndexWidth, KernelShape, ModuleKey, Operand, SUM_BLOCKS, elementwise_plan, plan, prepare, sum_plans,
};
use dlspan::cuda::{HostTranslation, KernelKind};
use dlspan::dtype::*;
use dlspan::half::{bf16, f16};
use dlspan::{HostMdspan, LayoutStrideRelaxed};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// A fresh scratch directory for one test's host build.
fn scratch(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// What the cases ran: the shapes and index widths reached, to prove the coverage.
#[derive(Default)]
struct Coverage(BTreeSet<String>);

/// Runs `case` through the host build of `key`'s kernels and compares the whole output buffer
/// with the CPU reference.
fn run_case<Out: TestElement, In: TestElement, const R: usize>(
    kernels: &HostKernels,
    key: &ModuleKey,
    case: &Case<Out, In, R>,
    reference: Reference<'_, Out, In>,
    rng: &mut Rng,
    coverage: &mut Coverage,
) {
    let expected = case.expected(reference);
    let mut actual = case.poisoned.clone();
    let size_out = core::mem::size_of::<Out>();
    let size_in = core::mem::size_of::<In>();
    let out_layout = case.out_layout;
    let out_op =
        Operand::new(actual.as_mut_ptr().wrapping_add(out_layout.offset) as usize as u64, out_layout.strides, size_out);
    let mut operands = vec![out_op];
    for (l, buf) in case.in_layouts.iter().zip(&case.in_buffers) {
        operands.push(Operand::new(buf.as_ptr().wrapping_add(l.offset) as usize as u64, l.strides, size_in));
    }
    // The launch's own planning (scalars placed where the kernel reads them; tiles for copies).
    let scalar = bytes(core::slice::from_ref(&case.scalar));
    let scalars: &[&[u8]] = if matches!(key.kind(), Some(KernelKind::Fill | KernelKind::Scale | KernelKind::Axpy)) {
        &[scalar]
    } else {
        &[]
    };
    let p = prepare(key, case.extents, &operands, scalars).expect("plannable").expect("not empty");
    // Half the cases run on a grid far smaller than the data: the grid-stride loops must cover it.
    let grid = if rng.chance(50) { p.grid } else { 1 + rng.below(2) as u32 };
    let block = if grid == p.grid { p.block } else { 1 + rng.below(64) as u32 };
    kernels.run(&key.entry(p.shape, p.index), &p.params, grid, block);
    coverage.0.insert(format!("{:?}/{:?}", p.shape, p.index));
    if bytes(&actual) != bytes(&expected) {
        let first = (0..actual.len()).find(|&i| bytes(&actual[i..=i]) != bytes(&expected[i..=i])).unwrap_or(0);
        panic!(
            "{} kernel {:?}/{:?} ({} <- {}) differs from the CPU reference: extents {:?}, output {out_layout:?}, \
             inputs {:?}, grid {grid}x{block}; first at buffer index {first}: {:?} vs expected {:?}",
            key.name(),
            p.shape,
            p.index,
            key.out(),
            key.input(),
            case.extents,
            case.in_layouts,
            actual[first],
            expected[first]
        );
    }
}

/// Runs `count` random cases of a module at every rank class, large enough in a quarter of them
/// for tiles (partial tiles included); input values from `value`.
fn cases<Out: TestElement, In: TestElement>(
    kernels: &HostKernels,
    key: &ModuleKey,
    seed: u64,
    count: usize,
    coverage: &mut Coverage,
    reference: Reference<'_, Out, In>,
    value: fn(&mut Rng) -> In,
) {
    let mut rng = Rng::new(seed);
    let rng = &mut rng;
    let kind = key.kind().expect("a built-in kernel");
    for i in 0..count {
        match i % 8 {
            0 => run_case(kernels, key, &Case::<Out, In, 1>::random(rng, kind, 7, value), reference, rng, coverage),
            1 => run_case(kernels, key, &Case::<Out, In, 2>::random(rng, kind, 7, value), reference, rng, coverage),
            2 => run_case(kernels, key, &Case::<Out, In, 3>::random(rng, kind, 7, value), reference, rng, coverage),
            3 => run_case(kernels, key, &Case::<Out, In, 4>::random(rng, kind, 7, value), reference, rng, coverage),
            4 => run_case(kernels, key, &Case::<Out, In, 6>::random(rng, kind, 3, value), reference, rng, coverage),
            5 => run_case(kernels, key, &Case::<Out, In, 2>::random(rng, kind, 45, value), reference, rng, coverage),
            6 => run_case(kernels, key, &Case::<Out, In, 3>::random(rng, kind, 20, value), reference, rng, coverage),
            _ => run_case(kernels, key, &Case::<Out, In, 4>::random(rng, kind, 12, value), reference, rng, coverage),
        }
    }
}

fn key<Out: DlElement, In: DlElement>(kind: KernelKind) -> ModuleKey {
    ModuleKey::new::<Out, In>(kind).expect("supported")
}

macro_rules! arithmetic_keys {
    ($($t:ty),*) => {
        vec![$(
            key::<$t, $t>(KernelKind::Add), key::<$t, $t>(KernelKind::Mul), key::<$t, $t>(KernelKind::Scale),
            key::<$t, $t>(KernelKind::Axpy),
        )*]
    };
}

macro_rules! arithmetic_cases {
    ($kernels:expr, $coverage:expr, $($t:ty),*) => {$(
        for (kind, seed) in [(KernelKind::Add, 11), (KernelKind::Scale, 12), (KernelKind::Axpy, 13), (KernelKind::Mul, 14)] {
            cases::<$t, $t>($kernels, &key::<$t, $t>(kind), seed, 64, $coverage, &arithmetic::<$t>(kind), <$t>::random);
        }
    )*};
}

macro_rules! movement_keys {
    ($($t:ty),*) => {
        vec![$(key::<$t, $t>(KernelKind::Copy), key::<$t, $t>(KernelKind::Fill),)*]
    };
}

macro_rules! movement_cases {
    ($kernels:expr, $coverage:expr, $($t:ty),*) => {$(
        cases::<$t, $t>($kernels, &key::<$t, $t>(KernelKind::Copy), 21, 96, $coverage, &movement::<$t>(KernelKind::Copy), <$t>::any);
        cases::<$t, $t>($kernels, &key::<$t, $t>(KernelKind::Fill), 22, 40, $coverage, &movement::<$t>(KernelKind::Fill), <$t>::any);
    )*};
}

macro_rules! cast_keys {
    (() $(($out:ty, $in:ty)),*) => { vec![$(key::<$out, $in>(KernelKind::Cast)),*] };
}

macro_rules! cast_cases {
    (($kernels:expr, $coverage:expr) $(($out:ty, $in:ty)),*) => {$(
        cases::<$out, $in>($kernels, &key::<$out, $in>(KernelKind::Cast), 31, 64, $coverage, &cast::<$out, $in>, <$in>::any);
    )*};
}

#[test]
fn generated_kernels_match_the_cpu_reference_on_the_host() {
    let Some(cxx) = cxx_or_skip() else { return };
    let mut modules = movement_keys!(u8, u16, f32, f64, bool, u128, Float8E4m3fn, F32x4, F64x4, U8x4, Float6E2m3fnX4);
    modules.extend(arithmetic_keys!(i8, u16, i32, u64, i128, f16, bf16, f32, f64));
    modules.extend(cast_layout_pairs!(cast_keys!()));
    let kernels = HostKernels::build(&cxx, &scratch("cuda-host-logic"), &modules);

    let mut coverage = Coverage::default();
    movement_cases!(
        &kernels,
        &mut coverage,
        u8,
        u16,
        f32,
        f64,
        bool,
        u128,
        Float8E4m3fn,
        F32x4,
        F64x4,
        U8x4,
        Float6E2m3fnX4
    );
    arithmetic_cases!(&kernels, &mut coverage, i8, u16, i32, u64, i128, f16, bf16, f32, f64);
    cast_layout_pairs!(cast_cases!(&kernels, &mut coverage));

    // Every kernel shape was reached (wide vectors by the one-byte types).
    for shape in [
        KernelShape::Flat { vector: 1 },
        KernelShape::Flat { vector: 4 },
        KernelShape::Flat { vector: 16 },
        KernelShape::Strided { rank: 1 },
        KernelShape::Strided { rank: 2 },
        KernelShape::Strided { rank: 3 },
        KernelShape::Strided { rank: 4 },
        KernelShape::General,
        KernelShape::Tiled,
    ] {
        assert!(
            coverage.0.contains(&format!("{shape:?}/{:?}", IndexWidth::I32)),
            "no case reached {shape:?}: {:?}",
            coverage.0
        );
    }
    println!("host-logic tier: {} modules, shapes reached: {:?}", modules.len(), coverage.0);
}

/// 64-bit index arithmetic: the `i64` kernels (strided and tiled), run with the parameters a plan
/// chose for the `i32` ones, must agree with them.
#[test]
fn wide_index_kernels_match() {
    let Some(cxx) = cxx_or_skip() else { return };
    let key = key::<u32, u32>(KernelKind::Copy);
    let kernels = HostKernels::build(&cxx, &scratch("cuda-host-logic-wide"), &[key]);
    let mut rng = Rng::new(5);
    let mut tiled = 0;
    for i in 0..40 {
        let case = Case::<u32, u32, 3>::random(&mut rng, KernelKind::Copy, if i % 2 == 0 { 9 } else { 40 }, u32::any);
        let (out_layout, src_layout) = (case.out_layout, case.in_layouts[0]);
        let mut narrow = case.poisoned.clone();
        let mut wide = narrow.clone();
        let ops = |out: &mut Vec<u32>| {
            [
                Operand::new(out.as_mut_ptr().wrapping_add(out_layout.offset) as usize as u64, out_layout.strides, 4),
                Operand::new(
                    case.in_buffers[0].as_ptr().wrapping_add(src_layout.offset) as usize as u64,
                    src_layout.strides,
                    4,
                ),
            ]
        };
        let p = plan(case.extents, &ops(&mut narrow)).unwrap().unwrap();
        kernels.run(&key.entry(p.shape, p.index), &p.params, p.grid, p.block);
        let q = plan(case.extents, &ops(&mut wide)).unwrap().unwrap();
        kernels.run(&key.entry(q.shape, IndexWidth::I64), &q.params, 3, 7);
        assert_eq!(narrow, wide, "extents {:?}, {:?}", case.extents, p.shape);
        tiled += usize::from(p.shape == KernelShape::Tiled);
    }
    assert!(tiled > 0, "no case was tiled");
}

/// Runs the cast kernel `Out <- In` over every boundary input and compares each result, bit for
/// bit, with dlspan's CPU cast.
fn check_cast<Out: CastInput, In: CastInput>(kernels: &HostKernels, inputs: &[In], rng: &mut Rng) -> usize {
    let key = key::<Out, In>(KernelKind::Cast);
    let expected: Vec<Out> = inputs.iter().map(|&x| dlspan::dtype::cast::<In, Out>(x)).collect();
    let mut actual: Vec<Out> = (0..inputs.len()).map(|_| Out::any(rng)).collect();
    let n = inputs.len();
    let operands = [
        Operand::new(actual.as_mut_ptr() as usize as u64, [1], core::mem::size_of::<Out>()),
        Operand::new(inputs.as_ptr() as usize as u64, [1], core::mem::size_of::<In>()),
    ];
    let p = plan([n], &operands).expect("plannable").expect("not empty");
    // One thread runs many elements (the grid-stride loop): the host build calls a kernel per thread.
    kernels.run(&key.entry(KernelShape::Flat { vector: 1 }, p.index), &p.params, 4, 32);
    if bytes(&actual) != bytes(&expected) {
        let i = (0..n).find(|&i| bytes(&actual[i..=i]) != bytes(&expected[i..=i])).expect("a difference");
        panic!(
            "cast {} <- {}: input {:?} (bits {:02x?}) gave {:?} (bits {:02x?}), the CPU cast {:?} (bits {:02x?})",
            key.out(),
            key.input(),
            inputs[i],
            bytes(&inputs[i..=i]),
            actual[i],
            bytes(&actual[i..=i]),
            expected[i],
            bytes(&expected[i..=i])
        );
    }
    n
}

#[test]
fn cast_kernels_match_the_cpu_cast_on_boundary_inputs() {
    let Some(cxx) = cxx_or_skip() else { return };
    let mut modules = Vec::new();
    for_each_cast_scalar!(In => for_each_cast_scalar!(Out => modules.push((key::<Out, In>(KernelKind::Cast), vec![KernelShape::Flat { vector: 1 }]))));
    assert_eq!(modules.len(), CAST_SCALARS * CAST_SCALARS);
    let kernels = HostKernels::build_shapes(&cxx, &scratch("cuda-host-logic-cast"), &modules);
    let mut rng = Rng::new(7);
    let mut casts = 0;
    for_each_cast_scalar!(In => {
        let inputs = In::boundary_inputs();
        for_each_cast_scalar!(Out => casts += check_cast::<Out, In>(&kernels, &inputs, &mut rng));
    });
    println!("cast kernels: {} pairs, {casts} conversions bit for bit with dlspan::dtype::cast", modules.len());
}

/// `kDLBool` elements may hold any byte (NumPy's `view(np.bool_)`, a `Bool`), and `bool` and `Bool`
/// share their kernels: every kernel reads a nonzero byte as `true`, and copies and casts write 0
/// or 1, so an output that Rust reads as `bool` (a host copy, managed memory) never holds another
/// byte. Copies of any bytes, at every shape; casts of every byte to every scalar type.
#[test]
fn bool_bytes_are_read_as_truth_values_and_written_as_0_or_1() {
    let Some(cxx) = cxx_or_skip() else { return };
    let copies = [key::<Bool, Bool>(KernelKind::Copy), key::<BoolBytes2, BoolBytes2>(KernelKind::Copy)];
    let mut modules: Vec<(ModuleKey, Vec<KernelShape>)> = copies.iter().map(|key| (*key, key.shapes())).collect();
    for_each_cast_scalar!(Out => modules.push((key::<Out, Bool>(KernelKind::Cast), vec![KernelShape::Flat { vector: 1 }])));
    let kernels = HostKernels::build_shapes(&cxx, &scratch("cuda-host-logic-bool"), &modules);
    let mut coverage = Coverage::default();
    let truth = |a: Option<Bool>, _, _, _| Bool::new(a.expect("copy has an input").get());
    cases::<Bool, Bool>(&kernels, &copies[0], 31, 96, &mut coverage, &truth, Bool::any);
    let lanes = |a: Option<BoolBytes2>, _, _, _| BoolBytes2(a.expect("copy has an input").0.map(|b| u8::from(b != 0)));
    cases::<BoolBytes2, BoolBytes2>(&kernels, &copies[1], 32, 48, &mut coverage, &lanes, BoolBytes2::any);
    assert!(coverage.0.iter().any(|shape| shape.starts_with("Tiled")), "no copy was tiled: {:?}", coverage.0);
    let mut rng = Rng::new(9);
    let inputs = Bool::boundary_inputs();
    let mut casts = check_cast::<Bool, Bool>(&kernels, &inputs, &mut rng);
    for_each_cast_scalar!(Out => casts += check_cast::<Out, Bool>(&kernels, &inputs, &mut rng));
    assert_eq!(casts, 256 * (CAST_SCALARS + 1));
}

/// One view of an element-wise case for the host build: its memory (declaration order).
struct HostView<const R: usize> {
    raw: dlspan::kernel::RawOperand<R>,
    writes: bool,
}

impl<const R: usize> HostView<R> {
    fn new<T>(layout: &kernels_support::Layout<R>, ptr: *mut T, writes: bool) -> Self {
        let raw = dlspan::kernel::RawOperand {
            ptr: ptr.wrapping_add(layout.offset).cast::<u8>(),
            extents: layout.extents,
            strides: layout.strides,
            size: core::mem::size_of::<T>(),
        };
        Self { raw, writes }
    }
}

/// Runs an element-wise instantiation's host build over `views` as a stream launches it (the same
/// broadcast, slot order, plan and scalar placement), on the planned grid or, one time in two, a
/// grid far smaller than the data.
fn run_elementwise<const R: usize>(
    kernels: &HostKernels,
    instance: dlspan::kernel::Instance,
    views: &[HostView<R>],
    scalars: &[Vec<u8>],
    rng: &mut kernels_support::Rng,
    coverage: &mut Coverage,
) {
    let scalars: Vec<&[u8]> = scalars.iter().map(Vec::as_slice).collect();
    let mut operands: Vec<dlspan::kernel::Operand<'_, dlspan::kernel::Cpu, R>> =
        views.iter().map(|v| dlspan::kernel::Operand { raw: v.raw, writes: v.writes, rank: R, extra: () }).collect();
    let Some((key, p)) = elementwise_plan(instance, &mut operands, &scalars).expect("plannable") else {
        return;
    };
    let (grid, block) =
        if rng.chance(50) { (p.grid, p.block) } else { (1 + rng.below(3) as u32, 1 + rng.below(40) as u32) };
    // One time in four the 64-bit kernel, with the same parameters (it ignores the divisors).
    let index = if rng.chance(25) { IndexWidth::I64 } else { p.index };
    kernels.run(&key.entry(p.shape, index), &p.params, grid, block);
    coverage.0.insert(format!("{:?}/{:?}", p.shape, index));
}

/// One random case of an element-wise kernel (arguments as `kernel_case!`): the CPU path into each
/// output's `expected`, the translation built for the host into its `actual`, compared element by
/// element (bits, or two NaNs).
macro_rules! host_case {
    ($kernels:expr, $coverage:expr, $rng:expr, $shape:expr, $kernel:ident $(::<$g:ty>)?; $($kind:ident $name:ident: $t:ty $(= $value:expr)?),* $(,)?) => {{
        let shape = $shape;
        $(kernel_case!(@make $kind $rng, shape, $name, $t, $($value)?);)*
        $kernel.run(dlspan::kernel::Cpu, $(host_case!(@cpu $kind $name)),*).expect("the CPU path runs");
        let views: Vec<HostView<_>> = [$(host_case!(@view $kind $name)),*].into_iter().flatten().collect();
        let scalars: Vec<Vec<u8>> = [$(host_case!(@scalar $kind $name)),*].into_iter().flatten().collect();
        run_elementwise($kernels, $kernel::instance $(::<$g>)? (), &views, &scalars, $rng, $coverage);
        let what = format!("{} (C++ built for the host) against the CPU path, shape {shape:?}", stringify!($kernel $(::<$g>)?));
        $(kernel_case!(@check $kind $name what);)*
    }};
    (@cpu s $name:ident) => { $name };
    (@cpu i $name:ident) => { &$name.layout.view(&$name.buffer) };
    (@cpu o $name:ident) => { &mut $name.layout.view_mut(&mut $name.expected) };
    (@view s $name:ident) => { None };
    (@view i $name:ident) => { Some(HostView::new(&$name.layout, $name.buffer.as_ptr().cast_mut(), false)) };
    (@view o $name:ident) => { Some(HostView::new(&$name.layout, $name.actual.as_mut_ptr(), true)) };
    (@scalar s $name:ident) => { Some(kernels_support::bytes(core::slice::from_ref(&$name)).to_vec()) };
    (@scalar i $name:ident) => { None };
    (@scalar o $name:ident) => { None };
}

/// Every test kernel once, each as `$case!($($pre)* kernel; parameters)` (parameters as
/// `kernel_case!`'s).
macro_rules! each_test_kernel {
    ($case:ident!($($pre:tt)*)) => {{
        use dlspan::dtype::Float8E4m3fn;
        use kernels_support::*;
        $case!($($pre)* axpby::<f16>; s a: f16, s b: f16, i x: f16, i y: f16, o out: f16);
        $case!($($pre)* axpby::<bf16>; s a: bf16, s b: bf16, i x: bf16, i y: bf16, o out: bf16);
        $case!($($pre)* axpby::<f32>; s a: f32, s b: f32, i x: f32, i y: f32, o out: f32);
        $case!($($pre)* axpby::<f64>; s a: f64, s b: f64, i x: f64, i y: f64, o out: f64);
        $case!($($pre)* axpby::<i8>; s a: i8, s b: i8, i x: i8, i y: i8, o out: i8);
        $case!($($pre)* axpby::<u32>; s a: u32, s b: u32, i x: u32, i y: u32, o out: u32);
        $case!($($pre)* axpby::<i128>; s a: i128, s b: i128, i x: i128, i y: i128, o out: i128);
        $case!($($pre)* gray; i px: Rgba, o out: u8);
        $case!($($pre)* brighten; o px: Rgba, s by: u8);
        $case!($($pre)* soft::<f16>; i x: f16, s limit: f16, o out: f16);
        $case!($($pre)* soft::<bf16>; i x: bf16, s limit: bf16, o out: bf16);
        $case!($($pre)* soft::<f32>; i x: f32, s limit: f32, o out: f32);
        $case!($($pre)* soft::<f64>; i x: f64, s limit: f64, o out: f64);
        for which in 0..UNARY {
            $case!($($pre)* unary::<f16>; i x: f16, s which: i32 = which, o out: f16);
            $case!($($pre)* unary::<bf16>; i x: bf16, s which: i32 = which, o out: bf16);
            $case!($($pre)* unary::<f32>; i x: f32, s which: i32 = which, o out: f32);
            $case!($($pre)* unary::<f64>; i x: f64, s which: i32 = which, o out: f64);
        }
        for which in 0..BINARY {
            $case!($($pre)* binary::<f16>; i x: f16, i y: f16, i z: f16, s which: i32 = which, o out: f16);
            $case!($($pre)* binary::<bf16>; i x: bf16, i y: bf16, i z: bf16, s which: i32 = which, o out: bf16);
            $case!($($pre)* binary::<f32>; i x: f32, i y: f32, i z: f32, s which: i32 = which, o out: f32);
            $case!($($pre)* binary::<f64>; i x: f64, i y: f64, i z: f64, s which: i32 = which, o out: f64);
        }
        $case!($($pre)* integers::<i8>; i x: i8, i y: i8, o quotient: i8, o other: i8);
        $case!($($pre)* integers::<u16>; i x: u16, i y: u16, o quotient: u16, o other: u16);
        $case!($($pre)* integers::<i32>; i x: i32, i y: i32, o quotient: i32, o other: i32);
        $case!($($pre)* integers::<u64>; i x: u64, i y: u64, o quotient: u64, o other: u64);
        $case!($($pre)* integers::<i128>; i x: i128, i y: i128, o quotient: i128, o other: i128);
        $case!($($pre)* mask::<f32>; i x: f32, s low: f32, s high: f32, o out: bool);
        $case!($($pre)* mask::<i16>; i x: i16, s low: i16, s high: i16, o out: bool);
        $case!($($pre)* select::<f64>; i m: bool, i a: f64, i b: f64, o out: f64);
        $case!($($pre)* select::<u8>; i m: bool, i a: u8, i b: u8, o out: u8);
        $case!($($pre)* gelu::<f16>; i x: f16, o out: f16);
        $case!($($pre)* gelu::<bf16>; i x: bf16, o out: bf16);
        $case!($($pre)* gelu::<f32>; i x: f32, o out: f32);
        $case!($($pre)* gelu::<f64>; i x: f64, o out: f64);
        $case!($($pre)* literals::<i8>; i x: i8, o out: i8, o negated: i8);
        $case!($($pre)* literals::<i64>; i x: i64, o out: i64, o negated: i64);
        $case!($($pre)* casts; i x: f32, o i: i32, o h: f16, o b: bf16, o e: Float8E4m3fn, o m: Meters);
        $case!($($pre)* copy::<Rgba>; i x: Rgba, o out: Rgba);
        $case!($($pre)* copy::<dlspan::dtype::F32x4>; i x: dlspan::dtype::F32x4, o out: dlspan::dtype::F32x4);
        $case!($($pre)* copy::<bool>; i x: bool, o out: bool);
        $case!($($pre)* cartesian; i p: Polar, i s: f32, o x: f32, o y: f32);
        $case!($($pre)* cartesian_tangent; i p: Polar, i s: f32, i tangent_p: Polar, i tangent_s: f32, o x: f32, o y: f32, o tangent_x: f32, o tangent_y: f32);
        $case!($($pre)* cartesian_backward; i p: Polar, i s: f32, i grad_x: f32, i grad_y: f32, o grad_p: Polar, o grad_s: f32);
        $case!($($pre)* smooth::<f32>; i x: f32, i b: f32, o out: f32);
        $case!($($pre)* smooth_tangent::<f16>; i x: f16, i b: f16, i tangent_x: f16, i tangent_b: f16, o out: f16, o tangent_out: f16);
        $case!($($pre)* smooth_tangent::<f32>; i x: f32, i b: f32, i tangent_x: f32, i tangent_b: f32, o out: f32, o tangent_out: f32);
        $case!($($pre)* smooth_tangent::<f64>; i x: f64, i b: f64, i tangent_x: f64, i tangent_b: f64, o out: f64, o tangent_out: f64);
        $case!($($pre)* smooth_backward::<bf16>; i x: bf16, i b: bf16, i grad_out: bf16, o grad_x: bf16, o grad_b: bf16);
        $case!($($pre)* smooth_backward::<f32>; i x: f32, i b: f32, i grad_out: f32, o grad_x: f32, o grad_b: f32);
        $case!($($pre)* smooth_backward::<f64>; i x: f64, i b: f64, i grad_out: f64, o grad_x: f64, o grad_b: f64);
    }};
}

/// Every test kernel once at rank `R`, on the host build and on the CPU path.
fn every_kernel_on_the_host<const R: usize>(
    kernels: &HostKernels,
    coverage: &mut Coverage,
    rng: &mut kernels_support::Rng,
    max: usize,
) {
    let shape = kernels_support::random_extents::<R>(rng, max, true);
    each_test_kernel!(host_case!(kernels, coverage, rng, shape,));
}

/// One random case of an element-wise kernel through the public [`HostTranslation`]: its
/// translation run over views as a stream runs it, each output compared with the Rust body's.
macro_rules! translated_case {
    ($rng:expr, $shape:expr, $kernel:ident $(::<$g:ty>)?; $($params:tt)*) => {{
        let what = format!("{} through HostTranslation", stringify!($kernel $(::<$g>)?));
        kernel_case!($rng, $shape, HostTranslation, $kernel $(::<$g>)?, &what; $($params)*);
    }};
}

/// Every test kernel once at rank `R` through [`HostTranslation`] and the Rust body.
fn every_kernel_translated<const R: usize>(rng: &mut kernels_support::Rng, max: usize) {
    let shape = kernels_support::random_extents::<R>(rng, max, true);
    each_test_kernel!(translated_case!(rng, shape,));
}

/// The translation of every test kernel (and every instantiation the tests launch), built with the
/// host C++ compiler, agrees with the kernel's Rust body bit for bit (NaNs aside: a NaN for a NaN)
/// on random layouts (transposed, reversed, broadcast by shape and by stride, gaps, zero-size,
/// rank 0), on full and tiny grids, reaching every kernel shape. The math functions here run the
/// host's libm on both sides, so they agree too (the GPU's lie within the ulps of rule K4).
#[test]
fn elementwise_translations_match_the_cpu_path_on_the_host() {
    let Some(cxx) = cxx_or_skip() else { return };
    let instances = kernels_support::instances();
    let keys: Vec<ModuleKey> = instances.iter().map(|&i| ModuleKey::elementwise(i).expect("a module")).collect();
    let kernels = HostKernels::build(&cxx, &scratch("cuda-host-logic-elementwise"), &keys);
    let mut coverage = Coverage::default();
    let mut rng = kernels_support::Rng::new(21);
    for round in 0..12 {
        every_kernel_on_the_host::<0>(&kernels, &mut coverage, &mut rng, 1);
        every_kernel_on_the_host::<1>(&kernels, &mut coverage, &mut rng, 40);
        every_kernel_on_the_host::<2>(&kernels, &mut coverage, &mut rng, 9);
        every_kernel_on_the_host::<3>(&kernels, &mut coverage, &mut rng, 5);
        every_kernel_on_the_host::<4>(&kernels, &mut coverage, &mut rng, 4);
        every_kernel_on_the_host::<5>(&kernels, &mut coverage, &mut rng, if round % 3 == 0 { 3 } else { 2 });
        every_kernel_on_the_host::<6>(&kernels, &mut coverage, &mut rng, 3);
    }
    for shape in [
        KernelShape::Flat { vector: 1 },
        KernelShape::Flat { vector: 4 },
        KernelShape::Flat { vector: 16 },
        KernelShape::Strided { rank: 1 },
        KernelShape::Strided { rank: 2 },
        KernelShape::Strided { rank: 3 },
        KernelShape::Strided { rank: 4 },
        KernelShape::General,
    ] {
        for index in [IndexWidth::I32, IndexWidth::I64] {
            let reached = coverage.0.contains(&format!("{shape:?}/{index:?}"));
            assert!(reached, "no case reached {shape:?}/{index:?}: {:?}", coverage.0);
        }
    }
    println!("element-wise host tier: {} instantiations, shapes reached: {:?}", keys.len(), coverage.0);
}

/// The public [`HostTranslation`] runs every test kernel's translation as a stream would (planned
/// by the launch's own planner, blocks on worker threads, threads as fibers) and agrees with the
/// Rust body bit for bit on random layouts of every rank, as the test above does with its own grids.
#[test]
fn host_translation_matches_the_rust_body() {
    if cxx_or_skip().is_none() {
        return;
    }
    let mut rng = kernels_support::Rng::new(22);
    for round in 0..4 {
        every_kernel_translated::<0>(&mut rng, 1);
        every_kernel_translated::<1>(&mut rng, 300);
        every_kernel_translated::<2>(&mut rng, 40);
        every_kernel_translated::<3>(&mut rng, 9);
        every_kernel_translated::<4>(&mut rng, 5);
        every_kernel_translated::<6>(&mut rng, if round % 2 == 0 { 3 } else { 2 });
    }
}

dlspan::elementwise! {
    /// A kernel whose output is written by every thread of a block at once (tiled copies aside,
    /// the translation's only cross-thread work is none): used for the thread-safety test.
    fn offset_by(x: &f64, by: f64, out: &mut f64) {
        *out = *x + by;
    }
}

/// Runs from many threads at once (each its own grid of worker threads and fibers) neither race
/// nor mix their parameters; a view of another shape is the stream's typed error, not a run.
#[test]
fn host_translation_is_thread_safe_and_checks_its_views() {
    use dlspan::{HostMdspan, HostMdspanMut};
    if cxx_or_skip().is_none() {
        return;
    }
    let x: Vec<f64> = (0..5000).map(f64::from).collect();
    std::thread::scope(|scope| {
        for t in 0..6 {
            let x = &x;
            scope.spawn(move || {
                for round in 0..5 {
                    let by = f64::from(t * 100 + round);
                    let mut out = vec![f64::NAN; x.len()];
                    let input = HostMdspan::<f64, 2>::from_slice(x, [50, 100]).unwrap();
                    let mut view = HostMdspanMut::<f64, 2>::from_slice(&mut out, [50, 100]).unwrap();
                    offset_by.run(HostTranslation, &input, by, &mut view).expect("runs");
                    assert!(out.iter().zip(x).all(|(o, i)| *o == i + by), "thread {t} round {round}");
                }
            });
        }
    });
    let mut out = vec![0.0f64; 12];
    let input = HostMdspan::<f64, 1>::from_slice(&x[..5], [5]).unwrap();
    let mut view = HostMdspanMut::<f64, 2>::from_slice(&mut out, [3, 4]).unwrap();
    let error = offset_by.run(HostTranslation, &input, 1.0, &mut view).unwrap_err();
    assert!(matches!(error, dlspan::cuda::CudaError::View(dlspan::DlpackError::KernelShapeMismatch { .. })), "{error}");
    assert!(out.iter().all(|&v| v == 0.0), "a refused run wrote its output");
    // No elements: nothing is built or run.
    let mut none: [f64; 0] = [];
    let mut empty = HostMdspanMut::<f64, 2>::from_slice(&mut none, [0, 4]).unwrap();
    let input = HostMdspan::<f64, 1>::from_slice(&x[..4], [4]).unwrap();
    offset_by.run(HostTranslation, &input, 1.0, &mut empty).expect("an empty run");
}

/// One sum through the host build of its two kernels (`sum_plans`, the launch's own planning): the
/// first pass over the input view of `layout`, the second over the first's partial sums (a
/// poisoned buffer), the total read where the plan says.
fn host_sum<T: Numeric, const R: usize>(
    kernels: &HostKernels,
    extents: [usize; R],
    layout: &Layout<R>,
    buffer: &[T],
) -> (T::Acc, String) {
    let input =
        Operand::new(buffer.as_ptr().wrapping_add(layout.offset) as usize as u64, layout.strides, size_of::<T>());
    let mut partials = vec![dlspan::dtype::cast::<f64, T::Acc>(-12345.0); SUM_BLOCKS as usize + 1];
    let base = partials.as_mut_ptr() as usize as u64;
    let (first, second, total) =
        sum_plans(extents, input, base, size_of::<T::Acc>()).expect("plannable").expect("not empty");
    assert!(first.grid <= SUM_BLOCKS && second.grid == 1 && second.params.n == u64::from(first.grid));
    kernels.run(
        &key::<T::Acc, T>(KernelKind::Sum).entry(first.shape, first.index),
        &first.params,
        first.grid,
        first.block,
    );
    kernels.run(
        &key::<T::Acc, T::Acc>(KernelKind::Sum).entry(second.shape, second.index),
        &second.params,
        1,
        second.block,
    );
    let slot = ((total - base) as usize) / size_of::<T::Acc>();
    (partials[slot], format!("{:?}/{:?}", first.shape, first.index))
}

/// The exact sum of a view's values (integers wrapping in the accumulator, floats in `f64`, which
/// holds the sums of these few small values exactly or nearly), and the sum of their magnitudes.
fn reference_sum<T: Numeric, const R: usize>(
    extents: [usize; R],
    layout: &Layout<R>,
    buffer: &[T],
) -> (T::Acc, f64, f64) {
    let view =
        HostMdspan::<T, R, LayoutStrideRelaxed>::from_slice_relaxed(buffer, extents, layout.strides, layout.offset)
            .expect("valid layout");
    let (mut wrapping, mut exact, mut magnitude) = (T::Acc::ZERO, 0f64, 0f64);
    for &v in view.iter() {
        wrapping = wrapping.add(v.to_acc());
        let v = dlspan::dtype::cast::<T, f64>(v);
        exact += v;
        magnitude += v.abs();
    }
    (wrapping, exact, magnitude)
}

/// Random sums of `T` at every rank class (transposed, reversed, broadcast and gapped layouts),
/// against the reference: integers exactly, floats within `tolerance` times the sum of magnitudes.
fn sum_cases<T: Numeric + TestElement>(kernels: &HostKernels, seed: u64, tolerance: f64, coverage: &mut Coverage) {
    // Floats of moderate size (the sum of magnitudes far from overflow), any integers.
    fn value<T: Numeric + TestElement>(rng: &mut Rng, tolerance: f64) -> T {
        if tolerance == 0.0 {
            T::random(rng)
        } else {
            dlspan::dtype::cast::<f64, T>((rng.below(4001) as f64 - 2000.0) / 16.0)
        }
    }
    fn one<T: Numeric + TestElement, const R: usize>(
        kernels: &HostKernels,
        rng: &mut Rng,
        max: usize,
        tolerance: f64,
        coverage: &mut Coverage,
    ) {
        let extents = cuda_support::random_extents::<R>(rng, max);
        let layout = cuda_support::random_layout(rng, extents, true);
        let buffer: Vec<T> = (0..layout.len).map(|_| value::<T>(rng, tolerance)).collect();
        let (got, shape) = host_sum(kernels, extents, &layout, &buffer);
        coverage.0.insert(shape);
        let (wrapping, exact, magnitude) = reference_sum(extents, &layout, &buffer);
        if tolerance == 0.0 {
            assert_eq!(got, wrapping, "sum of {} over {extents:?} {layout:?}", core::any::type_name::<T>());
        } else {
            let got = dlspan::dtype::cast::<T::Acc, f64>(got);
            assert!(
                (got - exact).abs() <= tolerance * magnitude + f64::MIN_POSITIVE,
                "sum of {} over {extents:?} {layout:?}: {got} vs {exact}",
                core::any::type_name::<T>()
            );
        }
    }
    let mut rng = Rng::new(seed);
    let rng = &mut rng;
    for i in 0..48 {
        match i % 6 {
            0 => one::<T, 1>(kernels, rng, 3000, tolerance, coverage),
            1 => one::<T, 2>(kernels, rng, 60, tolerance, coverage),
            2 => one::<T, 3>(kernels, rng, 20, tolerance, coverage),
            3 => one::<T, 4>(kernels, rng, 9, tolerance, coverage),
            4 => one::<T, 6>(kernels, rng, 4, tolerance, coverage),
            _ => one::<T, 2>(kernels, rng, 7, tolerance, coverage),
        }
    }
}

/// `Stream::sum`'s kernels on the host: both passes of every accumulator and a sample of input
/// types, random layouts, a grid of the most blocks (second-pass threads adding several partials),
/// and infinities and NaN through the compensated float sums.
#[test]
fn sum_kernels_match_the_reference_on_the_host() {
    let Some(cxx) = cxx_or_skip() else { return };
    let mut modules = Vec::new();
    macro_rules! sum_keys {
        ($($t:ty),*) => {$(
            modules.push(key::<<$t as Numeric>::Acc, $t>(KernelKind::Sum));
        )*};
    }
    sum_keys!(f32, f64, i64, u64, i128, f16, bf16, Float8E4m3fn, i8, i32, u16, bool);
    let kernels = HostKernels::build(&cxx, &scratch("cuda-host-sum"), &modules);
    let mut coverage = Coverage::default();
    sum_cases::<f32>(&kernels, 41, 4.0 * f64::from(f32::EPSILON), &mut coverage);
    sum_cases::<f64>(&kernels, 42, 4.0 * f64::EPSILON, &mut coverage);
    sum_cases::<f16>(&kernels, 43, 4.0 * f64::from(f32::EPSILON), &mut coverage);
    sum_cases::<bf16>(&kernels, 44, 4.0 * f64::from(f32::EPSILON), &mut coverage);
    sum_cases::<i8>(&kernels, 45, 0.0, &mut coverage);
    sum_cases::<i32>(&kernels, 46, 0.0, &mut coverage);
    sum_cases::<u16>(&kernels, 47, 0.0, &mut coverage);
    sum_cases::<i64>(&kernels, 48, 0.0, &mut coverage);
    sum_cases::<u64>(&kernels, 49, 0.0, &mut coverage);
    sum_cases::<i128>(&kernels, 50, 0.0, &mut coverage);
    for shape in [
        KernelShape::Flat { vector: 1 },
        KernelShape::Strided { rank: 1 },
        KernelShape::Strided { rank: 2 },
        KernelShape::Strided { rank: 3 },
        KernelShape::Strided { rank: 4 },
        KernelShape::General,
    ] {
        assert!(
            coverage.0.contains(&format!("{shape:?}/{:?}", IndexWidth::I32)),
            "no sum reached {shape:?}: {:?}",
            coverage.0
        );
    }

    // More elements than the first pass has threads: the grid-stride loop, the most blocks, and a
    // second pass whose threads add four partials each. 0.1 is inexact in binary: the
    // compensation keeps the f32 total within a few ulps.
    let n = 3 * (SUM_BLOCKS as usize) * 256 + 77;
    let values = vec![0.1f32; n];
    let contiguous = Layout { strides: [1], offset: 0, len: n };
    let (total, shape) = host_sum(&kernels, [n], &contiguous, &values);
    assert_eq!(shape, "Flat { vector: 1 }/I32");
    let exact = n as f64 * f64::from(0.1f32);
    assert!((f64::from(total) - exact).abs() <= 8.0 * f64::from(f32::EPSILON) * exact, "{total} vs {exact}");
    let ones = vec![1u16; n];
    assert_eq!(host_sum(&kernels, [n], &contiguous, &ones).0, n as u64);
    let flags: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    assert_eq!(host_sum(&kernels, [n], &contiguous, &flags).0, n.div_ceil(3) as i64);
    let small = vec![i8::MIN; 1000];
    assert_eq!(host_sum(&kernels, [1000], &Layout { strides: [1], offset: 0, len: 1000 }, &small).0, -128_000);

    // Infinities stay infinities through the compensation; NaN and inf - inf give NaN.
    let special = |values: &[f32]| {
        host_sum(&kernels, [values.len()], &Layout { strides: [1], offset: 0, len: values.len() }, values).0
    };
    assert_eq!(special(&[f32::INFINITY, 1.0, 2.0]), f32::INFINITY);
    assert_eq!(special(&[1.0, f32::NEG_INFINITY, 2.0, f32::NEG_INFINITY]), f32::NEG_INFINITY);
    assert!(special(&[1.0, f32::NAN, 2.0]).is_nan());
    assert!(special(&[f32::INFINITY, f32::NEG_INFINITY]).is_nan());
    assert_eq!(special(&[f32::MAX, f32::MAX]), f32::INFINITY);
    let mut many = vec![1.0f32; 5000];
    many[4321] = f32::INFINITY;
    assert_eq!(special(&many), f32::INFINITY);
}
