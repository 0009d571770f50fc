//! Operators: an [`Operator`] declares its name, its schema and its CPU, Meta (and CUDA) kernels;
//! [`register`] defines it with PyTorch's dispatcher through the stable C shim, and
//! [`torch_library!`](crate::torch_library) registers a crate's operators when its library is
//! loaded (`torch.ops.load_library`, or linked by a C++ program), with no Python at all.
//!
//! Each kernel is a boxed function the dispatcher calls with its stack: dlspan takes ownership of
//! every tensor argument (each an owning handle, deleted when the call ends), checks the written
//! arguments (`Tensor(a!)`) against the others for shared memory, runs the kernel under
//! `catch_unwind`, hands the returned tensors to libtorch, and reports an error or a panic by
//! `aoti_torch_check`, which throws PyTorch's own exception from the kernel's frame after every
//! Rust value of the call has been dropped.

use super::error::TorchError;
pub use super::schema::MAX_ARGS;
use super::schema::{Arg, Schema};
use super::shim::{BUILD_VERSION, BoxedFn, LibraryHandle, shim};
use super::tensor::Tensor;
use core::any::TypeId;
use core::sync::atomic::{AtomicBool, Ordering};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, OnceLock, RwLock};

/// One call of an operator's kernel: its arguments, by name as the schema declares them, and the
/// tensors it returns.
pub struct Call {
    schema: &'static Schema,
    tensors: [Option<Tensor>; MAX_ARGS],
    slots: [u64; MAX_ARGS],
    /// Which optional arguments were given (bit `k`).
    given: u32,
    /// The `str` arguments, copied out of their handles: `(index, text)`.
    strings: Vec<(usize, String)>,
    returns: Vec<Tensor>,
}

impl Call {
    /// The index of argument `name`, of one of the kinds `kinds`.
    fn index(&self, name: &str, kinds: &[Arg]) -> Result<usize, TorchError> {
        let (k, (_, kind)) = self
            .schema
            .args
            .iter()
            .enumerate()
            .find(|(_, (n, _))| *n == name)
            .ok_or_else(|| self.schema_error(format!("its schema has no argument `{name}`")))?;
        if !kinds.contains(kind) {
            return Err(self.schema_error(format!("argument `{name}` is a {kind:?}, not a {:?}", kinds[0])));
        }
        Ok(k)
    }

    fn schema_error(&self, reason: String) -> TorchError {
        TorchError::Schema { operator: self.schema.operator.to_owned(), reason }
    }

