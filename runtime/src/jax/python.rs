//! JAX kernels from a PyO3 extension module (features `jax` and `python`): [`register_module`]
//! registers each kernel's handlers with XLA and adds its Python function to the module.

use super::elementwise::{Entry, Kernel};
use super::error::JaxError;
use super::function::{Function, FunctionEntry, Param, Value};
use crate::kernel::signature::{Bound as DtypeBound, Role, ScalarKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCapsule, PyList, PyTuple};

/// A kernel to register: its declaration and handlers, and its derived backward's where
/// `#[differentiable]` made one. Made by [`kernel`].
#[derive(Clone, Copy, Debug)]
pub struct Registration(Kind);

/// What is registered: an element-wise kernel, or a [`Function`].
#[derive(Clone, Copy, Debug)]
enum Kind {
    Elementwise { entry: Entry, backward: Option<Entry> },
    Function(FunctionEntry),
}

/// The registration of `K`, a kernel declared with `#[jax]` (and, for gradients,
/// `#[differentiable]`).
///
/// ```
/// use dlspan::kernel::Float;
///
/// dlspan::elementwise! {
///     #[jax]
///     fn twice<T: Float>(x: &T, out: &mut T) {
///         *out = *x + *x;
///     }
/// }
///
/// let registration = dlspan::jax::kernel::<twice>();
/// assert_eq!(registration.name(), "twice");
/// ```
pub fn kernel<K: Kernel>() -> Registration {
    Registration(Kind::Elementwise { entry: Entry::of::<K>(), backward: K::BACKWARD })
}

/// The registration of `F`, a [`Function`] (a kernel that is not element-wise).
///
/// ```
/// use dlspan::jax::{ArrayType, Call, Function, JaxError, Param, Shapes};
///
/// struct Copy;
///
/// impl Function for Copy {
///     const NAME: &'static str = "copy";
///     const PARAMS: &'static [Param] = &[Param::Array("x")];
///     const RESULTS: &'static [&'static str] = &["y"];
///
///     fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
///         Ok(vec![ArrayType::new(shapes.shape("x")?, shapes.dtype("x")?)])
///     }
///
///     fn cpu(call: &Call<'_>) -> Result<(), JaxError> {
///         let x: dlspan::HostMdspan<'_, f32, 1> = call.input("x")?;
///         let mut y: dlspan::HostMdspanMut<'_, f32, 1> = call.output("y")?;
///         y.iter_mut().zip(x.iter()).for_each(|(y, x)| *y = *x);
///         Ok(())
///     }
/// }
///
/// assert_eq!(dlspan::jax::function::<Copy>().name(), "copy");
/// ```
pub fn function<F: Function>() -> Registration {
    Registration(Kind::Function(FunctionEntry::of::<F>()))
}

impl Registration {
    /// The kernel's name (its Python function's).
    pub fn name(&self) -> &'static str {
        match &self.0 {
            Kind::Elementwise { entry, .. } => entry.spec.name,
            Kind::Function(entry) => entry.name,
        }
    }
}

/// An array as the glue describes it: its extents and its dtype's name.
type Described = (Vec<usize>, String);

/// dlspan's Python glue (`glue.py`), run once per process.
const GLUE: &str = include_str!("glue.py");

/// The glue module, made once.
fn glue(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static GLUE_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = GLUE_MODULE.get_or_try_init(py, || {
        let code = std::ffi::CString::new(GLUE).expect("the glue has no NUL");
        PyModule::from_code(py, &code, c"dlspan/jax/glue.py", c"_dlspan_jax_glue").map(Bound::unbind)
    })?;
    Ok(module.bind(py))
}

