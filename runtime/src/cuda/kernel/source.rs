//! CUDA C++ source of a kernel module, generated from the operation and the element types.
//!
//! A module holds one kernel per [`KernelShape`] and [`IndexWidth`]: the flat kernels (every operand
//! contiguous, `V` elements per aligned load), the strided ones (merged axes, rank 1 to 4
//! unrolled, or any rank up to [`MAX_KERNEL_RANK`](crate::cuda::abi::MAX_KERNEL_RANK)) and, for operations of one input, the tiled one
//! (a transpose through shared memory).

use super::module::ModuleKey;
use crate::cuda::abi::{IndexWidth, KernelKind, KernelShape, TILE, TILE_MAX_ELEMENT};
use core::fmt::Write as _;

// The generated source of a module is the module's: its methods live here, beside the generator.
impl ModuleKey {
    /// The CUDA C++ source of the module (the preamble and every kernel shape).
    ///
    /// ```
    /// use dlspan::cuda::KernelKind;
    /// use dlspan::cuda::kernel::ModuleKey;
    /// let src = ModuleKey::new::<u8, u8>(KernelKind::Copy)?.source();
    /// assert!(src.contains("dlspan_copy_uint8_flat16_i32"));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn source(&self) -> String {
        module_source(self)
    }

    /// The module's kernels of `shapes` only, without the preamble (the host tests build thousands
    /// of conversions and need one kernel of each).
    pub fn body_of(&self, shapes: &[KernelShape]) -> String {
        module_body(self, shapes)
    }

    /// The name of the kernel of `shape` and `index` in this module.
    ///
    /// ```
    /// use dlspan::cuda::KernelKind;
    /// use dlspan::cuda::kernel::{IndexWidth, KernelShape, ModuleKey};
    /// let key = ModuleKey::new::<f32, f32>(KernelKind::Add)?;
    /// assert_eq!(key.entry(KernelShape::Strided { rank: 2 }, IndexWidth::I64), "dlspan_add_float32_rank2_i64");
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn entry(&self, shape: KernelShape, index: IndexWidth) -> String {
        entry_name(self, shape, index)
    }

    /// Every kernel shape the module holds.
    ///
    /// ```
    /// use dlspan::cuda::KernelKind;
    /// use dlspan::cuda::kernel::{KernelShape, ModuleKey};
    /// let shapes = ModuleKey::new::<f64, f64>(KernelKind::Copy)?.shapes();
    /// assert!(shapes.contains(&KernelShape::Flat { vector: 2 }) && shapes.contains(&KernelShape::General));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn shapes(&self) -> Vec<KernelShape> {
        shapes(self)
    }
}

/// The shared preamble: storage types, parameters, conversions and arithmetic.
pub(crate) const PREAMBLE: &str = include_str!("preamble.cu");

/// Every kernel shape a module holds for element types of these sizes.
fn shapes(key: &ModuleKey) -> Vec<KernelShape> {
    let mut shapes = Vec::new();
    let widest = key.out.size.max(key.input.size);
    let powers = key.out.size.is_power_of_two() && key.input.size.is_power_of_two();
    let mut vector = 1;
    while vector == 1 || (powers && vector * widest <= 16) {
        shapes.push(KernelShape::Flat { vector: vector as u8 });
        vector *= 2;
    }
    shapes.extend((1..=4).map(|rank| KernelShape::Strided { rank }));
    shapes.push(KernelShape::General);
    if key.kind.inputs() == 1 && widest <= TILE_MAX_ELEMENT {
        shapes.push(KernelShape::Tiled);
    }
    shapes
}

/// The kernel's entry point name: unique over operations, element types, shapes and index widths.
fn entry_name(key: &ModuleKey, shape: KernelShape, index: IndexWidth) -> String {
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
    if key.kind == KernelKind::Cast {
        format!("dlspan_cast_{}_from_{}_{shape}_{index}", key.out.ident(), key.input.ident())
    } else {
        format!("dlspan_{}_{}_{shape}_{index}", key.kind, key.out.ident())
    }
}

