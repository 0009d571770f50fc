//! The NVRTC tier: every kernel module (operation × built-in element type, and casts between
//! every pair of scalar types; each module holding every shape class and both index widths), and
//! every element-wise kernel of the tests and examples for every instantiation they launch,
//! compiled to PTX through the runtime's own code path, for the H100's virtual architecture.
//! Needs NVRTC (`scripts/test.sh` installs the `nvidia-cuda-nvrtc` wheel), not a GPU. Writes the
//! matrix compiled to `target/tmp/nvrtc-matrix.txt`, which the test command prints.
#![cfg(feature = "cuda")]

#[macro_use]
mod cuda_support;
#[macro_use]
mod kernels_support;
/// The example `elementwise`, whose kernels this tier compiles too.
#[allow(dead_code, unreachable_pub)]
#[path = "../examples/elementwise.rs"]
mod example;
/// The example `raw_kernels`, whose kernels this tier compiles too.
#[allow(dead_code, unreachable_pub)]
#[path = "../examples/raw_kernels.rs"]
mod raw_example;
mod raw_kernels_support;

use cuda_support::CAST_SCALARS;
use dlspan::cuda::kernel::{ElementType, IndexWidth, ModuleKey, compile_ptx};
use dlspan::cuda::{CudaError, KernelKind};
use dlspan::dtype::*;
use dlspan::half::{bf16, f16};
use dlspan::num_complex::Complex;
use std::sync::Mutex;

macro_rules! element_types {
    ($($t:ty),* $(,)?) => { vec![$(ElementType::of::<$t>()),*] };
}

/// Every built-in element type.
fn builtin_types() -> Vec<ElementType> {
    element_types![
        bool,
        i8,
        i16,
        i32,
        i64,
        i128,
        u8,
        u16,
        u32,
        u64,
        u128,
        f16,
        bf16,
        f32,
        f64,
        Complex<f16>,
        Complex<f32>,
        Complex<f64>,
        Float8E3m4,
        Float8E4m3,
        Float8E4m3b11fnuz,
        Float8E4m3fn,
        Float8E4m3fnuz,
        Float8E5m2,
        Float8E5m2fnuz,
        Float8E8m0fnu,
        Float6E2m3fn,
        Float6E3m2fn,
        Float4E2m1fn,
        Float4E2m1fnX2,
        Float4E2m1fnX4,
        Float6E2m3fnX4,
        Float6E3m2fnX4,
        I8x2,
        U8x2,
        I16x2,
        U16x2,
        I32x2,
        U32x2,
        I64x2,
        U64x2,
        F16x2,
        Bf16x2,
        F32x2,
        F64x2,
        Float8E3m4X2,
        Float8E4m3X2,
        Float8E4m3b11fnuzX2,
        Float8E4m3fnX2,
        Float8E4m3fnuzX2,
        Float8E5m2X2,
        Float8E5m2fnuzX2,
        Float8E8m0fnuX2,
        I8x4,
        U8x4,
        I16x4,
        U16x4,
        I32x4,
        U32x4,
        I64x4,
        U64x4,
        F16x4,
        Bf16x4,
        F32x4,
        F64x4,
        Float8E3m4X4,
        Float8E4m3X4,
        Float8E4m3b11fnuzX4,
        Float8E4m3fnX4,
        Float8E4m3fnuzX4,
        Float8E5m2X4,
        Float8E5m2fnuzX4,
        Float8E8m0fnuX4,
    ]
}

/// A user's derived types: their modules come from the data type alone.
#[derive(Clone, Copy, dlspan::DlElement)]
#[repr(transparent)]
struct Meters(f32);

#[derive(Clone, Copy, dlspan::DlElement)]
#[repr(C)]
struct Rgba {
    r: u8,
    g: u8,
    b: u8,
    a: u8,
}

