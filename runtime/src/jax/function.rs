//! JAX functions: kernels that are not element-wise (a reduction, a softmax, a matrix product),
//! written as a plain Rust function of typed views and declared by a [`Function`] impl — the
//! parameters by name, the results' shapes and dtypes by a Rust shape function — which dlspan
//! turns into XLA FFI handlers and a Python function ([rule X6](crate::rules#x6)).
//!
//! The shape function runs twice: in Python when JAX traces the call (it gives `jax.ffi.ffi_call`
//! its results' shapes and dtypes, so a wrong input is an exception naming it before anything
//! runs), and in the handler on the shapes XLA passes, whose result buffers must be what it says.
//! The kernel's views come from [`Call`], by parameter name, through dlspan's import rules.

// The handlers are reached through `register_module` (feature `python`).
#![cfg_attr(not(feature = "python"), allow(dead_code))]

use super::error::JaxError;
use super::ffi::{Handler, XlaFfiCallFrame, XlaFfiError};
use super::frame::{Buffer, CallFrame, Traits, handle, overlap};
use crate::FromDlTensor;
use crate::dtype::DlElement;
use crate::ffi::{DLDataType, DLDevice, DLDeviceType};
use crate::kernel::signature::ScalarKind;
use core::cell::Cell;

/// A parameter of a [`Function`]: an array argument or an attribute (a scalar, static under
/// `jax.jit`), by its name. Arrays are passed in the order they are declared, attributes by name.
///
/// ```
/// use dlspan::jax::Param;
///
/// const PARAMS: &[Param] = &[Param::Array("x"), Param::Float("temperature")];
/// assert_eq!(PARAMS[1].name(), "temperature");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// An array (an XLA buffer argument).
    Array(&'static str),
    /// A float attribute (given to the handler as `float64`).
    Float(&'static str),
    /// An integer attribute (`int64`).
    Int(&'static str),
    /// A `bool` attribute.
    Bool(&'static str),
}

impl Param {
    /// The parameter's name.
    ///
    /// ```
    /// assert_eq!(dlspan::jax::Param::Array("x").name(), "x");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Self::Array(name) | Self::Float(name) | Self::Int(name) | Self::Bool(name) => name,
        }
    }

    /// The attribute's kind, `None` for an array.
    const fn kind(self) -> Option<ScalarKind> {
        match self {
            Self::Array(_) => None,
            Self::Float(_) => Some(ScalarKind::Float),
            Self::Int(_) => Some(ScalarKind::Int),
            Self::Bool(_) => Some(ScalarKind::Bool),
        }
    }
}

/// How `jax.vmap` batches a call of a [`Function`] (`jax.ffi.ffi_call`'s `vmap_method`).
///
/// ```
/// assert_eq!(dlspan::jax::Vmap::default(), dlspan::jax::Vmap::Sequential);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Vmap {
    /// One call per batch element (`"sequential"`): right for every function, whatever it does
    /// with its axes.
    #[default]
    Sequential,
    /// One call with the batch as a new leading axis of every batched array, and of extent 1 on
    /// the others (`"expand_dims"`): for a function that broadcasts leading axes itself.
    ExpandDims,
    /// One call with every array given the batch axis in front, unbatched ones broadcast
    /// (`"broadcast_all"`): for a function that maps over any leading axes.
    BroadcastAll,
}

impl Vmap {
    /// The name `jax.ffi.ffi_call` takes.
    ///
    /// ```
    /// assert_eq!(dlspan::jax::Vmap::BroadcastAll.method(), "broadcast_all");
    /// ```
    pub const fn method(self) -> &'static str {
        match self {
            Self::Sequential => "sequential",
            Self::ExpandDims => "expand_dims",
            Self::BroadcastAll => "broadcast_all",
        }
    }
}

