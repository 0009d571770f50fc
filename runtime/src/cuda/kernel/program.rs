//! The source of any module: [`ModuleKey`]'s generated code, kernel names and shapes, from the copy
//! and cast generator (`source`) or the element-wise one (`elementwise`).

use super::elementwise;
use super::module::ModuleKey;
use super::source;
use crate::cuda::abi::{IndexWidth, KernelShape};

// The generated source of a module is the module's: its methods live here, above both generators.
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
        match self {
            Self::Builtin { .. } => source::module_source(self),
            Self::Elementwise(instance) => elementwise::module_source(instance),
            // `ModuleKey::raw` checked the argument layout, the one way the source can fail.
            Self::Raw(instance) => instance.source_cuda().unwrap_or_default(),
        }
    }

    /// The module's kernels of `shapes` only, without the preamble (the host tests build thousands
    /// of conversions and need one kernel of each).
    pub fn body_of(&self, shapes: &[KernelShape]) -> String {
        match self {
            Self::Builtin { .. } => source::module_body(self, shapes),
            Self::Elementwise(instance) => elementwise::module_body(instance, shapes),
            Self::Raw(instance) => {
                let source = instance.source_cuda().unwrap_or_default();
                source.get(crate::kernel::HEADER.len()..).unwrap_or_default().to_owned()
            }
        }
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
        match self {
            Self::Builtin { .. } => source::entry_name(self, shape, index),
            Self::Elementwise(instance) => elementwise::entry_name(instance, shape, index),
            Self::Raw(instance) => instance.entry(),
        }
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
        match self {
            Self::Builtin { .. } => source::shapes(self),
            Self::Elementwise(instance) => elementwise::shapes(instance),
            Self::Raw(_) => vec![KernelShape::General],
        }
    }
}