/// Compiles every module on all cores (NVRTC is thread-safe), checking that each kernel of each
/// shape and index width is in the PTX; a failure keeps NVRTC's log. Returns the kernels of each
/// module.
fn compile_all(keys: &[ModuleKey]) -> Vec<usize> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = Mutex::new(0..keys.len());
    let kernels = Mutex::new(vec![0; keys.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let Some(i) = next.lock().unwrap().next() else { break };
                    let key = &keys[i];
                    let ptx = compile_ptx(key, "compute_90")
                        .unwrap_or_else(|e| panic!("{} {} <- {}: {e}", key.name(), key.out(), key.input()));
                    let mut count = 0;
                    for shape in key.shapes() {
                        for index in [IndexWidth::I32, IndexWidth::I64] {
                            let entry = key.entry(shape, index);
                            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry} missing from the PTX");
                            count += 1;
                        }
                    }
                    kernels.lock().unwrap()[i] = count;
                }
            });
        }
    });
    kernels.into_inner().unwrap()
}

/// One row of the matrix: the kernels compiled per operation (a range over a group of types),
/// and for scalars how many target types their cast kernels reach.
fn row(name: &str, types: &[ElementType], keys: &[ModuleKey], kernels: &[usize]) -> String {
    let mut cells = Vec::new();
    let kinds = [KernelKind::Copy, KernelKind::Fill, KernelKind::Add, KernelKind::Mul, KernelKind::Scale];
    for kind in kinds.into_iter().chain([KernelKind::Axpy, KernelKind::Sum]) {
        // A sum's module is its input type's (the output is the accumulator).
        let ty = |key: &ModuleKey| if kind == KernelKind::Sum { key.input() } else { key.out() };
        let counts: Vec<usize> = keys
            .iter()
            .zip(kernels)
            .filter(|(key, _)| key.kind() == Some(kind) && types.contains(&ty(key)))
            .map(|(_, &n)| n)
            .collect();
        let (low, high) = (counts.iter().min(), counts.iter().max());
        cells.push(match (low, high) {
            (Some(low), Some(high)) if low == high && counts.len() == types.len() => format!("{low}"),
            (Some(low), Some(high)) if counts.len() == types.len() => format!("{low}-{high}"),
            (Some(_), Some(_)) => format!("{}/{}", counts.len(), types.len()),
            _ => "-".to_owned(),
        });
    }
    let casts = keys.iter().filter(|key| key.kind() == Some(KernelKind::Cast) && types.contains(&key.input())).count();
    cells.push(if casts == 0 { "-".to_owned() } else { format!("{casts}") });
    format!("{name:<24} {}", cells.iter().map(|c| format!("{c:>7}")).collect::<Vec<_>>().join(" "))
}

