//! The handlers against a fake XLA: call frames and an API table built by hand, as XLA lays them
//! out (`c_api.h`), so that every check of the frame — and every lie a frame could tell — is
//! tested without jaxlib (the Python tier runs them under real JAX).

use super::elementwise::{Kernel, cpu_handler};
use super::ffi;
use crate::kernel::Float;
use core::ffi::{c_char, c_void};

crate::elementwise! {
    /// `a * x + b`, `b` broadcast, `a` an attribute.
    #[jax]
    fn axpb<T: Float>(x: &T, b: &T, a: T, out: &mut T) {
        *out = a * *x + *b;
    }
}

crate::elementwise! {
    /// `x + n` over every dtype, `n` an integer attribute, and a bool one.
    #[jax]
    fn shift<T: crate::kernel::Scalar>(x: &T, n: i32, twice: bool, out: &mut T) {
        if twice {
            *out = *x + (n as T) + (n as T);
        } else {
            *out = *x + (n as T);
        }
    }
}

crate::elementwise! {
    /// Two results.
    #[jax(strict)]
    fn pair(x: &f32, y: &f32, sum: &mut f32, product: &mut f32) {
        *sum = *x + *y;
        *product = *x * *y;
    }
}

/// An error of the fake XLA: its code and message.
#[derive(Debug)]
struct FakeError {
    code: i32,
    message: std::ffi::CString,
}

unsafe extern "C" fn error_create(args: *mut ffi::ErrorCreateArgs) -> *mut ffi::XlaFfiError {
    // SAFETY: the handler's arguments, valid for the call.
    let args = unsafe { &*args };
    // SAFETY: the handler's message, NUL-terminated.
    let message = unsafe { core::ffi::CStr::from_ptr(args.message) }.to_owned();
    let code = args.errc;
    Box::into_raw(Box::new(FakeError { code, message })).cast()
}

unsafe extern "C" fn error_get_message(args: *mut ffi::ErrorGetMessageArgs) {
    // SAFETY: the caller's arguments, valid for the call.
    let args = unsafe { &mut *args };
    // SAFETY: an error `error_create` made.
    let error = unsafe { &*args.error.cast::<FakeError>() };
    args.message = error.message.as_ptr();
}

unsafe extern "C" fn error_destroy(args: *mut ffi::ErrorDestroyArgs) {
    // SAFETY: the caller's arguments, valid for the call.
    let error = unsafe { (*args).error };
    // SAFETY: an error `error_create` made, destroyed once.
    drop(unsafe { Box::from_raw(error.cast::<FakeError>()) });
}

fn api(major: i32) -> ffi::Api {
    ffi::Api {
        struct_size: ffi::struct_size!(ffi::Api, stream_get),
        extension_start: core::ptr::null_mut(),
        api_version: ffi::ApiVersion {
            struct_size: ffi::struct_size!(ffi::ApiVersion, minor_version),
            extension_start: core::ptr::null_mut(),
            major_version: major,
            minor_version: 3,
        },
        internal_api: core::ptr::null(),
        error_create: Some(error_create),
        error_get_message: Some(error_get_message),
        error_destroy: Some(error_destroy),
        handler_register: core::ptr::null(),
        stream_get: None,
    }
}

/// A buffer of the fake call: XLA dtype, extents, data.
struct Array {
    dtype: i32,
    dims: Vec<i64>,
    data: *mut c_void,
}

fn f32s(dims: &[i64], values: &mut [f32]) -> Array {
    Array { dtype: 11, dims: dims.to_vec(), data: values.as_mut_ptr().cast() }
}

/// A scalar attribute of the fake call.
struct Attr {
    name: &'static str,
    dtype: i32,
    value: Box<[u8; 8]>,
}

fn attr_f64(name: &'static str, v: f64) -> Attr {
    Attr { name, dtype: 12, value: Box::new(v.to_ne_bytes()) }
}

fn attr_i64(name: &'static str, v: i64) -> Attr {
    Attr { name, dtype: 5, value: Box::new(v.to_ne_bytes()) }
}