/// The shape and dtype of a result, what a [`Function`]'s shape function gives for each.
///
/// ```
/// use dlspan::jax::ArrayType;
///
/// let t = ArrayType::of::<f32>([3, 4]);
/// assert_eq!((t.shape.as_slice(), t.dtype.to_string().as_str()), (&[3, 4][..], "float32"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayType {
    /// The extents.
    pub shape: Vec<usize>,
    /// The dtype.
    pub dtype: DLDataType,
}

impl ArrayType {
    /// An array of `shape` and `dtype`.
    ///
    /// ```
    /// let t = dlspan::jax::ArrayType::new(vec![2], dlspan::dtype::dtype_of::<i32>());
    /// assert_eq!(t.shape, [2]);
    /// ```
    pub fn new(shape: impl Into<Vec<usize>>, dtype: DLDataType) -> Self {
        Self { shape: shape.into(), dtype }
    }

    /// An array of `shape` of element type `T`.
    ///
    /// ```
    /// assert_eq!(dlspan::jax::ArrayType::of::<f64>([]).dtype, dlspan::dtype::dtype_of::<f64>());
    /// ```
    pub fn of<T: DlElement>(shape: impl Into<Vec<usize>>) -> Self {
        Self::new(shape, T::DTYPE)
    }
}

/// A JAX function: a kernel over arrays of any shapes, called inside `jax.jit` through XLA's FFI
/// ([rule X6](crate::rules#x6)). Registered with [`register_module`](super::register_module)
/// through [`function`](super::function), it becomes `my_ext.<NAME>(arrays…, attributes…)`.
///
/// ```
/// use dlspan::HostMdspanMut;
/// use dlspan::jax::{ArrayType, Call, Function, JaxError, Param, Shapes};
///
/// /// Each row of a matrix summed, times `scale`.
/// struct RowSum;
///
/// impl Function for RowSum {
///     const NAME: &'static str = "row_sum";
///     const PARAMS: &'static [Param] = &[Param::Array("x"), Param::Float("scale")];
///     const RESULTS: &'static [&'static str] = &["sums"];
///
///     fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
///         match shapes.shape("x")? {
///             &[rows, _] => Ok(vec![ArrayType::new([rows], shapes.dtype("x")?)]),
///             other => Err(JaxError::Kernel(format!("row_sum: `x` is a matrix, not of shape {other:?}"))),
///         }
///     }
///
///     fn cpu(call: &Call<'_>) -> Result<(), JaxError> {
///         let x: dlspan::HostMdspan<'_, f32, 2> = call.input("x")?;
///         let mut sums: HostMdspanMut<'_, f32, 1> = call.output("sums")?;
///         let scale = call.float("scale")? as f32;
///         for (row, sum) in x.outer_iter().zip(sums.iter_mut()) {
///             *sum = row.sum() * scale;
///         }
///         Ok(())
///     }
/// }
/// # let _ = dlspan::jax::function::<RowSum>;
/// ```
pub trait Function: 'static {
    /// The function's name: its Python function's, and XLA target `"<namespace>.<NAME>"`.
    const NAME: &'static str;
    /// Its parameters, in the Python function's order.
    const PARAMS: &'static [Param];
    /// The names of its results, in order.
    const RESULTS: &'static [&'static str];
    /// How `jax.vmap` batches it: [`Vmap::Sequential`] unless it declares otherwise.
    const VMAP: Vmap = Vmap::Sequential;
    /// Whether it has a CUDA handler ([`cuda`](Self::cuda)), registered with feature `cuda`.
    const CUDA: bool = false;
    /// Whether its CUDA handler may be captured into a CUDA graph (XLA's command buffers): it
    /// only enqueues work on [`Call::stream`], never synchronises, allocates or reads a buffer on
    /// the host.
    const COMMAND_BUFFER: bool = false;
    /// The function computing this one's gradients, by [`NAME`](Self::NAME) (registered in the
    /// same [`register_module`](super::register_module) call), or `None`. Its parameters are
    /// this function's, then a cotangent array per result (of the result's shape and dtype); its
    /// results are the cotangent of each array argument, of the argument's shape and dtype. With
    /// it, the Python function is a `jax.custom_vjp`: `jax.grad` works through it.
    const BACKWARD: Option<&'static str> = None;

    /// The results' shapes and dtypes, in [`RESULTS`](Self::RESULTS)' order, from the
    /// arguments' and the attributes: the shape function.
    ///
    /// # Errors
    ///
    /// Arguments the function does not take: the Python call raises it (naming the argument, as
    /// the message should) before anything runs.
    fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError>;

    /// The CPU kernel: reads its arrays and writes every result through `call`'s views.
    ///
    /// # Errors
    ///
    /// Any [`JaxError`]: JAX raises it from the call.
    fn cpu(call: &Call<'_>) -> Result<(), JaxError>;

    /// The CUDA kernel, on [`Call::stream`] with device views (registered when
    /// [`CUDA`](Self::CUDA) is true and dlspan has feature `cuda`).
    ///
    /// # Errors
    ///
    /// As [`cpu`](Self::cpu).
    fn cuda(call: &Call<'_>) -> Result<(), JaxError> {
        Err(JaxError::Kernel(format!("function `{}` has no CUDA kernel", call.name())))
    }
}

