//! The `ffi` mirror against a real `dlpack.h`: gcc compiles a C program that prints every size,
//! alignment, field offset, field size, enumerator and constant of the header, and each line must
//! equal the same fact computed on the Rust side. The enumerators are read from the header text, so
//! an enumerator the header gains and `ffi` lacks (or the reverse) fails the test too.

mod support;

use dlspan::ffi;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};
use std::process::Command;

/// Size of a field, from an accessor closure (field types are not nameable in a macro otherwise).
fn field_size<S, F>(_: fn(&S) -> &F) -> usize {
    size_of::<F>()
}

/// Declares the structs and fields to compare once, producing both the Rust facts and the C
/// statements that print the same facts.
macro_rules! layout_facts {
    ($($st:ident { $($field:ident),* $(,)? })*) => {{
        let mut rust = Vec::new();
        let mut c = String::new();
        $(
            rust.push(format!("size {} {}", stringify!($st), size_of::<ffi::$st>()));
            rust.push(format!("align {} {}", stringify!($st), align_of::<ffi::$st>()));
            writeln!(c, "  printf(\"size {0} %zu\\n\", sizeof({0}));", stringify!($st)).unwrap();
            writeln!(c, "  printf(\"align {0} %zu\\n\", _Alignof({0}));", stringify!($st)).unwrap();
            $(
                rust.push(format!("offset {}.{} {}", stringify!($st), stringify!($field), offset_of!(ffi::$st, $field)));
                rust.push(format!(
                    "fieldsize {}.{} {}",
                    stringify!($st),
                    stringify!($field),
                    field_size(|s: &ffi::$st| &s.$field)
                ));
                writeln!(c, "  printf(\"offset {0}.{1} %zu\\n\", offsetof({0}, {1}));", stringify!($st), stringify!($field)).unwrap();
                writeln!(c, "  printf(\"fieldsize {0}.{1} %zu\\n\", sizeof((({0}*)0)->{1}));", stringify!($st), stringify!($field)).unwrap();
            )*
        )*
        (rust, c)
    }};
}

/// Enumerator names declared in the header text (`kDL... = value`).
fn header_enumerators(header: &str) -> Vec<String> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let name: String = line.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let rest = line[name.len()..].trim_start();
            (name.starts_with("kDL") && rest.starts_with('=')).then_some(name)
        })
        .collect()
}

