//! Shared pieces of the benchmarks: a counting allocator to report allocations per operation, a
//! record of those counts for the report, the allocator setting export benches need, and the
//! hand-written logical-order loop the iteration benches compare with.
//!
//! Run everything and regenerate `BENCHMARKS.md` with `bash scripts/bench.sh`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write as _;
use std::path::PathBuf;

/// A global allocator that counts allocations per thread and forwards to the system allocator.
///
/// ```
/// # use dlspan_benches::{allocations_during, CountingAllocator};
/// // In a bench binary: `#[global_allocator] static A: CountingAllocator = CountingAllocator;`
/// let n = allocations_during(|| {});
/// assert_eq!(n, 0);
/// ```
pub struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made on this thread while `f` runs (meaningful when [`CountingAllocator`] is the
/// global allocator).
pub fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// Allocations per call of `f`, averaged over `iterations` calls.
///
/// ```
/// assert_eq!(dlspan_benches::allocations_per_call(10, || {}), 0.0);
/// ```
pub fn allocations_per_call(iterations: u64, mut f: impl FnMut()) -> f64 {
    let total = allocations_during(|| {
        for _ in 0..iterations {
            f();
        }
    });
    total as f64 / iterations as f64
}

/// Where criterion writes its results (and the report reads them).
fn criterion_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("criterion")
}

/// Measures allocations per call of `f` and records them for the report as `group/id`, next to
/// criterion's timings (`target/criterion/allocations.tsv`). Also prints them.
pub fn record_allocations(group: &str, id: &str, mut f: impl FnMut()) {
    let per_call = allocations_per_call(1_000, &mut f);
    println!("{group}/{id}: {per_call} allocations per call");
    let dir = criterion_dir();
    if std::fs::create_dir_all(&dir).is_ok()
        && let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("allocations.tsv"))
    {
        let _ = writeln!(file, "{group}/{id}\t{per_call}");
    }
}

/// Keeps freed memory in the process (glibc): large blocks come from the heap instead of `mmap`,
/// and the heap is not trimmed, so an export bench that frees a 1 MiB owner in its timed loop
/// measures the exchange, not `munmap` and page faults. A no-op elsewhere.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // glibc's mallopt parameters.
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: mallopt only changes allocator tuning parameters; both values are in range.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 32 << 20);
        }
        // SAFETY: as above.
        unsafe {
            mallopt(M_TRIM_THRESHOLD, i32::MAX);
        }
    }
}

