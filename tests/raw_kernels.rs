//! Raw kernels (`dlspan::kernel!`) on the CPU (`dlspan::kernel::Cpu`): every test kernel against a
//! Rust reference on random layouts (transposed, reversed, gaps, broadcast by stride, zero-size,
//! rank 0); barriers, static and dynamic shared memory and atomics as CUDA defines them (a block
//! reduction that is wrong without its barriers); the views' metadata in C++; launch errors.
//! Needs a host C++ compiler (`c++`, `g++` or `$CXX`).
#![allow(missing_docs)]

mod kernels_support;
mod raw_kernels_support;

use dlspan::kernel::{Cpu, KernelError, LaunchConfig};
use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft, LayoutStrideRelaxed};
use kernels_support::{Layout, Rng, for_each_index, random_extents, random_layout};
use raw_kernels_support::*;

/// A random layout of `shape` for a raw kernel: broadcast axes keep the shape's extent with
/// stride 0 (a raw kernel indexes its views with their own extents).
fn layout<const R: usize>(rng: &mut Rng, shape: [usize; R], broadcast: bool) -> Layout<R> {
    let mut layout = random_layout(rng, shape, broadcast);
    for (axis, &extent) in shape.iter().enumerate() {
        if layout.extents[axis] != extent {
            layout.extents[axis] = extent;
            layout.strides[axis] = 0;
        }
    }
    layout
}

fn floats(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| (rng.below(2001) as f32 - 1000.0) / 8.0).collect()
}

#[test]
fn axpy_on_random_2d_layouts_matches_the_reference() {
    let mut rng = Rng::new(7);
    for round in 0..40 {
        let shape = random_extents::<2>(&mut rng, if round % 5 == 0 { 70 } else { 9 }, true);
        let (lx, ly, lo) =
            (layout(&mut rng, shape, true), layout(&mut rng, shape, true), layout(&mut rng, shape, false));
        let (x, y) = (floats(&mut rng, lx.len), floats(&mut rng, ly.len));
        let before = floats(&mut rng, lo.len);
        let mut out = before.clone();
        let a = 0.5f32 + rng.below(4) as f32;
        let config = LaunchConfig::for_extent_2d(shape, [4, 8]).unwrap();
        // SAFETY: the body guards every index by the output's extents, which all views share.
        unsafe { axpy2.launch(Cpu, config, a, &lx.view(&x), &ly.view(&y), &mut lo.view_mut(&mut out)) }.unwrap();
        let mut expected = before.clone();
        for_each_index(shape, |i| expected[lo.at(i)] = a * x[lx.at(i)] + y[ly.at(i)]);
        assert_eq!(out, expected, "shape {shape:?}, layouts {lx:?} {ly:?} {lo:?}");
    }
}

#[test]
fn a_transposed_view_is_read_through_its_strides() {
    // x is column-major (LayoutLeft): x(i, j) is x[i + 2 j].
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let y = [0.0f32; 6];
    let mut out = [0.0f32; 6];
    let xv = HostMdspan::<f32, 2, LayoutLeft>::from_slice(&x, [2, 3]).unwrap();
    let yv = HostMdspan::<f32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&y, [2, 3], [3, 1], 0).unwrap();
    let mut ov = HostMdspanMut::<f32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [2, 3], [3, 1], 0).unwrap();
    // SAFETY: guarded by the extents.
    unsafe { axpy2.launch(Cpu, LaunchConfig::for_extent_2d([2, 3], [2, 2]).unwrap(), 1.0f32, &xv, &yv, &mut ov) }
        .unwrap();
    assert_eq!(out, [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
}

#[test]
fn three_dimensional_and_zero_dimensional_views() {
    let mut rng = Rng::new(11);
    for _ in 0..20 {
        let shape = random_extents::<3>(&mut rng, 6, true);
        let (lx, lo) = (layout(&mut rng, shape, true), layout(&mut rng, shape, false));
        let x: Vec<i32> = (0..lx.len).map(|k| k as i32 * 3 - 7).collect();
        let before: Vec<i32> = (0..lo.len).map(|k| -(k as i32)).collect();
        let mut out = before.clone();
        // Fewer threads than elements: the grid-stride loop covers the rest.
        let config = LaunchConfig::new([2, 1, 1], [5, 1, 1]);
        // SAFETY: the body indexes within the output's extents, which the input shares.
        unsafe { inc3.launch(Cpu, config, &lx.view(&x), &mut lo.view_mut(&mut out)) }.unwrap();
        let mut expected = before;
        for_each_index(shape, |i| expected[lo.at(i)] = x[lx.at(i)] + 1);
        assert_eq!(out, expected, "shape {shape:?}");
    }
    let x = [2.5f64];
    let mut out = [0.0f64; 2];
    let xv = HostMdspan::<f64, 0, LayoutStrideRelaxed>::from_slice_relaxed(&x, [], [], 0).unwrap();
    let mut ov = HostMdspanMut::<f64, 0, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [], [], 1).unwrap();
    // SAFETY: one element each, written by one thread.
    unsafe { twice0.launch(Cpu, LaunchConfig::new([1, 1, 1], [3, 1, 1]), &xv, &mut ov) }.unwrap();
    assert_eq!(out, [0.0, 5.0]);
}

