//! The borrow registry: every Python view argument alive registers the bytes it spans, and a view
//! that would overlap another while one of them is mutable is refused with
//! [`ExchangeError::BorrowConflict`].
//!
//! Borrows are keyed by address, not by Python object, so aliasing across frameworks (a torch
//! tensor made from a NumPy array, two NumPy views of one buffer) is caught too. Interleaved views
//! (`x[::2]` and `x[1::2]`) and blocks of columns (`x[:, :2]` and `x[:, 2:]`) are told apart: every
//! byte a view reaches lies in a window of bytes repeated with a period (a [`Lattice`]: the element
//! itself repeated with the gcd of the byte strides, or a block of the inner axes repeated with an
//! outer axis's stride), and two views whose windows fall in different residue classes far enough
//! apart never share a byte.
//!
//! Each borrow remembers the object it views and, when it was extracted by
//! [`extract_argument`](super::extract_argument), the argument's name, so that a conflict names
//! both sides: PyO3 names only the argument whose extraction failed (its note `while processing
//! 'y'`), and knows nothing of the one extracted before it that holds the memory.
//!
//! A view's [`Footprint`] is measured here too: of a typed view ([`footprint`]), of a dynamic view
//! ([`dyn_footprint`]), and directly from a tensor's metadata ([`quick_footprint`]).

use super::capi::{CFootprint, CHeld, Held, Provider, provider};
use super::error::ExchangeError;
use super::gil::Shared;
use crate::ffi::{DLDevice, DLTensor};
use crate::space::MemorySpace;
use crate::view::{DynMdspan, Extents, Layout, Mdspan};
use core::ffi::c_int;
use pyo3::prelude::*;

/// The address space a device's pointers live in: one for the host and every device of the
/// process's unified virtual address space (CPU, pinned and managed memory, CUDA and ROCm devices:
/// a `(kDLCPU, 1)` or `(kDLCUDAHost, 0)` label on host bytes must not hide them from
/// `(kDLCPU, 0)`), and one per device for the others, whose `data` is a handle.
fn address_space(device: DLDevice) -> (i32, i32) {
    use crate::ffi::DLDeviceType as D;
    match device.device_type {
        D::kDLCPU | D::kDLCUDA | D::kDLCUDAHost | D::kDLCUDAManaged | D::kDLROCM | D::kDLROCMHost => (0, 0),
        other => (other.0, device.device_id),
    }
}

/// The memory a view reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Footprint {
    /// The address space (see [`address_space`]): addresses of different spaces never alias.
    pub(crate) space: (i32, i32),
    /// Lowest byte address reached.
    pub(crate) low: usize,
    /// One past the highest byte address reached.
    pub(crate) high: usize,
    /// Where a window starts: every byte reached is at `anchor + k · period + j` for some integer
    /// `k` and some `0 ≤ j < size`.
    pub(crate) anchor: usize,
    /// The period of the windows (see [`Lattice`]); 0 for a single element.
    pub(crate) period: usize,
    /// Bytes of one window: one element, or a block of them (see [`Lattice`]).
    pub(crate) size: usize,
}

impl Footprint {
    /// The footprint of a non-empty view on `device`: the bytes `range` it reaches, the address
    /// `anchor` of a window, and the `period` and `size` of the windows (every byte reached is at
    /// `anchor + k · period + j` with `0 ≤ j < size`).
    pub(crate) fn new(
        device: DLDevice,
        range: core::ops::Range<usize>,
        anchor: usize,
        period: usize,
        size: usize,
    ) -> Self {
        Self { space: address_space(device), low: range.start, high: range.end, anchor, period, size }
    }

    /// The footprint of a non-empty view on `device` reaching the bytes `range`, whose first element
    /// (the one at index 0) is at `first`, its bytes laid out as `lattice` says.
    pub(crate) fn of(device: DLDevice, range: core::ops::Range<usize>, first: usize, lattice: Lattice) -> Self {
        Self::new(device, range, first.wrapping_sub(lattice.below), lattice.period, lattice.window)
    }