/// The managed exports the benches compare, shared by the criterion bench (`owned`) and the
/// instruction-count harness (`export_instructions`): dlspan's, dlpark's (the pattern its
/// documentation shows) and a hand-written single box (the floor). Each takes a 64x64 `Vec<f32>`
/// owner and returns the raw versioned tensor a C consumer would receive.
pub mod managed {
    use dlspan::DlElement;
    use dlspan::ffi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};
    use std::ffi::c_void;

    /// The exported shape: a 64x64 owner (16 KiB) is cheap and stable to free in a timed loop, so
    /// the numbers show the exchange itself.
    pub const SHAPE: [usize; 2] = [64, 64];

    /// The floor: header, shape, strides and owner in one box, written by hand.
    #[repr(C)]
    pub struct HandBox {
        managed: DLManagedTensorVersioned,
        shape: [i64; 2],
        strides: [i64; 2],
        owner: Vec<f32>,
    }

    /// The floor's deleter: frees the box (and so the owner).
    ///
    /// # Safety
    /// `managed` comes from [`hand_export`] and is released once.
    pub unsafe extern "C" fn hand_deleter(managed: *mut DLManagedTensorVersioned) {
        // SAFETY: the header is the first field of a leaked HandBox (the caller's contract).
        drop(unsafe { Box::from_raw(managed.cast::<HandBox>()) });
    }

    /// The floor's export: one box, fields set in place, no checks.
    ///
    /// ```
    /// let raw = dlspan_benches::managed::hand_export(vec![0.0; 64 * 64]);
    /// // SAFETY: a live export, released once.
    /// unsafe { dlspan_benches::managed::release(raw) };
    /// ```
    #[inline]
    pub fn hand_export(mut owner: Vec<f32>) -> *mut DLManagedTensorVersioned {
        let data = owner.as_mut_ptr().cast::<c_void>();
        let boxed = Box::into_raw(Box::new(HandBox {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion::CURRENT,
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(hand_deleter),
                flags: 0,
                dl_tensor: DLTensor::default(),
            },
            shape: [SHAPE[0] as i64, SHAPE[1] as i64],
            strides: [SHAPE[1] as i64, 1],
            owner,
        }));
        // SAFETY: `boxed` is live and unique; its fields are set in place.
        let hand = unsafe { &mut *boxed };
        hand.managed.manager_ctx = boxed.cast();
        hand.managed.dl_tensor = DLTensor {
            data,
            device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            ndim: 2,
            dtype: f32::DTYPE,
            shape: hand.shape.as_mut_ptr(),
            strides: hand.strides.as_mut_ptr(),
            byte_offset: 0,
        };
        boxed.cast()
    }

    /// dlspan's export of the owner (`None` only if the owner's length does not match [`SHAPE`]).
    ///
    /// ```
    /// let raw = dlspan_benches::managed::dlspan_export(vec![0.0; 64 * 64]).unwrap();
    /// // SAFETY: a live export, released once.
    /// unsafe { dlspan_benches::managed::release(raw) };
    /// ```
    #[inline]
    pub fn dlspan_export(owner: Vec<f32>) -> Option<*mut DLManagedTensorVersioned> {
        dlspan::ManagedTensor::from_owner(owner, SHAPE).ok().map(dlspan::ManagedTensor::into_raw_versioned)
    }

    /// dlpark's export: the metadata builder with the boxed `Vec` as context.
    ///
    /// ```
    /// let raw = dlspan_benches::managed::dlpark_export(vec![0.0; 64 * 64]).unwrap();
    /// // SAFETY: a live export, released once.
    /// unsafe { dlspan_benches::managed::release_dlpark(raw) };
    /// ```
    #[inline]
    pub fn dlpark_export(mut owner: Vec<f32>) -> Option<*mut dlpark::ffi::DLManagedTensorVersioned> {
        let data = owner.as_mut_ptr().cast::<c_void>();
        let shape = [SHAPE[0] as i64, SHAPE[1] as i64];
        let mut init = dlpark::metadata::Fixed::new(shape, [shape[1], 1]).initialize(Box::new(owner)).ok()?;
        init.set_data(data).set_dtype(dlpark::ffi::DLDataType::F32).set_device(dlpark::ffi::DLDevice::CPU);
        // SAFETY: data, dtype and device are set; the context owns the data.
        Some(unsafe { init.finish() }.into_raw())
    }

    /// Releases an export as a C consumer does: calls its deleter, if any.
    ///
    /// # Safety
    /// `raw` is a live export owned by the caller; it is not used afterwards.
    #[inline]
    pub unsafe fn release(raw: *mut DLManagedTensorVersioned) {
        // SAFETY: live (the caller's contract).
        if let Some(deleter) = unsafe { (*raw).deleter } {
            // SAFETY: the owner of the export calls its deleter once.
            unsafe { deleter(raw) };
        }
    }

    /// [`release`] for dlpark's mirror of the struct.
    ///
    /// # Safety
    /// As [`release`].
    #[inline]
    pub unsafe fn release_dlpark(raw: *mut dlpark::ffi::DLManagedTensorVersioned) {
        // SAFETY: live (the caller's contract).
        if let Some(deleter) = unsafe { (*raw).deleter } {
            // SAFETY: the owner of the export calls its deleter once.
            unsafe { deleter(raw) };
        }
    }
}

/// `y += a·x` written by hand in logical (row-major index) order over both views' strides: the
/// floor of any traversal in that order, which the logical-order iterators are measured against.
///
/// ```
/// use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
/// let x = [1.0f32, 2.0, 3.0, 4.0];
/// let mut y = [0.0f32; 4];
/// let xv = HostMdspan::<f32, 2, LayoutLeft>::from_slice(&x, [2, 2]).unwrap();
/// let mut yv = HostMdspanMut::<f32, 2, LayoutLeft>::from_slice(&mut y, [2, 2]).unwrap();
/// dlspan_benches::axpy_by_hand(&mut yv, &xv, 2.0);
/// assert_eq!(y, [2.0, 4.0, 6.0, 8.0]);
/// ```
#[inline]
pub fn axpy_by_hand<L: dlspan::Layout>(
    y: &mut dlspan::HostMdspanMut<'_, f32, 2, L>,
    x: &dlspan::HostMdspan<'_, f32, 2, L>,
    a: f32,
) {
    assert_eq!(y.extents(), x.extents());
    let [rows, columns] = y.extents().map(|e| e as isize);
    let (ys, yo, xs, xo) = (y.strides(), y.offset() as isize, x.strides(), x.offset() as isize);
    let (y_base, x_base) = (y.data_handle(), std::hint::black_box(x.data_handle()));
    for i in 0..rows {
        for j in 0..columns {
            let (yi, xi) = (yo + i * ys[0] + j * ys[1], xo + i * xs[0] + j * xs[1]);
            // `(i, j)` is an index of both views: an element of `y` (borrowed mutably) and one of `x`.
            let (y, x) = (y_base.wrapping_offset(yi), x_base.wrapping_offset(xi));
            // SAFETY: an element of the shared view `x`, valid for reads.
            let x = unsafe { *x };
            // SAFETY: an element of the mutable view `y`, valid for writes, not aliased.
            unsafe { *y += a * x };
        }
    }
}

