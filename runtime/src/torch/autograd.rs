//! Gradients for native operators. The stable C ABI builds no autograd node, so an operator that
//! names its backward ([`Operator::BACKWARD`](super::Operator::BACKWARD)) is given a Python
//! autograd kernel at the `Autograd` key (an `autograd.Function` of the classic form, as
//! `torch.library.register_autograd` makes one, with a leaner path for calls without gradients,
//! and a `jvp` for forward mode when the operator names its tangent)
//! when the operators are registered: dlspan writes that Python itself, and runs it through the interpreter already in the process (found
//! by `dlsym`, as the shim is: the library links no Python and builds without one). A process
//! without Python (a C++ program) has no autograd, and needs none.
//!
//! The backward's contract: its arguments are the forward's (in order) and then the gradient of
//! each forward result; its results are the gradient of each forward *tensor* argument, in order,
//! of the broadcast shape or the argument's own (a gradient is summed down to the argument's shape:
//! the gradient of a broadcast input).

use super::error::TorchError;
use super::schema::{Arg, Schema};

use core::ffi::{c_char, c_int, c_void};

/// The Python that registers each forward's autograd kernel (`{entries}`: one `(forward, backward,
/// tangent, kinds)` tuple per operator, `tangent` empty for none, `kinds` a string of `t` (tensor)
/// and `s` (scalar) per argument).
///
/// The kernel is what `torch.library.register_autograd` registers (without its `setup_context`
/// form, whose `apply` binds the arguments to `forward`'s signature on every call, about 30 µs:
/// `torch.func` transforms do not go through it), leaner on the path every call without
/// gradients takes: no context manager, the redispatch below autograd bound once (its
/// backend kernels are dlspan's, which record nothing for autograd). With gradients, an
/// `autograd.Function` redispatches below autograd, saves the tensor arguments, and its backward
/// calls the backward operator, summing each gradient down to its argument's shape; with a
/// tangent, its `jvp` calls the tangent operator (inside a dual level of
/// `torch.autograd.forward_ad`, every call goes through the `Function`). The
/// `Library` objects are kept in `sys.modules["_dlspan_torch_autograd"]` for the process (a
/// collected `Library` removes its kernels).
const SOURCE: &str = r#"
def __dlspan_register_autograd(entries):
    import sys
    import types
    import torch
    from torch import _C

    after = _C._after_autograd_keyset
    grad_enabled = _C.is_grad_enabled
    any_requires_grad = _C._any_requires_grad
    keep = sys.modules.setdefault("_dlspan_torch_autograd", types.ModuleType("_dlspan_torch_autograd"))
    if not hasattr(keep, "libraries"):
        keep.libraries = []

    forward_ad = torch.autograd.forward_ad

    def register(forward, backward, tangent, kinds):
        namespace, name = forward.split("::")
        redispatch = getattr(getattr(torch.ops, namespace), name).default.redispatch
        backward_namespace, backward_name = backward.split("::")
        tensors = [k for k, kind in enumerate(kinds) if kind == "t"]

        def forward_fn(ctx, keyset, *args):
            with _C._AutoDispatchBelowAutograd():
                result = redispatch(keyset & after, *args)
            ctx.save_for_backward(*[args[k] for k in tensors])
            if tangent:
                ctx.save_for_forward(*[args[k] for k in tensors])
            ctx.dlspan_scalars = [None if kind == "t" else v for kind, v in zip(kinds, args)]
            return result

        def jvp_fn(ctx, _keyset, *tangents):
            # Forward mode: the tangent operator, from the arguments and their tangents (zeros
            # for an argument without one); its results are the forward's, then their tangents.
            saved = iter(ctx.saved_tensors)
            args = [next(saved) if kind == "t" else v for kind, v in zip(kinds, ctx.dlspan_scalars)]
            given = [torch.zeros_like(args[k]) if tangents[k] is None else tangents[k] for k in tensors]
            tangent_namespace, tangent_name = tangent.split("::")
            results = getattr(getattr(torch.ops, tangent_namespace), tangent_name)(*args, *given)
            half = len(results) // 2
            return results[half] if half == 1 else tuple(results[half:])

        def backward_fn(ctx, *grads):
            saved = iter(ctx.saved_tensors)
            args = [next(saved) if kind == "t" else v for kind, v in zip(kinds, ctx.dlspan_scalars)]
            operator = getattr(getattr(torch.ops, backward_namespace), backward_name)
            results = operator(*args, *grads)
            if isinstance(results, torch.Tensor):
                results = (results,)
            out = [None] * len(kinds)
            needs = ctx.needs_input_grad[1:]
            for k, g in zip(tensors, results):
                if needs[k]:
                    x = args[k]
                    out[k] = g if g.shape == x.shape else g.sum_to_size(x.shape)
            return (None, *out)

        Function = type(
            f"DlspanBackwardFor_{namespace}_{name}",
            (torch.autograd.Function,),
            {"forward": staticmethod(forward_fn), "backward": staticmethod(backward_fn),
             **({"jvp": staticmethod(jvp_fn)} if tangent else {})},
        )
        apply = Function.apply

        if tangent:
            def kernel(keyset, *args):
                # Inside a dual level, forward-mode gradients may be asked for.
                if (grad_enabled() and any_requires_grad(*args)) or forward_ad._current_level >= 0:
                    return apply(keyset, *args)
                return redispatch(keyset & after, *args)
        else:
            def kernel(keyset, *args):
                if grad_enabled() and any_requires_grad(*args):
                    return apply(keyset, *args)
                return redispatch(keyset & after, *args)

        library = torch.library.Library(namespace, "IMPL")
        library.impl(name, kernel, "Autograd", with_keyset=True)
        keep.libraries.append(library)

    added = len(keep.libraries)
    try:
        for entry in entries:
            register(*entry)
    except BaseException:
        # Nothing of this call stays registered: dlspan then removes the operators too.
        for library in keep.libraries[added:]:
            library._destroy()
        del keep.libraries[added:]
        raise

