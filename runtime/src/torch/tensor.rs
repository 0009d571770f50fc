//! [`Tensor`]: an owned `AtenTensorHandle` (deleted on drop), its metadata read through the shim
//! with no Python call, and typed views of it through the same DLPack validation every import
//! uses.

use super::error::TorchError;
use super::shim::{Shim, TensorHandle, shim};
use crate::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLTensor};
use crate::{FromDlTensor, ImportOptions};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Where a tensor lives, as PyTorch says it.
///
/// ```
/// use dlspan::torch::Device;
/// assert_eq!(Device::Cuda(1).to_string(), "cuda:1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// Host memory.
    Cpu,
    /// A CUDA device's memory, by index.
    Cuda(i32),
    /// PyTorch's `meta` device: shapes and dtypes, no data (what fake tensors and `torch.compile`'s
    /// tracing hand a Meta kernel).
    Meta,
    /// Another device type (`aoti_torch_device_type_*` code).
    Other(i32),
}

impl core::fmt::Display for Device {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Cpu => f.write_str("cpu"),
            Self::Cuda(index) => write!(f, "cuda:{index}"),
            Self::Meta => f.write_str("meta"),
            Self::Other(code) => write!(f, "device type {code}"),
        }
    }
}

/// The DLPack data type of each torch dtype code this torch reports, resolved once.
fn dtypes(s: &Shim) -> &'static [(i32, DLDataType)] {
    static TABLE: OnceLock<Vec<(i32, DLDataType)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        use DLDataTypeCode as C;
        let t = |code, bits| DLDataType::new(code, bits, 1);
        {
            vec![
                ((s.aoti_torch_dtype_bool)(), t(C::kDLBool, 8)),
                ((s.aoti_torch_dtype_uint8)(), t(C::kDLUInt, 8)),
                ((s.aoti_torch_dtype_uint16)(), t(C::kDLUInt, 16)),
                ((s.aoti_torch_dtype_uint32)(), t(C::kDLUInt, 32)),
                ((s.aoti_torch_dtype_uint64)(), t(C::kDLUInt, 64)),
                ((s.aoti_torch_dtype_int8)(), t(C::kDLInt, 8)),
                ((s.aoti_torch_dtype_int16)(), t(C::kDLInt, 16)),
                ((s.aoti_torch_dtype_int32)(), t(C::kDLInt, 32)),
                ((s.aoti_torch_dtype_int64)(), t(C::kDLInt, 64)),
                ((s.aoti_torch_dtype_float16)(), t(C::kDLFloat, 16)),
                ((s.aoti_torch_dtype_bfloat16)(), t(C::kDLBfloat, 16)),
                ((s.aoti_torch_dtype_float32)(), t(C::kDLFloat, 32)),
                ((s.aoti_torch_dtype_float64)(), t(C::kDLFloat, 64)),
                ((s.aoti_torch_dtype_complex64)(), t(C::kDLComplex, 64)),
                ((s.aoti_torch_dtype_complex128)(), t(C::kDLComplex, 128)),
                ((s.aoti_torch_dtype_float8_e5m2)(), t(C::kDLFloat8_e5m2, 8)),
                ((s.aoti_torch_dtype_float8_e4m3fn)(), t(C::kDLFloat8_e4m3fn, 8)),
                ((s.aoti_torch_dtype_float8_e5m2fnuz)(), t(C::kDLFloat8_e5m2fnuz, 8)),
                ((s.aoti_torch_dtype_float8_e4m3fnuz)(), t(C::kDLFloat8_e4m3fnuz, 8)),
            ]
        }
    })
}

/// The torch dtype code of a DLPack data type, when torch has it.
pub(crate) fn torch_dtype(s: &Shim, dtype: DLDataType) -> Option<i32> {
    dtypes(s).iter().find(|(_, d)| *d == dtype).map(|(code, _)| *code)
}