fn attr_bool(name: &'static str, v: bool) -> Attr {
    let mut bytes = [0u8; 8];
    bytes[0] = u8::from(v);
    Attr { name, dtype: 1, value: Box::new(bytes) }
}

/// Runs `handler` on a call frame of `args`, `rets` and `attrs` (attributes sorted by name, as
/// XLA sorts them); returns the error's code and message, if any.
fn call(
    handler: ffi::Handler,
    api: &ffi::Api,
    args: &[Array],
    rets: &[Array],
    attrs: &mut [Attr],
    edit: impl FnOnce(&mut ffi::XlaFfiCallFrame),
) -> Option<(i32, String)> {
    attrs.sort_by_key(|a| a.name);
    let buffers = |arrays: &[Array], dims: &mut Vec<Vec<i64>>| -> Vec<ffi::Buffer> {
        dims.extend(arrays.iter().map(|a| a.dims.clone()));
        arrays
            .iter()
            .zip(dims.iter_mut())
            .map(|(a, d)| ffi::Buffer {
                struct_size: ffi::struct_size!(ffi::Buffer, dims),
                extension_start: core::ptr::null_mut(),
                dtype: a.dtype,
                data: a.data,
                rank: d.len() as i64,
                dims: d.as_mut_ptr(),
            })
            .collect()
    };
    let (mut arg_dims, mut ret_dims) = (Vec::new(), Vec::new());
    let mut arg_buffers = buffers(args, &mut arg_dims);
    let mut ret_buffers = buffers(rets, &mut ret_dims);
    let mut arg_types = vec![ffi::TYPE_BUFFER; args.len()];
    let mut ret_types = vec![ffi::TYPE_BUFFER; rets.len()];
    let mut arg_ptrs: Vec<*mut c_void> = arg_buffers.iter_mut().map(|b| core::ptr::from_mut(b).cast()).collect();
    let mut ret_ptrs: Vec<*mut c_void> = ret_buffers.iter_mut().map(|b| core::ptr::from_mut(b).cast()).collect();
    let mut scalars: Vec<ffi::Scalar> =
        attrs.iter_mut().map(|a| ffi::Scalar { dtype: a.dtype, value: a.value.as_mut_ptr().cast() }).collect();
    let mut names: Vec<ffi::ByteSpan> =
        attrs.iter().map(|a| ffi::ByteSpan { ptr: a.name.as_ptr().cast::<c_char>(), len: a.name.len() }).collect();
    let mut name_ptrs: Vec<*mut ffi::ByteSpan> = names.iter_mut().map(core::ptr::from_mut).collect();
    let mut attr_ptrs: Vec<*mut c_void> = scalars.iter_mut().map(|s| core::ptr::from_mut(s).cast()).collect();
    let mut attr_types = vec![ffi::ATTR_SCALAR; attrs.len()];
    let mut frame = ffi::XlaFfiCallFrame {
        struct_size: ffi::struct_size!(ffi::XlaFfiCallFrame, attrs),
        extension_start: core::ptr::null_mut(),
        api,
        ctx: core::ptr::null_mut(),
        stage: ffi::STAGE_EXECUTE,
        args: ffi::Args {
            struct_size: ffi::struct_size!(ffi::Args, args),
            extension_start: core::ptr::null_mut(),
            size: args.len() as i64,
            types: arg_types.as_mut_ptr(),
            args: arg_ptrs.as_mut_ptr(),
        },
        rets: ffi::Rets {
            struct_size: ffi::struct_size!(ffi::Rets, rets),
            extension_start: core::ptr::null_mut(),
            size: rets.len() as i64,
            types: ret_types.as_mut_ptr(),
            rets: ret_ptrs.as_mut_ptr(),
        },
        attrs: ffi::Attrs {
            struct_size: ffi::struct_size!(ffi::Attrs, attrs),
            extension_start: core::ptr::null_mut(),
            size: attrs.len() as i64,
            types: attr_types.as_mut_ptr(),
            names: name_ptrs.as_mut_ptr(),
            attrs: attr_ptrs.as_mut_ptr(),
        },
    };
    edit(&mut frame);
    // SAFETY: a frame laid out as XLA's, every pointer into the vectors above (alive here).
    let error = unsafe { handler(&mut frame) };
    if error.is_null() {
        return None;
    }
    // SAFETY: an error `error_create` made, owned here.
    let error = unsafe { Box::from_raw(error.cast::<FakeError>()) };
    Some((error.code, error.message.to_string_lossy().into_owned()))
}