    /// Whether some byte may belong to both footprints (never `false` when one does).
    pub(crate) fn may_overlap(&self, other: &Self) -> bool {
        if self.space != other.space || self.high <= other.low || other.high <= self.low {
            return false;
        }
        let period = gcd(self.period, other.period);
        if period == 0 {
            return true; // two single elements in overlapping ranges
        }
        // Window starts differ by `d + k·period` for some k (any k: the gcd of two periods is an
        // integer combination of them); the windows (of `self.size` and `other.size` bytes) are
        // disjoint for every k iff `d` leaves room on both sides.
        let d = if other.anchor >= self.anchor {
            (other.anchor - self.anchor) % period
        } else {
            (period - (self.anchor - other.anchor) % period) % period
        };
        !(d >= self.size && period - d >= other.size)
    }
}

/// Where the bytes of a view lie, relative to its first element: each byte it reaches is
/// `k · period + j − below` bytes from that element's start, for some integer `k` and
/// `0 ≤ j < window`.
///
/// The element itself repeated with the gcd of the byte strides (`x[::2]` of float32: 4 bytes of
/// every 8), unless those windows cover every byte; then the block of inner axes, repeated with the
/// stride of an outer axis that every other axis's stride is a multiple of, that covers the smallest
/// share of the bytes (`x[:, :2]` of a 4-column float32 array: 8 bytes of every 16, where the gcd,
/// 4, covers every byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lattice {
    /// Bytes from the first element's start back to a window's start.
    pub(crate) below: usize,
    /// The windows' period in bytes; 0 for a single element (or one repeated by zero strides).
    pub(crate) period: usize,
    /// Bytes of one window (at least an element's).
    pub(crate) window: usize,
}

/// Axes up to which [`lattice`] looks for a block layout (a view with more keeps the gcd's).
const LATTICE_AXES: usize = 8;

/// The [`Lattice`] of a view of `size`-byte elements with these extents and strides (in elements).
/// The view's byte span must fit `isize` (every validated view's does), so that no term overflows.
pub(crate) fn lattice(
    extents: impl IntoIterator<Item = usize, IntoIter: Clone>,
    strides: impl IntoIterator<Item = isize, IntoIter: Clone>,
    size: usize,
) -> Lattice {
    let axes = extents.into_iter().zip(strides).filter(|&(extent, _)| extent > 1);
    // The gcd first (one pass, no division for a single axis): most views stop at it.
    let (mut count, mut gcd_bytes) = (0usize, 0usize);
    for (_, stride) in axes.clone() {
        let step = stride.unsigned_abs() * size;
        gcd_bytes = if count == 0 { step } else { gcd(gcd_bytes, step) };
        count += 1;
    }
    let by_gcd = Lattice { below: 0, period: gcd_bytes, window: size };
    // The gcd's windows leave gaps between them (or there is one element): kept, as before there
    // were blocks, so that every pair of views told apart then still is.
    if !(2..=LATTICE_AXES).contains(&count) || gcd_bytes == 0 || gcd_bytes > size {
        return by_gcd;
    }
    block_lattice(axes, size, by_gcd)
}

/// [`lattice`]'s blocks: the block of inner axes, repeated with the stride of an outer axis that
/// every other axis's stride is a multiple of, covering the smallest share of the bytes (`best`
/// when none covers less).
#[inline(never)]
fn block_lattice(axes: impl Iterator<Item = (usize, isize)>, size: usize, mut best: Lattice) -> Lattice {
    // Per axis of more than one index (at most LATTICE_AXES): its byte stride's magnitude, its
    // reach (extent − 1 strides, in bytes) and whether it reaches down.
    let mut table = [(0usize, 0usize, false); LATTICE_AXES];
    let mut count = 0;
    for ((extent, stride), slot) in axes.zip(&mut table) {
        let step = stride.unsigned_abs() * size;
        *slot = (step, (extent - 1) * step, stride < 0);
        count += 1;
    }
    let axes = &table[..count];
    for (outer, &(period, _, _)) in axes.iter().enumerate() {
        if period == 0 {
            continue;
        }
        let (mut window, mut below, mut fits) = (size, 0usize, true);
        for (axis, &(step, reach, down)) in axes.iter().enumerate() {
            if axis == outer {
                continue;
            }
            if step >= period {
                // An outer axis: it moves windows by whole periods, or the block is no lattice.
                fits &= step % period == 0;
            } else {
                window += reach;
                below += if down { reach } else { 0 };
            }
        }
        // Covers a smaller share of the bytes: window / period < best.window / best.period.
        if fits
            && window < period
            && (window as u128) * (best.period as u128) < (best.window as u128) * (period as u128)
        {
            best = Lattice { below, period, window };
        }
    }
    best
}

const fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The memory a typed view reaches.
pub(crate) fn footprint<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    view: &Mdspan<'_, T, R, E, L, S>,
) -> Footprint {
    let mapping = view.mapping();
    let size = core::mem::size_of::<T>();
    let base = view.data_handle() as usize;
    Footprint::of(
        view.device(),
        base..base + mapping.required_span_size() * size,
        base + mapping.offset() * size,
        lattice(mapping.extents(), mapping.strides(), size),
    )
}

/// The memory a dynamic view reaches (packed sub-byte data as one block of bytes).
pub(crate) fn dyn_footprint<S: MemorySpace>(view: &DynMdspan<'_, S>) -> Footprint {
    let range = view.byte_range();
    let bits = view.element_bits();
    if !bits.is_multiple_of(8) {
        return Footprint::new(view.device(), range.clone(), range.start, 0, range.len());
    }
    let anchor = (view.data_handle() as usize).wrapping_add(view.byte_offset() as usize);
    let size = bits / 8;
    Footprint::of(
        view.device(),
        range,
        anchor,
        lattice(view.shape().iter().copied(), view.strides().iter().copied(), size),
    )
}

/// Axes up to which [`quick_footprint`] measures a tensor (as many as a dynamic view keeps inline).
const QUICK_AXES: usize = 8;

/// The byte footprint of a well-formed tensor of whole-byte elements, computed directly; `None`
/// for anything unusual (packed sub-byte data, empty, more than 8 axes, extents or strides of 2^28
/// or more), which the full dynamic validation then measures or refuses. `shape` and `strides` are
/// the tensor's, read (strides filled by version) by the caller.
pub(crate) fn quick_footprint(tensor: &DLTensor, shape: &[i64], strides: &[i64]) -> Option<Footprint> {
    // Under the bound, with at most 8 axes, every term (e - 1)·s and their sums stay below 2^59.
    const BOUND: i64 = 1 << 28;
    let bits = u32::from(tensor.dtype.bits) * u32::from(tensor.dtype.lanes);
    if bits == 0 || bits % 8 != 0 || tensor.data.is_null() || shape.len() > QUICK_AXES {
        return None;
    }
    let size = (bits / 8) as usize;
    let (mut low, mut high) = (0i64, 0i64);
    for (&extent, &stride) in shape.iter().zip(strides) {
        if !(1..BOUND).contains(&extent) || !(-BOUND..BOUND).contains(&stride) {
            return None;
        }
        let reach = (extent - 1) * stride;
        if reach < 0 { low += reach } else { high += reach }
    }
    let first = (tensor.data as usize).checked_add(usize::try_from(tensor.byte_offset).ok()?)?;
    let start = first.checked_sub((low.unsigned_abs() as usize).checked_mul(size)?)?;
    let end = first.checked_add((high as usize + 1).checked_mul(size)?)?;
    if end - start > isize::MAX as usize {
        return None;
    }
    // The span fits `isize`, and so does every term of the lattice.
    let lattice = lattice(shape.iter().map(|&e| e as usize), strides.iter().map(|&s| s as isize), size);
    Some(Footprint::of(tensor.device, start..end, first, lattice))
}

struct Entry {
    id: u64,
    footprint: Footprint,
    mutable: bool,
    /// The object viewed (kept for the messages of conflicts: the argument already keeps it alive).
    object: Py<PyAny>,
    /// The argument's name, when it was extracted by [`extract_argument`](super::extract_argument).
    name: Option<&'static str>,
}

