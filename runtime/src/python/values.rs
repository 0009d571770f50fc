//! A host tensor's values as Python and people read them (rule Y20): element by element, from the
//! tensor's own memory (whole-byte elements by address, packed sub-byte ones by bit position), for
//! `repr` — summarised and aligned as NumPy prints arrays — and `tolist`. Device memory is never
//! read; pinned and managed memory only after the device (rule Y16).

use super::borrow::{Borrow, dyn_footprint, register};
use super::device::wait_for_host;
use super::meta::Meta;
use crate::convert::ImportOptions;
use crate::dtype::{Numeric, NumericVisitor, PlainBits, cast, dispatch};
use crate::ffi::{DLDataTypeCode, DLDeviceType};
use crate::space::{Host, Managed};
use crate::view::DynMdspan;
use num_complex::Complex;
use pyo3::prelude::*;

/// One element's exact value, and for floating-point types the significant digits that tell it
/// apart from its neighbours in its own type (shortest round trip).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value {
    Bool(bool),
    Int(i128),
    UInt(u128),
    Float(f64, u8),
    Complex(f64, u8, f64, u8),
}

/// Reads the element at byte address `at` (whole-byte elements) or at bit `bit` after it (packed).
type Reader = fn(at: *const u8, bit: usize) -> Value;

/// The significant digits (1 to 17) `value` needs to read back as the same `T`.
fn digits<T: Numeric>(value: f64) -> u8 {
    if !value.is_finite() || value == 0.0 {
        return 1;
    }
    let own = cast::<T, f64>(cast::<f64, T>(value));
    for precision in 0..17u8 {
        let text = format!("{value:.precision$e}", precision = usize::from(precision));
        let back: f64 = text.parse().unwrap_or(f64::NAN);
        if cast::<T, f64>(cast::<f64, T>(back)) == own {
            return precision + 1;
        }
    }
    17
}

/// The value of a `T` as [`Value`].
fn value_of<T: Numeric>(v: T) -> Value {
    use DLDataTypeCode as C;
    match T::DTYPE.type_code() {
        C::kDLBool => Value::Bool(cast::<T, bool>(v)),
        C::kDLInt => Value::Int(cast::<T, i128>(v)),
        C::kDLUInt => Value::UInt(cast::<T, u128>(v)),
        C::kDLComplex => {
            let c = cast::<T, Complex<f64>>(v);
            // The parts of a complex `T` are of its real type: measured through `T` itself.
            let part = |x: f64| digits_complex::<T>(x);
            Value::Complex(c.re, part(c.re), c.im, part(c.im))
        }
        _ => {
            let x = cast::<T, f64>(v);
            Value::Float(x, digits::<T>(x))
        }
    }
}

/// [`digits`] for a part of a complex `T` (a real part, with no imaginary part, reads back alike).
fn digits_complex<T: Numeric>(part: f64) -> u8 {
    if !part.is_finite() || part == 0.0 {
        return 1;
    }
    let own = cast::<T, Complex<f64>>(cast::<Complex<f64>, T>(Complex::new(part, 0.0))).re;
    for precision in 0..17u8 {
        let text = format!("{part:.precision$e}", precision = usize::from(precision));
        let back: f64 = text.parse().unwrap_or(f64::NAN);
        if cast::<T, Complex<f64>>(cast::<Complex<f64>, T>(Complex::new(back, 0.0))).re == own {
            return precision + 1;
        }
    }
    17
}

fn read_whole<T: Numeric>(at: *const u8, _bit: usize) -> Value {
    // SAFETY: `reader`'s contract: `at` is the address of a live element of type `T` (any bit
    // pattern of a dispatched type is valid: `kDLBool` dispatches to `dtype::Bool`).
    value_of(unsafe { at.cast::<T>().read_unaligned() })
}

