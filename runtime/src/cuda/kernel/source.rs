//! CUDA C++ source of a copy or cast module, generated from the operation and the element types,
//! and the kernel skeleton every module shares (signature, index types, the strided offsets).
//!
//! A module holds one kernel per [`KernelShape`] and [`IndexWidth`]: the flat kernels (every operand
//! contiguous, `V` elements per aligned load), the strided ones (merged axes, rank 1 to 4
//! unrolled, or any rank up to [`MAX_KERNEL_RANK`](crate::cuda::abi::MAX_KERNEL_RANK)) and the
//! tiled one (a transpose through shared memory).

use super::module::ModuleKey;
use crate::cuda::abi::{BLOCK, IndexWidth, KernelKind, KernelShape, TILE, TILE_MAX_ELEMENT};
use crate::kernel::ScalarType;
use core::fmt::Write as _;

/// The shared preamble: storage types, parameters, conversions and arithmetic.
pub(crate) const PREAMBLE: &str = include_str!("../include/dlspan.cuh");

/// The flat shapes (every vector width elements of `sizes` allow), the strided ones and the
/// general one.
pub(crate) fn untiled_shapes(sizes: &[usize]) -> Vec<KernelShape> {
    let mut shapes = Vec::new();
    let widest = sizes.iter().copied().max().unwrap_or(1);
    let powers = sizes.iter().all(|s| s.is_power_of_two());
    let mut vector = 1;
    while vector == 1 || (powers && vector * widest <= 16) {
        shapes.push(KernelShape::Flat { vector: vector as u8 });
        vector *= 2;
    }
    shapes.extend((1..=4).map(|rank| KernelShape::Strided { rank }));
    shapes.push(KernelShape::General);
    shapes
}

/// Every kernel shape a copy, cast or sum module holds for element types of these sizes (a sum's
/// flat kernel reads one element at a time: a reduction is bound by its reads, not its stores).
pub(crate) fn shapes(key: &ModuleKey) -> Vec<KernelShape> {
    let (out, input) = (key.out(), key.input());
    if key.kind() == Some(KernelKind::Sum) {
        let mut shapes = vec![KernelShape::Flat { vector: 1 }];
        shapes.extend((1..=4).map(|rank| KernelShape::Strided { rank }));
        shapes.push(KernelShape::General);
        return shapes;
    }
    let mut shapes = untiled_shapes(&[out.size, input.size]);
    if out.size.max(input.size) <= TILE_MAX_ELEMENT {
        shapes.push(KernelShape::Tiled);
    }
    shapes
}

/// The suffix of a kernel name for its shape and index width.
pub(crate) fn shape_suffix(shape: KernelShape, index: IndexWidth) -> String {
    let shape = match shape {
        KernelShape::Flat { vector } => format!("flat{vector}"),
        KernelShape::Strided { rank } => format!("rank{rank}"),
        KernelShape::General => "rankn".to_owned(),
        KernelShape::Tiled => "tiled".to_owned(),
    };
    let index = match index {
        IndexWidth::I32 => "i32",
        IndexWidth::I64 => "i64",
    };
    format!("{shape}_{index}")
}

/// The index types of a kernel's loop and offsets.
pub(crate) fn index_types(index: IndexWidth) -> (&'static str, &'static str) {
    match index {
        IndexWidth::I32 => ("unsigned int", "int"),
        IndexWidth::I64 => ("dl_u64", "dl_i64"),
    }
}

/// The grid-stride loop head of a strided kernel over `operands` operands, with the offset `o{k}`
/// of each at index `i` (the loop's body follows; the caller closes the loop).
pub(crate) fn strided_head(s: &mut String, shape: KernelShape, index: IndexWidth, operands: usize) {
    s.push_str("  for (dl_idx i = first; i < n; i += step) {\n    dl_idx rem = i;\n");
    for k in 0..operands {
        let _ = writeln!(s, "    dl_sidx o{k} = 0;");
    }
    match shape {
        KernelShape::Strided { rank } => {
            let _ = writeln!(s, "#pragma unroll\n    for (int k = {} - 1; k >= 1; --k) {{", rank);
        }
        _ => s.push_str("    for (int k = p.ndim - 1; k >= 1; --k) {\n"),
    }
    match index {
        IndexWidth::I32 => s.push_str("      const dl_idx q = (__umulhi(rem, p.magic[k]) + rem) >> p.shift[k];\n"),
        IndexWidth::I64 => s.push_str("      const dl_idx q = rem / (dl_idx)p.extent[k];\n"),
    }
    s.push_str("      const dl_idx c = rem - q * (dl_idx)p.extent[k];\n      rem = q;\n");
    for k in 0..operands {
        let _ = writeln!(s, "      o{k} += (dl_sidx)c * (dl_sidx)p.op[{k}].stride[k];");
    }
    s.push_str("    }\n");
    for k in 0..operands {
        let _ = writeln!(s, "    o{k} += (dl_sidx)rem * (dl_sidx)p.op[{k}].stride[0];");
    }
}