struct Registry {
    entries: Vec<Entry>,
    next_id: u64,
}

/// This build's own registry: the process's when this build is the `dlspan` package or the package
/// is absent; otherwise unused, as borrows go to the package's (rule Y18).
static REGISTRY: Shared<Registry> = Shared::new(Registry { entries: Vec::new(), next_id: 0 });

/// A registered borrow, released on drop in the registry that recorded it. Holding a `Python`
/// token keeps it on an attached thread (it is neither `Send` nor `Sync`), where the registry can
/// be reached.
pub(crate) struct Borrow<'py> {
    py: Python<'py>,
    id: u64,
    /// The registry that issued `id` (the decision is fixed per process, and kept here anyway so
    /// that a borrow is released where it was recorded whatever happens).
    registry: Provider,
}

/// Registers the footprint of a view of `object`, the argument `name` when its extraction was
/// named ([`extract_argument`](super::extract_argument)), in the process's one registry (the
/// package's, or this build's own).
///
/// # Errors
///
/// [`ExchangeError::BorrowConflict`] when it may overlap a live borrow and one of the two is
/// mutable, with a message naming both sides.
pub(crate) fn register<'py>(
    object: &Bound<'py, PyAny>,
    name: Option<&'static str>,
    footprint: Footprint,
    mutable: bool,
) -> PyResult<Borrow<'py>> {
    let py = object.py();
    let registry = provider(py);
    let issued = match registry {
        Provider::Own => register_own(object, name, footprint, mutable),
        Provider::Package(table) => {
            let c = footprint.to_c();
            let (name_ptr, name_len) = name.map_or((core::ptr::null(), 0), |name| (name.as_ptr(), name.len()));
            let mut id = 0u64;
            let mut held = CHeld::default();
            // SAFETY: the package's `register`, called attached (`py`), with a live footprint, a
            // live object, a name that lives as long as this library (a `&'static str`, and
            // CPython never unloads extension modules) and two writable slots on our stack (the
            // C API's contract).
            let refused = unsafe {
                (table.0.register)(&c, c_int::from(mutable), object.as_ptr(), name_ptr, name_len, &mut id, &mut held)
            };
            if refused == 0 {
                Ok(id)
            } else {
                // SAFETY: on refusal `held` holds a new reference (or null) and a name that lives as
                // long as the process (the C API's contract).
                Err(unsafe { held.take(py) })
            }
        }
    };
    match issued {
        Ok(id) => Ok(Borrow { py, id, registry }),
        Err(held) => Err(conflict_error(object, name, mutable, held)),
    }
}

/// Registers a footprint in this build's own registry, returning the borrow's id, or the borrow in
/// the way.
pub(crate) fn register_own(
    object: &Bound<'_, PyAny>,
    name: Option<&'static str>,
    footprint: Footprint,
    mutable: bool,
) -> Result<u64, Held> {
    let py = object.py();
    REGISTRY.with(py, |registry| {
        if let Some(held) =
            registry.entries.iter().find(|held| (mutable || held.mutable) && held.footprint.may_overlap(&footprint))
        {
            return Err(Held { object: Some(held.object.clone_ref(py)), name: held.name, mutable: held.mutable });
        }
        let id = registry.next_id;
        registry.next_id += 1;
        registry.entries.push(Entry { id, footprint, mutable, object: object.clone().unbind(), name });
        Ok(id)
    })
}

/// Ends the borrow `id` of this build's own registry (an unknown id is ignored).
pub(crate) fn release_own(py: Python<'_>, id: u64) {
    let removed = REGISTRY.with(py, |registry| {
        // Borrows end mostly in reverse order: search from the end.
        registry.entries.iter().rposition(|e| e.id == id).map(|at| registry.entries.swap_remove(at))
    });
    // Outside the lock: releasing the entry's reference to its object may run Python code (a
    // finaliser), which may reach the registry. As a `Bound`, the reference is released at once,
    // without asking whether the thread is attached (it is: `py`).
    drop(removed.map(|entry| entry.object.into_bound(py)));
}