fn read_packed<T: Numeric + PlainBits>(at: *const u8, bit: usize) -> Value {
    let bits = usize::from(T::DTYPE.bits);
    let (byte, shift) = (bit / 8, bit % 8);
    // SAFETY: `reader`'s contract: the bytes holding bits `[bit, bit + bits)` after `at` are live.
    let low = unsafe { at.wrapping_add(byte).read() };
    let mut word = u16::from(low);
    if shift + bits > 8 {
        // SAFETY: as above: the value reaches into the next byte.
        word |= u16::from(unsafe { at.wrapping_add(byte + 1).read() }) << 8;
    }
    let raw = ((word >> shift) & ((1 << bits) - 1)) as u8;
    // SAFETY: `T` is a one-byte storage type of a sub-byte format (what `visit_subbyte` receives),
    // valid for every byte.
    value_of(unsafe { core::mem::transmute_copy::<u8, T>(&raw) })
}

struct ReaderOf {
    packed: bool,
}

impl NumericVisitor for ReaderOf {
    type Output = Reader;
    fn visit<T: Numeric>(self) -> Reader {
        read_whole::<T>
    }
    fn visit_subbyte<T: Numeric + PlainBits>(self) -> Reader {
        if self.packed { read_packed::<T> } else { read_whole::<T> }
    }
}

/// A host tensor's elements, readable while this value lives: the memory is ready for the host
/// (Y16) and registered as a shared borrow, so no mutable view argument writes it meanwhile.
pub(crate) struct Elements<'m, 'py> {
    meta: &'m Meta,
    reader: Reader,
    _borrow: Option<Borrow<'py>>,
}

/// Why a tensor's values cannot be read.
pub(crate) enum Unreadable {
    /// Device memory, or memory the host may not read yet: the error says why.
    Memory(PyErr),
    /// A data type with no Python scalar (a vector type such as `float4_e2m1fn_x2`).
    Dtype,
}

impl<'m, 'py> Elements<'m, 'py> {
    /// Prepares to read `meta`'s elements.
    pub(crate) fn new(object: &Bound<'py, PyAny>, meta: &'m Meta) -> Result<Self, Unreadable> {
        let borrow = hold(object, meta).map_err(Unreadable::Memory)?;
        let reader = dispatch(meta.dtype, ReaderOf { packed: meta.item_size == 0 }).map_err(|_| Unreadable::Dtype)?;
        Ok(Self { meta, reader, _borrow: borrow })
    }

    /// The element at `index` (one entry per axis, each below its extent).
    pub(crate) fn get(&self, index: &[i64]) -> Value {
        let meta = self.meta;
        let offset: i64 = index.iter().zip(meta.strides().iter()).map(|(&i, &s)| i * s).sum();
        if meta.item_size == 0 {
            // Packed: bits from the first element's byte; the validated span keeps them in
            // memory, and offsets below index 0 (negative strides) stay inside it too.
            let bit = offset as i128 * meta.bits as i128;
            let (byte, bit) = (bit.div_euclid(8) as isize, bit.rem_euclid(8) as usize);
            return (self.reader)(meta.first().wrapping_offset(byte), bit);
        }
        let at = meta.first().wrapping_offset(offset as isize * meta.item_size as isize);
        (self.reader)(at, 0)
    }
}

/// Makes `meta`'s memory ready for the host to read (rule Y16: device memory refused, pinned and
/// managed memory waited for) and registers it as a shared borrow while the returned value lives
/// (none for an empty tensor), so that no mutable view argument writes it meanwhile (rule Y8).
pub(crate) fn hold<'py>(object: &Bound<'py, PyAny>, meta: &Meta) -> PyResult<Option<Borrow<'py>>> {
    wait_for_host(meta.device)?;
    if meta.numel == 0 {
        return Ok(None);
    }
    let options = ImportOptions { subbyte_padded: meta.subbyte_padded, ..ImportOptions::CURRENT };
    let tensor = meta.dl_tensor();
    // The view of the tensor's own space: CUDA managed memory is no `Host` memory (its address
    // space is the host's all the same, rule Y8).
    let footprint = if meta.device.device_type == DLDeviceType::kDLCUDAManaged {
        // SAFETY: only metadata is read, from a validated tensor whose arrays `meta` holds.
        dyn_footprint(&unsafe { DynMdspan::<Managed>::from_dltensor_with(&tensor, options) }?)
    } else {
        // SAFETY: as above.
        dyn_footprint(&unsafe { DynMdspan::<Host>::from_dltensor_with(&tensor, options) }?)
    };
    Ok(Some(register(object, None, footprint, false)?))
}