/// A value of an attribute, read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    Float(f64),
    Int(i64),
    Bool(bool),
}

/// The shapes and dtypes of a call's arrays and the values of its attributes: what a
/// [`Function`]'s shape function reads, at trace time (from Python) and in the handler (from
/// XLA's call frame).
#[derive(Clone, Debug)]
pub struct Shapes {
    name: &'static str,
    params: &'static [Param],
    /// Per array parameter, in order: its extents and dtype.
    arrays: Described,
    /// Per attribute parameter, in order.
    values: Vec<Value>,
}

impl Shapes {
    /// Checks `arrays` and `values` against `F`'s parameters.
    pub(crate) fn new<F: Function>(arrays: Described, values: Vec<Value>) -> Self {
        Self { name: F::NAME, params: F::PARAMS, arrays, values }
    }

    /// The function's name.
    ///
    /// ```
    /// # use dlspan::jax::{ArrayType, Call, Function, JaxError, Param, Shapes};
    /// # struct Id;
    /// # impl Function for Id {
    /// #     const NAME: &'static str = "id";
    /// #     const PARAMS: &'static [Param] = &[Param::Array("x")];
    /// #     const RESULTS: &'static [&'static str] = &["y"];
    /// fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
    ///     assert_eq!(shapes.name(), "id");
    ///     Ok(vec![ArrayType::new(shapes.shape("x")?, shapes.dtype("x")?)])
    /// }
    /// #     fn cpu(_: &Call<'_>) -> Result<(), JaxError> { Ok(()) }
    /// # }
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The position of parameter `name` among those of its sort (arrays or attributes).
    fn position(&self, name: &str, array: bool) -> Result<(usize, Param), JaxError> {
        let mut k = 0;
        for &param in self.params {
            if matches!(param, Param::Array(_)) == array {
                if param.name() == name {
                    return Ok((k, param));
                }
                k += 1;
            }
        }
        let sort = if array { "array" } else { "attribute" };
        Err(JaxError::Kernel(format!("function `{}` has no {sort} parameter `{name}`", self.name)))
    }

    /// The extents of array argument `name`.
    ///
    /// # Errors
    ///
    /// [`JaxError::Kernel`] when the function has no array parameter of that name.
    ///
    /// See [`name`](Self::name)'s example.
    pub fn shape(&self, name: &str) -> Result<&[usize], JaxError> {
        let (k, _) = self.position(name, true)?;
        Ok(&self.arrays[k].0)
    }

    /// The dtype of array argument `name`.
    ///
    /// # Errors
    ///
    /// As [`shape`](Self::shape).
    ///
    /// See [`name`](Self::name)'s example.
    pub fn dtype(&self, name: &str) -> Result<DLDataType, JaxError> {
        let (k, _) = self.position(name, true)?;
        Ok(self.arrays[k].1)
    }