/// A PyTorch tensor handed to a kernel by the dispatcher, or allocated by it: an owned
/// `AtenTensorHandle` (a reference to the tensor, deleted when this drops; the storage lives at
/// least as long), with its metadata, and typed views of its memory.
///
/// Views borrow the `Tensor`, so none outlives the reference that keeps the storage alive. A
/// shared view ([`view`](Self::view)) may be taken of any tensor; a mutable one
/// ([`view_mut`](Self::view_mut)) only of a tensor the kernel may write (an argument the schema
/// declares `Tensor(a!)` and that overlaps no other argument, or a tensor it allocated), and the
/// view's own rules then require unique strides.
pub struct Tensor {
    handle: NonNull<super::shim::AtenTensorOpaque>,
    /// The DLPack description: data (storage offset applied), device, rank, dtype, and sizes and
    /// strides pointing into `dims` (a heap buffer: it stays put when the `Tensor` moves).
    dl: DLTensor,
    /// The sizes then the strides, copied from the handle when it was taken (or as
    /// [`expand_rank`](Self::expand_rank) made them).
    dims: Vec<i64>,
    /// torch's dtype code.
    dtype_code: i32,
    device: Device,
    /// Whether the kernel may write the tensor.
    writable: bool,
    /// For an argument of a call (or a reference to one): whether the call is still running. Its
    /// metadata and writability hold for the call only: once it returns, the caller may resize or
    /// write the tensor, so a `Tensor` kept past it gives no views. `None` for a tensor the
    /// kernel allocated.
    call: Option<Arc<AtomicBool>>,
    /// The argument's name, for errors.
    name: &'static str,
}

// SAFETY: a `Tensor` is a reference-counted handle to a tensor; libtorch's reference counts are
// atomic, and the struct's own pointers are to its own `dims` and to the tensor's memory (read
// only through shared views).
unsafe impl Send for Tensor {}
// SAFETY: `&Tensor` reads metadata only (no interior mutability), and shared views of the memory.
unsafe impl Sync for Tensor {}

impl core::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tensor")
            .field("name", &self.name)
            .field("sizes", &self.sizes())
            .field("strides", &self.strides())
            .field("dtype", &self.dl.dtype)
            .field("device", &self.device)
            .finish()
    }
}