#[test]
fn every_kernel_and_element_type_compiles_to_ptx() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let started = std::time::Instant::now();
    let mut types = builtin_types();
    // `Meters` is `float32` to the kernels (same data type, size and alignment): one module.
    assert_eq!(ElementType::of::<Meters>(), ElementType::of::<f32>());
    types.extend(element_types![Rgba]);
    let mut keys = Vec::new();
    for &t in &types {
        let kinds = [KernelKind::Copy, KernelKind::Fill, KernelKind::Add, KernelKind::Mul, KernelKind::Scale];
        for kind in kinds.into_iter().chain([KernelKind::Axpy]) {
            match ModuleKey::from_types(kind, t, t) {
                Ok(key) => keys.push(key),
                // Arithmetic only on integers and IEEE-like floats.
                Err(CudaError::Unsupported { .. }) => {
                    assert!(
                        matches!(kind, KernelKind::Add | KernelKind::Mul | KernelKind::Scale | KernelKind::Axpy),
                        "{kind} refused for {t}"
                    );
                }
                Err(other) => panic!("{kind} for {t}: {other}"),
            }
        }
        if t.scalar_type().is_none() {
            assert!(matches!(ModuleKey::from_types(KernelKind::Cast, t, t), Err(CudaError::Unsupported { .. })));
        }
    }
    // Copy and fill for every type; arithmetic for every integer and IEEE-like float.
    let arithmetic = keys.iter().filter(|k| k.kind() == Some(KernelKind::Add)).count();
    assert_eq!(arithmetic, 14, "i8..i128, u8..u128, f16, bf16, f32, f64");
    assert_eq!(keys.iter().filter(|k| k.kind() == Some(KernelKind::Mul)).count(), 14);
    // Sums of every scalar type into its accumulator (the accumulators' own modules are the
    // second pass); none for the other types.
    let mut sums = 0;
    for_each_cast_scalar!(T => {
        keys.push(ModuleKey::new::<<T as Numeric>::Acc, T>(KernelKind::Sum).expect("a sum of a scalar"));
        sums += 1;
    });
    assert_eq!(sums, CAST_SCALARS);
    for &t in &types {
        if t.scalar_type().is_none() {
            let acc = ElementType::of::<f32>();
            assert!(matches!(ModuleKey::from_types(KernelKind::Sum, acc, t), Err(CudaError::Unsupported { .. })));
        }
    }
    assert!(matches!(ModuleKey::new::<bool, bool>(KernelKind::Sum), Err(CudaError::Unsupported { .. })));
    // Casts between every pair of scalar types, each module holding every shape and rank class.
    let mut scalars = Vec::new();
    for_each_cast_scalar!(T => scalars.push(ElementType::of::<T>()));
    for &input in &scalars {
        for &out in &scalars {
            keys.push(ModuleKey::from_types(KernelKind::Cast, out, input).expect("a cast between scalars"));
        }
    }
    assert_eq!(scalars.len(), CAST_SCALARS);

    let kernels = compile_all(&keys);
    let elapsed = started.elapsed().as_secs();

    // The matrix, one row per scalar type and per family of the others.
    let mut table = format!(
        "NVRTC tier (compute_90): {} modules, {} kernels, compiled in {elapsed} s. A cell is the kernels \
         (shape classes x index widths) of a module; `cast to`, the scalar types a type's cast modules reach.\n",
        keys.len(),
        kernels.iter().sum::<usize>()
    );
    table += &format!(
        "{:<24} {}\n",
        "element type",
        ["copy", "fill", "add", "mul", "scale", "axpy", "sum", "cast to"].map(|c| format!("{c:>7}")).join(" ")
    );
    for &t in &scalars {
        table += &row(&t.to_string(), &[t], &keys, &kernels);
        table.push('\n');
    }
    let others: Vec<ElementType> = types.iter().copied().filter(|t| !scalars.contains(t)).collect();
    // Each other type in the first family it belongs to.
    type Member = fn(&ElementType) -> bool;
    let families: [(&str, Member); 4] = [
        ("derived (Rgba)", |t| *t == ElementType::of::<Rgba>()),
        ("FP6/FP4, padded/packed", |t| t.dtype.bits < 8),
        ("complex", |t| t.dtype.type_code() == dlspan::ffi::DLDataTypeCode::kDLComplex),
        ("vectors", |t| t.dtype.lanes > 1),
    ];
    let family = |t: &ElementType| families.iter().position(|(_, member)| member(t));
    assert!(others.iter().all(|t| family(t).is_some()), "every type is in the matrix");
    for (i, (name, _)) in families.iter().enumerate() {
        let group: Vec<ElementType> = others.iter().copied().filter(|t| family(t) == Some(i)).collect();
        table += &row(&format!("{name} ({})", group.len()), &group, &keys, &kernels);
        table.push('\n');
    }
    print!("{table}");
    // The test command prints the matrix from this file (test output is captured).
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvrtc-matrix.txt");
    std::fs::write(&path, &table).expect("write the matrix");
}