/// The number of borrows in this build's own registry.
pub(crate) fn live_own(py: Python<'_>) -> usize {
    REGISTRY.with(py, |registry| registry.entries.len())
}

/// The exception of a borrow conflict: `ValueError`, `kind` `BorrowConflict`, the names of both
/// arguments where known (`argument`, `holder`) and the message naming or describing them.
fn conflict_error(object: &Bound<'_, PyAny>, name: Option<&str>, mutable: bool, held: Held) -> PyErr {
    let py = object.py();
    let type_name = |object: &Bound<'_, PyAny>| {
        let class = object.get_type();
        let module = class.module().map(|m| m.to_string()).unwrap_or_default();
        let name = class.qualname().map(|n| n.to_string()).unwrap_or_default();
        if module.is_empty() || module == "builtins" { name } else { format!("{module}.{name}") }
    };
    let this = name.map_or_else(|| "this argument".to_owned(), |name| format!("argument '{name}'"));
    let held_object = held.object.map(|object| object.into_bound(py));
    let that = match (held.name, &held_object) {
        (Some(held_name), _) => format!("argument '{held_name}'"),
        // Unnamed: another argument of this call, or of a call still running (on another thread,
        // or further up this thread's stack); the registry does not tell them apart.
        (None, Some(held_object)) if held_object.is(object) => {
            format!("another argument (the same {}, in this call or one still running)", type_name(held_object))
        }
        (None, Some(held_object)) => {
            format!("another argument (a {}, in this call or one still running)", type_name(held_object))
        }
        (None, None) => "another argument (in this call or one still running)".to_owned(),
    };
    let held_mutable = held.mutable;
    let (verb, held_verb) = (if mutable { "written" } else { "read" }, if held_mutable { "written" } else { "read" });
    let message = format!(
        "{this} would be {verb} while its memory is {held_verb} through {that}; memory that is written may be \
         reached through no other argument: pass a separate output array, or a copy"
    );
    let err = PyErr::from(ExchangeError::BorrowConflict { requested_mutable: mutable, held_mutable });
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("args", (message,))?;
        value.setattr("argument", name)?;
        value.setattr("holder", held.name)?;
        value.setattr("requested_mutable", mutable)?;
        value.setattr("held_mutable", held_mutable)
    };
    // The attributes are a convenience: an exception that refuses them keeps its first message.
    let _ = set();
    err
}

impl Drop for Borrow<'_> {
    fn drop(&mut self) {
        match self.registry {
            Provider::Own => release_own(self.py, self.id),
            // SAFETY: the package's `release`, attached (`self.py`), for the id it issued to this
            // borrow, once (this drop).
            Provider::Package(table) => unsafe { (table.0.release)(self.id) },
        }
    }
}

/// The number of view arguments alive (registered borrows) in the process's one registry, for
/// tests and diagnostics: every path out of a `#[pyfunction]`, errors included, releases its
/// arguments' borrows.
///
/// ```
/// use dlspan::pyo3::prelude::*;
/// Python::initialize();
/// Python::attach(|py| assert_eq!(dlspan::python::live_borrows(py), 0));
/// ```
pub fn live_borrows(py: Python<'_>) -> usize {
    match provider(py) {
        Provider::Own => live_own(py),
        // SAFETY: the package's `live`, called attached.
        Provider::Package(table) => unsafe { (table.0.live)() },
    }
}

impl Footprint {
    /// The footprint as it crosses the package's C API.
    pub(crate) fn to_c(self) -> CFootprint {
        CFootprint {
            space_type: self.space.0,
            space_id: self.space.1,
            low: self.low as u64,
            high: self.high as u64,
            anchor: self.anchor as u64,
            period: self.period as u64,
            size: self.size as u64,
        }
    }

