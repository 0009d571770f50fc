//! The CUDA C++ of an element-wise module: the preamble, the kernel-body operations
//! (`elementwise.cu`), and in a namespace of its own the instantiation's types (`typedef .. dl_t0`,
//! a struct with the fields' names for a derived type whose fields the body accesses), the cast
//! conversions the body needs, the body `elementwise!` translated, and one kernel per shape and
//! index width calling the body once per element.
//!
//! A launch passes the views in slot order — the primary (first written) view first, then the
//! others in declaration order (`ElementwiseDef::slots`) — so the planner orders axes by the
//! output; the scalars at the offsets [`scalar_offsets`] gives.

use super::module::scalar_offsets;
use super::source::{PREAMBLE, cast_function, kernel_head, shape_suffix, strided_head, untiled_shapes};
use crate::cuda::abi::{IndexWidth, KernelShape};
use crate::kernel::{ElementType, ScalarType};
use crate::kernel::{Instance, ParamKind, TypeInfo};
use core::fmt::Write as _;

/// The operations of kernel bodies (the C++ mirror of `dlspan::kernel`'s Rust operations).
pub(crate) const SUPPORT: &str = include_str!("elementwise.cu");

/// Every scalar type a cast may start from (`dl_cast` conversions into each cast target).
const CAST_SOURCES: [ScalarType; 23] = [
    ScalarType::Bool,
    ScalarType::Int { bits: 8, signed: true },
    ScalarType::Int { bits: 16, signed: true },
    ScalarType::Int { bits: 32, signed: true },
    ScalarType::Int { bits: 64, signed: true },
    ScalarType::Int { bits: 128, signed: true },
    ScalarType::Int { bits: 8, signed: false },
    ScalarType::Int { bits: 16, signed: false },
    ScalarType::Int { bits: 32, signed: false },
    ScalarType::Int { bits: 64, signed: false },
    ScalarType::Int { bits: 128, signed: false },
    ScalarType::F16,
    ScalarType::Bf16,
    ScalarType::F32,
    ScalarType::F64,
    ScalarType::F8E3m4,
    ScalarType::F8E4m3,
    ScalarType::F8E4m3b11fnuz,
    ScalarType::F8E4m3fn,
    ScalarType::F8E4m3fnuz,
    ScalarType::F8E5m2,
    ScalarType::F8E5m2fnuz,
    ScalarType::F8E8m0fnu,
];

/// The element types of the views, in slot order.
fn slot_types(instance: &Instance) -> Vec<TypeInfo> {
    let views: Vec<_> = instance.def().views().collect();
    instance.def().slots().map(|k| instance.ty(views[k].ty)).collect()
}

/// Every kernel shape an element-wise module holds: flat (every vector width its views' element
/// sizes allow), strided (rank 1 to 4) and general.
pub(crate) fn shapes(instance: &Instance) -> Vec<KernelShape> {
    let sizes: Vec<usize> = slot_types(instance).iter().map(|t| t.size).collect();
    untiled_shapes(&sizes)
}

/// A C identifier naming a type in kernel names: its data type's (with size and alignment where
/// they are not the data type's own), and for a derived type with fields a hash of their names.
fn type_ident(t: &TypeInfo) -> String {
    let mut ident = ElementType::from(*t).ident();
    if !t.fields.is_empty() {
        let _ = write!(ident, "_f{:08x}", fields_hash(t.fields));
    }
    ident
}

/// FNV-1a of the field names.
fn fields_hash(fields: &[&str]) -> u32 {
    let mut hash = 0x811c_9dc5u32;
    for field in fields {
        for byte in field.bytes().chain([0]) {
            hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
        }
    }
    hash
}

/// The prefix of the module's kernel names: `dlspan_<kernel>_<type>_<type>..`.
fn prefix(instance: &Instance) -> String {
    let name: String = instance.def().name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let mut prefix = format!("dlspan_{name}");
    for t in instance.types() {
        prefix.push('_');
        prefix.push_str(&type_ident(t));
    }
    prefix
}