fn message(outcome: Option<(i32, String)>) -> String {
    outcome.expect("an error").1
}

#[test]
fn a_call_computes_the_body_with_broadcasting_and_attributes() {
    let api = api(0);
    let (mut x, mut b, mut out) = ([1f32, 2., 3., 4., 5., 6.], [10f32, 20., 30.], [0f32; 6]);
    let outcome = call(
        cpu_handler::<axpb>(),
        &api,
        &[f32s(&[2, 3], &mut x), f32s(&[3], &mut b)],
        &[f32s(&[2, 3], &mut out)],
        &mut [attr_f64("a", 2.0)],
        |_| {},
    );
    assert_eq!(outcome, None);
    assert_eq!(out, [12., 24., 36., 18., 30., 42.]);
}

#[test]
fn integer_and_bool_attributes_reach_the_body() {
    let api = api(0);
    let (mut x, mut out) = ([1i32, -2, 3], [0i32; 3]);
    let arr = |values: &mut [i32]| Array { dtype: 4, dims: vec![3], data: values.as_mut_ptr().cast() };
    let outcome = call(
        cpu_handler::<shift>(),
        &api,
        &[arr(&mut x)],
        &[arr(&mut out)],
        &mut [attr_i64("n", 5), attr_bool("twice", true)],
        |_| {},
    );
    assert_eq!(outcome, None);
    assert_eq!(out, [11, 8, 13]);
    // An integer that does not fit the kernel's `i32` parameter.
    let outcome = call(
        cpu_handler::<shift>(),
        &api,
        &[arr(&mut x)],
        &[arr(&mut out)],
        &mut [attr_i64("n", 1 << 40), attr_bool("twice", false)],
        |_| {},
    );
    let text = message(outcome);
    assert!(text.contains("argument `n`") && text.contains("does not fit"), "{text}");
}

#[test]
fn two_results_are_written() {
    let api = api(0);
    let (mut x, mut y, mut s, mut p) = ([1f32, 2.], [3f32, 4.], [0f32; 2], [0f32; 2]);
    let outcome = call(
        cpu_handler::<pair>(),
        &api,
        &[f32s(&[2], &mut x), f32s(&[2], &mut y)],
        &[f32s(&[2], &mut s), f32s(&[2], &mut p)],
        &mut [],
        |_| {},
    );
    assert_eq!(outcome, None);
    assert_eq!((s, p), ([4., 6.], [3., 8.]));
    // `strict`: no broadcasting.
    let mut one = [1f32];
    let text = message(call(
        cpu_handler::<pair>(),
        &api,
        &[f32s(&[2], &mut x), f32s(&[1], &mut one)],
        &[f32s(&[2], &mut s), f32s(&[2], &mut p)],
        &mut [],
        |_| {},
    ));
    assert!(text.contains("one shape"), "{text}");
}