    /// The operator's name (`"ns::name"`).
    pub fn operator(&self) -> &'static str {
        self.schema.operator
    }

    /// The tensor argument `name` (`Tensor` or `Tensor(a!)`), to read.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no tensor argument of that name.
    pub fn tensor(&self, name: &str) -> Result<&Tensor, TorchError> {
        let k = self.index(name, &[Arg::Tensor, Arg::TensorMut])?;
        self.tensors[k].as_ref().ok_or_else(|| self.schema_error(format!("argument `{name}` was taken")))
    }

    /// The tensor argument `name`, declared `Tensor(a!)`, to write in place
    /// ([`Tensor::view_mut`]).
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `Tensor(a!)` argument of that name.
    pub fn tensor_mut(&mut self, name: &str) -> Result<&mut Tensor, TorchError> {
        let k = self.index(name, &[Arg::TensorMut])?;
        let schema = self.schema;
        self.tensors[k].as_mut().ok_or_else(|| TorchError::Schema {
            operator: schema.operator.to_owned(),
            reason: format!("`{name}` taken"),
        })
    }

    /// Takes the tensor argument `name` out of the call, owned (a written one stays writable): to
    /// hold one argument while another is borrowed mutably ([`tensor_mut`](Self::tensor_mut)).
    /// Like every argument, it gives views only while the call runs.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no tensor argument of that name, or it was taken.
    pub fn take(&mut self, name: &str) -> Result<Tensor, TorchError> {
        let k = self.index(name, &[Arg::Tensor, Arg::TensorMut])?;
        self.tensors[k].take().ok_or_else(|| self.schema_error(format!("argument `{name}` was taken")))
    }

    /// The `Tensor?` argument `name`: `None` when the caller passed `None`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `Tensor?` argument of that name.
    pub fn optional_tensor(&self, name: &str) -> Result<Option<&Tensor>, TorchError> {
        let k = self.index(name, &[Arg::OptTensor])?;
        Ok(self.tensors[k].as_ref())
    }

    /// The `float?` argument `name`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `float?` argument of that name.
    pub fn optional_float(&self, name: &str) -> Result<Option<f64>, TorchError> {
        let k = self.index(name, &[Arg::OptFloat])?;
        Ok(self.is_given(k).then(|| f64::from_bits(self.slots[k])))
    }

    /// The `int?` argument `name`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `int?` argument of that name.
    pub fn optional_int(&self, name: &str) -> Result<Option<i64>, TorchError> {
        let k = self.index(name, &[Arg::OptInt])?;
        Ok(self.is_given(k).then(|| self.slots[k] as i64))
    }

    /// The `bool?` argument `name`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `bool?` argument of that name.
    pub fn optional_bool(&self, name: &str) -> Result<Option<bool>, TorchError> {
        let k = self.index(name, &[Arg::OptBool])?;
        Ok(self.is_given(k).then(|| self.slots[k] as u8 != 0))
    }

    /// The `str` argument `name`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `str` argument of that name.
    pub fn str(&self, name: &str) -> Result<&str, TorchError> {
        let k = self.index(name, &[Arg::Str])?;
        self.strings
            .iter()
            .find(|(j, _)| *j == k)
            .map(|(_, text)| text.as_str())
            .ok_or_else(|| self.schema_error(format!("argument `{name}` has no text")))
    }

    fn is_given(&self, k: usize) -> bool {
        self.given & (1 << k) != 0
    }

    /// The `float` argument `name`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `float` argument of that name.
    pub fn float(&self, name: &str) -> Result<f64, TorchError> {
        let k = self.index(name, &[Arg::Float])?;
        Ok(f64::from_bits(self.slots[k]))
    }

    /// The `int` argument `name`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `int` argument of that name.
    pub fn int(&self, name: &str) -> Result<i64, TorchError> {
        let k = self.index(name, &[Arg::Int])?;
        Ok(self.slots[k] as i64)
    }

    /// The `bool` argument `name`.
    ///
    /// # Errors
    ///
    /// [`TorchError::Schema`] when the schema has no `bool` argument of that name.
    pub fn bool(&self, name: &str) -> Result<bool, TorchError> {
        let k = self.index(name, &[Arg::Bool])?;
        Ok(self.slots[k] as u8 != 0)
    }

    /// Returns `tensor` (in the schema's order of returns).
    pub fn ret(&mut self, tensor: Tensor) {
        self.returns.push(tensor);
    }
}