/// The name of the kernel of `shape` and `index`.
pub(crate) fn entry_name(instance: &Instance, shape: KernelShape, index: IndexWidth) -> String {
    format!("{}_{}", prefix(instance), shape_suffix(shape, index))
}

/// The C++ type of a kernel type, and the definition it needs (a struct with the fields' names for
/// a derived type whose fields are lanes of a scalar).
fn c_type(t: &TypeInfo) -> (String, Option<String>) {
    let element = ElementType::from(*t);
    let lanes = usize::from(t.dtype.lanes);
    let lane = element.lane_scalar_type();
    match lane {
        Some(lane)
            if !t.fields.is_empty() && t.fields.len() == lanes && t.size * 8 == lanes * usize::from(t.dtype.bits) =>
        {
            let name = format!("dl_rec_{}", type_ident(t));
            let fields: String =
                t.fields.iter().map(|f| format!(" {} f_{};", lane.c_name(), f.trim_start_matches("r#"))).collect();
            let definition = format!(
                "#ifndef {guard}\n#define {guard} 1\nstruct alignas({align}) {name} {{{fields} }};\n#endif\n",
                guard = name.to_uppercase(),
                align = t.align,
            );
            (name, Some(definition))
        }
        _ => (element.c_name(), None),
    }
}

/// The full source NVRTC compiles for an instantiation.
pub(crate) fn module_source(instance: &Instance) -> String {
    let mut src = String::with_capacity(PREAMBLE.len() + SUPPORT.len() + 8192);
    src.push_str(PREAMBLE);
    src.push_str(&module_body(instance, &shapes(instance)));
    src
}

/// The module's kernels of `shapes`, with the operations of kernel bodies, without the preamble.
pub(crate) fn module_body(instance: &Instance, shapes: &[KernelShape]) -> String {
    let def = instance.def();
    let mut src = String::new();
    src.push_str("#line 1 \"dlspan/elementwise.cu\"\n");
    src.push_str(SUPPORT);
    let _ = writeln!(
        src,
        "\n#line 1 \"dlspan/{}\"\n// element-wise kernel {instance} ({}:{})",
        prefix(instance),
        def.file,
        def.line
    );
    let mut types = Vec::new();
    for t in instance.types() {
        let (name, definition) = c_type(t);
        src.push_str(&definition.unwrap_or_default());
        types.push(name);
    }
    for &k in def.cast_targets {
        if let Some(to) = ElementType::from(instance.ty(k)).scalar_type() {
            for from in CAST_SOURCES {
                let int128 = super::cast::is_int128(to) || super::cast::is_int128(from);
                if int128 {
                    src.push_str("#ifdef DL_HAS_INT128\n");
                }
                src.push_str(&cast_function(to, from));
                if int128 {
                    src.push_str("#endif\n");
                }
            }
        }
    }
    let _ = writeln!(src, "namespace dl_m_{} {{", prefix(instance));
    for (k, name) in types.iter().enumerate() {
        let _ = writeln!(src, "typedef {name} dl_t{k};");
    }
    src.push_str(def.source);
    let _ = writeln!(src, "#line 1 \"dlspan/{}_kernels\"", prefix(instance));
    let offsets = scalar_offsets(instance).expect("checked when the key was made");
    for &shape in shapes {
        for index in [IndexWidth::I32, IndexWidth::I64] {
            src.push_str(&kernel(instance, &offsets, shape, index));
        }
    }
    src.push_str("}\n");
    // The kernels by their own names outside the namespace (their symbols are unmangled anyway).
    for &shape in shapes {
        for index in [IndexWidth::I32, IndexWidth::I64] {
            let _ = writeln!(src, "using dl_m_{}::{};", prefix(instance), entry_name(instance, shape, index));
        }
    }
    src
}