/// A handler as the capsule `jax.ffi.register_ffi_target` takes (`jax.ffi.pycapsule`'s: the
/// function's address, no name).
fn capsule(py: Python<'_>, handler: super::Handler) -> PyResult<Bound<'_, PyAny>> {
    // SAFETY: `PyCapsule_New` with a non-null pointer (a function's address), no name and no
    // destructor, called with the GIL held (`py`); a null result has set Python's error.
    let raw = unsafe { pyo3::ffi::PyCapsule_New(handler as *mut core::ffi::c_void, core::ptr::null(), None) };
    // SAFETY: a new reference, or null with the error set.
    let object = unsafe { Bound::from_owned_ptr_or_err(py, raw) }?;
    debug_assert!(object.is_instance_of::<PyCapsule>());
    Ok(object)
}

/// The declaration as the glue reads it: `(name, kind, dtype)` per parameter.
fn params<'py>(py: Python<'py>, entry: &Entry) -> PyResult<Bound<'py, PyList>> {
    let spec = &entry.spec;
    let (mut views, mut scalars) = (spec.views.iter(), spec.scalars.iter());
    let list = PyList::empty(py);
    for &is_view in entry.order {
        let item = if is_view {
            let view = views.next().expect("the order counts the views");
            let kind = if view.role == Role::Output { "out" } else { "in" };
            let dtype = view.dtype.map(|d| d.to_string());
            (view.name, kind, dtype)
        } else {
            let scalar = scalars.next().expect("the order counts the scalars");
            let kind = match scalar.kind {
                ScalarKind::Float => "float",
                ScalarKind::Int => "int",
                ScalarKind::Bool => "bool",
            };
            (scalar.name, kind, None)
        };
        list.append(PyTuple::new(
            py,
            [item.0.into_pyobject(py)?.into_any(), item.1.into_pyobject(py)?.into_any(), item.2.into_pyobject(py)?],
        )?)?;
    }
    Ok(list)
}

/// Registers `kernels` with JAX from a PyO3 extension module's init, and adds to `module` one
/// function per kernel, named as it: `my_ext.gelu_bias(x, b)` calls the kernel through
/// `jax.ffi.ffi_call` (inside `jax.jit`, under `vmap`, and — for a `#[differentiable]` kernel —
/// under `grad` and `jvp`). Each handler is XLA target `"<namespace>.<kernel>"`, on the CPU and,
/// with feature `cuda`, CUDA.
///
/// Arguments are passed in the kernel's order: arrays for its views (converted with
/// `jnp.asarray` when they are not arrays), Python numbers for its scalars (XLA attributes:
/// static under `jax.jit`). A wrong dtype, shape or scalar raises `TypeError` or `ValueError`
/// naming the argument, before anything is traced.
///
/// # Errors
///
/// `ImportError` when `jax` cannot be imported; JAX's error for a refused registration.
///
/// ```no_run
/// use dlspan::kernel::Float;
/// use dlspan::pyo3::prelude::*;
///
/// dlspan::elementwise! {
///     #[jax]
///     fn twice<T: Float>(x: &T, out: &mut T) {
///         *out = *x + *x;
///     }
/// }
///
/// #[pymodule(crate = "dlspan::pyo3")]
/// fn my_ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
///     dlspan::jax::register_module(m, "my_ext", &[dlspan::jax::kernel::<twice>()])
/// }
/// ```
pub fn register_module(module: &Bound<'_, PyModule>, namespace: &str, kernels: &[Registration]) -> PyResult<()> {
    let py = module.py();
    let glue = glue(py)?;
    let register = |entry: &Entry| -> PyResult<String> {
        let target = format!("{namespace}.{}", entry.spec.name);
        let cuda = entry.cuda.map(|h| capsule(py, h)).transpose()?;
        glue.call_method1("register", (target.as_str(), capsule(py, entry.cpu)?, cuda))?;
        Ok(target)
    };
    for registration in kernels {
        let (entry, backward) = match &registration.0 {
            Kind::Elementwise { entry, backward } => (entry, backward),
            Kind::Function(entry) => {
                let function = make_function(module, glue, namespace, entry, kernels)?;
                module.add(entry.name, function)?;
                continue;
            }
        };
        let target = register(entry)?;
        let backward = match backward {
            Some(b) => Some((register(b)?, params(py, b)?)),
            None => None,
        };
        let bound = match entry.spec.bound {
            DtypeBound::Float => "float",
            DtypeBound::Scalar => "scalar",
            DtypeBound::Fixed => "fixed",
        };
        let doc = format!(
            "The Rust kernel `{}` through XLA's FFI (target `{target}`): arrays for its views, Python numbers for its scalars.",
            entry.spec.name
        );
        let function = glue.call_method1(
            "make",
            (target, entry.spec.name, doc, params(py, entry)?, bound, entry.spec.strict, backward),
        )?;
        module.add(entry.spec.name, function)?;
    }
    Ok(())
}