/// The opening of a kernel: its signature, index types, and (but for tiled kernels) the
/// grid-stride loop's bounds.
pub(crate) fn kernel_head(s: &mut String, name: &str, shape: KernelShape, index: IndexWidth) {
    let (idx, sidx) = index_types(index);
    let _ = writeln!(s, "DL_KERNEL {name}(const dl_params p) {{");
    let _ = writeln!(s, "  typedef {idx} dl_idx;\n  typedef {sidx} dl_sidx;");
    if shape != KernelShape::Tiled {
        s.push_str("  const dl_idx n = (dl_idx)p.n;\n");
        s.push_str("  const dl_idx step = (dl_idx)gridDim.x * (dl_idx)blockDim.x;\n");
        s.push_str("  const dl_idx first = (dl_idx)blockIdx.x * (dl_idx)blockDim.x + (dl_idx)threadIdx.x;\n");
    }
}

/// The kernel's entry point name: unique over operations, element types, shapes and index widths.
pub(crate) fn entry_name(key: &ModuleKey, shape: KernelShape, index: IndexWidth) -> String {
    let suffix = shape_suffix(shape, index);
    if key.kind() == Some(KernelKind::Cast) {
        format!("dlspan_cast_{}_from_{}_{suffix}", key.out().ident(), key.input().ident())
    } else if key.kind() == Some(KernelKind::Sum) {
        format!("dlspan_sum_{}_from_{}_{suffix}", key.out().ident(), key.input().ident())
    } else {
        format!("dlspan_copy_{}_{suffix}", key.out().ident())
    }
}

/// The source of a module's kernels of `shapes`, without the preamble (the host tests put several
/// modules in one file, and may leave shapes out).
pub(crate) fn module_body(key: &ModuleKey, shapes: &[KernelShape]) -> String {
    let out = key.out().c_name();
    let input = key.input().c_name();
    let mut src = String::new();
    let _ = writeln!(src, "\n// {} kernels: {} <- {}", key.name(), key.out(), key.input());
    if matches!(key.kind(), Some(KernelKind::Cast | KernelKind::Sum)) {
        let (Some(to), Some(from)) = (key.out().scalar_type(), key.input().scalar_type()) else {
            unreachable!("casts and sums are between scalars");
        };
        src.push_str(&cast_function(to, from));
    }
    for &shape in shapes {
        for index in [IndexWidth::I32, IndexWidth::I64] {
            let name = entry_name(key, shape, index);
            src.push_str(&kernel(key, &name, &out, &input, shape, index));
        }
    }
    src
}

/// The full source NVRTC compiles for a module.
pub(crate) fn module_source(key: &ModuleKey) -> String {
    let mut src = String::with_capacity(PREAMBLE.len() + 8192);
    src.push_str(PREAMBLE);
    src.push_str(&module_body(key, &shapes(key)));
    src
}

/// The statement computing one output element `o` (of C++ type `out`) from input `a`: a copy
/// (`boolean` outputs as 0 or 1) or a cast.
fn element_statement(kind: KernelKind, out: &str, boolean: bool, o: &str, a: &str) -> String {
    match kind {
        KernelKind::Cast => format!("{o} = dl_cast<{out}>({a});"),
        _ if boolean => format!("{o} = dl_truth({a});"),
        _ => format!("{o} = {a};"),
    }
}