    fn value(&self, name: &str) -> Result<(Value, Param), JaxError> {
        let (k, param) = self.position(name, false)?;
        Ok((self.values[k], param))
    }

    fn wrong(&self, param: Param, asked: &str) -> JaxError {
        JaxError::Kernel(format!("function `{}`: attribute `{}` is {param:?}, not {asked}", self.name, param.name()))
    }

    /// The float attribute `name`.
    ///
    /// # Errors
    ///
    /// [`JaxError::Kernel`] when the function has no float attribute of that name.
    ///
    /// See [`Function`]'s example.
    pub fn float(&self, name: &str) -> Result<f64, JaxError> {
        match self.value(name)? {
            (Value::Float(v), _) => Ok(v),
            (_, param) => Err(self.wrong(param, "a float")),
        }
    }

    /// The integer attribute `name`.
    ///
    /// # Errors
    ///
    /// [`JaxError::Kernel`] when the function has no integer attribute of that name.
    ///
    /// As [`float`](Self::float) for an integer.
    pub fn int(&self, name: &str) -> Result<i64, JaxError> {
        match self.value(name)? {
            (Value::Int(v), _) => Ok(v),
            (_, param) => Err(self.wrong(param, "an int")),
        }
    }

    /// The `bool` attribute `name`.
    ///
    /// # Errors
    ///
    /// [`JaxError::Kernel`] when the function has no `bool` attribute of that name.
    ///
    /// As [`float`](Self::float) for a `bool`.
    pub fn bool(&self, name: &str) -> Result<bool, JaxError> {
        match self.value(name)? {
            (Value::Bool(v), _) => Ok(v),
            (_, param) => Err(self.wrong(param, "a bool")),
        }
    }

    /// The results of `F` for these shapes, checked: one per name of `F::RESULTS`.
    pub(crate) fn results<F: Function>(&self) -> Result<Vec<ArrayType>, JaxError> {
        let results = F::results(self)?;
        if results.len() != F::RESULTS.len() {
            return Err(JaxError::Kernel(format!(
                "function `{}`: its shape function gave {} results; it declares {} ({:?})",
                F::NAME,
                results.len(),
                F::RESULTS.len(),
                F::RESULTS
            )));
        }
        for (name, result) in F::RESULTS.iter().zip(&results) {
            // A dtype XLA has (`ffi_call` names it, XLA allocates it): byte-sized scalars.
            if result.dtype.lanes != 1 || result.dtype.bits % 8 != 0 || super::frame::xla_dtype(result.dtype).is_none()
            {
                return Err(JaxError::Kernel(format!(
                    "function `{}`: result `{name}` has dtype {}, which is not one of XLA's",
                    F::NAME,
                    result.dtype
                )));
            }
            // A result of more elements than an address can count is never allocated.
            let elements = result.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
            let bytes = elements.and_then(|n| n.checked_mul(usize::from(result.dtype.bits).div_ceil(8)));
            if result.shape.len() > crate::dtype::MAX_DISPATCH_RANK || bytes.is_none_or(|b| b > isize::MAX as usize) {
                return Err(JaxError::Kernel(format!(
                    "function `{}`: result `{name}` of shape {:?} is beyond what a buffer holds",
                    F::NAME,
                    result.shape
                )));
            }
        }
        Ok(results)
    }
}

/// One call of a [`Function`]'s kernel: its arrays as typed views and its attributes, by
/// parameter name. On the CPU, results start zeroed (XLA allocates them uninitialised: dlspan
/// zeroes them before any view exists); on CUDA, a result holds whatever its memory held until
/// the kernel writes it.
pub struct Call<'a> {
    shapes: Shapes,
    /// The array arguments, in order, then the results.
    buffers: Vec<Buffer<'a>>,
    results: &'static [&'static str],
    /// The results already handed out as mutable views (bit `k` for result `k`).
    taken: Cell<u64>,
    #[cfg(feature = "cuda")]
    stream: Option<crate::cuda::Stream>,
}

