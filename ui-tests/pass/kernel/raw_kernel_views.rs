// Rule: raw kernels run on the CPU over host and managed views of any layout and static extents, a
// view read where the kernel takes `&`, written where it takes `&mut`; the same view may be read
// twice.
use dlspan::kernel::{Cpu, KernelError, LaunchConfig};
use dlspan::{Dyn, HostMdspan, HostMdspanMut, LayoutLeft, LayoutStride, ManagedMdspan, ManagedMdspanMut, Mdspan, Static};

dlspan::kernel! {
    fn add<T>(x: &[T; 2], y: &[T; 2], out: &mut [T; 2]) {
        r#"
        const dl::index_t i = blockIdx.y, j = blockIdx.x;
        if (i < out.extent(0) && j < out.extent(1)) out(i, j) = x(i, j) + y(i, j);
        "#
    }
}

#[allow(dead_code)]
fn managed(x: &ManagedMdspan<'_, f32, 2>, out: &mut ManagedMdspanMut<'_, f32, 2>) -> Result<(), KernelError> {
    let config = LaunchConfig::new([out.extents()[1] as u32, out.extents()[0] as u32, 1], [1, 1, 1]);
    // SAFETY: guarded by the extents, which the views share.
    unsafe { add.launch(Cpu, config, x, x, out) }
}

#[allow(dead_code)]
fn mixed(
    x: &HostMdspan<'_, f64, 2, LayoutLeft>,
    y: &Mdspan<'_, f64, 2, (Static<2>, Dyn), LayoutStride, dlspan::Host>,
    out: &mut HostMdspanMut<'_, f64, 2>,
) -> Result<(), KernelError> {
    let config = LaunchConfig::new([out.extents()[1] as u32, out.extents()[0] as u32, 1], [1, 1, 1]);
    // SAFETY: guarded by the extents, which the views share.
    unsafe { add.launch(Cpu, config, x, y, out) }
}

fn main() {}
