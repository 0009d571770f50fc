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

use cuda_support::{
    BoolBytes2, CAST_SCALARS, Case, CastInput, HostKernels, Reference, Rng, TestElement, arithmetic, bytes, cast,
    cxx_or_skip, movement,
};
use dlspan::DlElement;
use dlspan::cuda::KernelKind;
use dlspan::cuda::kernel::{IndexWidth, KernelShape, ModuleKey, Operand, plan, prepare};
use dlspan::dtype::*;
use dlspan::half::{bf16, f16};
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
            key::<$t, $t>(KernelKind::Add), key::<$t, $t>(KernelKind::Scale), key::<$t, $t>(KernelKind::Axpy),
        )*]
    };
}

macro_rules! arithmetic_cases {
    ($kernels:expr, $coverage:expr, $($t:ty),*) => {$(
        for (kind, seed) in [(KernelKind::Add, 11), (KernelKind::Scale, 12), (KernelKind::Axpy, 13)] {
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