impl core::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Call").field("shapes", &self.shapes).field("results", &self.results).finish_non_exhaustive()
    }
}

impl<'a> Call<'a> {
    /// The function's name.
    pub fn name(&self) -> &'static str {
        self.shapes.name
    }

    /// The shapes and attributes of the call, as the shape function saw them.
    pub fn shapes(&self) -> &Shapes {
        &self.shapes
    }

    /// The float attribute `name` ([`Shapes::float`]).
    ///
    /// # Errors
    ///
    /// As [`Shapes::float`].
    pub fn float(&self, name: &str) -> Result<f64, JaxError> {
        self.shapes.float(name)
    }

    /// The integer attribute `name` ([`Shapes::int`]).
    ///
    /// # Errors
    ///
    /// As [`Shapes::int`].
    pub fn int(&self, name: &str) -> Result<i64, JaxError> {
        self.shapes.int(name)
    }

    /// The `bool` attribute `name` ([`Shapes::bool`]).
    ///
    /// # Errors
    ///
    /// As [`Shapes::bool`].
    pub fn bool(&self, name: &str) -> Result<bool, JaxError> {
        self.shapes.bool(name)
    }

    /// Array argument `name` as a shared view of type `V` (host views in [`Function::cpu`],
    /// device views in [`Function::cuda`]; its element type, rank, static extents and layout
    /// checked by the import rules, [section I](crate::rules#i)). XLA's buffers are dense and
    /// row-major: any layout that takes a row-major array does.
    ///
    /// # Errors
    ///
    /// [`JaxError::Argument`] naming the argument with the rule it breaks;
    /// [`JaxError::Kernel`] when there is no array parameter `name`.
    ///
    /// See [`Function`]'s example.
    pub fn input<'v, V: FromDlTensor<'v>>(&'v self, name: &str) -> Result<V, JaxError> {
        let (k, _) = self.shapes.position(name, true)?;
        self.buffers[k].view()
    }

    /// Result `name` as a mutable view of type `V`, once per call (a second view of the same
    /// result while the first lives would alias it).
    ///
    /// # Errors
    ///
    /// [`JaxError::Argument`] naming the result with the rule it breaks; [`JaxError::Kernel`]
    /// when there is no result `name`, or it was viewed already.
    ///
    /// See [`Function`]'s example.
    pub fn output<'v, V: FromDlTensor<'v>>(&'v self, name: &str) -> Result<V, JaxError> {
        let Some(k) = self.results.iter().position(|r| *r == name) else {
            return Err(JaxError::Kernel(format!("function `{}` has no result `{name}`", self.name())));
        };
        let taken = self.taken.get();
        if taken & (1 << k) != 0 {
            return Err(JaxError::Kernel(format!(
                "function `{}`: result `{name}` is viewed already in this call (one mutable view per result)",
                self.name()
            )));
        }
        if !V::MUTABLE {
            // XLA's result buffers start uninitialised: a shared view would read that memory.
            return Err(JaxError::Kernel(format!(
                "function `{}`: result `{name}` is written, not read: its view is a mutable one",
                self.name()
            )));
        }
        let buffer = &self.buffers[self.buffers.len() - self.results.len() + k];
        // SAFETY: the buffer is a result XLA allocated for this call, which `prepare` checked
        // overlaps no other buffer of the call; the bit just tested, and set below before anything
        // else can run (`Call` is not `Sync`), makes this the only view of it for the call, which
        // outlives `'v`.
        let view = unsafe { buffer.view_exclusive() }?;
        self.taken.set(taken | (1 << k));
        Ok(view)
    }

    /// Refuses a call that returned without viewing every result of elements: a result must be
    /// written (on CUDA, an unwritten one would hand JAX whatever its memory held).
    fn written(&self) -> Result<(), JaxError> {
        let first = self.buffers.len() - self.results.len();
        for (k, name) in self.results.iter().enumerate() {
            if self.taken.get() & (1 << k) == 0 && self.buffers[first + k].span().is_some() {
                return Err(JaxError::Kernel(format!(
                    "function `{}` returned without writing result `{name}` (it took no view of it)",
                    self.name()
                )));
            }
        }
        Ok(())
    }

    /// XLA's stream for the call, in [`Function::cuda`]: the kernel's work goes on it, with no
    /// synchronisation (the handler returns before the GPU runs it).
    ///
    /// # Errors
    ///
    /// [`JaxError::Kernel`] in a CPU call.
    #[cfg(feature = "cuda")]
    pub fn stream(&self) -> Result<&crate::cuda::Stream, JaxError> {
        self.stream
            .as_ref()
            .ok_or_else(|| JaxError::Kernel(format!("function `{}`: a CPU call has no stream", self.name())))
    }
}