/// Elements shown per end of a summarised axis, and the element count beyond which a tensor is
/// summarised (NumPy's `edgeitems` and `threshold`).
const EDGE: i64 = 3;
const THRESHOLD: usize = 1000;
/// The width NumPy wraps lines at.
const LINE_WIDTH: usize = 75;

/// The indices shown along an axis of `extent`: all, or the first and last [`EDGE`] with `None`
/// (the `...`) between.
fn shown(extent: i64, summarise: bool) -> Vec<Option<i64>> {
    if summarise && extent > 2 * EDGE {
        (0..EDGE).map(Some).chain([None]).chain((extent - EDGE..extent).map(Some)).collect()
    } else {
        (0..extent).map(Some).collect()
    }
}

/// `value` rounded to `digits` significant digits, as the shortest `f64` text of it.
fn rounded(value: f64, digits: u8) -> f64 {
    let precision = usize::from(digits.max(1) - 1);
    format!("{value:.precision$e}").parse().unwrap_or(value)
}

/// How the floats of one tensor are written: positional, or scientific as NumPy chooses it.
#[derive(Clone, Copy)]
struct FloatStyle {
    /// Scientific, with this many digits after the mantissa's point for every value (NumPy pads
    /// them to the most any value needs); positional when `None`.
    scientific: Option<usize>,
}

impl FloatStyle {
    /// NumPy's choice: scientific when the largest finite magnitude is 1e8 or more, the smallest
    /// nonzero one below 1e-4, or their ratio above 1000.
    fn of(values: impl Iterator<Item = (f64, u8)>) -> Self {
        let (mut max, mut min, mut digits) = (0.0f64, f64::INFINITY, 1u8);
        for (v, d) in values.filter(|(v, _)| v.is_finite()) {
            digits = digits.max(d);
            if v != 0.0 {
                max = max.max(v.abs());
                min = min.min(v.abs());
            }
        }
        let scientific = max > 0.0 && (max >= 1e8 || min < 1e-4 || max / min > 1e3);
        Self { scientific: scientific.then_some(usize::from(digits - 1)) }
    }

    /// `value` (with its significant `digits`) as NumPy writes it: `1.`, `0.25`, `1.500e-07`,
    /// `nan`, `-inf`.
    fn write(self, value: f64, digits: u8) -> String {
        if value.is_nan() {
            return "nan".into();
        }
        if value.is_infinite() {
            return if value > 0.0 { "inf".into() } else { "-inf".into() };
        }
        match self.scientific {
            Some(precision) => {
                let text = format!("{value:.precision$e}");
                let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
                let exponent: i32 = exponent.parse().unwrap_or(0);
                let mantissa = if mantissa.contains('.') { mantissa.to_owned() } else { format!("{mantissa}.") };
                let sign = if exponent < 0 { '-' } else { '+' };
                format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
            }
            None => {
                let text = format!("{}", rounded(value, digits));
                if text.contains('.') { text } else { format!("{text}.") }
            }
        }
    }
}

/// Pads float texts as NumPy does: the part before the point right-aligned, the rest
/// left-aligned, so the points line up; `nan` and `inf` right-aligned over the whole width (which
/// grows on the left when they are longer).
fn align_floats(texts: &mut [String]) {
    let (mut left, mut right) = (0, 0);
    for t in texts.iter() {
        if let Some(at) = t.find('.') {
            left = left.max(at);
            right = right.max(t.len() - at - 1);
        }
    }
    for t in texts.iter() {
        if !t.contains('.') {
            left = left.max(t.len().saturating_sub(right + 1));
        }
    }
    for t in texts.iter_mut() {
        *t = match t.find('.') {
            Some(at) => format!("{}{t}{}", " ".repeat(left - at), " ".repeat(right - (t.len() - at - 1))),
            None => format!("{t:>width$}", width = left + 1 + right),
        };
    }
}