/// The element-wise kernels of the tests and of the example `elementwise`, every instantiation
/// they launch, each module holding every shape and both index widths; the list is written to
/// `target/tmp/nvrtc-elementwise.txt`, which the test command prints after the matrix.
#[test]
fn every_elementwise_kernel_of_the_tests_and_examples_compiles_to_ptx() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let mut instances = kernels_support::instances();
    instances.extend([
        example::blend::instance::<f16>(),
        example::blend::instance::<bf16>(),
        example::blend::instance::<f32>(),
        example::over::instance(),
    ]);
    let keys: Vec<ModuleKey> = instances.iter().map(|&i| ModuleKey::elementwise(i).expect("a module")).collect();
    let kernels = compile_all(&keys);
    let mut list = format!(
        "NVRTC tier (compute_90): {} element-wise instantiations of the tests and examples, {} kernels:\n",
        keys.len(),
        kernels.iter().sum::<usize>()
    );
    for (instance, count) in instances.iter().zip(&kernels) {
        list += &format!("  {:<40} {count:>3} kernels ({})\n", instance.to_string(), instance.def().file);
    }
    print!("{list}");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvrtc-elementwise.txt");
    std::fs::write(&path, &list).expect("write the list");
}

/// The raw kernels (`kernel!`) of the tests and of the example `raw_kernels`, every instantiation
/// they launch (element types and view types); the list is written to
/// `target/tmp/nvrtc-raw.txt`, which the test command prints after the element-wise list.
#[test]
fn every_raw_kernel_of_the_tests_and_examples_compiles_to_ptx() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    use dlspan::kernel::{RawInstance, ViewType};
    use dlspan::{HostMdspan, HostMdspanMut, LayoutStride};
    use raw_example::{Rgba, flip, row_sum, stencil};
    type Flip<'a, T> = HostMdspan<'a, T, 2>;
    type FlipOut<'a, T> = HostMdspanMut<'a, T, 2>;
    const STENCIL: &[ViewType] =
        &[ViewType::of::<HostMdspan<f32, 2, LayoutStride>, 2>(), ViewType::of::<HostMdspanMut<f32, 2>, 2>()];
    const ROWS: &[ViewType] =
        &[ViewType::of::<HostMdspan<f32, 2, LayoutStride>, 2>(), ViewType::of::<HostMdspanMut<f32, 1>, 1>()];
    const F32: &[ViewType] = &[ViewType::of::<Flip<f32>, 2>(), ViewType::of::<FlipOut<f32>, 2>()];
    const F16: &[ViewType] = &[ViewType::of::<Flip<f16>, 2>(), ViewType::of::<FlipOut<f16>, 2>()];
    const BF16: &[ViewType] = &[ViewType::of::<Flip<bf16>, 2>(), ViewType::of::<FlipOut<bf16>, 2>()];
    const RGBA: &[ViewType] = &[ViewType::of::<Flip<Rgba>, 2>(), ViewType::of::<FlipOut<Rgba>, 2>()];
    let mut instances: Vec<RawInstance> = raw_kernels_support::instances();
    instances.extend([
        stencil::instance(STENCIL),
        row_sum::instance(ROWS),
        flip::instance::<f32>(F32),
        flip::instance::<f16>(F16),
        flip::instance::<bf16>(BF16),
        flip::instance::<Rgba>(RGBA),
    ]);
    let mut list =
        format!("NVRTC tier (compute_90): {} raw kernel instantiations of the tests and examples:\n", instances.len());
    for instance in &instances {
        let key = ModuleKey::raw(*instance).expect("a module");
        let ptx = compile_ptx(&key, "compute_90").unwrap_or_else(|e| panic!("{instance}: {e}"));
        assert!(ptx.contains(&format!(".entry {}", instance.entry())), "{instance}");
        let views: Vec<String> = instance.views().iter().map(|v| v.cpp("T")).collect();
        list += &format!("  {:<28} {} ({})\n", instance.to_string(), views.join(", "), instance.def().file);
    }
    print!("{list}");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvrtc-raw.txt");
    std::fs::write(&path, &list).expect("write the list");
}