fn kernel(key: &ModuleKey, name: &str, out: &str, input: &str, shape: KernelShape, index: IndexWidth) -> String {
    let kind = key.kind().expect("a copy, cast or sum");
    if kind == KernelKind::Sum {
        let float = key.out().scalar_type().is_some_and(|s| matches!(s, ScalarType::F32 | ScalarType::F64));
        return sum_kernel(name, out, input, float, shape, index);
    }
    let boolean = key.out().is_boolean();
    let element_statement = |o: &str, a: &str| element_statement(kind, out, boolean, o, a);
    let mut s = String::new();
    kernel_head(&mut s, name, shape, index);
    let _ = writeln!(s, "  {out}* const out = ({out}*)p.op[0].ptr;");
    let _ = writeln!(s, "  const {input}* const in0 = (const {input}*)p.op[1].ptr;");
    match shape {
        KernelShape::Flat { vector: 1 } => {
            s.push_str("  for (dl_idx i = first; i < n; i += step) {\n");
            let _ = writeln!(s, "    {}", element_statement("out[i]", "in0[i]"));
            s.push_str("  }\n");
        }
        KernelShape::Flat { vector } => {
            let v = vector;
            let _ = writeln!(s, "  const dl_idx packs = n / {v};");
            s.push_str("  for (dl_idx i = first; i < packs; i += step) {\n");
            let _ = writeln!(s, "    const dl_pack<{input}, {v}> a0 = ((const dl_pack<{input}, {v}>*)in0)[i];");
            let _ = writeln!(s, "    dl_pack<{out}, {v}> o;");
            let _ = writeln!(s, "#pragma unroll\n    for (int k = 0; k < {v}; ++k) {{");
            let _ = writeln!(s, "      {}", element_statement("o.e[k]", "a0.e[k]"));
            s.push_str("    }\n");
            let _ = writeln!(s, "    ((dl_pack<{out}, {v}>*)out)[i] = o;");
            s.push_str("  }\n");
            let _ = writeln!(s, "  for (dl_idx i = packs * {v} + first; i < n; i += step) {{");
            let _ = writeln!(s, "    {}", element_statement("out[i]", "in0[i]"));
            s.push_str("  }\n");
        }
        KernelShape::Strided { .. } | KernelShape::General => {
            strided_head(&mut s, shape, index, 2);
            let _ = writeln!(s, "    {}", element_statement("out[o0]", "in0[o1]"));
            s.push_str("  }\n");
        }
        KernelShape::Tiled => s.push_str(&tiled(kind, out, boolean)),
    }
    s.push_str("}\n");
    s
}

/// The body of the tiled kernel: a tile of `TILE` x `TILE` elements over the output's innermost
/// merged axis (`a`, the last) and the input's (`b`, the one before), the merged axes before them
/// numbering the tiles with `a` and `b`'s tile indices. A tile is read with consecutive threads
/// along `b` (coalesced reads of the input), computed into shared memory, and written with
/// consecutive threads along `a` (coalesced writes of the output); the row stride `TILE + 1` keeps
/// both walks free of shared-memory bank conflicts.
const TILED: &str = r"  DL_SHARED @OUT tile[@T][@T + 1];
  const int nd = p.ndim;
  const dl_idx ea = (dl_idx)p.extent[nd - 1], eb = (dl_idx)p.extent[nd - 2];
  const dl_sidx out_a = (dl_sidx)p.op[0].stride[nd - 1], out_b = (dl_sidx)p.op[0].stride[nd - 2];
  const dl_sidx in_a = (dl_sidx)p.op[1].stride[nd - 1], in_b = (dl_sidx)p.op[1].stride[nd - 2];
  const dl_idx tiles_a = (ea + @T - 1) / @T, tiles_b = (eb + @T - 1) / @T;
  dl_idx tiles = tiles_a * tiles_b;
  for (int k = 0; k < nd - 2; ++k) tiles *= (dl_idx)p.extent[k];
  for (dl_idx t = blockIdx.x; t < tiles; t += gridDim.x) {
    dl_idx rem = t / tiles_a;
    const dl_idx a0 = (t - rem * tiles_a) * @T;
    const dl_idx tb = rem / tiles_b;
    const dl_idx b0 = (rem - tb * tiles_b) * @T;
    rem = tb;
    dl_sidx o0 = 0, o1 = 0;
    for (int k = nd - 3; k >= 1; --k) {
      const dl_idx q = rem / (dl_idx)p.extent[k];
      const dl_idx c = rem - q * (dl_idx)p.extent[k];
      rem = q;
      o0 += (dl_sidx)c * (dl_sidx)p.op[0].stride[k];
      o1 += (dl_sidx)c * (dl_sidx)p.op[1].stride[k];
    }
    if (nd > 2) {
      o0 += (dl_sidx)rem * (dl_sidx)p.op[0].stride[0];
      o1 += (dl_sidx)rem * (dl_sidx)p.op[1].stride[0];
    }
    DL_EACH_THREAD {
      for (unsigned int e = threadIdx.x; e < @T * @T; e += blockDim.x) {
        const dl_idx a = a0 + e / @T, b = b0 + e % @T;
        if (a < ea && b < eb) @LOAD
      }
    }
    __syncthreads();
    DL_EACH_THREAD {
      for (unsigned int e = threadIdx.x; e < @T * @T; e += blockDim.x) {
        const dl_idx a = a0 + e % @T, b = b0 + e / @T;
        if (a < ea && b < eb) out[o0 + (dl_sidx)a * out_a + (dl_sidx)b * out_b] = tile[e % @T][e / @T];
      }
    }
    __syncthreads();
  }
";