    /// The footprint a [`CFootprint`] carries (as the package's registry receives it).
    pub(crate) fn from_c(c: &CFootprint) -> Self {
        Self {
            space: (c.space_type, c.space_id),
            low: c.low as usize,
            high: c.high as usize,
            anchor: c.anchor as usize,
            period: c.period as usize,
            size: c.size as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: DLDevice = DLDevice { device_type: crate::ffi::DLDeviceType::kDLCPU, device_id: 0 };

    fn f(low: usize, count: usize, stride: usize, size: usize) -> Footprint {
        let high = low + ((count - 1) * stride + 1) * size;
        Footprint::of(CPU, low..high, low, lattice([count], [stride as isize], size))
    }

    #[test]
    fn interleaved_views_do_not_overlap() {
        // x[::2] and x[1::2] of float32: period 8 bytes, starts 4 bytes apart.
        let even = f(1000, 4, 2, 4);
        let odd = f(1004, 4, 2, 4);
        assert!(!even.may_overlap(&odd) && !odd.may_overlap(&even));
        // x[::2] and x[2::2] share elements.
        assert!(even.may_overlap(&f(1008, 3, 2, 4)));
        // Elements wider than the gap overlap: 8-byte elements 4 bytes apart.
        assert!(f(1000, 4, 2, 8).may_overlap(&f(1004, 4, 2, 8)));
    }

    #[test]
    fn labels_of_one_address_space_do_not_hide_overlaps() {
        use crate::ffi::DLDeviceType as D;
        let on = |device_type, device_id| Footprint::new(DLDevice { device_type, device_id }, 1000..1016, 1000, 4, 4);
        let host = on(D::kDLCPU, 0);
        for other in [on(D::kDLCPU, 1), on(D::kDLCUDAHost, 0), on(D::kDLCUDAManaged, 0), on(D::kDLCUDA, 3)] {
            assert!(host.may_overlap(&other) && other.may_overlap(&host), "{other:?}");
        }
        // Handles of other devices are not addresses of this space.
        assert!(!host.may_overlap(&on(D::kDLVulkan, 0)));
    }

    #[test]
    fn ranges_and_single_elements() {
        assert!(!f(0, 4, 1, 4).may_overlap(&f(16, 4, 1, 4)), "adjacent ranges");
        assert!(f(0, 4, 1, 4).may_overlap(&f(12, 4, 1, 4)));
        let one = Footprint::of(CPU, 8..12, 8, lattice([1], [1], 4));
        assert!(one.may_overlap(&f(0, 4, 1, 4)));
        assert!(!one.may_overlap(&f(0, 2, 1, 4)));
        // Record fields: 24-byte records, a float at byte 12 and an int at byte 16.
        let mass = f(12, 10, 6, 4);
        let id = f(16, 10, 6, 4);
        assert!(!mass.may_overlap(&id) && !id.may_overlap(&mass));
    }

    /// A view's footprint from its byte offset into a buffer at 4096, extents and strides (elements).
    fn view(offset: usize, extents: &[usize], strides: &[isize], size: usize) -> Footprint {
        let first = 4096 + offset;
        let (mut low, mut high) = (first as isize, first as isize);
        for (&e, &s) in extents.iter().zip(strides) {
            let reach = (e as isize - 1) * s * size as isize;
            if reach < 0 { low += reach } else { high += reach }
        }
        let lattice = lattice(extents.iter().copied(), strides.iter().copied(), size);
        Footprint::of(CPU, low as usize..high as usize + size, first, lattice)
    }

    /// The bytes a view reaches.
    fn bytes(offset: usize, extents: &[usize], strides: &[isize], size: usize) -> Vec<usize> {
        let mut starts = vec![4096 + offset as isize];
        for (&e, &s) in extents.iter().zip(strides) {
            starts = starts.iter().flat_map(|&p| (0..e as isize).map(move |i| p + i * s * size as isize)).collect();
        }
        let mut bytes: Vec<usize> = starts.iter().flat_map(|&p| (0..size).map(move |j| p as usize + j)).collect();
        bytes.sort_unstable();
        bytes.dedup();
        bytes
    }

    #[test]
    fn blocks_of_columns_do_not_overlap() {
        // x[:, :2] and x[:, 2:] of a 5×4 float32 array: 8 bytes of every 16 each, 8 bytes apart.
        let left = view(0, &[5, 2], &[4, 1], 4);
        let right = view(8, &[5, 2], &[4, 1], 4);
        assert_eq!((left.period, left.size, right.period, right.size), (16, 8, 16, 8));
        assert!(!left.may_overlap(&right) && !right.may_overlap(&left));
        // x[:, 1:3] shares a column with each.
        let middle = view(4, &[5, 2], &[4, 1], 4);
        assert!(middle.may_overlap(&left) && middle.may_overlap(&right));
        // Columns 3, 2 (reversed) and columns 0, 1: `x[:, ::-1][:, :2]` and `x[:, :2]`.
        let reversed = view(12, &[5, 2], &[4, -1], 4);
        assert!(!reversed.may_overlap(&left) && reversed.may_overlap(&right));
        // The transpose of a block (rows of `x.T`): the same bytes.
        assert!(!view(0, &[2, 5], &[1, 4], 4).may_overlap(&right));
        // A 3-d block: x[:, :, :2] and x[:, :, 2:] of a 3×5×4 array.
        let low = view(0, &[3, 5, 2], &[20, 4, 1], 4);
        assert!(!low.may_overlap(&view(8, &[3, 5, 2], &[20, 4, 1], 4)));
        // Rows of blocks: x[::2, :2] and x[1::2, 2:] never meet, nor do x[::2, :] and x[1::2, :].
        assert!(!view(0, &[3, 2], &[8, 1], 4).may_overlap(&view(24, &[2, 2], &[8, 1], 4)));
        assert!(!view(0, &[3, 4], &[8, 1], 4).may_overlap(&view(16, &[2, 4], &[8, 1], 4)));
        // Interleaved columns within a block of an 8-column array keep the gcd's windows, which tell
        // x[:, 0:4:2] from x[:, 1:4:2] (a block of columns 0-2 would not).
        let even = view(0, &[5, 2], &[8, 2], 4);
        assert_eq!((even.period, even.size), (8, 4));
        assert!(!even.may_overlap(&view(4, &[5, 2], &[8, 2], 4)));
        // One window each cannot tell x[:, :2] from x[:, 2:6:2]: they conflict, conservatively.
        assert!(view(0, &[5, 2], &[8, 1], 4).may_overlap(&view(8, &[5, 2], &[8, 2], 4)));
    }

    #[test]
    fn footprints_cover_every_byte_and_find_every_overlap() {
        // Random views of a small buffer (a fixed xorshift sequence): each footprint's windows hold
        // every byte its view reaches, and any two views sharing a byte may overlap.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut views = Vec::new();
        for _ in 0..400 {
            let size = [1, 2, 4, 8][next(4)];
            let rank = 1 + next(3);
            let extents: Vec<usize> = (0..rank).map(|_| 1 + next(4)).collect();
            let strides: Vec<isize> = (0..rank).map(|_| next(13) as isize - 4).collect();
            let below: isize = extents.iter().zip(&strides).map(|(&e, &s)| (e as isize - 1) * s.min(0)).sum();
            let offset = (-below) as usize * size + next(16);
            let footprint = view(offset, &extents, &strides, size);
            let reached = bytes(offset, &extents, &strides, size);
            for &b in &reached {
                let from = b.wrapping_sub(footprint.anchor) as isize;
                let j = if footprint.period == 0 { from } else { from.rem_euclid(footprint.period as isize) };
                assert!(
                    (0..footprint.size as isize).contains(&j),
                    "{extents:?} {strides:?} {size}: byte {b} of {footprint:?}"
                );
                assert!((footprint.low..footprint.high).contains(&b));
            }
            views.push((footprint, reached));
        }
        for (a, bytes_a) in &views {
            for (b, bytes_b) in &views {
                let shared = bytes_a.iter().any(|x| bytes_b.binary_search(x).is_ok());
                assert!(!shared || a.may_overlap(b), "{a:?} and {b:?} share a byte");
            }
        }
    }
}