/// The source of a module's kernels of `shapes`, without the preamble (the host tests put several
/// modules in one file, and may leave shapes out).
fn module_body(key: &ModuleKey, shapes: &[KernelShape]) -> String {
    let out = key.out.c_name();
    let input = key.input.c_name();
    let mut src = String::new();
    let _ = writeln!(src, "\n// {} kernels: {} <- {}", key.kind, key.out, key.input);
    if key.kind == KernelKind::Cast {
        src.push_str(&cast_function(key));
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
fn module_source(key: &ModuleKey) -> String {
    let mut src = String::with_capacity(PREAMBLE.len() + 8192);
    src.push_str(PREAMBLE);
    src.push_str(&module_body(key, &shapes(key)));
    src
}

/// The statement computing one output element `o` (of C++ type `out`) from inputs `a`, `b` and
/// scalar `s0`; `boolean` outputs are copied as 0 or 1.
fn element_statement(kind: KernelKind, out: &str, boolean: bool, o: &str, a: &str, b: &str) -> String {
    match kind {
        KernelKind::Copy if boolean => format!("{o} = dl_truth({a});"),
        KernelKind::Copy => format!("{o} = {a};"),
        KernelKind::Fill => format!("{o} = s0;"),
        KernelKind::Add => format!("{o} = dl_add({a}, {b});"),
        KernelKind::Scale => format!("{o} = dl_mul(s0, {a});"),
        KernelKind::Axpy => format!("{o} = dl_add(dl_mul(s0, {a}), {b});"),
        KernelKind::Cast => format!("{o} = dl_cast<{out}>({a});"),
    }
}

fn kernel(key: &ModuleKey, name: &str, out: &str, input: &str, shape: KernelShape, index: IndexWidth) -> String {
    let inputs = key.kind.inputs();
    let boolean = key.out.is_boolean();
    let element_statement = |kind, out, o, a, b| element_statement(kind, out, boolean, o, a, b);
    let (idx, sidx) = match index {
        IndexWidth::I32 => ("unsigned int", "int"),
        IndexWidth::I64 => ("dl_u64", "dl_i64"),
    };
    let mut s = String::new();
    let _ = writeln!(s, "DL_KERNEL {name}(const dl_params p) {{");
    let _ = writeln!(s, "  typedef {idx} dl_idx;\n  typedef {sidx} dl_sidx;");
    if shape != KernelShape::Tiled {
        s.push_str("  const dl_idx n = (dl_idx)p.n;\n");
        s.push_str("  const dl_idx step = (dl_idx)gridDim.x * (dl_idx)blockDim.x;\n");
        s.push_str("  const dl_idx first = (dl_idx)blockIdx.x * (dl_idx)blockDim.x + (dl_idx)threadIdx.x;\n");
    }
    let _ = writeln!(s, "  {out}* const out = ({out}*)p.op[0].ptr;");
    for k in 0..inputs {
        let _ = writeln!(s, "  const {input}* const in{k} = (const {input}*)p.op[{}].ptr;", k + 1);
    }
    if key.kind.scalars() > 0 {
        let _ = writeln!(s, "  const {out} s0 = dl_scalar<{out}>(p.scalar[0]);");
    }
    match shape {
        KernelShape::Flat { vector: 1 } => {
            s.push_str("  for (dl_idx i = first; i < n; i += step) {\n");
            let _ = writeln!(s, "    {}", element_statement(key.kind, out, "out[i]", "in0[i]", "in1[i]"));
            s.push_str("  }\n");
        }
        KernelShape::Flat { vector } => {
            let v = vector;
            let _ = writeln!(s, "  const dl_idx packs = n / {v};");
            s.push_str("  for (dl_idx i = first; i < packs; i += step) {\n");
            for k in 0..inputs {
                let _ = writeln!(s, "    const dl_pack<{input}, {v}> a{k} = ((const dl_pack<{input}, {v}>*)in{k})[i];");
            }
            let _ = writeln!(s, "    dl_pack<{out}, {v}> o;");
            let _ = writeln!(s, "#pragma unroll\n    for (int k = 0; k < {v}; ++k) {{");
            let _ = writeln!(s, "      {}", element_statement(key.kind, out, "o.e[k]", "a0.e[k]", "a1.e[k]"));
            s.push_str("    }\n");
            let _ = writeln!(s, "    ((dl_pack<{out}, {v}>*)out)[i] = o;");
            s.push_str("  }\n");
            let _ = writeln!(s, "  for (dl_idx i = packs * {v} + first; i < n; i += step) {{");
            let _ = writeln!(s, "    {}", element_statement(key.kind, out, "out[i]", "in0[i]", "in1[i]"));
            s.push_str("  }\n");
        }
        KernelShape::Strided { .. } | KernelShape::General => {
            let operands = 1 + inputs;
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
                IndexWidth::I32 => {
                    s.push_str("      const dl_idx q = (__umulhi(rem, p.magic[k]) + rem) >> p.shift[k];\n")
                }
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
            let _ = writeln!(s, "    {}", element_statement(key.kind, out, "out[o0]", "in0[o1]", "in1[o2]"));
            s.push_str("  }\n");
        }
        KernelShape::Tiled => s.push_str(&tiled(key.kind, out, boolean)),
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
        "",
    );
    TILED.replace("@LOAD", &load).replace("@OUT", out).replace("@T", &TILE.to_string())
}

/// `dl_cast<Out, In>`: the conversion of one input element to the output type.
fn cast_function(key: &ModuleKey) -> String {
    let (Some(to), Some(from)) = (key.out.scalar_type(), key.input.scalar_type()) else {
        return String::new();
    };
    let (body, parameter) = (super::cast::conversion(to, from), super::cast::parameter(from));
    let (to, from) = (to.c_name(), from.c_name());
    format!("template <> DL_MEMBER {to} dl_cast<{to}, {from}>({from} {parameter}) {{\n{body}}}\n")
}