#[test]
fn ffi_matches_the_c_header() {
    let (Some(include), Some(cc)) = (support::dlpack_include(), support::c_compiler()) else {
        return;
    };
    let header = std::fs::read_to_string(include.join("dlpack/dlpack.h")).expect("read dlpack.h");

    let (mut rust, layout_c) = layout_facts! {
        DLPackVersion { major, minor }
        DLDevice { device_type, device_id }
        DLDataType { code, bits, lanes }
        DLTensor { data, device, ndim, dtype, shape, strides, byte_offset }
        DLManagedTensor { dl_tensor, manager_ctx, deleter }
        DLManagedTensorVersioned { version, manager_ctx, deleter, flags, dl_tensor }
        DLPackExchangeAPIHeader { version, prev_api }
        DLPackExchangeAPI {
            header,
            managed_tensor_allocator,
            managed_tensor_from_py_object_no_sync,
            managed_tensor_to_py_object_no_sync,
            dltensor_from_py_object_no_sync,
            current_work_stream,
        }
    };

    // Typedefs: sizes of the enum used by value and of every function-pointer typedef.
    // `DLDataTypeCode` is left out on purpose: C declares it as an `int`-sized enum, but the header
    // only ever stores it in `DLDataType::code`, a `uint8_t`, which is what the Rust newtype wraps.
    let mut c = layout_c;
    for (name, size) in [
        ("DLDeviceType", size_of::<ffi::DLDeviceType>()),
        ("DLPackManagedTensorAllocator", size_of::<ffi::DLPackManagedTensorAllocator>()),
        ("DLPackManagedTensorFromPyObjectNoSync", size_of::<ffi::DLPackManagedTensorFromPyObjectNoSync>()),
        ("DLPackDLTensorFromPyObjectNoSync", size_of::<ffi::DLPackDLTensorFromPyObjectNoSync>()),
        ("DLPackCurrentWorkStream", size_of::<ffi::DLPackCurrentWorkStream>()),
        ("DLPackManagedTensorToPyObjectNoSync", size_of::<ffi::DLPackManagedTensorToPyObjectNoSync>()),
    ] {
        rust.push(format!("size {name} {size}"));
        writeln!(c, "  printf(\"size {name} %zu\\n\", sizeof({name}));").unwrap();
    }

    for (name, value) in [
        ("DLPACK_MAJOR_VERSION", u64::from(ffi::DLPACK_MAJOR_VERSION)),
        ("DLPACK_MINOR_VERSION", u64::from(ffi::DLPACK_MINOR_VERSION)),
        ("DLPACK_FLAG_BITMASK_READ_ONLY", ffi::DLPACK_FLAG_BITMASK_READ_ONLY),
        ("DLPACK_FLAG_BITMASK_IS_COPIED", ffi::DLPACK_FLAG_BITMASK_IS_COPIED),
        ("DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED", ffi::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED),
    ] {
        rust.push(format!("const {name} {value}"));
        writeln!(c, "  printf(\"const {name} %llu\\n\", (unsigned long long)({name}));").unwrap();
    }

    // Enumerators: the header's list must equal the Rust list, name by name and value by value.
    let rust_enums: BTreeMap<&str, i64> = ffi::DLDeviceType::ALL
        .iter()
        .map(|(n, v)| (*n, i64::from(v.0)))
        .chain(ffi::DLDataTypeCode::ALL.iter().map(|(n, v)| (*n, i64::from(v.0))))
        .collect();
    let header_enums = header_enumerators(&header);
    assert!(header_enums.len() >= 30, "parsed too few enumerators from dlpack.h: {header_enums:?}");
    let header_set: Vec<&str> = header_enums.iter().map(String::as_str).collect();
    let rust_set: Vec<&str> = rust_enums.keys().copied().collect();
    let mut sorted_header = header_set.clone();
    sorted_header.sort_unstable();
    assert_eq!(sorted_header, rust_set, "enumerators of dlpack.h vs dlspan::ffi");
    for (name, value) in &rust_enums {
        rust.push(format!("enum {name} {value}"));
        writeln!(c, "  printf(\"enum {name} %lld\\n\", (long long)({name}));").unwrap();
    }

    let program = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include <dlpack/dlpack.h>\nint main(void) {{\n{c}  return 0;\n}}\n"
    );
    let dir = support::scratch_dir("abi");
    let source = dir.join("abi.c");
    let binary = dir.join("abi");
    std::fs::write(&source, program).expect("write abi.c");
    support::compile_c(&cc, &include, &source, &binary, &[]);
    let out = Command::new(&binary).output().expect("run the ABI probe");
    assert!(out.status.success());
    let c_facts: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect();

    assert_eq!(c_facts.len(), rust.len(), "the C probe and the Rust side list different facts");
    let mismatches: Vec<String> =
        rust.iter().zip(&c_facts).filter(|(r, c)| r != c).map(|(r, c)| format!("rust: {r:<60} c: {c}")).collect();
    assert!(mismatches.is_empty(), "ABI mismatches:\n{}", mismatches.join("\n"));
    println!("{} facts of dlpack.h match dlspan::ffi", rust.len());
}

/// The function-pointer types of `ffi`, transcribed to C: assigning functions of these signatures
/// to the header's typedefs and struct fields fails under `-Werror` when a parameter or return type
/// differs.
#[test]
fn function_pointer_signatures_match_the_c_header() {
    let (Some(include), Some(cc)) = (support::dlpack_include(), support::c_compiler()) else {
        return;
    };
    let program = r#"
#include <dlpack/dlpack.h>
/* Each function has the signature of the corresponding `dlspan::ffi` type. */
static int allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                     void (*set_error)(void* error_ctx, const char* kind, const char* message)) {
  (void)prototype; (void)out; (void)error_ctx; (void)set_error; return 0;
}
static int from_py(void* py_object, DLManagedTensorVersioned** out) { (void)py_object; (void)out; return 0; }
static int dltensor_from_py(void* py_object, DLTensor* out) { (void)py_object; (void)out; return 0; }
static int stream(DLDeviceType device_type, int32_t device_id, void** out) {
  (void)device_type; (void)device_id; (void)out; return 0;
}
static int to_py(DLManagedTensorVersioned* tensor, void** out) { (void)tensor; (void)out; return 0; }
static void legacy_deleter(struct DLManagedTensor* self) { (void)self; }
static void versioned_deleter(struct DLManagedTensorVersioned* self) { (void)self; }
int main(void) {
  DLPackExchangeAPI api;
  api.header.prev_api = (struct DLPackExchangeAPIHeader*)0;
  api.managed_tensor_allocator = allocator;
  api.managed_tensor_from_py_object_no_sync = from_py;
  api.managed_tensor_to_py_object_no_sync = to_py;
  api.dltensor_from_py_object_no_sync = dltensor_from_py;
  api.current_work_stream = stream;
  DLManagedTensor legacy; legacy.deleter = legacy_deleter;
  DLManagedTensorVersioned versioned; versioned.deleter = versioned_deleter;
  (void)api; (void)legacy; (void)versioned;
  return 0;
}
"#;
    let dir = support::scratch_dir("abi-signatures");
    let source = dir.join("signatures.c");
    std::fs::write(&source, program).expect("write signatures.c");
    let object = dir.join("signatures.o");
    support::compile_c(&cc, &include, &source, &object, &["-Werror=incompatible-pointer-types", "-c"]);
}