__dlspan_register_autograd([{entries}])
del __dlspan_register_autograd
"#;

/// The interpreter's functions dlspan calls (CPython's stable ABI, resolved in the process).
struct Python {
    is_initialized: unsafe extern "C" fn() -> c_int,
    add_pending_call: unsafe extern "C" fn(unsafe extern "C" fn(*mut c_void) -> c_int, *mut c_void) -> c_int,
    gil_ensure: unsafe extern "C" fn() -> c_int,
    gil_release: unsafe extern "C" fn(c_int),
    run: unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int,
}

/// The Python interpreter of the process, if there is one and it is running.
fn python() -> Option<Python> {
    let find = |name: &core::ffi::CStr| {
        // SAFETY: a NUL-terminated name, looked up in the global scope (an interpreter's
        // executable exports its C API there, for the extension modules it loads).
        let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        (!address.is_null()).then_some(address)
    };
    let (initialized, pending, ensure, release, run) = (
        find(c"Py_IsInitialized")?,
        find(c"Py_AddPendingCall")?,
        find(c"PyGILState_Ensure")?,
        find(c"PyGILState_Release")?,
        find(c"PyRun_SimpleStringFlags")?,
    );
    // SAFETY (the five): CPython's functions of those names, with these prototypes
    // (`PyGILState_STATE` is a C enum, an `int`; the flags pointer may be null).
    let python = Python {
        // SAFETY: as above.
        is_initialized: unsafe { core::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(initialized) },
        // SAFETY: as above.
        add_pending_call: unsafe {
            core::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(unsafe extern "C" fn(*mut c_void) -> c_int, *mut c_void) -> c_int,
            >(pending)
        },
        // SAFETY: as above.
        gil_ensure: unsafe { core::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(ensure) },
        // SAFETY: as above.
        gil_release: unsafe { core::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int)>(release) },
        // SAFETY: as above.
        run: unsafe {
            core::mem::transmute::<*mut c_void, unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int>(run)
        },
    };
    // SAFETY: callable at any time, with or without the GIL.
    (unsafe { (python.is_initialized)() } != 0).then_some(python)
}