/// The arrays and attributes of `F`'s call, read from the frame and checked, with the results'
/// buffers checked against the shape function.
fn prepare<'a, F: Function>(frame: &CallFrame<'a>, device: DLDevice) -> Result<(Shapes, Vec<Buffer<'a>>), JaxError> {
    let arrays = F::PARAMS.iter().filter(|p| matches!(p, Param::Array(_))).count();
    if F::RESULTS.len() > 64 {
        return Err(JaxError::Kernel(format!("function `{}` declares more than 64 results", F::NAME)));
    }
    let (args, rets) = frame.counts();
    if (args, rets) != (arrays, F::RESULTS.len()) {
        return Err(JaxError::Kernel(format!(
            "function `{}` takes {arrays} arrays and returns {}; the call passes {args} and expects {rets}",
            F::NAME,
            F::RESULTS.len()
        )));
    }
    let mut buffers = Vec::with_capacity(arrays + rets);
    let mut types = Vec::with_capacity(arrays);
    let mut values = Vec::new();
    for &param in F::PARAMS {
        match param.kind() {
            None => {
                let buffer = frame.arg(buffers.len(), param.name(), device)?;
                let dtype = buffer.dtype().ok_or_else(|| unknown_dtype(param.name(), &buffer.dtype_name()))?;
                types.push((buffer.dims().iter().map(|&d| d as usize).collect(), dtype));
                buffers.push(buffer);
            }
            Some(kind) => {
                let bits = frame.scalar_bits(param.name(), kind)?;
                values.push(match kind {
                    ScalarKind::Float => Value::Float(f64::from_bits(bits)),
                    ScalarKind::Int => Value::Int(bits as i64),
                    ScalarKind::Bool => Value::Bool(bits != 0),
                });
            }
        }
    }
    let shapes = Shapes::new::<F>(types, values);
    let results = shapes.results::<F>()?;
    for (k, (name, result)) in F::RESULTS.iter().zip(&results).enumerate() {
        let buffer = frame.ret(k, name, device)?;
        let fits = buffer.dtype() == Some(result.dtype)
            && buffer.dims().len() == result.shape.len()
            && buffer.dims().iter().zip(&result.shape).all(|(&d, &s)| d as usize == s);
        if !fits {
            return Err(JaxError::Kernel(format!(
                "result `{name}` is {} of shape {:?}; function `{}`'s shape function gives {} of shape {:?} for these arguments",
                buffer.dtype_name(),
                buffer.dims(),
                F::NAME,
                result.dtype,
                result.shape
            )));
        }
        buffers.push(buffer);
    }
    if let Some((k, j)) = overlap(&buffers, |k| k >= arrays) {
        return Err(JaxError::Kernel(format!(
            "result `{}` shares memory with `{}`: a kernel cannot read what it writes (XLA passed aliased buffers)",
            buffers[k].name(),
            buffers[j].name()
        )));
    }
    Ok((shapes, buffers))
}

/// The error of a buffer of a dtype dlspan has no equivalent for.
pub(crate) fn unknown_dtype(name: &str, dtype: &str) -> JaxError {
    JaxError::Kernel(format!("argument `{name}` has {dtype}, which dlspan's kernels do not take"))
}