fn sums(
    kernel: impl Fn(&HostMdspan<i64, 1>, &mut HostMdspanMut<i64, 1>, LaunchConfig),
    n: usize,
) -> (Vec<i64>, Vec<i64>) {
    let x: Vec<i64> = (0..n as i64).map(|k| k * k - 3 * k).collect();
    let blocks = n.div_ceil(256);
    let mut out = vec![0i64; blocks];
    let config = LaunchConfig::for_elements(n, 256).unwrap();
    kernel(
        &HostMdspan::from_slice(&x, [n]).unwrap(),
        &mut HostMdspanMut::from_slice(&mut out, [blocks]).unwrap(),
        config,
    );
    let expected = x.chunks(256).map(|c| c.iter().sum()).collect();
    (out, expected)
}

#[test]
fn barriers_and_shared_memory_make_a_block_reduction_correct() {
    let (out, expected) = sums(
        // SAFETY: every access is guarded by the extents; one writer per output element.
        |x, out, config| unsafe { block_sum.launch(Cpu, config, x, out) }.unwrap(),
        5000,
    );
    assert_eq!(out, expected);
    // The same reduction without barriers reads partial sums other threads have not written yet:
    // the CPU keeps CUDA's semantics rather than running threads one after another to the end.
    let (out, expected) = sums(
        // SAFETY: as above (the race is on shared memory of one block, between its fibers, which
        // never run at the same time).
        |x, out, config| unsafe { block_sum_unsynchronised.launch(Cpu, config, x, out) }.unwrap(),
        5000,
    );
    assert_ne!(out, expected);
}

#[test]
fn atomics_are_atomic_across_parallel_blocks() {
    let mut rng = Rng::new(3);
    for _ in 0..10 {
        let shape = [1 + rng.below(40), 1 + rng.below(600)];
        let lx = layout(&mut rng, shape, true);
        let x: Vec<u32> = (0..lx.len).map(|_| rng.below(1000) as u32).collect();
        let mut out = vec![0u32; shape[0]];
        // Blocks of 8×16 threads: many blocks per row, run in parallel, all adding to one total.
        let config = LaunchConfig::for_extent_2d(shape, [1, 16]).unwrap();
        // SAFETY: guarded by the extents; the totals are written with atomics only.
        unsafe {
            row_sum_atomic.launch(
                Cpu,
                config,
                &lx.view(&x),
                &mut HostMdspanMut::<u32, 1>::from_slice(&mut out, [shape[0]]).unwrap(),
            )
        }
        .unwrap();
        let mut expected = vec![0u32; shape[0]];
        for_each_index(shape, |[i, j]| expected[i] += x[lx.at([i, j])]);
        assert_eq!(out, expected, "shape {shape:?}");
    }
}

