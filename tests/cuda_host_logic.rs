//! The kernels' logic without a GPU: the generated CUDA C++ (the very modules NVRTC compiles)
//! built for the host with `DLSPAN_HOST`, run on random shapes and strides (transposes, reversed
//! and broadcast axes, gaps, every axis order, flat and strided shapes, both index widths, grids
//! too small for the data), each output element compared bit for bit with the Rust CPU reference,
//! and every byte outside the output view checked untouched (outputs are poisoned first).
#![cfg(feature = "cuda")]

mod cuda_support;

use cuda_support::{Arith, HostKernels, Layout, Rng, TestElement, bytes, cxx_or_skip, random_extents, random_layout};
use dlspan::cuda::{IndexWidth, KernelKind, ModuleKey, Operand, Shape, plan};
use dlspan::half::{bf16, f16};
use dlspan::{HostMdspan, HostMdspanMut, LayoutStrideRelaxed};
use std::collections::BTreeSet;

/// What the cases ran: the shapes and index widths reached, to prove the coverage.
#[derive(Default)]
struct Coverage(BTreeSet<String>);

/// One random case of a kernel of `key` at rank `R`: `reference(a, b, scalar, old_out)` computes
/// an output element from the inputs' elements (`None` past the operation's inputs).
fn case<Out: TestElement, In: TestElement, const R: usize>(
    kernels: &HostKernels,
    key: &ModuleKey,
    rng: &mut Rng,
    coverage: &mut Coverage,
    reference: &dyn Fn(Option<In>, Option<In>, Out, Out) -> Out,
) {
    let extents = random_extents::<R>(rng, if R > 4 { 3 } else { 7 });
    let out_layout = random_layout(rng, extents, false);
    let inputs = key.kind.inputs().min(if key.kind == KernelKind::Axpy { 1 } else { 2 });
    let in_layouts: Vec<Layout<R>> = (0..inputs).map(|_| random_layout(rng, extents, true)).collect();
    let in_buffers: Vec<Vec<In>> = in_layouts.iter().map(|l| (0..l.len).map(|_| In::random(rng)).collect()).collect();
    let poisoned: Vec<Out> = (0..out_layout.len).map(|_| Out::random(rng)).collect();
    let scalar = Out::random(rng);

    // The Rust reference, through dlspan's host views.
    let mut expected = poisoned.clone();
    {
        let mut out = HostMdspanMut::<Out, R, LayoutStrideRelaxed>::from_slice_relaxed(
            &mut expected,
            extents,
            out_layout.strides,
            out_layout.offset,
        )
        .expect("valid output layout");
        let views: Vec<HostMdspan<'_, In, R, LayoutStrideRelaxed>> = in_layouts
            .iter()
            .zip(&in_buffers)
            .map(|(l, buf)| {
                HostMdspan::from_slice_relaxed(buf, extents, l.strides, l.offset).expect("valid input layout")
            })
            .collect();
        let mut a = views.first().map(|v| v.iter());
        let mut b = views.get(1).map(|v| v.iter());
        for slot in out.iter_mut() {
            let x = a.as_mut().map(|it| *it.next().expect("same extents"));
            let y = b.as_mut().map(|it| *it.next().expect("same extents"));
            *slot = reference(x, y, scalar, *slot);
        }
    }

    // The kernel, on the host, over the same memory layouts.
    let mut actual = poisoned.clone();
    let size_out = core::mem::size_of::<Out>();
    let size_in = core::mem::size_of::<In>();
    let out_op =
        Operand::new(actual.as_mut_ptr().wrapping_add(out_layout.offset) as usize as u64, out_layout.strides, size_out);
    let mut operands = vec![out_op];
    for (l, buf) in in_layouts.iter().zip(&in_buffers) {
        operands.push(Operand::new(buf.as_ptr().wrapping_add(l.offset) as usize as u64, l.strides, size_in));
    }
    if key.kind == KernelKind::Axpy {
        operands.push(out_op);
    }
    let mut p = plan(extents, &operands).expect("plannable").expect("not empty");
    p.params.scalar.0[0][..size_out].copy_from_slice(bytes(core::slice::from_ref(&scalar)));
    // Half the cases run on a grid far smaller than the data: the grid-stride loops must cover it.
    let grid = if rng.chance(50) { p.grid } else { 1 + rng.below(2) as u32 };
    let block = if grid == p.grid { p.block } else { 1 + rng.below(64) as u32 };
    kernels.run(&key.entry(p.shape, p.index), &p.params, grid, block);
    coverage.0.insert(format!("{:?}/{:?}", p.shape, p.index));
    if bytes(&actual) != bytes(&expected) {
        let first = (0..actual.len()).find(|&i| bytes(&actual[i..=i]) != bytes(&expected[i..=i])).unwrap_or(0);
        panic!(
            "{} kernel {:?}/{:?} differs from the CPU reference: extents {extents:?}, output {out_layout:?}, \
             inputs {in_layouts:?}, grid {grid}x{block}; first at buffer index {first}: {:?} vs expected {:?}",
            key.kind, p.shape, p.index, actual[first], expected[first]
        );
    }
}