/// The texts of `values`, aligned as NumPy aligns them.
fn texts(values: &[Value]) -> Vec<String> {
    let floats = values.iter().flat_map(|v| match *v {
        Value::Float(x, d) => vec![(x, d)],
        Value::Complex(re, dr, im, di) => vec![(re, dr), (im, di)],
        _ => vec![],
    });
    let style = FloatStyle::of(floats);
    let mut out: Vec<String> = Vec::with_capacity(values.len());
    let (mut reals, mut imags) = (Vec::new(), Vec::new());
    for v in values {
        match *v {
            Value::Bool(b) => out.push(if b { "True".into() } else { "False".into() }),
            Value::Int(i) => out.push(i.to_string()),
            Value::UInt(u) => out.push(u.to_string()),
            Value::Float(x, d) => out.push(style.write(x, d)),
            Value::Complex(re, dr, im, di) => {
                reals.push(style.write(re, dr));
                let sign = if im.is_sign_negative() && !im.is_nan() { '-' } else { '+' };
                imags.push(format!("{sign}{}", style.write(im.abs(), di)));
            }
        }
    }
    if !reals.is_empty() {
        align_floats(&mut reals);
        align_floats(&mut imags);
        // NumPy writes the `j` right after the digits, then the padding.
        out = reals
            .into_iter()
            .zip(imags)
            .map(|(re, im)| {
                let digits = im.trim_end();
                format!("{re}{digits}j{}", " ".repeat(im.len() - digits.len()))
            })
            .collect();
    } else if matches!(values.first(), Some(Value::Float(..))) {
        align_floats(&mut out);
    }
    let width = out.iter().map(String::len).max().unwrap_or(0);
    out.into_iter().map(|t| format!("{t:>width$}")).collect()
}

/// Collects the shown elements in row-major order.
fn collect(elements: &Elements<'_, '_>, summarise: bool, index: &mut Vec<i64>, out: &mut Vec<Value>) {
    let meta = elements.meta;
    let axis = index.len();
    if axis == meta.shape().len() {
        out.push(elements.get(index));
        return;
    }
    for i in shown(meta.shape()[axis], summarise).into_iter().flatten() {
        index.push(i);
        collect(elements, summarise, index, out);
        index.pop();
    }
}

/// Writes the nested lists of the shown elements (`texts` in row-major order), NumPy's layout:
/// rows on their own lines indented under the opening bracket, blank lines between blocks of rank
/// 3 and more, long rows wrapped at [`LINE_WIDTH`].
fn layout(shape: &[i64], summarise: bool, texts: &mut impl Iterator<Item = String>, indent: usize, out: &mut String) {
    out.push('[');
    let Some((&extent, inner)) = shape.split_first() else { return };
    let indices = shown(extent, summarise);
    let last = indices.len().saturating_sub(1);
    if inner.is_empty() {
        let mut column = indent + 1;
        for (k, index) in indices.iter().enumerate() {
            let text = match index {
                Some(_) => texts.next().unwrap_or_default(),
                None => "...".into(),
            };
            let piece = if k == last { format!("{text}]") } else { format!("{text},") };
            if k > 0 {
                if column + 1 + piece.len() > LINE_WIDTH {
                    out.push('\n');
                    out.push_str(&" ".repeat(indent + 1));
                    column = indent + 1;
                } else {
                    out.push(' ');
                    column += 1;
                }
            }
            out.push_str(&piece);
            column += piece.len();
        }
        if indices.is_empty() {
            out.push(']');
        }
        return;
    }
    let separator = format!(",{}{}", "\n".repeat(inner.len()), " ".repeat(indent + 1));
    for (k, index) in indices.iter().enumerate() {
        if k > 0 {
            out.push_str(&separator);
        }
        match index {
            Some(_) => layout(inner, summarise, texts, indent + 1, out),
            None => out.push_str("..."),
        }
    }
    if indices.is_empty() {
        // An empty axis above others: NumPy writes `[]`.
    }
    out.push(']');
}