#[test]
fn dynamic_shared_memory_holds_a_blocks_elements() {
    let mut rng = Rng::new(5);
    for n in [0usize, 1, 31, 32, 33, 100] {
        let lx = layout(&mut rng, [n], false);
        let lo = layout(&mut rng, [n], false);
        let x: Vec<f32> = floats(&mut rng, lx.len);
        let mut out = vec![0.0f32; lo.len];
        let before = out.clone();
        let config = LaunchConfig::for_elements(n, 32).unwrap().with_shared_bytes(32 * 4);
        // SAFETY: guarded by the extent; the tile holds one element per thread.
        unsafe { reverse_blocks.launch(Cpu, config, &lx.view(&x), &mut lo.view_mut(&mut out)) }.unwrap();
        let mut expected = before;
        for i in 0..n {
            let base = i / 32 * 32;
            let len = (n - base).min(32);
            expected[lo.at([i])] = x[lx.at([base + len - 1 - (i - base)])];
        }
        assert_eq!(out, expected, "n = {n}");
    }
    // The generic kernel instantiated for another element type.
    let x: Vec<u8> = (0..40).collect();
    let mut out = vec![0u8; 40];
    let config = LaunchConfig::for_elements(40, 32).unwrap().with_shared_bytes(32);
    // SAFETY: as above.
    unsafe {
        reverse_blocks.launch(
            Cpu,
            config,
            &Layout { extents: [40], strides: [1], offset: 0, len: 40 }.view(&x),
            &mut Layout { extents: [40], strides: [1], offset: 0, len: 40 }.view_mut(&mut out),
        )
    }
    .unwrap();
    let expected: Vec<u8> = (0..32).rev().chain((32..40).rev()).collect();
    assert_eq!(out, expected);
}

#[test]
fn views_in_cpp_mirror_their_rust_types() {
    let bytes = [0u8; 12];
    let mut out = [0i64; 8];
    let left = HostMdspan::<u8, 2, LayoutLeft>::from_slice(&bytes, [3, 4]).unwrap();
    // SAFETY: one thread writes the eight elements of `out`.
    unsafe {
        metadata.launch(
            Cpu,
            LaunchConfig::new([1, 1, 1], [1, 1, 1]),
            &left,
            &mut HostMdspanMut::<i64, 1>::from_slice(&mut out, [8]).unwrap(),
        )
    }
    .unwrap();
    assert_eq!(out, [2, 3, 4, 1, 3, 12, -1, -1]);
    let fixed = HostMdspan::<u8, 2>::from_slice(&bytes, [3, 4])
        .unwrap()
        .with_extents::<(dlspan::Static<3>, dlspan::Dyn)>()
        .unwrap();
    // SAFETY: as above.
    unsafe {
        metadata.launch(
            Cpu,
            LaunchConfig::new([1, 1, 1], [1, 1, 1]),
            &fixed,
            &mut HostMdspanMut::<i64, 1>::from_slice(&mut out, [8]).unwrap(),
        )
    }
    .unwrap();
    assert_eq!(out, [2, 3, 4, 4, 1, 12, 3, -1]);
}

#[test]
fn a_body_from_a_cu_file_and_barrier_votes() {
    let x = [0.0f32, 1.0, 0.0, 2.0, 3.0, 0.0, 0.0];
    let mut out = [0i32; 1];
    // SAFETY: guarded by the extent; thread 0 writes the one output.
    unsafe {
        count_nonzero.launch(
            Cpu,
            LaunchConfig::new([1, 1, 1], [64, 1, 1]),
            &HostMdspan::<f32, 1>::from_slice(&x, [7]).unwrap(),
            &mut HostMdspanMut::<i32, 1>::from_slice(&mut out, [1]).unwrap(),
        )
    }
    .unwrap();
    assert_eq!(out, [3]);
    // The body's lines are the `.cu` file's, beside the Rust file that includes it.
    assert_eq!(count_nonzero::def().body_path(), "tests/raw_kernels_support/count_nonzero.cu");
    let instance = raw_kernels_support::instances().into_iter().find(|i| i.def().name == "count_nonzero").unwrap();
    assert!(instance.source_cpu().contains("#line 1 \"tests/raw_kernels_support/count_nonzero.cu\""));
}