/// The Python function of a [`Function`]: its handlers registered as `"<namespace>.<name>"`, its
/// shape function given to the glue as a Python callable.
fn make_function<'py>(
    module: &Bound<'py, PyModule>,
    glue: &Bound<'py, PyModule>,
    namespace: &str,
    entry: &FunctionEntry,
    kernels: &[Registration],
) -> PyResult<Bound<'py, PyAny>> {
    let py = module.py();
    let target = format!("{namespace}.{}", entry.name);
    let cuda = entry.cuda.map(|h| capsule(py, h)).transpose()?;
    glue.call_method1("register", (target.as_str(), capsule(py, entry.cpu)?, cuda))?;
    let params = PyList::empty(py);
    for param in entry.params {
        let kind = match param {
            Param::Array(_) => "in",
            Param::Float(_) => "float",
            Param::Int(_) => "int",
            Param::Bool(_) => "bool",
        };
        params.append((param.name(), kind))?;
    }
    declaration(entry).map_err(pyo3::exceptions::PyValueError::new_err)?;
    let backward = match entry.backward {
        None => None,
        Some(name) => {
            let found = kernels.iter().find_map(|k| match &k.0 {
                Kind::Function(b) if b.name == name => Some(b),
                _ => None,
            });
            let Some(found) = found else {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "function `{}`: its backward `{name}` is not a function registered in the same call",
                    entry.name
                )));
            };
            backward_fits(entry, found).map_err(pyo3::exceptions::PyValueError::new_err)?;
            Some(name)
        }
    };
    let shapes = entry.shapes;
    let (name, params_of) = (entry.name, entry.params);
    let shape_function = pyo3::types::PyCFunction::new_closure(
        py,
        None,
        None,
        move |args: &Bound<'_, PyTuple>, _kwargs| -> PyResult<Vec<(Vec<usize>, String)>> {
            let (arrays, values): (Vec<Described>, Vec<Bound<'_, PyAny>>) = args.extract()?;
            let count = params_of.iter().filter(|p| matches!(p, Param::Array(_))).count();
            if arrays.len() != count || values.len() != params_of.len() - count {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "{name}: the shape function takes {count} arrays and {} attributes (a dlspan bug)",
                    params_of.len() - count
                )));
            }
            let mut types = Vec::with_capacity(arrays.len());
            let names = params_of.iter().filter(|p| matches!(p, Param::Array(_)));
            for ((shape, dtype), param) in arrays.into_iter().zip(names) {
                let parsed = dtype.parse::<crate::ffi::DLDataType>().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "{name}: argument `{}` has dtype {dtype}, which dlspan's kernels do not take",
                        param.name()
                    ))
                })?;
                types.push((shape, parsed));
            }
            let mut read = Vec::with_capacity(values.len());
            let attributes = params_of.iter().filter(|p| !matches!(p, Param::Array(_)));
            for (value, param) in values.iter().zip(attributes) {
                read.push(match param {
                    Param::Float(_) => Value::Float(value.extract()?),
                    Param::Int(_) => Value::Int(value.extract()?),
                    _ => Value::Bool(value.extract()?),
                });
            }
            // The user's shape function: a panic in it is a `ValueError` naming the function,
            // not pyo3's `PanicException` (a `BaseException` that `except Exception` misses).
            let outcome = std::panic::catch_unwind(|| shapes(types, read)).unwrap_or_else(|payload| {
                let message = crate::error::panic_message(payload, "a panic without a message");
                Err(JaxError::Kernel(format!("function `{name}`: its shape function panicked: {message}")))
            });
            let results = outcome.map_err(|e| {
                let text = e.to_string();
                let named = text.contains(&format!("`{name}`"));
                pyo3::exceptions::PyValueError::new_err(if named { text } else { format!("{name}: {text}") })
            })?;
            Ok(results.into_iter().map(|r| (r.shape, r.dtype.to_string())).collect())
        },
    )?;
    let doc = format!(
        "The Rust function `{}` through XLA's FFI (target `{target}`): arrays and attributes as it declares them.",
        entry.name
    );
    let results: Vec<&str> = entry.results.to_vec();
    glue.call_method1(
        "make_function",
        (target, entry.name, doc, params, results, entry.vmap.method(), shape_function, backward, module),
    )
}

/// Refuses a declaration JAX could not call: two parameters or results of one name, a name that
/// is not a Python identifier, more than 64 results.
fn declaration(entry: &FunctionEntry) -> Result<(), String> {
    let refuse = |reason: String| format!("function `{}`: {reason}", entry.name);
    let names: Vec<&str> = entry.params.iter().map(|p| p.name()).chain(entry.results.iter().copied()).collect();
    for (k, name) in names.iter().enumerate() {
        let identifier = name.chars().next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !identifier {
            return Err(refuse(format!("`{name}` is not a name Python takes for a parameter")));
        }
        if names[..k].contains(name) {
            return Err(refuse(format!("two parameters or results are named `{name}`")));
        }
    }
    if entry.results.len() > 64 {
        return Err(refuse(format!("{} results; a function returns 64 at most", entry.results.len())));
    }
    Ok(())
}