/// One operator's autograd: its name, its backward's, its tangent's (empty for none), and its
/// arguments' kinds.
pub(crate) struct Entry {
    pub(crate) forward: &'static str,
    pub(crate) backward: &'static str,
    pub(crate) tangent: &'static str,
    pub(crate) kinds: String,
}

/// Checks that `backward`'s schema (and `tangent`'s) fits `forward`'s (the contracts above) and
/// makes the entry.
///
/// # Errors
///
/// [`TorchError::Schema`] naming both operators and what differs.
pub(crate) fn entry(forward: &Schema, backward: &Schema, tangent: Option<&Schema>) -> Result<Entry, TorchError> {
    let bad = |reason: String| TorchError::Schema { operator: forward.operator.to_owned(), reason };
    if forward.args.iter().any(|(_, kind)| *kind == Arg::TensorMut) {
        return Err(bad("an operator that writes an argument in place has no autograd formula here".into()));
    }
    if forward.args.iter().any(|(_, kind)| *kind == Arg::OptTensor) {
        return Err(bad("an operator with a `Tensor?` argument has no autograd formula here".into()));
    }
    if forward.defaults {
        return Err(bad(
            "an operator whose arguments have defaults or are keyword-only has no autograd formula here (PyTorch leaves them out of the autograd kernel's arguments)".into(),
        ));
    }
    let tensors = forward.args.iter().filter(|(_, kind)| *kind == Arg::Tensor).count();
    let expected = forward.args.len() + forward.returns;
    let fits = backward.args.len() == expected
        && backward.returns == tensors
        && forward.args.iter().zip(&backward.args).all(|((_, a), (_, b))| a == b)
        && backward.args[forward.args.len()..].iter().all(|(_, kind)| *kind == Arg::Tensor);
    if !fits {
        return Err(bad(format!(
            "its backward `{}` takes the forward's {} arguments then {} gradients, and returns {tensors} gradients (one per tensor argument)",
            backward.operator,
            forward.args.len(),
            forward.returns
        )));
    }
    if let Some(tangent) = tangent {
        let fits = tangent.args.len() == forward.args.len() + tensors
            && tangent.returns == 2 * forward.returns
            && forward.args.iter().zip(&tangent.args).all(|((_, a), (_, b))| a == b)
            && tangent.args[forward.args.len()..].iter().all(|(_, kind)| *kind == Arg::Tensor);
        if !fits {
            return Err(bad(format!(
                "its tangent `{}` takes the forward's {} arguments then {tensors} tangents (one per tensor argument), and returns the forward's {} results then their tangents",
                tangent.operator,
                forward.args.len(),
                forward.returns
            )));
        }
    }
    let kinds = forward.args.iter().map(|(_, kind)| if *kind == Arg::Tensor { 't' } else { 's' }).collect();
    Ok(Entry {
        forward: forward.operator,
        backward: backward.operator,
        tangent: tangent.map_or("", |t| t.operator),
        kinds,
    })
}

/// What [`register_later`] hands the interpreter: the entries, and the libraries that hold the
/// operators (deleted when the autograd kernels cannot be registered).
struct Later {
    entries: Vec<Entry>,
    libraries: Vec<usize>,
}