#[test]
fn generic_kernels_convert_f16_and_bf16_as_rust_does() {
    use dlspan::half::{bf16, f16};
    let mut rng = Rng::new(17);
    let bits: Vec<u16> = (0..4000).map(|_| rng.next_u64() as u16).collect();
    let a = 0.7f32;
    let config = LaunchConfig::for_elements(bits.len(), 128).unwrap();
    let n = bits.len();
    let h: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
    let mut out = vec![f16::ZERO; n];
    // SAFETY: guarded by the extent.
    unsafe {
        scale_any.launch(
            Cpu,
            config,
            a,
            &HostMdspan::<f16, 1>::from_slice(&h, [n]).unwrap(),
            &mut HostMdspanMut::<f16, 1>::from_slice(&mut out, [n]).unwrap(),
        )
    }
    .unwrap();
    for (x, y) in h.iter().zip(&out) {
        let expected = f16::from_f32(a * x.to_f32());
        assert!(expected.to_bits() == y.to_bits() || (expected.is_nan() && y.is_nan()), "{x}: {y} != {expected}");
    }
    let b: Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b)).collect();
    let mut out = vec![bf16::ZERO; n];
    // SAFETY: guarded by the extent.
    unsafe {
        scale_any.launch(
            Cpu,
            config,
            a,
            &HostMdspan::<bf16, 1>::from_slice(&b, [n]).unwrap(),
            &mut HostMdspanMut::<bf16, 1>::from_slice(&mut out, [n]).unwrap(),
        )
    }
    .unwrap();
    for (x, y) in b.iter().zip(&out) {
        let expected = bf16::from_f32(a * x.to_f32());
        assert!(expected.to_bits() == y.to_bits() || (expected.is_nan() && y.is_nan()), "{x}: {y} != {expected}");
    }
}

#[test]
fn every_raw_instantiation_of_the_tests_builds_for_the_cpu() {
    for instance in raw_kernels_support::instances() {
        dlspan::kernel::prepare(&instance).unwrap_or_else(|e| panic!("{instance}: {e}"));
    }
}

#[test]
fn bit_intrinsics_and_wrapping_atomics_as_cuda_defines_them() {
    let mut rng = Rng::new(23);
    let x: Vec<u32> = (0..1000).map(|k| if k % 10 == 0 { 0 } else { rng.next_u64() as u32 }).collect();
    let mut bits = vec![0u32; 3000];
    let mut ticket = [0u32; 1];
    // SAFETY: guarded by the extent; `ticket` is written with atomics only.
    unsafe {
        intrinsics.launch(
            Cpu,
            LaunchConfig::for_elements(1000, 64).unwrap(),
            &HostMdspan::<u32, 1>::from_slice(&x, [1000]).unwrap(),
            &mut HostMdspanMut::<u32, 2>::from_slice(&mut bits, [1000, 3]).unwrap(),
            &mut HostMdspanMut::<u32, 1>::from_slice(&mut ticket, [1]).unwrap(),
        )
    }
    .unwrap();
    for (k, &v) in x.iter().enumerate() {
        let ffs = if v == 0 { 0 } else { v.trailing_zeros() + 1 };
        assert_eq!(bits[3 * k..3 * k + 3], [v.count_ones(), ffs, v.reverse_bits()], "{v:#x}");
    }
    // 1000 increments wrapping at 99 (0, 1, .., 99, 0, ..): 1000 mod 100.
    assert_eq!(ticket, [0]);
}

#[test]
fn fast_math_intrinsics_are_the_exact_operations_on_the_cpu() {
    let x: Vec<f32> = (0..300).map(|k| k as f32 / 100.0 - 0.5).collect();
    let mut out = vec![0.0f32; 900];
    // SAFETY: guarded by the extent.
    unsafe {
        fast_math.launch(
            Cpu,
            LaunchConfig::for_elements(300, 64).unwrap(),
            &HostMdspan::<f32, 1>::from_slice(&x, [300]).unwrap(),
            &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [300, 3]).unwrap(),
        )
    }
    .unwrap();
    for (k, &v) in x.iter().enumerate() {
        let expected = [1.0 / v.sqrt(), v.clamp(0.0, 1.0), v.exp()];
        for (a, e) in out[3 * k..3 * k + 3].iter().zip(expected) {
            assert!(a.to_bits() == e.to_bits() || (a.is_nan() && e.is_nan()), "{v}: {a} != {e}");
        }
    }
}

#[test]
fn kernels_without_views_or_parameters_launch() {
    dlspan::kernel! {
        /// Scalars only: nothing to write, but it runs.
        fn scalars_only(n: u32, x: f64) {
            r#"(void)n; (void)x;"#
        }
    }
    dlspan::kernel! {
        fn nothing() {
            r#""#
        }
    }
    // SAFETY: the body accesses no memory.
    unsafe { scalars_only.launch(Cpu, LaunchConfig::new([2, 1, 1], [32, 1, 1]), 3, 1.5) }.unwrap();
    // SAFETY: as above.
    unsafe { nothing.launch(Cpu, LaunchConfig::new([1, 1, 1], [1, 1, 1])) }.unwrap();
}