/// The tensors the import benches convert, shared by the criterion bench (`convert`) and the
/// instruction-count harness (`import_instructions`), and mirrored value for value by CCCL's harness
/// (`benches/cccl/import_instructions.cpp`): float32 CPU tensors of [`ELEMENTS`](import::ELEMENTS)
/// elements at every rank, row-major, column-major and pitched.
pub mod import {
    use dlspan::DlElement;
    use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};

    /// Every tensor has this many elements, whatever its rank (a pitched one spans twice as many).
    ///
    /// ```
    /// assert_eq!(dlspan_benches::import::SHAPE_4.iter().product::<i64>(), dlspan_benches::import::ELEMENTS as i64);
    /// ```
    pub const ELEMENTS: usize = 1 << 18;

    /// The rank-1 shape.
    ///
    /// ```
    /// assert_eq!(dlspan_benches::import::SHAPE_1, [1 << 18]);
    /// ```
    pub const SHAPE_1: [i64; 1] = [ELEMENTS as i64];

    /// The rank-2 shape.
    ///
    /// ```
    /// assert_eq!(dlspan_benches::import::SHAPE_2, [512, 512]);
    /// ```
    pub const SHAPE_2: [i64; 2] = [512, 512];

    /// The rank-3 shape.
    ///
    /// ```
    /// assert_eq!(dlspan_benches::import::SHAPE_3, [64, 64, 64]);
    /// ```
    pub const SHAPE_3: [i64; 3] = [64, 64, 64];

    /// The rank-4 shape.
    ///
    /// ```
    /// assert_eq!(dlspan_benches::import::SHAPE_4, [16, 16, 32, 32]);
    /// ```
    pub const SHAPE_4: [i64; 4] = [16, 16, 32, 32];

    /// A float32 CPU tensor's shape and strides; [`dl`](Self::dl) points a `DLTensor` at them.
    ///
    /// ```
    /// use dlspan_benches::import::Tensor;
    /// let pitched = Tensor::pitched([2, 3]);
    /// assert_eq!((pitched.shape, pitched.strides), ([2, 3], [6, 1]));
    /// ```
    #[derive(Clone, Copy, Debug)]
    pub struct Tensor<const R: usize> {
        /// Extents.
        pub shape: [i64; R],
        /// Strides, in elements.
        pub strides: [i64; R],
    }

    impl<const R: usize> Tensor<R> {
        /// Compact row-major (C order).
        ///
        /// ```
        /// assert_eq!(dlspan_benches::import::Tensor::row_major([2, 3, 4]).strides, [12, 4, 1]);
        /// ```
        pub fn row_major(shape: [i64; R]) -> Self {
            let mut strides = [0i64; R];
            let mut acc = 1;
            for axis in (0..R).rev() {
                strides[axis] = acc;
                acc *= shape[axis];
            }
            Self { shape, strides }
        }

        /// Compact column-major (Fortran order).
        ///
        /// ```
        /// assert_eq!(dlspan_benches::import::Tensor::column_major([2, 3, 4]).strides, [1, 2, 6]);
        /// ```
        pub fn column_major(shape: [i64; R]) -> Self {
            let mut strides = [0i64; R];
            let mut acc = 1;
            for axis in 0..R {
                strides[axis] = acc;
                acc *= shape[axis];
            }
            Self { shape, strides }
        }

        /// Row-major with the outermost stride doubled: a padded ("pitched") layout, not compact.
        ///
        /// ```
        /// assert_eq!(dlspan_benches::import::Tensor::pitched([8]).strides, [2]);
        /// ```
        pub fn pitched(shape: [i64; R]) -> Self {
            let mut tensor = Self::row_major(shape);
            tensor.strides[0] *= 2;
            tensor
        }

        /// A `DLTensor` over `data` with this shape and these strides, valid while both live.
        ///
        /// ```
        /// let mut data = [0f32; 6];
        /// let mut tensor = dlspan_benches::import::Tensor::row_major([2, 3]);
        /// assert_eq!(tensor.dl(&mut data).ndim, 2);
        /// ```
        pub fn dl(&mut self, data: &mut [f32]) -> DLTensor {
            DLTensor {
                data: data.as_mut_ptr().cast(),
                device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
                ndim: R as i32,
                dtype: f32::DTYPE,
                shape: self.shape.as_mut_ptr(),
                strides: self.strides.as_mut_ptr(),
                byte_offset: 0,
            }
        }
    }
}