/// Runs `F` on the CPU over the call's buffers.
fn run_cpu<F: Function>(frame: &CallFrame<'_>) -> Result<(), JaxError> {
    let (shapes, mut buffers) = prepare::<F>(frame, DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 })?;
    // Host results start zeroed: a view may be read before it is written (rule X6).
    buffers.iter_mut().for_each(Buffer::zero);
    let call = Call {
        shapes,
        buffers,
        results: F::RESULTS,
        taken: Cell::new(0),
        #[cfg(feature = "cuda")]
        stream: None,
    };
    F::cpu(&call)?;
    call.written()
}

/// The CPU handler of `F` (`platform="cpu"`).
///
/// # Safety
///
/// Called by XLA with its call frame (null or valid for the call).
unsafe extern "C" fn cpu<F: Function>(frame: *mut XlaFfiCallFrame) -> *mut XlaFfiError {
    // SAFETY: forwarded: XLA's frame.
    unsafe { handle(frame, Traits { command_buffer: false }, run_cpu::<F>) }
}

/// Runs `F` on XLA's stream over the call's device buffers.
#[cfg(feature = "cuda")]
fn run_cuda<F: Function>(frame: &CallFrame<'_>) -> Result<(), JaxError> {
    let (ordinal, stream) = frame.cuda_stream()?;
    let device_id = i32::try_from(ordinal).map_err(|_| JaxError::Frame(format!("CUDA device {ordinal}")))?;
    let (shapes, buffers) = prepare::<F>(frame, DLDevice { device_type: DLDeviceType::kDLCUDA, device_id })?;
    let call = Call { shapes, buffers, results: F::RESULTS, taken: Cell::new(0), stream: Some(stream) };
    F::cuda(&call)?;
    call.written()
}

/// The CUDA handler of `F` (`platform="CUDA"`).
///
/// # Safety
///
/// Called by XLA with its call frame (null or valid for the call).
#[cfg(feature = "cuda")]
unsafe extern "C" fn cuda<F: Function>(frame: *mut XlaFfiCallFrame) -> *mut XlaFfiError {
    // SAFETY: forwarded: XLA's frame.
    unsafe { handle(frame, Traits { command_buffer: F::COMMAND_BUFFER }, run_cuda::<F>) }
}

/// The arrays of a call, described: per array parameter, its extents and dtype.
pub(crate) type Described = Vec<(Vec<usize>, DLDataType)>;

/// A [`Function`]'s shape function over described arrays and attribute values.
pub(crate) type ShapeFunction = fn(Described, Vec<Value>) -> Result<Vec<ArrayType>, JaxError>;

/// What registration needs of a [`Function`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct FunctionEntry {
    pub(crate) name: &'static str,
    pub(crate) params: &'static [Param],
    pub(crate) results: &'static [&'static str],
    pub(crate) vmap: Vmap,
    pub(crate) backward: Option<&'static str>,
    pub(crate) cpu: Handler,
    pub(crate) cuda: Option<Handler>,
    /// The shape function at trace time: the arrays' shapes and dtypes and the attributes'
    /// values, in order.
    pub(crate) shapes: ShapeFunction,
}

impl FunctionEntry {
    /// `F`'s entry.
    pub(crate) fn of<F: Function>() -> Self {
        #[cfg(feature = "cuda")]
        let cuda = F::CUDA.then_some(cuda::<F> as Handler);
        #[cfg(not(feature = "cuda"))]
        let cuda = None;
        Self {
            name: F::NAME,
            params: F::PARAMS,
            results: F::RESULTS,
            vmap: F::VMAP,
            backward: F::BACKWARD,
            cpu: cpu::<F>,
            cuda,
            shapes: |arrays, values| Shapes::new::<F>(arrays, values).results::<F>(),
        }
    }
}

/// The handlers of `F` for a test's fake XLA: the CPU one.
#[cfg(test)]
pub(crate) fn cpu_handler<F: Function>() -> Handler {
    cpu::<F>
}