/// The tiled kernel's body for `kind` writing elements of C++ type `out`.
fn tiled(kind: KernelKind, out: &str, boolean: bool) -> String {
    let load = element_statement(
        kind,
        out,
        boolean,
        "tile[e / @T][e % @T]",
        "in0[o1 + (dl_sidx)a * in_a + (dl_sidx)b * in_b]",
    );
    TILED.replace("@LOAD", &load).replace("@OUT", out).replace("@T", &TILE.to_string())
}

/// A sum kernel (pass one and pass two of `Stream::sum` are both one): every thread adds its
/// elements of the input `op[0]` (a grid-stride loop over the merged axes, each element converted
/// to the accumulator `acc` by `dl_cast`; for floats Kahan-compensated, the compensation dropped
/// where the sum is no longer finite so that infinities stay infinities), the block's threads'
/// partial sums are added as a tree in shared memory, and thread 0 writes the block's sum to
/// `op[1].ptr[blockIdx.x]`. The block has `BLOCK` threads, a power of two. On the host build each
/// phase runs for every thread in turn (`DL_EACH_THREAD`), and the kernel is called once per block.
fn sum_kernel(name: &str, acc: &str, input: &str, float: bool, shape: KernelShape, index: IndexWidth) -> String {
    let (idx, sidx) = index_types(index);
    let mut s = String::new();
    let _ = writeln!(s, "DL_KERNEL {name}(const dl_params p) {{");
    let _ = writeln!(s, "  typedef {idx} dl_idx;\n  typedef {sidx} dl_sidx;");
    s.push_str("  const dl_idx n = (dl_idx)p.n;\n");
    s.push_str("  const dl_idx step = (dl_idx)gridDim.x * (dl_idx)blockDim.x;\n");
    let _ = writeln!(s, "  const {input}* const in0 = (const {input}*)p.op[0].ptr;");
    let _ = writeln!(s, "  {acc}* const out = ({acc}*)p.op[1].ptr;");
    let _ = writeln!(s, "  DL_SHARED {acc} partial[{BLOCK}];");
    s.push_str("  DL_EACH_THREAD {\n");
    s.push_str("  const dl_idx first = (dl_idx)blockIdx.x * (dl_idx)blockDim.x + (dl_idx)threadIdx.x;\n");
    let _ = writeln!(s, "  {acc} sum = ({acc})0;");
    if float {
        let _ = writeln!(s, "  {acc} lost = ({acc})0;");
    }
    let add = if float {
        format!(
            "    const {acc} y = x - lost;\n    const {acc} t = sum + y;\n    \
             lost = (t - t) == (t - t) ? (t - sum) - y : ({acc})0;\n    sum = t;\n"
        )
    } else {
        "    sum = dl_add(sum, x);\n".to_owned()
    };
    match shape {
        KernelShape::Flat { .. } => {
            s.push_str("  for (dl_idx i = first; i < n; i += step) {\n");
            let _ = writeln!(s, "    const {acc} x = dl_cast<{acc}>(in0[i]);");
        }
        _ => {
            strided_head(&mut s, shape, index, 1);
            let _ = writeln!(s, "    const {acc} x = dl_cast<{acc}>(in0[o0]);");
        }
    }
    s.push_str(&add);
    s.push_str("  }\n");
    s.push_str(if float { "  partial[threadIdx.x] = sum - lost;\n" } else { "  partial[threadIdx.x] = sum;\n" });
    s.push_str("  }\n  __syncthreads();\n");
    s.push_str("  for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {\n");
    s.push_str("    DL_EACH_THREAD {\n");
    s.push_str("      if (threadIdx.x < half) partial[threadIdx.x] = dl_add(partial[threadIdx.x], partial[threadIdx.x + half]);\n");
    s.push_str("    }\n    __syncthreads();\n  }\n");
    s.push_str("  DL_EACH_THREAD {\n    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];\n  }\n}\n");
    s
}

/// `dl_cast<Out, In>`: the conversion of one input element to the output type (guarded: the host
/// tests put modules with the same conversion in one file).
pub(crate) fn cast_function(to: ScalarType, from: ScalarType) -> String {
    let (body, parameter) = (super::cast::conversion(to, from), super::cast::parameter(from));
    let guard = format!("DL_CAST_{}_{}", ident(to.c_name()), ident(from.c_name()));
    let (to, from) = (to.c_name(), from.c_name());
    format!(
        "#ifndef {guard}\n#define {guard} 1\ntemplate <> DL_MEMBER {to} dl_cast<{to}, {from}>({from} {parameter}) {{\n{body}}}\n#endif\n"
    )
}

/// A C identifier from a C++ type name.
fn ident(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}