/// The tensor's `repr`: its values summarised and aligned as NumPy prints arrays,
/// `Tensor([[0., 1.], [2., 3.]], dtype=float32)` (with `shape=` when summarised or empty), or,
/// for memory the host cannot read now (a device's, pinned memory without feature `cuda`) or
/// values with no Python scalar, its shape and data type only.
pub(crate) fn repr(object: &Bound<'_, PyAny>, meta: &Meta) -> String {
    let shape: Vec<String> = meta.shape().iter().map(i64::to_string).collect();
    let comma = if shape.len() == 1 { "," } else { "" };
    let shape = format!("shape=({}{comma})", shape.join(", "));
    let device = super::device::device_name(meta.device);
    let without_values = || {
        let device =
            if meta.device.device_type == DLDeviceType::kDLCPU { String::new() } else { format!(", device={device}") };
        format!("Tensor({shape}, dtype={}{device})", meta.dtype)
    };
    let Ok(elements) = Elements::new(object, meta) else {
        // Not readable here: the error is not the caller's (`repr` does not fail).
        return without_values();
    };
    let summarise = meta.numel > THRESHOLD;
    let mut values = Vec::new();
    collect(&elements, summarise, &mut Vec::new(), &mut values);
    drop(elements);
    let texts = texts(&values);
    let prefix = "Tensor(";
    let mut body = String::new();
    if meta.shape().is_empty() {
        body.push_str(texts.first().map_or("", String::as_str));
    } else {
        layout(meta.shape(), summarise, &mut texts.into_iter(), prefix.len(), &mut body);
    }
    let device =
        if meta.device.device_type == DLDeviceType::kDLCPU { String::new() } else { format!(", device={device}") };
    let shape =
        if summarise || (meta.numel == 0 && meta.shape().len() > 1) { format!("{shape}, ") } else { String::new() };
    let extras = format!("{shape}dtype={}{device})", meta.dtype);
    // NumPy's rule: the extras go on a line of their own when they would make the last one too long.
    let last_line =
        body.len() - body.rfind('\n').map_or(0, |at| at + 1) + if body.contains('\n') { 0 } else { prefix.len() };
    let spacer = if last_line + 1 + extras.len() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".into()
    };
    format!("{prefix}{body},{spacer}{extras}")
}

/// The tensor's values as nested Python lists of Python scalars (`bool`, `int`, `float`,
/// `complex`); a rank-0 tensor's as one scalar.
pub(crate) fn to_list<'py>(object: &Bound<'py, PyAny>, meta: &Meta) -> PyResult<Bound<'py, PyAny>> {
    let py = object.py();
    let elements = Elements::new(object, meta).map_err(|unreadable| match unreadable {
        Unreadable::Memory(err) => err,
        Unreadable::Dtype => pyo3::exceptions::PyTypeError::new_err(format!(
            "data type {} has no Python scalar: tolist() reads one value per element",
            meta.dtype
        )),
    })?;
    let mut index = Vec::with_capacity(meta.shape().len());
    nested(py, &elements, &mut index)
}

fn nested<'py>(py: Python<'py>, elements: &Elements<'_, '_>, index: &mut Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    let meta = elements.meta;
    let axis = index.len();
    if axis == meta.shape().len() {
        return scalar(py, elements.get(index));
    }
    let list = pyo3::types::PyList::empty(py);
    for i in 0..meta.shape()[axis] {
        index.push(i);
        list.append(nested(py, elements, index)?)?;
        index.pop();
    }
    Ok(list.into_any())
}

fn scalar(py: Python<'_>, value: Value) -> PyResult<Bound<'_, PyAny>> {
    Ok(match value {
        Value::Bool(b) => pyo3::types::PyBool::new(py, b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::UInt(u) => u.into_pyobject(py)?.into_any(),
        Value::Float(x, _) => x.into_pyobject(py)?.into_any(),
        Value::Complex(re, _, im, _) => pyo3::types::PyComplex::from_doubles(py, re, im).into_any(),
    })
}
