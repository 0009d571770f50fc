//! How an operation reaches the GPU: operands checked against the output's extents and the
//! stream's device, the kernel planned and fetched (compiled on first use), and the launch enqueued
//! between the waits and records that order it with its operands' other uses ([`run`]).

use super::error::CudaError;
use super::kernel::{ModuleKey, Operand, Plan, prepare_into};
use super::order::{EventRef, Order, run, schedule};
use super::stream::Stream;
use crate::dtype::DlElement;
use crate::error::DlpackError;
use core::mem::size_of;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

/// The bytes of a value of an element type (no padding: [`DlElement`]'s size rule).
pub(super) fn bytes_of<T: DlElement>(value: &T) -> &[u8] {
    // SAFETY: `value` is a live `T` of `size_of::<T>()` initialised bytes (element types have no
    // padding), read as bytes for the borrow.
    unsafe { core::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) }
}

/// The bytes of a slice of element values.
pub(super) fn slice_bytes<T: DlElement>(values: &[T]) -> &[u8] {
    // SAFETY: as for `bytes_of`, for `values.len()` consecutive elements.
    unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) }
}

impl Stream {
    /// Checks that every operand has the output's extents and lives on this stream's device.
    pub(super) fn check<const R: usize>(
        &self,
        extents: [usize; R],
        operands: &[(&[usize; R], Option<i32>)],
    ) -> Result<(), CudaError> {
        let expected = self.gpu().ordinal() as i32;
        for &(found, ordinal) in operands {
            if let Some(axis) = (0..R).find(|&axis| found[axis] != extents[axis]) {
                let (expected, found) = (extents[axis], found[axis]);
                return Err(CudaError::View(DlpackError::ShapeMismatch { axis, expected, found }));
            }
            if let Some(found) = ordinal.filter(|&o| o != expected) {
                return Err(CudaError::WrongDevice { expected, found });
            }
        }
        Ok(())
    }

    /// The kernel of `key` over `operands` (output first, slot order for element-wise kernels) and
    /// its plan, with `scalars` (declaration order) placed in the parameters, compiling the module
    /// on first use; `None` when there are no elements.
    pub(super) fn kernel<const R: usize>(
        &self,
        key: &ModuleKey,
        extents: [usize; R],
        operands: &[Operand<R>],
        scalars: &[&[u8]],
    ) -> Result<Option<(CudaFunction, Plan)>, CudaError> {
        let mut plan = Plan::EMPTY;
        if !prepare_into(key, extents, operands, scalars, &mut plan)? {
            return Ok(None);
        }
        let function = self.gpu().function(key, &plan)?;
        Ok(Some((function, plan)))
    }

    /// Enqueues a kernel on this stream, unordered: callers order it with [`run`].
    pub(super) fn enqueue(&self, function: &CudaFunction, plan: &Plan) -> Result<(), CudaError> {
        let config = LaunchConfig { grid_dim: (plan.grid, 1, 1), block_dim: (plan.block, 1, 1), shared_mem_bytes: 0 };
        let mut launch = self.cudarc().launch_builder(function);
        launch.arg(&plan.params);
        // SAFETY: the kernel takes one `dl_params` by value, which `Params` mirrors; every address
        // in it is a validated view's first element whose mapping reaches only elements of its
        // allocation (the merged strides and extents are the views' own); outputs are unique
        // mutable views, so no two threads write one element; the element types are the module's;
        // the caller orders the launch with the memory's other uses.
        unsafe { launch.launch(config) }?;
        Ok(())
    }

    /// Plans and enqueues one kernel of `key` over `operands` (output first), ordered with the
    /// other uses of their memory by `orders` (one per operand).
    pub(super) fn launch<const R: usize>(
        &self,
        key: &ModuleKey,
        extents: [usize; R],
        operands: &[Operand<R>],
        orders: &[Order<EventRef<'_>>],
        scalars: &[&[u8]],
    ) -> Result<(), CudaError> {
        let Some((function, plan)) = self.kernel(key, extents, operands, scalars)? else {
            return Ok(());
        };
        run(&**self.cudarc(), &schedule(orders), || self.enqueue(&function, &plan))
    }
}