/// Runs `cases` random cases of a module at every rank class.
fn cases<Out: TestElement, In: TestElement>(
    kernels: &HostKernels,
    key: &ModuleKey,
    seed: u64,
    cases: usize,
    coverage: &mut Coverage,
    reference: &dyn Fn(Option<In>, Option<In>, Out, Out) -> Out,
) {
    let mut rng = Rng::new(seed);
    for i in 0..cases {
        match i % 6 {
            0 => case::<Out, In, 1>(kernels, key, &mut rng, coverage, reference),
            1 => case::<Out, In, 2>(kernels, key, &mut rng, coverage, reference),
            2 => case::<Out, In, 3>(kernels, key, &mut rng, coverage, reference),
            3 => case::<Out, In, 4>(kernels, key, &mut rng, coverage, reference),
            4 => case::<Out, In, 6>(kernels, key, &mut rng, coverage, reference),
            _ => case::<Out, In, 2>(kernels, key, &mut rng, coverage, reference),
        }
    }
}

fn key<Out: dlspan::DlElement, In: dlspan::DlElement>(kind: KernelKind) -> ModuleKey {
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
        cases::<$t, $t>($kernels, &key::<$t, $t>(KernelKind::Add), 11, 60, $coverage, &|a, b, _, _| a.unwrap().add(b.unwrap()));
        cases::<$t, $t>($kernels, &key::<$t, $t>(KernelKind::Scale), 12, 60, $coverage, &|a, _, s, _| s.mul(a.unwrap()));
        cases::<$t, $t>($kernels, &key::<$t, $t>(KernelKind::Axpy), 13, 60, $coverage, &|x, _, s, y| s.mul(x.unwrap()).add(y));
    )*};
}

macro_rules! movement_keys {
    ($($t:ty),*) => {
        vec![$(key::<$t, $t>(KernelKind::Copy), key::<$t, $t>(KernelKind::Fill),)*]
    };
}

macro_rules! movement_cases {
    ($kernels:expr, $coverage:expr, $($t:ty),*) => {$(
        cases::<$t, $t>($kernels, &key::<$t, $t>(KernelKind::Copy), 21, 90, $coverage, &|a, _, _, _| a.unwrap());
        cases::<$t, $t>($kernels, &key::<$t, $t>(KernelKind::Fill), 22, 40, $coverage, &|_, _, s, _| s);
    )*};
}

#[test]
fn generated_kernels_match_the_cpu_reference_on_the_host() {
    let Some(cxx) = cxx_or_skip() else { return };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda-host-logic");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");

    let mut modules = movement_keys!(
        u8,
        u16,
        f32,
        f64,
        bool,
        dlspan::dtype::Float8E4m3fn,
        dlspan::dtype::F32x4,
        dlspan::dtype::F64x4,
        dlspan::dtype::U8x4,
        dlspan::dtype::Float6E2m3fnX4
    );
    modules.extend(arithmetic_keys!(i8, u16, i32, u64, f16, bf16, f32, f64));
    let kernels = HostKernels::build(&cxx, &dir, &modules);

    let mut coverage = Coverage::default();
    movement_cases!(
        &kernels,
        &mut coverage,
        u8,
        u16,
        f32,
        f64,
        bool,
        dlspan::dtype::Float8E4m3fn,
        dlspan::dtype::F32x4,
        dlspan::dtype::F64x4,
        dlspan::dtype::U8x4,
        dlspan::dtype::Float6E2m3fnX4
    );
    arithmetic_cases!(&kernels, &mut coverage, i8, u16, i32, u64, f16, bf16, f32, f64);

    // Every kernel shape was reached (wide vectors by the one-byte types).
    for shape in [
        Shape::Flat { vector: 1 },
        Shape::Flat { vector: 4 },
        Shape::Flat { vector: 16 },
        Shape::Strided { rank: 1 },
        Shape::Strided { rank: 2 },
        Shape::Strided { rank: 3 },
        Shape::Strided { rank: 4 },
        Shape::General,
    ] {
        assert!(
            coverage.0.contains(&format!("{shape:?}/{:?}", IndexWidth::U32)),
            "no case reached {shape:?}: {:?}",
            coverage.0
        );
    }
    println!("host-logic tier: {} modules, shapes reached: {:?}", modules.len(), coverage.0);
}

/// 64-bit index arithmetic: a plan forced wide by a reach beyond `i32` (a huge stride on an axis
/// of extent 2 whose second index lies in a separate small buffer, so no memory is wasted) runs
/// the `i64` kernels, which must agree with the `i32` ones.
#[test]
fn wide_index_kernels_match() {
    let Some(cxx) = cxx_or_skip() else { return };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda-host-logic-wide");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let key = key::<u32, u32>(KernelKind::Copy);
    let kernels = HostKernels::build(&cxx, &dir, &[key]);
    let mut rng = Rng::new(5);
    for _ in 0..20 {
        let extents = random_extents::<3>(&mut rng, 9);
        let src_layout = random_layout(&mut rng, extents, true);
        let out_layout = random_layout(&mut rng, extents, false);
        let src: Vec<u32> = (0..src_layout.len).map(|_| rng.next_u64() as u32).collect();
        let mut narrow = vec![0u32; out_layout.len];
        let mut wide = narrow.clone();
        let ops = |out: &mut Vec<u32>| {
            [
                Operand::new(out.as_mut_ptr().wrapping_add(out_layout.offset) as usize as u64, out_layout.strides, 4),
                Operand::new(src.as_ptr().wrapping_add(src_layout.offset) as usize as u64, src_layout.strides, 4),
            ]
        };
        let p = plan(extents, &ops(&mut narrow)).unwrap().unwrap();
        kernels.run(&key.entry(p.shape, p.index), &p.params, p.grid, p.block);
        let q = plan(extents, &ops(&mut wide)).unwrap().unwrap();
        kernels.run(&key.entry(q.shape, IndexWidth::U64), &q.params, 3, 7);
        assert_eq!(narrow, wide, "extents {extents:?}");
    }
}
