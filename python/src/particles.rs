//! A record array: `#[repr(C)]` particles whose members NumPy and PyTorch see as zero-copy strided
//! tensors (what the interop guide's systems cannot do for arrays of structs).

use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
use dlspan::python::{PyView, PyViewMut, Tensor};
use dlspan::record::Member;
use dlspan::{AlignedBuffer, DlElement, DlRecord};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// One particle: a vector member and three scalar members, 24 bytes.
#[derive(Clone, Copy, Debug, Default, DlRecord)]
#[repr(C)]
pub(crate) struct Particle {
    position: [f32; 3],
    mass: f32,
    id: u32,
    charge: f32,
}

/// ``n`` particles, records of 24 bytes in one 64-byte-aligned buffer, numbered by ``id``.
///
/// ``fields()`` gives each member as a ``dlspan.Tensor`` viewing the records in place:
/// ``position`` of shape ``(n, 3)`` and strides ``(6, 1)``, the scalars ``mass``, ``id`` and
/// ``charge`` of shape ``(n,)`` and stride 6 (4-byte elements in 24-byte records). Writes through
/// NumPy or PyTorch land in the records; ``record(i)`` reads them back.
///
/// Parameters
/// ----------
/// n : int
///     The number of particles.
#[pyclass(module = "dlspan.examples", frozen, weakref)]
pub(crate) struct Particles {
    /// The records, reached only through `base` once shared.
    _records: AlignedBuffer<Particle>,
    base: usize,
    len: usize,
}

impl Particles {
    /// A member of every record as a tensor of `F` elements: `lanes` values per member (a trailing
    /// axis when more than one).
    fn member<F: DlElement, M>(
        slf: &Bound<'_, Self>,
        member: Member<Particle, M>,
        lanes: usize,
    ) -> PyResult<Py<PyAny>> {
        let this = slf.get();
        let per_record = (size_of::<Particle>() / size_of::<F>()) as i64;
        let offset = (member.offset() * size_of::<M>()) as u64;
        let (mut shape, mut strides) = (vec![this.len as i64], vec![per_record]);
        if lanes > 1 {
            shape.push(lanes as i64);
            strides.push(1);
        }
        let tensor = DLTensor {
            data: this.base as *mut core::ffi::c_void,
            device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            ndim: shape.len() as i32,
            dtype: F::DTYPE,
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: offset,
        };
        // SAFETY: the tensor describes member `M` (as `lanes` values of `F`) of each of the `len`
        // records, which `Particles` keeps in place while it lives; every bit pattern of those
        // bytes is a valid `F`; holders may write them (the members are plain numbers).
        let tensor = unsafe { Tensor::from_object(slf.py(), slf.clone().into_any().unbind(), &tensor, false) }?;
        Ok(tensor.into_any().unbind())
    }
}

#[pymethods]
impl Particles {
    #[new]
    fn new(n: usize) -> PyResult<Self> {
        // Too many records for memory is `AllocationFailed` (`BufferError`), not an abort.
        let mut records: AlignedBuffer<Particle> =
            AlignedBuffer::try_from_fn(n, |i| Particle { id: i as u32, ..Particle::default() })?;
        let base = records.as_mut_slice().as_mut_ptr() as usize;
        Ok(Self { _records: records, base, len: n })
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// The members as tensors viewing the records in place.
    ///
    /// Returns
    /// -------
    /// dict of str to Tensor
    ///     ``position`` (float32, ``(n, 3)``), ``mass`` (float32), ``id`` (uint32), ``charge``
    ///     (float32).
    fn fields<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let fields = PyDict::new(slf.py());
        fields.set_item("position", Self::member::<f32, _>(slf, Particle::POSITION, 3)?)?;
        fields.set_item("mass", Self::member::<f32, _>(slf, Particle::MASS, 1)?)?;
        fields.set_item("id", Self::member::<u32, _>(slf, Particle::ID, 1)?)?;
        fields.set_item("charge", Self::member::<f32, _>(slf, Particle::CHARGE, 1)?)?;
        Ok(fields)
    }

    /// Record ``i``, read through borrow-checked views of the members.
    ///
    /// Parameters
    /// ----------
    /// i : int
    ///
    /// Returns
    /// -------
    /// tuple
    ///     ``(position, mass, id, charge)``, ``position`` a list of three floats.
    ///
    /// Raises
    /// ------
    /// IndexError
    ///     ``i`` is out of range.
    fn record(slf: &Bound<'_, Self>, i: usize) -> PyResult<([f32; 3], f32, u32, f32)> {
        let fields = Self::fields(slf)?;
        let item = |name: &str| fields.get_item(name).map(|f| f.expect("every member is listed"));
        let position: PyView<'_, f32, 2> = item("position")?.extract()?;
        let mass: PyView<'_, f32, 1> = item("mass")?.extract()?;
        let id: PyView<'_, u32, 1> = item("id")?.extract()?;
        let charge: PyView<'_, f32, 1> = item("charge")?.extract()?;
        let at = |v: Option<&f32>| v.copied().ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(i));
        let position = position.view();
        Ok((
            [at(position.get([i, 0]))?, at(position.get([i, 1]))?, at(position.get([i, 2]))?],
            at(mass.view().get([i]))?,
            id.view().get([i]).copied().ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(i))?,
            at(charge.view().get([i]))?,
        ))
    }

    /// Multiplies every mass by ``factor`` in place, through a borrow-checked mutable view.
    ///
    /// Parameters
    /// ----------
    /// factor : float
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     A view of the masses is alive elsewhere (a borrow conflict).
    fn scale_masses(slf: &Bound<'_, Self>, factor: f32) -> PyResult<()> {
        let mass = Self::member::<f32, _>(slf, Particle::MASS, 1)?;
        let mut mass: PyViewMut<'_, f32, 1> = mass.bind(slf.py()).extract()?;
        mass.view_mut().for_each_unordered(|m| *m *= factor);
        Ok(())
    }
}