/// Registers the autograd kernels of `entries` from the interpreter's main thread, at its next
/// chance (`Py_AddPendingCall`: before it runs its next Python code), and not from this thread:
/// the caller is a library's load-time constructor, inside `dlopen`, where running Python could
/// deadlock (another thread holding the GIL and waiting for the loader's lock). When that fails,
/// `libraries` (the operators' registrations) are deleted: no operator runs with its gradients
/// silently missing. Nothing without a running interpreter.
pub(crate) fn register_later(entries: Vec<Entry>, libraries: Vec<usize>) {
    let Some(python) = python() else { return };
    let later = Box::into_raw(Box::new(Later { entries, libraries }));
    // SAFETY: callable from any thread, with or without the GIL; `run_later` takes `later` back
    // (once: the interpreter calls a pending call once).
    if unsafe { (python.add_pending_call)(run_later, later.cast()) } != 0 {
        // SAFETY: not queued: still ours, taken back once.
        let later = unsafe { Box::from_raw(later) };
        eprintln!(
            "dlspan: the interpreter's queue of pending calls is full; the operators with a backward are not registered"
        );
        unregister(&later.libraries);
    }
}

/// The pending call of [`register_later`]: in the main thread, with the GIL.
unsafe extern "C" fn run_later(later: *mut c_void) -> c_int {
    // SAFETY: the `Box<Later>` `register_later` leaked for this call, taken back once.
    let later = unsafe { Box::from_raw(later.cast::<Later>()) };
    let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| register(&later.entries)));
    if !matches!(outcome, Ok(Ok(()))) {
        let names: Vec<&str> = later.entries.iter().map(|e| e.forward).collect();
        eprintln!(
            "dlspan: the autograd kernels of {} were not registered; their operators are removed",
            names.join(", ")
        );
        unregister(&later.libraries);
    }
    // Never an exception for the code the main thread was running: the error is reported above.
    0
}

/// Deletes the registrations in `handles` (library handles [`register`](super::register) made).
fn unregister(handles: &[usize]) {
    let Ok(s) = super::shim::shim() else { return };
    super::shim::libraries().lock().unwrap_or_else(std::sync::PoisonError::into_inner).retain(|h| !handles.contains(h));
    for &handle in handles.iter().rev() {
        // SAFETY: a library handle a registration created and nothing deleted yet (removed from
        // the kept list above, under its lock), deleted once.
        let _ = unsafe { (s.aoti_torch_delete_library_object)(handle as *mut _) };
    }
}

/// Registers the autograd kernels of `entries` (Python kernels at the `Autograd` key, as
/// `torch.library.register_autograd` makes), through the process's Python; nothing without a
/// running interpreter.
///
/// # Errors
///
/// [`TorchError::Kernel`] when the Python raised (its traceback is on standard error).
pub(crate) fn register(entries: &[Entry]) -> Result<(), TorchError> {
    if entries.is_empty() {
        return Ok(());
    }
    let Some(python) = python() else { return Ok(()) };
    let list: Vec<String> = entries
        .iter()
        .map(|e| format!("({:?}, {:?}, {:?}, {:?})", e.forward, e.backward, e.tangent, e.kinds))
        .collect();
    let source = SOURCE.replace("{entries}", &list.join(", "));
    let source = std::ffi::CString::new(source).map_err(|_| TorchError::Kernel("a NUL byte in a name".into()))?;
    // SAFETY: the interpreter is running; `PyGILState_Ensure` takes the GIL for this thread (or
    // notes that it holds it), and is paired with its release below.
    let state = unsafe { (python.gil_ensure)() };
    // SAFETY: the GIL is held; the source is NUL-terminated and lives for the call.
    let status = unsafe { (python.run)(source.as_ptr(), core::ptr::null_mut()) };
    // SAFETY: the state `PyGILState_Ensure` returned, released once.
    unsafe { (python.gil_release)(state) };
    if status != 0 {
        let names: Vec<&str> = entries.iter().map(|e| e.forward).collect();
        return Err(TorchError::Kernel(format!(
            "the autograd kernels of {} were not registered (Python's traceback is above)",
            names.join(", ")
        )));
    }
    Ok(())
}