/// NVRTC's errors in a raw kernel's body are shown at the body's own lines, with their text, under
/// the kernel's declaration; NVRTC's log stays in `nvrtc_log`.
#[test]
fn raw_kernel_compile_errors_are_reported_at_the_bodys_lines() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    use dlspan::HostMdspanMut;
    use dlspan::kernel::ViewType;
    dlspan::kernel! {
        fn broken_raw(out: &mut [f32; 1]) {
            r#"
            out(0) = undefined_raw_name;
            "#
        }
    }
    const VIEWS: &[ViewType] = &[ViewType::of::<HostMdspanMut<f32, 1>, 1>()];
    let key = ModuleKey::raw(broken_raw::instance(VIEWS)).expect("a module");
    let Err(CudaError::Compile { kernel, log, nvrtc_log, .. }) = compile_ptx(&key, "compute_90") else {
        panic!("the broken raw kernel compiled");
    };
    let source = include_str!("cuda_nvrtc.rs");
    let declared = source.lines().position(|l| l.trim() == "dlspan::kernel! {").map(|k| k + 1);
    let line = source.lines().position(|l| l.trim() == "out(0) = undefined_raw_name;").unwrap() + 1;
    assert!(kernel.starts_with("broken_raw<float32> (tests/cuda_nvrtc.rs:"), "{kernel}");
    assert!(log.starts_with("raw kernel `broken_raw` declared at tests/cuda_nvrtc.rs:"), "{log}");
    assert!(declared.is_some(), "the declaration's line");
    assert!(
        log.contains(&format!("tests/cuda_nvrtc.rs:{line}: error: identifier \"undefined_raw_name\" is undefined")),
        "{log}"
    );
    assert!(log.contains(&format!("{line} | out(0) = undefined_raw_name;")), "{log}");
    assert!(nvrtc_log.contains("undefined_raw_name") && nvrtc_log.contains(&format!("({line})")), "{nvrtc_log}");
}

/// The shipped device header serves users' own CUDA files: a kernel of their own that includes
/// `dlspan.cuh` from `kernel::INCLUDE_DIR` and indexes `dl::view`s compiles with NVRTC; the same
/// file builds for the CPU with the host compiler (`-DDLSPAN_CPU`).
#[test]
fn users_own_cuda_files_include_the_shipped_header() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    let source = r#"
#include "dlspan.cuh"
typedef dl::view<const float, 2, dl::layout_stride, dl::dyn, dl::dyn> In;
typedef dl::view<float, 2, dl::layout_right, dl::dyn, 4> Out;
extern "C" __global__ void mine(dl::args<80> a) {
  In x = dl::load_view<In>(a.b);
  Out y = dl::load_view<Out>(a.b + 40);
  dl::index_t i = blockIdx.y, j = threadIdx.x;
  if (i < y.extent(0) && j < y.extent(1)) y(i, j) = dl::to_float(dl::from_float<dl_f16>(x(i, j)));
}
"#;
    let options = cudarc::nvrtc::CompileOptions {
        options: vec!["--std=c++17".to_owned(), "--fmad=false".to_owned(), "--gpu-architecture=compute_90".to_owned()],
        include_paths: vec![dlspan::kernel::INCLUDE_DIR.to_owned()],
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(source, options).expect("the header compiles for the GPU");
    assert!(ptx.to_src().contains(".entry mine"));
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("users_own_file.cpp");
    std::fs::write(&file, source).unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    let output = std::process::Command::new(cxx)
        .args(["-std=c++17", "-DDLSPAN_CPU", "-fsyntax-only", "-I", dlspan::kernel::INCLUDE_DIR])
        .arg(&file)
        .output()
        .expect("a host C++ compiler");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// A kernel the GPU compiler refuses is reported at the kernel's own Rust lines, with their text,
/// and the file and line where it is declared; not as a log of generated code. (A kernel that rustc
/// compiles compiles for the GPU; this one is made by hand to fail.)
#[test]
fn compile_errors_are_reported_at_the_kernels_rust_lines() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    use dlspan::kernel::{ElementwiseDef, Instance, Param, ParamKind, TypeInfo};
    static BROKEN: ElementwiseDef = ElementwiseDef {
        name: "broken",
        file: "src/shaders.rs",
        line: 40,
        params: &[Param { name: "out", kind: ParamKind::Write { read: false }, ty: 0 }],
        types: 1,
        cast_targets: &[],
        fields: false,
        source: "#line 41 \"src/shaders.rs\"\nDL_DEV void dl_body(dl_t0& v_out) {\n#line 42 \"src/shaders.rs\"\n  dl_assign(v_out, v_undefined);\n}\n",
        lines: &[(41, "fn broken(out: &mut f32) {"), (42, "*out = undefined;")],
    };
    static TYPES: [TypeInfo; 1] = [TypeInfo::of::<f32>()];
    let key = ModuleKey::elementwise(Instance::new(&BROKEN, &TYPES)).expect("a module");
    let Err(CudaError::Compile { kernel, log, nvrtc_log, .. }) = compile_ptx(&key, "compute_90") else {
        panic!("the broken kernel compiled");
    };
    assert_eq!(kernel, "broken<float32> (src/shaders.rs:40)");
    assert!(
        log.starts_with(
            "element-wise kernel `broken` declared at src/shaders.rs:40 did not compile for broken<float32>:"
        ),
        "{log}"
    );
    assert!(log.contains("src/shaders.rs:42: error: identifier \"v_undefined\" is undefined"), "{log}");
    assert!(log.contains("42 | *out = undefined;"), "{log}");
    assert!(!log.contains("dl_params") && !log.contains("generated code"), "{log}");
    // NVRTC's own log stays reachable, as NVRTC wrote it.
    assert!(nvrtc_log.contains("src/shaders.rs(42): error: identifier \"v_undefined\" is undefined"), "{nvrtc_log}");
    println!("{log}");
}