impl Tensor {
    /// Takes ownership of `handle` (an owning reference), reading its metadata; `call` is the
    /// liveness of the call it is an argument of (`None`: a tensor the kernel allocated).
    ///
    /// # Safety
    ///
    /// `handle` is a live, owning `AtenTensorHandle` that nothing else deletes.
    pub(crate) unsafe fn from_owned(
        handle: TensorHandle,
        name: &'static str,
        call: Option<Arc<AtomicBool>>,
    ) -> Result<Self, TorchError> {
        let s = shim()?;
        let handle = NonNull::new(handle).ok_or_else(|| TorchError::Kernel(format!("argument `{name}` is null")))?;
        // From here on a failure deletes the handle (the `Tensor` owns it).
        let mut tensor = Self {
            handle,
            dl: DLTensor::default(),
            dims: Vec::new(),
            dtype_code: -1,
            device: Device::Cpu,
            writable: false,
            call,
            name,
        };
        let h = handle.as_ptr();
        let (mut dim, mut sizes, mut strides) = (0i64, core::ptr::null_mut(), core::ptr::null_mut());
        let (mut dtype, mut device_type, mut index) = (0i32, 0i32, 0i32);
        let mut data = core::ptr::null_mut();
        macro_rules! get {
            ($getter:ident, $out:expr) => {
                // SAFETY: `h` is a live handle; the getter writes its out-parameter (sizes and
                // strides are borrowed from the handle: copied below, before anything else runs).
                s.status(stringify!($getter), unsafe { (s.$getter)(h, $out) })?
            };
        }
        get!(aoti_torch_get_dim, &mut dim);
        get!(aoti_torch_get_sizes, &mut sizes);
        get!(aoti_torch_get_strides, &mut strides);
        get!(aoti_torch_get_dtype, &mut dtype);
        get!(aoti_torch_get_device_type, &mut device_type);
        get!(aoti_torch_get_device_index, &mut index);
        let ndim = usize::try_from(dim)
            .ok()
            .filter(|&n| i32::try_from(n).is_ok())
            .ok_or_else(|| TorchError::Kernel(format!("argument `{name}`: rank {dim}")))?;
        if ndim > 0 && (sizes.is_null() || strides.is_null()) {
            return Err(TorchError::Kernel(format!("argument `{name}`: libtorch gave no sizes or strides")));
        }
        let mut dims = Vec::with_capacity(2 * ndim);
        if ndim > 0 {
            // SAFETY: the handle's `ndim` sizes and strides, live while it is (it is, and nothing
            // else runs meanwhile); copied at once.
            dims.extend_from_slice(unsafe { core::slice::from_raw_parts(sizes, ndim) });
            // SAFETY: as above.
            dims.extend_from_slice(unsafe { core::slice::from_raw_parts(strides, ndim) });
        }
        let device = {
            if device_type == (s.aoti_torch_device_type_cpu)() {
                Device::Cpu
            } else if device_type == (s.aoti_torch_device_type_cuda)() {
                Device::Cuda(index)
            } else if device_type == (s.aoti_torch_device_type_meta)() {
                Device::Meta
            } else {
                Device::Other(device_type)
            }
        };
        if device != Device::Meta {
            // SAFETY: as above; the data pointer has the storage offset applied.
            unsafe { s.status("aoti_torch_get_data_ptr", (s.aoti_torch_get_data_ptr)(h, &mut data))? };
        }
        tensor.dtype_code = dtype;
        tensor.device = device;
        tensor.dl = DLTensor {
            data,
            device: match device {
                Device::Cpu => DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
                Device::Cuda(index) => DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: index },
                // No DLPack device: views refuse it before the DLPack checks.
                Device::Meta | Device::Other(_) => DLDevice { device_type: DLDeviceType(0), device_id: 0 },
            },
            ndim: 0,
            dtype: dtypes(s).iter().find(|(code, _)| *code == dtype).map_or(DLDataType::default(), |(_, d)| *d),
            shape: core::ptr::null_mut(),
            strides: core::ptr::null_mut(),
            byte_offset: 0,
        };
        tensor.set_dims(dims);
        Ok(tensor)
    }

    /// Makes `dims` (sizes then strides) the tensor's, and points the description into it.
    fn set_dims(&mut self, dims: Vec<i64>) {
        let ndim = dims.len() / 2;
        self.dims = dims;
        // `i32` by construction (checked when read, at most `MAX_DISPATCH_RANK` when expanded).
        self.dl.ndim = ndim as i32;
        self.dl.shape = self.dims.as_mut_ptr();
        // In bounds: `dims` holds `2 * ndim` values.
        self.dl.strides = self.dims.as_mut_ptr().wrapping_add(ndim);
    }

    /// Gives up ownership of the handle (returned to libtorch, which takes it); the rest is
    /// dropped.
    pub(crate) fn into_raw(self) -> TensorHandle {
        let mut this = core::mem::ManuallyDrop::new(self);
        let handle = this.handle.as_ptr();
        drop(core::mem::take(&mut this.dims));
        drop(this.call.take());
        handle
    }

    /// Marks the tensor writable (the caller checked that the kernel may write it).
    pub(crate) fn set_writable(&mut self) {
        self.writable = true;
    }

    /// The argument's name in the operator's schema (`"result"` for tensors the kernel allocated).
    ///
    /// ```no_run
    /// # fn f(x: &dlspan::torch::Tensor) { assert_eq!(x.name(), "x"); }
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The extents (`x.shape`), as they were when the kernel got the tensor.
    pub fn sizes(&self) -> &[i64] {
        &self.dims[..self.dims.len() / 2]
    }

    /// The strides in elements (`x.stride()`), as they were when the kernel got the tensor.
    pub fn strides(&self) -> &[i64] {
        &self.dims[self.dims.len() / 2..]
    }

    /// The number of axes.
    pub fn dim(&self) -> usize {
        self.dims.len() / 2
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.sizes().iter().map(|&s| s.max(0) as usize).product()
    }

    /// The DLPack data type (`None` for a dtype DLPack has no code for).
    pub fn dtype(&self) -> Option<DLDataType> {
        (self.dl.dtype != DLDataType::default()).then_some(self.dl.dtype)
    }

    /// torch's dtype code (`c10::ScalarType`, as the shim's `aoti_torch_dtype_*()` getters give it).
    pub fn dtype_code(&self) -> i32 {
        self.dtype_code
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Prepends axes of extent 1 until the tensor has `rank` axes: NumPy's broadcasting view of
    /// it, as an element-wise kernel of that rank reads it. Only dlspan's description changes
    /// ([`sizes`](Self::sizes), [`strides`](Self::strides), the views); the torch tensor does
    /// not, and a rank already `rank` or more is left as it is.
    ///
    /// # Errors
    ///
    /// [`TorchError::Kernel`] above [`MAX_DISPATCH_RANK`](crate::dtype::MAX_DISPATCH_RANK) axes.
    ///
    /// ```no_run
    /// # fn f(mut b: dlspan::torch::Tensor) -> Result<(), dlspan::torch::TorchError> {
    /// // `b` of shape [8]:
    /// b.expand_rank(3)?;
    /// assert_eq!(b.sizes(), [1, 1, 8]);
    /// # Ok(()) }
    /// ```
    pub fn expand_rank(&mut self, rank: usize) -> Result<(), TorchError> {
        let own = self.dim();
        if rank <= own {
            return Ok(());
        }
        if rank > crate::dtype::MAX_DISPATCH_RANK {
            return Err(TorchError::Kernel(format!(
                "argument `{}`: rank {rank} is more than the {} axes dlspan's kernels take",
                self.name,
                crate::dtype::MAX_DISPATCH_RANK
            )));
        }
        let mut dims = vec![1i64; 2 * rank];
        let (sizes, strides) = dims.split_at_mut(rank);
        sizes[rank - own..].copy_from_slice(self.sizes());
        strides[..rank - own].fill(0);
        strides[rank - own..].copy_from_slice(self.strides());
        self.set_dims(dims);
        Ok(())
    }

    /// The DLPack description of the tensor, borrowed from it (for DLPack-level code).
    pub fn as_dltensor(&self) -> &DLTensor {
        &self.dl
    }

    /// Checks what every view needs: the call still running (for an argument), a DLPack dtype
    /// and a device with data.
    fn viewable(&self) -> Result<(), TorchError> {
        if self.call.as_ref().is_some_and(|running| !running.load(Ordering::Acquire)) {
            return Err(TorchError::Kernel(format!(
                "argument `{}` is used after its call returned: a call's tensors are for the call (the caller may resize or write them since)",
                self.name
            )));
        }
        if self.dtype().is_none() {
            return Err(TorchError::Dtype { name: self.name.to_owned(), code: self.dtype_code });
        }
        match self.device {
            Device::Cpu | Device::Cuda(_) => Ok(()),
            other => Err(TorchError::Kernel(format!(
                "argument `{}` is on the {other} device: it has no memory to view (a Meta kernel computes shapes only)",
                self.name
            ))),
        }
    }

    /// A shared, typed view of the tensor: any dlspan view type (`HostMdspan<'_, f32, 2>`,
    /// `DeviceMdspan`, packed and dynamic views), validated by the DLPack rules of section
    /// [I](crate::rules#i) (dtype, rank, static extents, layout, device, alignment).
    ///
    /// # Errors
    ///
    /// [`TorchError::Argument`] naming the argument and the rule it broke;
    /// [`TorchError::Dtype`] for a dtype without a DLPack code.
    ///
    /// ```no_run
    /// use dlspan::HostMdspan;
    /// # fn f(x: &dlspan::torch::Tensor) -> Result<(), dlspan::torch::TorchError> {
    /// let v: HostMdspan<'_, f32, 2, dlspan::LayoutStride> = x.view()?;
    /// println!("{}", v[[0, 0]]);
    /// # Ok(()) }
    /// ```
    pub fn view<'a, V: FromDlTensor<'a>>(&'a self) -> Result<V, TorchError> {
        self.viewable()?;
        if V::MUTABLE {
            return self.refused_mutable();
        }
        // SAFETY: the description is of the tensor's memory (data with the storage offset
        // applied, the handle's sizes and strides), kept alive by the handle `self` owns for `'a`;
        // a shared view only reads, and no mutable view of the same memory is live meanwhile: a
        // mutable view exists only of a tensor the call checked overlaps no other argument.
        unsafe { V::from_dltensor_with(&self.dl, ImportOptions::default()) }
            .map_err(|error| TorchError::Argument { name: self.name.to_owned(), error })
    }

    /// A mutable, typed view of the tensor, as [`view`](Self::view), for a tensor the kernel may
    /// write: an argument its schema declares `Tensor(a!)` (and that overlaps no other argument),
    /// or a tensor it allocated. The view's rules refuse overlapping strides (an expanded input).
    ///
    /// # Errors
    ///
    /// As [`view`](Self::view), and [`TorchError::Argument`] with
    /// [`DlpackError::ReadOnly`](crate::DlpackError::ReadOnly) for a tensor the kernel may not write.
    pub fn view_mut<'a, V: FromDlTensor<'a>>(&'a mut self) -> Result<V, TorchError> {
        self.viewable()?;
        if !self.writable {
            return self.refused_mutable();
        }
        // SAFETY: as for `view`; `&mut self` is the only access to the tensor for `'a`, and the
        // memory is reached through no other argument of the call (checked when it was marked
        // writable) nor through any other owner of the kernel (a fresh allocation).
        unsafe { V::from_dltensor_with(&self.dl, ImportOptions::default()) }
            .map_err(|error| TorchError::Argument { name: self.name.to_owned(), error })
    }

    fn refused_mutable<V>(&self) -> Result<V, TorchError> {
        Err(TorchError::Argument { name: self.name.to_owned(), error: crate::DlpackError::ReadOnly })
    }

    /// Another owning reference to the same tensor (`at::Tensor`'s copy: the same storage,
    /// metadata and dtype), named `name` for errors, read only; refused for a writable tensor (a
    /// second way to elements a mutable view may be writing). A reference to an argument is, like
    /// it, for the call only.
    ///
    /// # Errors
    ///
    /// [`TorchError::Shim`] when libtorch refuses.
    ///
    /// ```no_run
    /// # fn f(x: &dlspan::torch::Tensor) -> Result<(), dlspan::torch::TorchError> {
    /// let kept = x.new_reference("kept")?; // keeps the storage alive after the call's handle goes
    /// assert_eq!(kept.sizes(), x.sizes());
    /// # Ok(()) }
    /// ```
    pub fn new_reference(&self, name: &'static str) -> Result<Self, TorchError> {
        if self.writable {
            return Err(TorchError::Kernel(format!(
                "argument `{}` is writable: a second reference to it would let its elements be read while a mutable view writes them",
                self.name
            )));
        }
        let s = shim()?;
        let mut handle = core::ptr::null_mut();
        // SAFETY: a live handle; the new owning handle is written.
        s.status("aoti_torch_new_tensor_handle", unsafe {
            (s.aoti_torch_new_tensor_handle)(self.handle.as_ptr(), &mut handle)
        })?;
        // SAFETY: a new owning reference, owned by the returned `Tensor` alone.
        unsafe { Self::from_owned(handle, name, self.call.clone()) }
    }

    /// A new compact row-major tensor of `sizes`, data type `dtype` and on `device`: what a
    /// kernel returns. It is writable. On the CPU its bytes are zero (libtorch's allocator leaves
    /// them uninitialised, and a mutable view may be read before it is written: dlspan zeroes them
    /// first, [rule T4](crate::rules#t4)); on CUDA it holds whatever its memory held, as
    /// `torch.empty` does (no Rust code reads device memory in place).
    ///
    /// # Errors
    ///
    /// [`TorchError::Shim`] when libtorch refuses the allocation; [`TorchError::Kernel`] for a
    /// dtype torch has no code for.
    pub fn empty(sizes: &[i64], dtype: DLDataType, device: Device) -> Result<Self, TorchError> {
        let mut tensor = Self::uninit(sizes, dtype, device)?;
        if device == Device::Cpu {
            let view = tensor.view_mut::<crate::DynMdspanMut<'_, crate::Host>>()?;
            let (base, range) = (view.data_handle().cast::<u8>(), view.byte_range());
            if !range.is_empty() {
                // The first byte an element occupies, at or after `data` (rule I15).
                let first = base.wrapping_add(range.start - base.addr());
                // SAFETY: the bytes the fresh tensor's elements occupy, which it owns alone and
                // libtorch allocated for it; zero bytes are a valid value of every element type.
                unsafe { core::ptr::write_bytes(first, 0, range.len()) };
            }
        }
        Ok(tensor)
    }

    /// [`empty`](Self::empty) left uninitialised, for the results of element-wise kernels alone:
    /// their bodies only write them (the macro's analysis gives them role `Output`), so nothing
    /// reads a byte before the kernel has written it.
    pub(crate) fn uninit(sizes: &[i64], dtype: DLDataType, device: Device) -> Result<Self, TorchError> {
        let s = shim()?;
        let code = torch_dtype(s, dtype)
            .ok_or_else(|| TorchError::Kernel(format!("torch has no dtype for DLPack data type {dtype}")))?;
        let mut strides = vec![1i64; sizes.len()];
        for k in (0..sizes.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1].saturating_mul(sizes[k + 1].max(1));
        }
        let (device_type, index) = {
            match device {
                Device::Cpu => ((s.aoti_torch_device_type_cpu)(), 0),
                Device::Cuda(index) => ((s.aoti_torch_device_type_cuda)(), index),
                Device::Meta => ((s.aoti_torch_device_type_meta)(), 0),
                Device::Other(code) => (code, 0),
            }
        };
        let mut handle = core::ptr::null_mut();
        // SAFETY: `sizes` and `strides` hold `sizes.len()` values each; the handle is written.
        let code = unsafe {
            (s.aoti_torch_empty_strided)(
                sizes.len() as i64,
                sizes.as_ptr(),
                strides.as_ptr(),
                code,
                device_type,
                index,
                &mut handle,
            )
        };
        s.status("aoti_torch_empty_strided", code)?;
        // SAFETY: a new owning reference.
        let mut tensor = unsafe { Self::from_owned(handle, "result", None) }?;
        tensor.writable = true;
        Ok(tensor)
    }

    /// A new tensor of `like`'s sizes, dtype and device (compact row-major): as [`empty`](Self::empty).
    ///
    /// # Errors
    ///
    /// As [`empty`](Self::empty); [`TorchError::Dtype`] when `like`'s dtype has no DLPack code.
    pub fn empty_like(like: &Tensor) -> Result<Self, TorchError> {
        let dtype =
            like.dtype().ok_or_else(|| TorchError::Dtype { name: like.name.to_owned(), code: like.dtype_code })?;
        Self::empty(like.sizes(), dtype, like.device)
    }

    /// The bytes the tensor's elements span, `[first, last)` as addresses, for the aliasing check.
    pub(crate) fn span(&self) -> Option<(usize, usize)> {
        let size = usize::from(self.dl.dtype.bits).div_ceil(8).max(1);
        if self.dl.data.is_null() || self.numel() == 0 {
            return None;
        }
        let base = self.dl.data as usize as isize;
        let (mut low, mut high) = (0isize, 0isize);
        for (&extent, &stride) in self.sizes().iter().zip(self.strides()) {
            let reach = (extent as isize - 1).saturating_mul(stride as isize).saturating_mul(size as isize);
            if reach < 0 { low = low.saturating_add(reach) } else { high = high.saturating_add(reach) }
        }
        Some((base.saturating_add(low) as usize, base.saturating_add(high).saturating_add(size as isize) as usize))
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        if let Ok(s) = shim() {
            // SAFETY: the handle is owned by `self` and deleted once, here.
            let _ = unsafe { (s.aoti_torch_delete_tensor_object)(self.handle.as_ptr()) };
        }
    }
}