/// An operator: its name, its schema, and its kernels. [`torch_library!`](crate::torch_library)
/// or [`register`] define it with PyTorch's dispatcher; PyTorch then calls `cpu` for CPU
/// tensors, `cuda` for CUDA tensors (when [`CUDA`](Self::CUDA)), and `meta` for fake tensors
/// (`torch.compile`, `torch.export`, `opcheck`): a Meta kernel computes its results' shapes and
/// returns [`Tensor::empty`]s on [`Device::Meta`](super::Device::Meta).
///
/// ```no_run
/// use dlspan::torch::{Call, Device, Operator, Tensor, TorchError};
/// use dlspan::{HostMdspan, HostMdspanMut, LayoutStride};
///
/// struct Twice;
/// impl Operator for Twice {
///     const NAME: &'static str = "demo::twice";
///     const SCHEMA: &'static str = "(Tensor x) -> Tensor";
///     fn cpu(call: &mut Call) -> Result<(), TorchError> {
///         let x = call.tensor("x")?;
///         let mut out = Tensor::empty_like(x)?;
///         {
///             let x: HostMdspan<'_, f32, 1, LayoutStride> = x.view()?;
///             let mut o: HostMdspanMut<'_, f32, 1> = out.view_mut()?;
///             for i in 0..x.extent(0) {
///                 o[[i]] = 2.0 * x[[i]];
///             }
///         }
///         call.ret(out);
///         Ok(())
///     }
///     fn meta(call: &mut Call) -> Result<(), TorchError> {
///         let out = Tensor::empty_like(call.tensor("x")?)?;
///         call.ret(out);
///         Ok(())
///     }
/// }
/// dlspan::torch_library!("demo", [Twice]);
/// ```
pub trait Operator: 'static {
    /// The qualified name, `"namespace::name"`.
    const NAME: &'static str;
    /// The schema without the name: `"(Tensor x, float s) -> Tensor"`.
    const SCHEMA: &'static str;
    /// Whether the operator has a CUDA kernel.
    const CUDA: bool = false;
    /// The operator computing this one's gradients (`"namespace::name"`, registered in the same
    /// call), or `None`: no gradient. Its arguments are this operator's, then the gradient of
    /// each result; its results are the gradient of each tensor argument, of the argument's shape
    /// or the broadcast one (summed down to the argument's). dlspan registers it with
    /// `torch.library.register_autograd` through the process's Python when there is one
    /// ([rule T10](crate::rules#t10)).
    const BACKWARD: Option<&'static str> = None;
    /// The operator computing this one's forward-mode derivative (`"namespace::name"`,
    /// registered in the same call), or `None`; only beside a [`BACKWARD`](Self::BACKWARD). Its
    /// arguments are this operator's, then a tangent of each tensor argument (of its shape); its
    /// results are this operator's, then the tangent of each. With it, the autograd kernel
    /// computes forward-mode gradients (`torch.autograd.forward_ad`, [rule T10](crate::rules#t10)).
    const TANGENT: Option<&'static str> = None;
    /// Operators registered with this one wherever it is (those `#[differentiable]` derives of
    /// an element-wise operator: its backward and tangent), unless listed beside it.
    #[doc(hidden)]
    const DERIVED: &'static [Registration] = &[];

    /// The CPU kernel.
    ///
    /// # Errors
    ///
    /// Any [`TorchError`]: PyTorch raises it (`RuntimeError` in Python).
    fn cpu(call: &mut Call) -> Result<(), TorchError>;

    /// The Meta kernel: the results' shapes and dtypes, as [`Tensor::empty`]s on [`Device::Meta`](super::Device::Meta).
    ///
    /// # Errors
    ///
    /// As [`cpu`](Self::cpu): the same checks, so `torch.compile` reports them while tracing.
    fn meta(call: &mut Call) -> Result<(), TorchError>;

    /// The CUDA kernel (registered when [`CUDA`](Self::CUDA) is true).
    ///
    /// # Errors
    ///
    /// As [`cpu`](Self::cpu).
    fn cuda(call: &mut Call) -> Result<(), TorchError> {
        Err(TorchError::Kernel(format!("operator `{}` has no CUDA kernel", call.operator())))
    }
}

/// The schemas of the registered operators, by type.
fn schemas() -> &'static RwLock<HashMap<TypeId, &'static Schema>> {
    static SCHEMAS: OnceLock<RwLock<HashMap<TypeId, &'static Schema>>> = OnceLock::new();
    SCHEMAS.get_or_init(Default::default)
}

/// The kernels of a key.
const CPU: u8 = 0;
const META: u8 = 1;
const CUDA: u8 = 2;

thread_local! {
    /// The message of the error being raised on this thread (kept until the next one: the
    /// exception copies it, and nothing of the call is left to leak).
    static MESSAGE: core::cell::RefCell<CString> = core::cell::RefCell::new(CString::default());
}

/// The boxed kernel of `O` for key `K`, as the dispatcher calls it.
///
/// # Safety
///
/// Called by libtorch's dispatcher with a stack of `max(args, returns)` slots holding the schema's
/// arguments (owning tensor handles).
unsafe extern "C-unwind" fn boxed<O: Operator, const K: u8>(stack: *mut u64, args: u64, returns: u64) {
    // SAFETY: forwarded: the dispatcher's stack.
    let outcome = std::panic::catch_unwind(|| unsafe { run::<O>(K, stack, args, returns) });
    let message = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(error)) => format!("{}: {error}", O::NAME),
        Err(payload) => {
            let text = crate::error::panic_message(payload, "a panic without a message");
            format!("{}: {}", O::NAME, TorchError::Panic { message: text })
        }
    };
    raise(message);
}