#[test]
fn invalid_launches_are_typed_errors() {
    let x = [0i64; 4];
    let mut out = [0i64; 1];
    let xv = HostMdspan::<i64, 1>::from_slice(&x, [4]).unwrap();
    let mut ov = HostMdspanMut::<i64, 1>::from_slice(&mut out, [1]).unwrap();
    for config in [
        LaunchConfig::new([1, 1, 1], [0, 1, 1]),
        LaunchConfig::new([1, 1, 1], [1025, 1, 1]),
        LaunchConfig::new([1, 1, 1], [1, 1, 65]),
        LaunchConfig::new([1, 65536, 1], [1, 1, 1]),
        LaunchConfig::new([1, 1, 1], [256, 1, 1]).with_shared_bytes(64 * 1024),
    ] {
        // SAFETY: refused before it runs.
        let error = unsafe { block_sum.launch(Cpu, config, &xv, &mut ov) }.unwrap_err();
        assert!(matches!(error, KernelError::InvalidLaunch { .. }), "{config:?}: {error}");
    }
    assert!(matches!(LaunchConfig::for_elements(10, 0), Err(KernelError::InvalidLaunch { .. })));
    assert!(matches!(LaunchConfig::for_extent_2d([70000 * 64, 1], [1, 1]), Err(KernelError::InvalidLaunch { .. })));
    // A grid without blocks runs nothing.
    // SAFETY: nothing runs.
    unsafe { block_sum.launch(Cpu, LaunchConfig::for_elements(0, 256).unwrap(), &xv, &mut ov) }.unwrap();
}

#[test]
fn arguments_above_the_limit_are_refused() {
    use dlspan::kernel::{MAX_ARGUMENT_BYTES, RawDef, RawInstance, RawKind, RawParam, TypeInfo};
    // 520 `f64` scalars: 4160 bytes, above CUDA's 4096 bytes of kernel parameters.
    static PARAMS: [RawParam; 520] = [RawParam { name: "a", kind: RawKind::Scalar, rank: 0, ty: 0 }; 520];
    static DEF: RawDef = RawDef {
        name: "wide",
        file: file!(),
        line: line!(),
        params: &PARAMS,
        types: &[None],
        source: "",
        body_file: file!(),
        body_line: line!(),
    };
    static TYPES: [TypeInfo; 1] = [TypeInfo::of::<f64>()];
    let instance = RawInstance::new(&DEF, &TYPES, &[]);
    let expected = KernelError::ArgumentsTooLarge { size: 4160, max: MAX_ARGUMENT_BYTES };
    assert_eq!(instance.argument_layout().unwrap_err(), expected);
    assert_eq!(dlspan::kernel::prepare(&instance).unwrap_err(), expected);
}

#[test]
fn a_missing_compiler_is_a_typed_error_naming_what_to_install() {
    // The compiler is chosen once per process: this test runs itself again in a process that finds
    // none (no `c++` or `g++` on an empty PATH, `$CXX` naming nothing).
    if std::env::var_os("DLSPAN_TEST_NO_COMPILER").is_some() {
        let mut out = [0.0f64; 1];
        // SAFETY: it is not built, so it does not run.
        let error = unsafe {
            twice0.launch(
                Cpu,
                LaunchConfig::new([1, 1, 1], [1, 1, 1]),
                &HostMdspan::<f64, 0, LayoutStrideRelaxed>::from_slice_relaxed(&[1.0], [], [], 0).unwrap(),
                &mut HostMdspanMut::<f64, 0, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [], [], 0).unwrap(),
            )
        }
        .unwrap_err();
        let KernelError::CompilerMissing { tried } = &error else { panic!("{error}") };
        assert_eq!(tried, "/nonexistent/c++, c++, g++");
        assert!(error.to_string().contains("install g++ or clang++"), "{error}");
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_missing_compiler_is_a_typed_error_naming_what_to_install", "--nocapture"])
        .env("DLSPAN_TEST_NO_COMPILER", "1")
        .env("PATH", "")
        .env("CXX", "/nonexistent/c++")
        .status()
        .unwrap();
    assert!(status.success(), "the run without a compiler failed");
}