/// The public doors a user's test calls, with NVRTC and no GPU: `cuda::elementwise_ptx` and
/// `cuda::raw_ptx` compile an instantiation as a launch would, or report NVRTC's error.
#[test]
fn users_check_their_kernels_compile_for_the_gpu_without_one() {
    if !cuda_support::nvrtc_or_skip() {
        return;
    }
    use dlspan::kernel::ViewType;
    use dlspan::{DeviceMdspan, DeviceMdspanMut};
    dlspan::elementwise! {
        fn halve<T: dlspan::kernel::Scalar>(x: &T, y: &mut T) { *y = *x / (2 as T) }
    }
    for ptx in [
        dlspan::cuda::elementwise_ptx(halve::instance::<f32>(), "compute_90"),
        dlspan::cuda::elementwise_ptx(halve::instance::<f16>(), "compute_80"),
    ] {
        assert!(ptx.expect("compiles").contains(".entry dlspan_halve_"));
    }
    dlspan::kernel! {
        fn copy_rows<T>(x: &[T; 2], out: &mut [T; 2]) {
            r#"
            const dl::index_t i = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
            if (i < x.extent(0)) for (dl::index_t j = 0; j < x.extent(1); ++j) out(i, j) = x(i, j);
            "#
        }
    }
    const VIEWS: &[ViewType] =
        &[ViewType::of::<DeviceMdspan<'static, f64, 2>, 2>(), ViewType::of::<DeviceMdspanMut<'static, f64, 2>, 2>()];
    assert!(
        dlspan::cuda::raw_ptx(copy_rows::instance::<f64>(VIEWS), "compute_90").expect("compiles").contains(".entry")
    );
    dlspan::kernel! {
        fn bad_rows(out: &mut [f32; 1]) {
            r#"
            out(0) = "not a number";
            "#
        }
    }
    const ONE: &[ViewType] = &[ViewType::of::<DeviceMdspanMut<'static, f32, 1>, 1>()];
    let Err(CudaError::Compile { log, .. }) = dlspan::cuda::raw_ptx(bad_rows::instance(ONE), "compute_90") else {
        panic!("a string assigned to a float compiled");
    };
    assert!(log.contains("tests/cuda_nvrtc.rs:") && log.contains("out(0) = \"not a number\";"), "{log}");
}