/// Raises `message` as PyTorch's exception from the calling kernel's frame: the message is moved
/// into this thread's slot first, so that nothing of the call is left to drop when the exception
/// unwinds through this frame and the boxed kernel's. A kernel that cannot raise (no shim, no
/// thread-local slot: neither happens once a kernel runs) aborts rather than return results it
/// never wrote.
fn raise(message: String) {
    let Ok(s) = shim() else { std::process::abort() };
    let text = CString::new(message.replace('\0', "\u{fffd}")).unwrap_or_default();
    drop(message);
    let Ok(pointer) = MESSAGE.try_with(|m| {
        *m.borrow_mut() = text;
        m.borrow().as_ptr()
    }) else {
        std::process::abort()
    };
    // SAFETY: `aoti_torch_check(false, ..)` throws a `c10::Error` with a copy of the message; the
    // strings live (the message in this thread's slot until the next error, the others static),
    // and every frame it unwinds through is `C-unwind` with nothing left to drop.
    unsafe { (s.check)(false, c"dlspan kernel".as_ptr(), c"dlspan/torch".as_ptr(), 0, pointer) };
}

/// One call: the arguments taken from the stack, the kernel run, the returns put back.
///
/// # Safety
///
/// As [`boxed`].
unsafe fn run<O: Operator>(key: u8, stack: *mut u64, args: u64, returns: u64) -> Result<(), TorchError> {
    let s = shim()?;
    let schema = schemas()
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&TypeId::of::<O>())
        .copied()
        .ok_or_else(|| TorchError::Schema { operator: O::NAME.to_owned(), reason: "not registered".into() })?;
    let mut call = Call {
        schema,
        tensors: core::array::from_fn(|_| None),
        slots: [0; MAX_ARGS],
        given: 0,
        strings: Vec::new(),
        returns: Vec::with_capacity(schema.returns),
    };
    if args as usize != schema.args.len() || returns as usize != schema.returns {
        return Err(TorchError::Schema {
            operator: O::NAME.to_owned(),
            reason: format!("called with {args} arguments and {returns} returns against its schema `{}`", O::SCHEMA),
        });
    }
    // Every tensor handle is owned: each becomes a `Tensor` (deleted when the call ends) before any
    // error is returned. Their views are for this call: `running` turns false when it returns,
    // whichever way (the guard's drop).
    let running = Arc::new(AtomicBool::new(true));
    let _ended = EndOfCall(Arc::clone(&running));
    let mut first_error = None;
    for (k, &(name, kind)) in schema.args.iter().enumerate() {
        // SAFETY: slot `k < args` of the dispatcher's stack.
        let slot = unsafe { *stack.wrapping_add(k) };
        // An optional's slot is null (`None`) or an owning pointer to a heap slot holding the
        // value; it is read and freed here, whatever happens next.
        let value = match kind {
            Arg::OptTensor | Arg::OptFloat | Arg::OptInt | Arg::OptBool => {
                let boxed = slot as usize as *mut u64;
                if boxed.is_null() {
                    None
                } else {
                    call.given |= 1 << k;
                    // SAFETY: a live heap slot the dispatcher allocated for this call, read once
                    // and then freed by the allocator's own function.
                    let inner = unsafe { *boxed };
                    // SAFETY: as above: freed once, not read again.
                    unsafe { s.delete_ivalue(boxed) };
                    Some(inner)
                }
            }
            Arg::Str => {
                // SAFETY: a `str` argument's slot is an owning string handle, owned by this call.
                match unsafe { s.take_string(slot as usize as *mut _) } {
                    Ok(text) => call.strings.push((k, text)),
                    Err(error) => first_error = first_error.or(Some(error)),
                }
                None
            }
            _ => Some(slot),
        };
        call.slots[k] = value.unwrap_or(0);
        if kind.is_tensor() && (kind != Arg::OptTensor || value.is_some()) {
            // SAFETY: a tensor argument's value is an owning handle, owned by this call.
            match unsafe { Tensor::from_owned(call.slots[k] as usize as *mut _, name, Some(Arc::clone(&running))) } {
                Ok(tensor) => call.tensors[k] = Some(tensor),
                Err(error) => first_error = first_error.or(Some(error)),
            }
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    mark_writable(&mut call)?;
    match key {
        CPU => O::cpu(&mut call)?,
        META => O::meta(&mut call)?,
        _ => O::cuda(&mut call)?,
    }
    if call.returns.len() != schema.returns {
        return Err(TorchError::Schema {
            operator: O::NAME.to_owned(),
            reason: format!(
                "the kernel returned {} tensors; its schema returns {}",
                call.returns.len(),
                schema.returns
            ),
        });
    }
    // The arguments are released first (their slots are overwritten).
    let results = core::mem::take(&mut call.returns);
    drop(call);
    for (k, tensor) in results.into_iter().enumerate() {
        // An owning handle: libtorch takes it.
        let handle = tensor.into_raw() as usize as u64;
        // SAFETY: slot `k < returns <= max(args, returns)` of the dispatcher's stack.
        unsafe { *stack.wrapping_add(k) = handle };
    }
    Ok(())
}

/// Marks a call's tensors stale when it returns (dropped last in [`run`], on every path).
struct EndOfCall(Arc<AtomicBool>);

impl Drop for EndOfCall {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Marks each `Tensor(a!)` argument writable when its memory overlaps no other tensor argument's
/// (on the same device): a mutable view of it is then the only way to its elements.
fn mark_writable(call: &mut Call) -> Result<(), TorchError> {
    for (k, &(name, kind)) in call.schema.args.iter().enumerate() {
        if kind != Arg::TensorMut {
            continue;
        }
        let Some(tensor) = call.tensors[k].as_ref() else { continue };
        if let Some((low, high)) = tensor.span() {
            for (j, other) in call.tensors.iter().enumerate() {
                let Some(other) = other.as_ref().filter(|_| j != k) else { continue };
                let same_device = other.device() == tensor.device();
                if let Some((l, h)) = other.span().filter(|_| same_device)
                    && l < high
                    && low < h
                {
                    return Err(TorchError::Kernel(format!(
                        "argument `{name}` is written and shares memory with argument `{}`: pass tensors that do not overlap",
                        other.name()
                    )));
                }
            }
        }
        if let Some(tensor) = call.tensors[k].as_mut() {
            tensor.set_writable();
        }
    }
    Ok(())
}

/// What [`register`] needs of an operator: its name, schema and boxed kernels. Made by [`op`].
#[derive(Clone, Copy)]
pub struct Registration {
    name: &'static str,
    schema: &'static str,
    type_id: fn() -> TypeId,
    cpu: BoxedFn,
    meta: BoxedFn,
    cuda: Option<BoxedFn>,
    backward: Option<&'static str>,
    tangent: Option<&'static str>,
    derived: &'static [Registration],
}

impl core::fmt::Debug for Registration {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Registration({}{})", self.name, self.schema)
    }
}

/// The registration of operator `O`.
///
/// ```no_run
/// # struct Twice;
/// # impl dlspan::torch::Operator for Twice {
/// #     const NAME: &'static str = "demo::twice";
/// #     const SCHEMA: &'static str = "(Tensor x) -> Tensor";
/// #     fn cpu(_: &mut dlspan::torch::Call) -> Result<(), dlspan::torch::TorchError> { Ok(()) }
/// #     fn meta(_: &mut dlspan::torch::Call) -> Result<(), dlspan::torch::TorchError> { Ok(()) }
/// # }
/// dlspan::torch::register("demo", &[dlspan::torch::op::<Twice>()])?;
/// # Ok::<(), dlspan::torch::TorchError>(())
/// ```
pub const fn op<O: Operator>() -> Registration {
    Registration {
        name: O::NAME,
        schema: O::SCHEMA,
        type_id: TypeId::of::<O>,
        cpu: boxed::<O, CPU>,
        meta: boxed::<O, META>,
        cuda: if O::CUDA { Some(boxed::<O, CUDA>) } else { None },
        backward: O::BACKWARD,
        tangent: O::TANGENT,
        derived: O::DERIVED,
    }
}

/// Defines `operators` in `namespace` with PyTorch's dispatcher, and registers their CPU, Meta
/// and (where they have one) CUDA kernels: each operator is then `torch.ops.<namespace>.<name>`
/// in Python and callable through the dispatcher from C++. Call it once per namespace.
///
/// # Errors
///
/// [`TorchError::NotLoaded`], [`TorchError::TooOld`]; [`TorchError::Schema`] for a name outside
/// `namespace` or a schema dlspan does not read; [`TorchError::Shim`] when PyTorch refuses a
/// definition (a namespace defined twice, a malformed schema).
pub fn register(namespace: &str, operators: &[Registration]) -> Result<(), TorchError> {
    register_with(namespace, operators, false)
}

/// [`register`]; with `deferred`, the autograd kernels are registered by the interpreter's main
/// thread at its next chance (the library's load-time constructor runs inside `dlopen`, where
/// running Python could deadlock with a thread that loads a library).
fn register_with(namespace: &str, listed: &[Registration], deferred: bool) -> Result<(), TorchError> {
    let s = shim()?;
    // The operators listed, then those they derive that are not listed.
    let mut operators: Vec<Registration> = listed.to_vec();
    for op in listed {
        for derived in op.derived {
            if !operators.iter().any(|o| o.name == derived.name) {
                operators.push(*derived);
            }
        }
    }
    let operators = operators.as_slice();
    let mut parsed = Vec::with_capacity(operators.len());
    for op in operators {
        let short = op
            .name
            .strip_prefix(namespace)
            .and_then(|n| n.strip_prefix("::"))
            .filter(|n| {
                !n.is_empty()
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !n.starts_with(|c: char| c.is_ascii_digit())
            })
            .ok_or_else(|| TorchError::Schema {
                operator: op.name.to_owned(),
                reason: format!("its name is not `{namespace}::<name>` (`name` of letters, digits and `_`)"),
            })?;
        parsed.push((short, Schema::parse(op.name, op.schema)?));
    }
    let mut autograd = Vec::new();
    for (op, (_, schema)) in operators.iter().zip(&parsed) {
        let find = |name: &str, what: &str| {
            let found = operators.iter().zip(&parsed).find(|(other, _)| other.name == name);
            found.map(|(_, (_, schema))| schema).ok_or_else(|| TorchError::Schema {
                operator: op.name.to_owned(),
                reason: format!("its {what} `{name}` is not among the operators registered with it"),
            })
        };
        let Some(backward) = op.backward else {
            if op.tangent.is_some() {
                return Err(TorchError::Schema {
                    operator: op.name.to_owned(),
                    reason: "it names a tangent without a backward: the autograd kernel takes both".into(),
                });
            }
            continue;
        };
        let backward = find(backward, "backward")?;
        let tangent = op.tangent.map(|name| find(name, "tangent")).transpose()?;
        autograd.push(super::autograd::entry(schema, backward, tangent)?);
    }
    let c = |text: &str| {
        CString::new(text)
            .map_err(|_| TorchError::Schema { operator: namespace.to_owned(), reason: "a NUL byte".into() })
    };
    let ns = c(namespace)?;
    let file = c"dlspan";
    let created = core::cell::RefCell::new(Vec::<LibraryHandle>::new());
    let library = |kind: Option<&str>| -> Result<LibraryHandle, TorchError> {
        let mut handle = core::ptr::null_mut();
        let code = match kind {
            // SAFETY: NUL-terminated strings live for the call; the handle is written.
            None => unsafe { (s.aoti_torch_library_init_def)(ns.as_ptr(), file.as_ptr(), 0, &mut handle) },
            Some(key) => {
                let key = c(key)?;
                // SAFETY: as above.
                unsafe { (s.aoti_torch_library_init_impl)(ns.as_ptr(), key.as_ptr(), file.as_ptr(), 0, &mut handle) }
            }
        };
        s.status("aoti_torch_library_init", code)?;
        created.borrow_mut().push(handle);
        Ok(handle)
    };
    let outcome = define(s, namespace, operators, parsed, &library, &c).and_then(|()| {
        // Before anything traces the operators (as the autograd kernels must be).
        if deferred { Ok(()) } else { super::autograd::register(&autograd) }
    });
    let created = created.into_inner();
    if outcome.is_ok() && deferred && !autograd.is_empty() {
        let handles = created.iter().map(|&h| h as usize).collect();
        super::autograd::register_later(autograd, handles);
    }
    if outcome.is_err() {
        // A failed registration leaves nothing behind: deleting a library removes its kernels.
        for &handle in created.iter().rev() {
            // SAFETY: a library handle this call created, deleted once.
            let _ = unsafe { (s.aoti_torch_delete_library_object)(handle) };
        }
    } else {
        super::shim::libraries()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(created.iter().map(|&h| h as usize));
    }
    outcome
}

/// The definitions and kernels of [`register`], in the libraries `library` creates.
fn define(
    s: &super::shim::Shim,
    namespace: &str,
    operators: &[Registration],
    parsed: Vec<(&'static str, Schema)>,
    library: &dyn Fn(Option<&str>) -> Result<LibraryHandle, TorchError>,
    c: &dyn Fn(&str) -> Result<CString, TorchError>,
) -> Result<(), TorchError> {
    let def = library(None)?;
    for (op, (short, schema)) in operators.iter().zip(parsed) {
        let text = c(&format!("{short}{}", op.schema))?;
        // SAFETY: a live library handle and a NUL-terminated schema.
        s.status("aoti_torch_library_def", unsafe { (s.aoti_torch_library_def)(def, text.as_ptr()) })?;
        let leaked: &'static Schema = Box::leak(Box::new(schema));
        schemas().write().unwrap_or_else(std::sync::PoisonError::into_inner).insert((op.type_id)(), leaked);
    }
    type Kernel = fn(&Registration) -> Option<BoxedFn>;
    let keys: [(&str, Kernel); 3] = [("CPU", |r| Some(r.cpu)), ("Meta", |r| Some(r.meta)), ("CUDA", |r| r.cuda)];
    for (key, kernel) in keys {
        if operators.iter().all(|op| kernel(op).is_none()) {
            continue;
        }
        let lib = library(Some(key))?;
        for op in operators {
            let Some(function) = kernel(op) else { continue };
            let short = &op.name[namespace.len() + 2..];
            let name = c(short)?;
            // SAFETY: a live library handle, a NUL-terminated name, and a boxed kernel that lives
            // for the process (a function of this library, which stays loaded while registered).
            let code = unsafe { (s.torch_library_impl)(lib, name.as_ptr(), function, BUILD_VERSION) };
            s.status("torch_library_impl", code)?;
        }
    }
    Ok(())
}

/// [`register`] from a library's load-time constructor ([`torch_library!`](crate::torch_library)):
/// an error cannot be returned there, so it is written to standard error, and the operators are
/// missing (`torch.ops.<namespace>.<name>` then says so).
#[doc(hidden)]
pub fn register_at_load(namespace: &str, operators: &[Registration]) {
    let outcome = std::panic::catch_unwind(|| register_with(namespace, operators, true));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(error)) => eprintln!("dlspan: the operators of `{namespace}` were not registered: {error}"),
        Err(_) => eprintln!("dlspan: the operators of `{namespace}` were not registered: a panic"),
    }
}