#[test]
fn every_lie_of_the_frame_is_an_error_naming_what_is_wrong() {
    let api = api(0);
    let (mut x, mut b, mut out) = ([1f32; 6], [1f32; 3], [0f32; 6]);
    let run = |args: &[Array], rets: &[Array], attrs: &mut [Attr], edit: &dyn Fn(&mut ffi::XlaFfiCallFrame)| {
        message(call(cpu_handler::<axpb>(), &api, args, rets, attrs, edit))
    };
    let (xp, bp, op) = (x.as_mut_ptr(), b.as_mut_ptr(), out.as_mut_ptr());
    let good_args = || {
        [Array { dtype: 11, dims: vec![2, 3], data: xp.cast() }, Array { dtype: 11, dims: vec![3], data: bp.cast() }]
    };
    let good_rets = || [Array { dtype: 11, dims: vec![2, 3], data: op.cast() }];
    let cases: Vec<(&str, String)> = vec![
        ("takes 2 arrays", run(&good_args()[..1], &good_rets(), &mut [attr_f64("a", 1.0)], &|_| {})),
        ("no attribute of this name", run(&good_args(), &good_rets(), &mut [], &|_| {})),
        ("the kernel takes a float", run(&good_args(), &good_rets(), &mut [attr_bool("a", true)], &|_| {})),
        (
            "argument `b` has dtype float64",
            run(
                &[good_args().into_iter().next().unwrap(), Array { dtype: 12, dims: vec![3], data: bp.cast() }],
                &good_rets(),
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
        (
            "does not broadcast",
            run(
                &[good_args().into_iter().next().unwrap(), Array { dtype: 11, dims: vec![2], data: bp.cast() }],
                &good_rets(),
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
        (
            "which it must have",
            run(
                &good_args(),
                &[Array { dtype: 11, dims: vec![3, 2], data: op.cast() }],
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
        (
            "negative extent",
            run(
                &[Array { dtype: 11, dims: vec![-2, 3], data: xp.cast() }, good_args().into_iter().nth(1).unwrap()],
                &good_rets(),
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
        (
            "rank 9",
            run(
                &[Array { dtype: 11, dims: vec![1; 9], data: xp.cast() }, good_args().into_iter().nth(1).unwrap()],
                &good_rets(),
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
        (
            "shares memory with `x`",
            run(
                &good_args(),
                &[Array { dtype: 11, dims: vec![2, 3], data: xp.cast() }],
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
        (
            "XLA dtype 21",
            run(
                &[Array { dtype: 21, dims: vec![2, 3], data: xp.cast() }, good_args().into_iter().nth(1).unwrap()],
                &good_rets(),
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
        (
            "stage 1",
            run(&good_args(), &good_rets(), &mut [attr_f64("a", 1.0)], &|f: &mut ffi::XlaFfiCallFrame| f.stage = 1),
        ),
        (
            "the call frame has 100 bytes",
            run(&good_args(), &good_rets(), &mut [attr_f64("a", 1.0)], &|f: &mut ffi::XlaFfiCallFrame| {
                f.struct_size = 100
            }),
        ),
        (
            "is not a buffer",
            run(&good_args(), &good_rets(), &mut [attr_f64("a", 1.0)], &|f: &mut ffi::XlaFfiCallFrame| {
                // SAFETY: the frame's own argument types, two entries.
                let at = unsafe { f.args.types.add(1) };
                // SAFETY: as above.
                unsafe { *at = 2 }
            }),
        ),
        (
            "argument `x`: tensor data is null",
            run(
                &[
                    Array { dtype: 11, dims: vec![2, 3], data: core::ptr::null_mut() },
                    good_args().into_iter().nth(1).unwrap(),
                ],
                &good_rets(),
                &mut [attr_f64("a", 1.0)],
                &|_| {},
            ),
        ),
    ];
    for (expected, text) in cases {
        assert!(text.contains(expected), "expected `{expected}` in: {text}");
    }
    // A misaligned buffer: the view's alignment rule.
    let mut bytes = [0u8; 64];
    let text = run(
        &[
            Array { dtype: 11, dims: vec![3], data: bytes.as_mut_ptr().wrapping_add(1).cast() },
            good_args().into_iter().nth(1).unwrap(),
        ],
        &[Array { dtype: 11, dims: vec![3], data: op.cast() }],
        &mut [attr_f64("a", 1.0)],
        &|_| {},
    );
    assert!(text.starts_with("argument `x`"), "{text}");
    assert_eq!(out, [0f32; 6], "no failed call wrote its result");
}

#[test]
fn another_major_version_is_refused() {
    let api = api(1);
    let (mut x, mut b, mut out) = ([1f32], [1f32], [0f32]);
    let outcome = call(
        cpu_handler::<axpb>(),
        &api,
        &[f32s(&[1], &mut x), f32s(&[1], &mut b)],
        &[f32s(&[1], &mut out)],
        &mut [attr_f64("a", 1.0)],
        |_| {},
    );
    let (code, text) = outcome.expect("an error");
    assert_eq!(code, ffi::ERROR_UNIMPLEMENTED);
    assert!(text.contains("version 1.3"), "{text}");
}

#[test]
fn the_metadata_query_gets_the_version_and_the_traits() {
    let api = api(0);
    #[repr(C)]
    struct NewerMetadata {
        inner: ffi::Metadata,
        state_type_id: i64,
    }
    for with_state in [false, true] {
        let mut metadata = NewerMetadata {
            inner: ffi::Metadata {
                struct_size: if with_state {
                    core::mem::size_of::<NewerMetadata>()
                } else {
                    ffi::struct_size!(ffi::Metadata, traits)
                },
                api_version: ffi::ApiVersion {
                    struct_size: 0,
                    extension_start: core::ptr::null_mut(),
                    major_version: -1,
                    minor_version: -1,
                },
                traits: 0,
            },
            state_type_id: 77,
        };
        let mut extension = ffi::MetadataExtension {
            extension_base: ffi::ExtensionBase {
                struct_size: ffi::struct_size!(ffi::MetadataExtension, metadata),
                kind: ffi::EXTENSION_METADATA,
                next: core::ptr::null_mut(),
            },
            metadata: core::ptr::from_mut(&mut metadata.inner),
        };
        let extension_ptr = core::ptr::from_mut(&mut extension).cast::<ffi::ExtensionBase>();
        // No arguments at all, and no API table (jaxlib 0.5 asks so): the query reads neither.
        let outcome = call(cpu_handler::<axpb>(), &api, &[], &[], &mut [], |f| {
            f.extension_start = extension_ptr;
            f.api = core::ptr::null();
        });
        assert_eq!(outcome, None);
        assert_eq!((metadata.inner.api_version.major_version, metadata.inner.api_version.minor_version), (0, 1));
        assert_eq!(metadata.inner.traits, ffi::TRAIT_COMMAND_BUFFER_COMPATIBLE);
        assert_eq!(metadata.state_type_id, if with_state { 0 } else { 77 }, "written only within the struct's size");
    }
}

#[test]
fn the_spec_records_the_signature() {
    assert_eq!(<axpb as Kernel>::ORDER, &[true, true, false, true]);
    assert_eq!(<axpb as Kernel>::SPEC.name, "axpb");
    const { assert!(<pair as Kernel>::SPEC.strict) };
    assert!(<axpb as Kernel>::BACKWARD.is_none());
}

/// A handler whose body panics, with a payload whose own `Drop` panics when `nasty`.
unsafe extern "C" fn panicking<const NASTY: bool>(frame: *mut ffi::XlaFfiCallFrame) -> *mut ffi::XlaFfiError {
    struct Nasty;
    impl Drop for Nasty {
        fn drop(&mut self) {
            // A zero-sized payload: the leaked box allocates nothing (memcheck runs this test).
            std::panic::panic_any(());
        }
    }
    // SAFETY: forwarded: the test's frame.
    unsafe {
        super::frame::handle(frame, super::frame::Traits::default(), |_| {
            if NASTY {
                std::panic::panic_any(Nasty);
            }
            panic!("boom");
        })
    }
}

#[test]
fn a_panic_becomes_an_internal_error_and_never_unwinds_into_xla() {
    let api = api(0);
    let (code, text) = call(panicking::<false>, &api, &[], &[], &mut [], |_| {}).expect("an error");
    assert_eq!(code, ffi::ERROR_INTERNAL);
    assert_eq!(text, "the kernel panicked: boom");
    // A payload that panics when dropped is leaked, not unwound out of the handler.
    let (code, text) = call(panicking::<true>, &api, &[], &[], &mut [], |_| {}).expect("an error");
    assert_eq!(code, ffi::ERROR_INTERNAL);
    assert_eq!(text, "the kernel panicked: a panic without a message");
}

/// A function that is not element-wise: `sums[i] = scale · Σ_j x[i, j]` and `first[i] = x[i, 0]`,
/// its views by name, two results.
struct RowSums;

impl super::Function for RowSums {
    const NAME: &'static str = "row_sums";
    const PARAMS: &'static [super::Param] = &[super::Param::Array("x"), super::Param::Float("scale")];
    const RESULTS: &'static [&'static str] = &["sums", "first"];

    fn results(shapes: &super::Shapes) -> Result<Vec<super::ArrayType>, super::JaxError> {
        match shapes.shape("x")? {
            &[rows, columns] if columns > 0 => {
                Ok(vec![super::ArrayType::of::<f32>([rows]), super::ArrayType::of::<f32>([rows])])
            }
            shape => Err(super::JaxError::Kernel(format!("argument `x` has shape {shape:?}: not a matrix"))),
        }
    }

    fn cpu(call: &super::Call<'_>) -> Result<(), super::JaxError> {
        let x: crate::HostMdspan<'_, f32, 2> = call.input("x")?;
        let scale = call.float("scale")? as f32;
        let mut sums: crate::HostMdspanMut<'_, f32, 1> = call.output("sums")?;
        // A result views once: a second view while the first lives would alias it.
        let twice = call.output::<crate::HostMdspanMut<'_, f32, 1>>("sums").unwrap_err().to_string();
        assert!(twice.contains("viewed already"), "{twice}");
        // A result is written, never read through a shared view (its memory starts as XLA's).
        let shared = call.output::<crate::HostMdspan<'_, f32, 1>>("first").unwrap_err().to_string();
        assert!(shared.contains("mutable"), "{shared}");
        let mut first: crate::HostMdspanMut<'_, f32, 1> = call.output("first")?;
        // Results start zeroed on the CPU.
        assert!(sums.iter().chain(first.iter()).all(|v| *v == 0.0));
        for (k, row) in x.outer_iter::<1>().enumerate() {
            sums[[k]] = row.sum() * scale;
            first[[k]] = row[[0]];
        }
        // No parameter or result of another name.
        assert!(
            call.input::<crate::HostMdspan<'_, f32, 2>>("y")
                .unwrap_err()
                .to_string()
                .contains("no array parameter `y`")
        );
        assert!(call.int("scale").unwrap_err().to_string().contains("not an int"));
        Ok(())
    }
}

#[test]
fn a_function_reads_its_views_by_name_and_its_results_are_checked_against_its_shape_function() {
    use super::function::cpu_handler as function_handler;
    let api = api(0);
    let (mut x, mut sums, mut first) = ([1f32, 2., 3., 4., 5., 6.], [7f32; 2], [7f32; 2]);
    let outcome = call(
        function_handler::<RowSums>(),
        &api,
        &[f32s(&[2, 3], &mut x)],
        &[f32s(&[2], &mut sums), f32s(&[2], &mut first)],
        &mut [attr_f64("scale", 2.0)],
        |_| {},
    );
    assert_eq!(outcome, None);
    assert_eq!((sums, first), ([12., 30.], [1., 4.]));
    // Results XLA allocated other than the shape function says: refused, naming the result.
    let mut wrong = [0f32; 3];
    let text = message(call(
        function_handler::<RowSums>(),
        &api,
        &[f32s(&[2, 3], &mut x)],
        &[f32s(&[2], &mut sums), f32s(&[3], &mut wrong)],
        &mut [attr_f64("scale", 2.0)],
        |_| {},
    ));
    assert!(text.contains("result `first`") && text.contains("shape function gives"), "{text}");
    // The shape function's own refusal reaches XLA.
    let text = message(call(
        function_handler::<RowSums>(),
        &api,
        &[f32s(&[6], &mut x)],
        &[f32s(&[2], &mut sums), f32s(&[2], &mut first)],
        &mut [attr_f64("scale", 2.0)],
        |_| {},
    ));
    assert!(text.contains("not a matrix"), "{text}");
    // A result aliasing the argument.
    let xp = x.as_mut_ptr();
    let text = message(call(
        function_handler::<RowSums>(),
        &api,
        &[Array { dtype: 11, dims: vec![2, 3], data: xp.cast() }],
        &[Array { dtype: 11, dims: vec![2], data: xp.cast() }, f32s(&[2], &mut first)],
        &mut [attr_f64("scale", 2.0)],
        |_| {},
    ));
    assert!(text.contains("result `sums` shares memory with `x`"), "{text}");
    // Counts, a missing attribute, a wrong dtype.
    let text = message(call(function_handler::<RowSums>(), &api, &[f32s(&[2, 3], &mut x)], &[], &mut [], |_| {}));
    assert!(text.contains("takes 1 arrays and returns 2"), "{text}");
    let text = message(call(
        function_handler::<RowSums>(),
        &api,
        &[f32s(&[2, 3], &mut x)],
        &[f32s(&[2], &mut sums), f32s(&[2], &mut first)],
        &mut [],
        |_| {},
    ));
    assert!(text.contains("scale"), "{text}");
    let mut doubles = [0f64; 6];
    let text = message(call(
        function_handler::<RowSums>(),
        &api,
        &[Array { dtype: 12, dims: vec![2, 3], data: doubles.as_mut_ptr().cast() }],
        &[f32s(&[2], &mut sums), f32s(&[2], &mut first)],
        &mut [attr_f64("scale", 2.0)],
        |_| {},
    ));
    assert!(text.contains("argument `x`") && text.contains("float64"), "{text}");
}

/// A function whose kernel panics, and one whose shape function gives too few results.
struct Broken;

impl super::Function for Broken {
    const NAME: &'static str = "broken";
    const PARAMS: &'static [super::Param] =
        &[super::Param::Array("x"), super::Param::Bool("panic"), super::Param::Int("results")];
    const RESULTS: &'static [&'static str] = &["y"];

    fn results(shapes: &super::Shapes) -> Result<Vec<super::ArrayType>, super::JaxError> {
        match shapes.int("results")? {
            1 => Ok(vec![super::ArrayType::of::<f32>([1])]),
            2 => Ok(vec![super::ArrayType::new([1], crate::dtype::dtype_of::<crate::dtype::F32x4>())]),
            _ => Ok(Vec::new()),
        }
    }

    fn cpu(call: &super::Call<'_>) -> Result<(), super::JaxError> {
        if call.bool("panic")? {
            panic!("the kernel's own panic")
        }
        // Returns without writing its result.
        Ok(())
    }
}

#[test]
fn a_function_that_panics_or_miscounts_its_results_is_an_error() {
    use super::function::cpu_handler as function_handler;
    let api = api(0);
    let (mut x, mut y) = ([1f32], [0f32]);
    let outcome = call(
        function_handler::<Broken>(),
        &api,
        &[f32s(&[1], &mut x)],
        &[f32s(&[1], &mut y)],
        &mut [attr_bool("panic", true), attr_i64("results", 1)],
        |_| {},
    );
    let (code, text) = outcome.expect("an error");
    assert!(code == ffi::ERROR_INTERNAL && text.contains("the kernel's own panic"), "{code} {text}");
    let mut run = |panic: bool, results: i64| {
        message(call(
            function_handler::<Broken>(),
            &api,
            &[f32s(&[1], &mut x)],
            &[f32s(&[1], &mut y)],
            &mut [attr_bool("panic", panic), attr_i64("results", results)],
            |_| {},
        ))
    };
    let text = run(false, 0);
    assert!(text.contains("gave 0 results; it declares 1"), "{text}");
    let text = run(false, 2);
    assert!(text.contains("result `y` has dtype float32x4, which is not one of XLA's"), "{text}");
    let text = run(false, 1);
    assert!(text.contains("returned without writing result `y`"), "{text}");
}