#[test]
fn built_libraries_are_cached_on_disk_across_processes() {
    if std::env::var_os("DLSPAN_TEST_CACHE_CHILD").is_some() {
        let mut out = [0.0f64; 1];
        // SAFETY: one element each, written by one thread.
        unsafe {
            twice0.launch(
                Cpu,
                LaunchConfig::new([1, 1, 1], [1, 1, 1]),
                &HostMdspan::<f64, 0, LayoutStrideRelaxed>::from_slice_relaxed(&[1.5], [], [], 0).unwrap(),
                &mut HostMdspanMut::<f64, 0, LayoutStrideRelaxed>::from_slice_relaxed(&mut out, [], [], 0).unwrap(),
            )
        }
        .unwrap();
        assert_eq!(out, [3.0]);
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("raw-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = || {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "built_libraries_are_cached_on_disk_across_processes", "--nocapture"])
            .env("DLSPAN_TEST_CACHE_CHILD", "1")
            .env("DLSPAN_CACHE_DIR", &dir)
            .status()
            .unwrap();
        assert!(status.success());
        let mut files: Vec<_> = std::fs::read_dir(dir.join("cpu")).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files
    };
    let first = run();
    let extensions: Vec<_> = first.iter().map(|f| f.extension().and_then(|e| e.to_str())).collect();
    assert_eq!(extensions, [Some("key"), Some("so")], "a library and its key, no leftover source or temporary file");
    let modified = std::fs::metadata(&first[1]).unwrap().modified().unwrap();
    // A second process loads the same file: not built again.
    assert_eq!(run(), first);
    assert_eq!(std::fs::metadata(&first[1]).unwrap().modified().unwrap(), modified);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_body_the_compiler_refuses_reports_the_kernels_lines() {
    dlspan::kernel! {
        fn broken(out: &mut [f32; 1]) {
            r#"
            out(0) = undefined_name;
            "#
        }
    }
    // SAFETY: it does not compile, so it does not run.
    let (kernel, log) =
        compile_failure(|out| unsafe { broken.launch(Cpu, LaunchConfig::new([1, 1, 1], [1, 1, 1]), out) });
    assert!(kernel.starts_with("broken<float32>"), "{kernel}");
    assert!(log.contains("undefined_name"), "{log}");
    // The body's lines are this file's, quoted from the body itself.
    let line = include_str!("raw_kernels.rs").lines().position(|l| l.ends_with("= undefined_name;")).unwrap() + 1;
    assert!(log.contains(&format!("raw_kernels.rs:{line}:")), "line {line}: {log}");
    assert!(log.contains(&format!("    {line} | out(0) = undefined_name;")), "the line's text: {log}");
    assert!(!log.contains("DECOY"), "another file's text: {log}");
    // Run from a directory holding another file of the body's path, the log still quotes the body
    // (the compiler once read the file of that name in the process's directory).
    if std::env::var_os("DLSPAN_TEST_DECOY").is_none() && std::env::var_os("DLSPAN_TEST_IN_PROCESS").is_none() {
        let decoy = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("decoy-{}", std::process::id()));
        std::fs::create_dir_all(decoy.join("tests")).unwrap();
        std::fs::write(decoy.join("tests/raw_kernels.rs"), "DECOY\n".repeat(line + 10)).unwrap();
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "a_body_the_compiler_refuses_reports_the_kernels_lines", "--test-threads=1"])
            .current_dir(&decoy)
            .env("DLSPAN_TEST_DECOY", "1")
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&decoy);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
    }
}

#[test]
fn notes_into_the_shipped_header_name_it() {
    // `dl::to_float` of an int is ambiguous: the compiler's notes list the header's candidates.
    dlspan::kernel! {
        fn ambiguous(out: &mut [f32; 1]) {
            r#"
            out(0) = dl::to_float(1);
            "#
        }
    }
    // SAFETY: it does not compile, so it does not run.
    let (_, log) =
        compile_failure(|out| unsafe { ambiguous.launch(Cpu, LaunchConfig::new([1, 1, 1], [1, 1, 1]), out) });
    assert!(log.contains("dlspan.cuh:"), "{log}");
    assert!(!log.contains(".cpp:"), "notes name the deleted temporary file: {log}");
}

/// The kernel name and log of a launch over one `f32` that must fail to compile.
fn compile_failure(launch: impl FnOnce(&mut HostMdspanMut<'_, f32, 1>) -> Result<(), KernelError>) -> (String, String) {
    let mut out = [0.0f32; 1];
    let error = launch(&mut HostMdspanMut::<f32, 1>::from_slice(&mut out, [1]).unwrap()).unwrap_err();
    let KernelError::Compile { kernel, log } = error else { panic!("{error}") };
    (kernel, log)
}