/// Registers a crate's operators with PyTorch's dispatcher when its library is loaded — by
/// `torch.ops.load_library("…/libmy_ops.so")` in Python, or by a C++ program linking it — with no
/// PyO3 and no Python: `torch_library!("namespace", [Op1, Op2])` for [`Operator`] types.
///
/// Loading needs PyTorch already in the process (Python: `import torch` first). A registration
/// that fails is reported on standard error.
///
/// ```no_run
/// # struct Twice;
/// # impl dlspan::torch::Operator for Twice {
/// #     const NAME: &'static str = "demo::twice";
/// #     const SCHEMA: &'static str = "(Tensor x) -> Tensor";
/// #     fn cpu(_: &mut dlspan::torch::Call) -> Result<(), dlspan::torch::TorchError> { Ok(()) }
/// #     fn meta(_: &mut dlspan::torch::Call) -> Result<(), dlspan::torch::TorchError> { Ok(()) }
/// # }
/// dlspan::torch_library!("demo", [Twice]);
/// ```
#[macro_export]
macro_rules! torch_library {
    ($namespace:literal, [$($op:ty),* $(,)?]) => {
        const _: () = {
            extern "C" fn __dlspan_torch_register() {
                $crate::torch::register_at_load($namespace, &[$($crate::torch::op::<$op>()),*]);
            }
            #[used]
            #[cfg_attr(any(target_os = "linux", target_os = "android", target_os = "freebsd"), unsafe(link_section = ".init_array"))]
            #[cfg_attr(target_vendor = "apple", unsafe(link_section = "__DATA,__mod_init_func"))]
            static __DLSPAN_TORCH_INIT: extern "C" fn() = __dlspan_torch_register;
        };
    };
}