/// One kernel: the body called once per element.
fn kernel(instance: &Instance, offsets: &[usize], shape: KernelShape, index: IndexWidth) -> String {
    let def = instance.def();
    let name = entry_name(instance, shape, index);
    let views: Vec<_> = def.views().collect();
    let slots: Vec<usize> = def.slots().collect();
    // The slot of each view (declaration order).
    let slot_of: Vec<usize> = (0..views.len()).map(|k| slots.iter().position(|&s| s == k).expect("a slot")).collect();
    let mut s = String::new();
    kernel_head(&mut s, &name, shape, index);
    for (slot, &k) in slots.iter().enumerate() {
        let (ty, constness) = match views[k].kind {
            ParamKind::Read => (views[k].ty, "const "),
            _ => (views[k].ty, ""),
        };
        let _ = writeln!(s, "  {constness}dl_t{ty}* const p{slot} = ({constness}dl_t{ty}*)p.op[{slot}].ptr;");
    }
    for (j, (p, offset)) in def.scalars().zip(offsets).enumerate() {
        let ty = p.ty;
        let _ = writeln!(s, "  const dl_value_t<dl_t{ty}> s{j} = dl_load(dl_scalar<dl_t{ty}>(p.scalar + {offset}));");
    }
    // The body's arguments, in declaration order, with `element(slot)` naming a view's element.
    let call = |element: &dyn Fn(usize) -> String| {
        let (mut view, mut scalar) = (0, 0);
        let args: Vec<String> = def
            .params
            .iter()
            .map(|p| match p.kind {
                ParamKind::Scalar => {
                    scalar += 1;
                    format!("s{}", scalar - 1)
                }
                _ => {
                    view += 1;
                    element(slot_of[view - 1])
                }
            })
            .collect();
        format!("dl_body({});", args.join(", "))
    };
    match shape {
        KernelShape::Flat { vector: 1 } => {
            s.push_str("  for (dl_idx i = first; i < n; i += step) {\n");
            let _ = writeln!(s, "    {}", call(&|slot| format!("p{slot}[i]")));
            s.push_str("  }\n");
        }
        KernelShape::Flat { vector: v } => {
            let _ = writeln!(s, "  const dl_idx packs = n / {v};");
            s.push_str("  for (dl_idx i = first; i < packs; i += step) {\n");
            for (slot, &k) in slots.iter().enumerate() {
                let ty = views[k].ty;
                let pack = format!("dl_pack<dl_t{ty}, {v}>");
                match views[k].kind {
                    ParamKind::Write { read: false } => {
                        let _ = writeln!(s, "    {pack} a{slot};");
                    }
                    ParamKind::Read => {
                        let _ = writeln!(s, "    {pack} a{slot} = ((const {pack}*)p{slot})[i];");
                    }
                    _ => {
                        let _ = writeln!(s, "    {pack} a{slot} = (({pack}*)p{slot})[i];");
                    }
                }
            }
            let _ = writeln!(s, "#pragma unroll\n    for (int k = 0; k < {v}; ++k) {{");
            let _ = writeln!(s, "      {}", call(&|slot| format!("a{slot}.e[k]")));
            s.push_str("    }\n");
            for (slot, &k) in slots.iter().enumerate() {
                if matches!(views[k].kind, ParamKind::Write { .. }) {
                    let _ = writeln!(s, "    ((dl_pack<dl_t{}, {v}>*)p{slot})[i] = a{slot};", views[k].ty);
                }
            }
            s.push_str("  }\n");
            let _ = writeln!(s, "  for (dl_idx i = packs * {v} + first; i < n; i += step) {{");
            let _ = writeln!(s, "    {}", call(&|slot| format!("p{slot}[i]")));
            s.push_str("  }\n");
        }
        KernelShape::Strided { .. } | KernelShape::General => {
            strided_head(&mut s, shape, index, slots.len());
            let _ = writeln!(s, "    {}", call(&|slot| format!("p{slot}[o{slot}]")));
            s.push_str("  }\n");
        }
        KernelShape::Tiled => unreachable!("element-wise modules have no tiled kernel"),
    }
    s.push_str("}\n");
    s
}

/// Whether the instantiation uses 128-bit integers (NVRTC needs `--device-int128`).
pub(crate) fn uses_int128(instance: &Instance) -> bool {
    instance.types().iter().any(|t| ElementType::from(*t).lane_scalar_type().is_some_and(super::cast::is_int128))
}