/// Refuses a backward whose declaration is not `forward`'s parameters, then an array per result,
/// returning an array per array argument.
fn backward_fits(forward: &FunctionEntry, backward: &FunctionEntry) -> Result<(), String> {
    let arrays = forward.params.iter().filter(|p| matches!(p, Param::Array(_))).count();
    let kinds = |params: &[Param]| params.iter().map(core::mem::discriminant).collect::<Vec<_>>();
    let mut expected = kinds(forward.params);
    expected.extend(forward.results.iter().map(|_| core::mem::discriminant(&Param::Array(""))));
    if kinds(backward.params) != expected || backward.results.len() != arrays {
        return Err(format!(
            "function `{}`: its backward `{}` must take its parameters, of the same kinds in the same order, then a \
             cotangent array per result ({} more arrays), and return a cotangent per array argument ({arrays})",
            forward.name,
            backward.name,
            forward.results.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{FunctionEntry, backward_fits, declaration};
    use crate::jax::{ArrayType, Call, Function, JaxError, Param, Shapes};

    /// A declaration of `params` and `results`, its kernels never run.
    macro_rules! declared {
        ($ty:ident, $name:literal, $params:expr, $results:expr) => {
            struct $ty;
            impl Function for $ty {
                const NAME: &'static str = $name;
                const PARAMS: &'static [Param] = $params;
                const RESULTS: &'static [&'static str] = $results;
                fn results(_: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
                    Ok(Vec::new())
                }
                fn cpu(_: &Call<'_>) -> Result<(), JaxError> {
                    Ok(())
                }
            }
        };
    }

    declared!(Forward, "forward", &[Param::Array("x"), Param::Float("t"), Param::Array("w")], &["y", "index"]);
    declared!(
        Fits,
        "fits",
        &[Param::Array("x"), Param::Float("t"), Param::Array("w"), Param::Array("gy"), Param::Array("gi")],
        &["gx", "gw"]
    );
    declared!(
        NoCotangent,
        "no_cotangent",
        &[Param::Array("x"), Param::Float("t"), Param::Array("w"), Param::Array("gy")],
        &["gx", "gw"]
    );
    declared!(
        Reordered,
        "reordered",
        &[Param::Float("t"), Param::Array("x"), Param::Array("w"), Param::Array("gy"), Param::Array("gi")],
        &["gx", "gw"]
    );
    declared!(
        OneGradient,
        "one_gradient",
        &[Param::Array("x"), Param::Float("t"), Param::Array("w"), Param::Array("gy"), Param::Array("gi")],
        &["gx"]
    );
    declared!(Twice, "twice", &[Param::Array("x"), Param::Array("x")], &["y"]);
    declared!(Clash, "clash", &[Param::Array("x")], &["x"]);
    declared!(NotPython, "not_python", &[Param::Array("x-1")], &["y"]);

    #[test]
    fn a_declaration_python_cannot_call_is_refused_at_registration() {
        assert_eq!(declaration(&FunctionEntry::of::<Forward>()), Ok(()));
        let refused = |entry: FunctionEntry| declaration(&entry).unwrap_err();
        assert!(refused(FunctionEntry::of::<Twice>()).contains("two parameters or results are named `x`"));
        assert!(refused(FunctionEntry::of::<Clash>()).contains("named `x`"));
        assert!(refused(FunctionEntry::of::<NotPython>()).contains("`x-1` is not a name"));
    }

    #[test]
    fn a_backward_must_take_the_parameters_and_a_cotangent_per_result() {
        let forward = FunctionEntry::of::<Forward>();
        assert_eq!(backward_fits(&forward, &FunctionEntry::of::<Fits>()), Ok(()));
        for wrong in
            [FunctionEntry::of::<NoCotangent>(), FunctionEntry::of::<Reordered>(), FunctionEntry::of::<OneGradient>()]
        {
            let text = backward_fits(&forward, &wrong).unwrap_err();
            assert!(text.contains(&format!("its backward `{}` must take", wrong.name)), "{text}");
        }
    }
}
