"""dlspan's JAX glue: the Python function of each kernel a Rust extension registers with
`dlspan::jax::register_module`. Generated code's support, not the user's: it reads the kernel's
declaration (what `elementwise!` recorded) and calls `jax.ffi.ffi_call` with the results' shapes
and dtypes it implies; a differentiable kernel gets a `jax.custom_jvp` whose rule calls the
derived backward."""

import inspect
import operator

import jax
import jax.numpy as jnp
import numpy as np

FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
INTEGERS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def register(target, cpu, cuda):
    """Registers the handlers of `target` with XLA (the CUDA one where there is one)."""
    jax.ffi.register_ffi_target(target, cpu, platform="cpu")
    if cuda is not None:
        jax.ffi.register_ffi_target(target, cuda, platform="CUDA")


def _scalar(signature, name, kind, value):
    """A scalar argument as the XLA attribute the handler reads."""
    if isinstance(value, jax.core.Tracer):
        raise TypeError(
            f"{signature}: argument `{name}` is a scalar of the kernel, passed to XLA as an attribute: "
            f"it is a Python number, not a traced array (under jax.jit, mark it static: "
            f"static_argnames=('{name}',))"
        )
    try:
        if kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"expected a bool, got {type(value).__name__}")
            return np.bool_(value)
        if kind == "int":
            if isinstance(value, (bool, np.bool_)):
                raise TypeError("expected an int, got bool")
            number = operator.index(value)
            if not -(2**63) <= number < 2**63:
                raise OverflowError(f"{number} does not fit an int64")
            return np.int64(number)
        if isinstance(value, (bool, np.bool_, complex, np.complexfloating)) or isinstance(value, (str, bytes)):
            raise TypeError(f"expected a float, got {type(value).__name__}")
        return np.float64(float(value))
    except (TypeError, ValueError, OverflowError) as error:
        raise TypeError(f"{signature}: argument `{name}`: {error}") from None


def _broadcast(signature, arrays):
    """The broadcast shape of `arrays` (NumPy's rule), naming the argument that does not fit."""
    shape = ()
    for name, array in arrays:
        try:
            shape = np.broadcast_shapes(shape, array.shape)
        except ValueError:
            raise ValueError(
                f"{signature}: argument `{name}` has shape {tuple(array.shape)}, which does not broadcast "
                f"with the other arguments' ({tuple(shape)})"
            ) from None
    return tuple(shape)


def _caller(target, name, params, bound, strict):
    """The function calling `target` with positional arguments in declaration order: the checked
    arrays, the attributes, the results' shapes and dtypes."""
    args = [p for p in params if p[1] != "out"]
    outs = [p for p in params if p[1] == "out"]
    signature = f"{name}({', '.join(p[0] for p in args)})"
    allowed = FLOATS if bound == "float" else FLOATS | INTEGERS if bound == "scalar" else None
    vmap_method = "broadcast_all" if strict else "expand_dims"

    def call(*values):
        if len(values) != len(args):
            raise TypeError(f"{signature} takes {len(args)} arguments; {len(values)} were given")
        arrays, attrs, dtype, first = [], {}, None, None
        for (pname, kind, fixed), value in zip(args, values):
            if kind != "in":
                attrs[pname] = _scalar(signature, pname, kind, value)
                continue
            if not (hasattr(value, "shape") and hasattr(value, "dtype")):
                value = jnp.asarray(value)
            found = jnp.dtype(value.dtype)
            if fixed is not None:
                if found.name != fixed:
                    raise TypeError(f"{signature}: argument `{pname}` has dtype {found.name}; the kernel takes {fixed}")
            elif dtype is None:
                if allowed is not None and found.name not in allowed:
                    raise TypeError(
                        f"{signature}: argument `{pname}` has dtype {found.name}; the kernel takes "
                        f"{', '.join(sorted(allowed))}"
                    )
                dtype, first = found, pname
            elif found != dtype:
                raise TypeError(
                    f"{signature}: argument `{pname}` has dtype {found.name}; argument `{first}` has "
                    f"{dtype.name}: they must match"
                )
            arrays.append((pname, value))
        if strict and any(a.shape != arrays[0][1].shape for _, a in arrays):
            pname, a = next((n, a) for n, a in arrays if a.shape != arrays[0][1].shape)
            raise ValueError(
                f"{signature}: argument `{pname}` has shape {tuple(a.shape)} and argument `{arrays[0][0]}` "
                f"{tuple(arrays[0][1].shape)}: the kernel takes arrays of one shape (it does not broadcast)"
            )
        shape = _broadcast(signature, arrays)
        results = [jax.ShapeDtypeStruct(shape, jnp.dtype(fixed) if fixed else dtype) for _, _, fixed in outs]
        out = jax.ffi.ffi_call(target, results, vmap_method=vmap_method)(*(a for _, a in arrays), **attrs)
        return tuple(out)

    return call, args, outs, signature


def _assemble(count, static, fixed, dynamic):
    """The `count` arguments in declaration order: `fixed` at the positions `static`, `dynamic`
    at the others (how `custom_jvp`/`custom_vjp` rules get them back)."""
    values, fixed, dynamic = [], iter(fixed), iter(dynamic)
    for k in range(count):
        values.append(next(fixed) if k in static else next(dynamic))
    return values


def _binder(signature, params):
    """The parameters as the function's (positional or keyword), so that `jax.jit`'s
    `static_argnames` and `inspect.signature` see them, and the binding of a call to them."""
    python_signature = inspect.Signature(
        [inspect.Parameter(p[0], inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    )

    def bind(positional, keywords):
        try:
            return python_signature.bind(*positional, **keywords).args
        except TypeError as error:
            raise TypeError(f"{signature}: {error}") from None

    return python_signature, bind


def _is_float(param, bound):
    return param[2] in FLOATS or (param[2] is None and bound == "float")


def make(target, name, doc, params, bound, strict, backward):
    """The Python function of kernel `name`: `params` is its declaration, `(name, kind, dtype)` per
    parameter in order (kind `in`, `out`, `float`, `int` or `bool`; dtype a fixed dtype's name or
    None for the type parameter's); `backward`, for a differentiable kernel, `(target, params)` of
    its derived backward."""
    call, args, outs, signature = _caller(target, name, params, bound, strict)
    single = len(outs) == 1
    python_signature, bind = _binder(signature, args)

    def finish(out):
        return out[0] if single else out

    if backward is None:

        def function(*positional, **keywords):
            return finish(call(*bind(positional, keywords)))

    else:
        backward_call, backward_args, backward_outs, _ = _caller(backward[0], name + "_backward", backward[1], bound, strict)
        float_in = [k for k, p in enumerate(args) if p[1] == "in" and _is_float(p, bound)]
        float_out = [k for k, p in enumerate(outs) if _is_float(p, bound)]
        if len(backward_outs) != len(float_in) or len(backward_args) != len(args) + len(float_out):
            raise RuntimeError(f"{signature}: its backward `{backward[0]}` does not match it (a dlspan bug)")
        static = tuple(k for k, p in enumerate(args) if p[1] != "in")


        def primal(*values):
            return call(*values)

        primal = jax.custom_jvp(primal, nondiff_argnums=static)

        def rule(*values):
            fixed, primals, tangents = values[: len(static)], values[-2], values[-1]
            full = _assemble(len(args), static, fixed, primals)
            out = call(*full)
            dynamic = [k for k in range(len(args)) if k not in static]
            tangent_of = dict(zip(dynamic, tangents))
            tangent_out = []
            for j, value in enumerate(out):
                if j not in float_out:
                    tangent_out.append(jnp.zeros(value.shape, jax.dtypes.float0))
                    continue
                seeds = [jnp.ones_like(out[i]) if i == j else jnp.zeros_like(out[i]) for i in float_out]
                partials = backward_call(*full, *seeds)
                total = None
                for k, partial in zip(float_in, partials):
                    term = partial * tangent_of[k]
                    total = term if total is None else total + term
                tangent_out.append(jnp.broadcast_to(total, value.shape).astype(value.dtype))
            return tuple(out), tuple(tangent_out)

        primal.defjvp(rule)

        def function(*positional, **keywords):
            return finish(primal(*bind(positional, keywords)))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.__signature__ = python_signature
    return function


def make_function(target, name, doc, params, results, vmap_method, shape_function, backward, module):
    """The Python function of a Rust `dlspan::jax::Function` `name`: `params` is its declaration,
    `(name, kind)` per parameter in order (kind `in` for an array, `float`, `int` or `bool` for an
    attribute), `results` its results' names; `shape_function(arrays, attributes)` (Rust) gives the
    results' `(shape, dtype)` from the arrays' and the attributes' values, raising for arguments
    it does not take; `backward` names the function of `module` computing its gradients, or is
    None."""
    signature = f"{name}({', '.join(p[0] for p in params)})"
    static = tuple(k for k, p in enumerate(params) if p[1] != "in")

    def call(*values):
        arrays, attrs, attr_values = [], {}, []
        for (pname, kind), value in zip(params, values):
            if kind != "in":
                attrs[pname] = _scalar(signature, pname, kind, value)
                attr_values.append(attrs[pname].item())
                continue
            if not (hasattr(value, "shape") and hasattr(value, "dtype")):
                value = jnp.asarray(value)
            arrays.append(value)
        described = [(tuple(int(d) for d in a.shape), jnp.dtype(a.dtype).name) for a in arrays]
        types = shape_function(described, attr_values)
        out = [jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype)) for shape, dtype in types]
        return tuple(jax.ffi.ffi_call(target, out, vmap_method=vmap_method)(*arrays, **attrs))

    python_signature, bind = _binder(signature, params)

    def finish(out):
        return out[0] if len(results) == 1 else out

    if backward is None:

        def function(*positional, **keywords):
            return finish(call(*bind(positional, keywords)))

    else:
        dynamic = [k for k in range(len(params)) if k not in static]


        def primal(*values):
            return call(*values)

        primal = jax.custom_vjp(primal, nondiff_argnums=static)

        def forward(*values):
            out = call(*values)
            kinds = tuple(jax.ShapeDtypeStruct(o.shape, o.dtype) for o in out)
            return out, (tuple(values[k] for k in dynamic), kinds)

        def reverse(*values):
            fixed, (arrays, kinds), cotangents = values[: len(static)], values[-2], values[-1]
            # An integer or bool result's cotangent is JAX's `float0`: the backward gets zeros of
            # the result's dtype in its place.
            cotangents = [
                jnp.zeros(k.shape, k.dtype) if c.dtype == jax.dtypes.float0 else c for c, k in zip(cotangents, kinds)
            ]
            gradient = getattr(module, backward)
            grads = gradient(*_assemble(len(params), static, fixed, arrays), *cotangents)
            grads = grads if isinstance(grads, tuple) else (grads,)
            if len(grads) != len(arrays):
                raise TypeError(
                    f"{signature}: its backward `{backward}` returns {len(grads)} arrays; it takes {len(arrays)}"
                )
            out = []
            for array, grad in zip(arrays, grads):
                if not jnp.issubdtype(array.dtype, jnp.inexact):
                    out.append(np.zeros(array.shape, jax.dtypes.float0))
                elif grad.shape != array.shape or grad.dtype != array.dtype:
                    raise TypeError(
                        f"{signature}: its backward `{backward}` returns {grad.dtype}{list(grad.shape)} for an "
                        f"argument of {array.dtype}{list(array.shape)}"
                    )
                else:
                    out.append(grad)
            return tuple(out)

        primal.defvjp(forward, reverse)

        def function(*positional, **keywords):
            values = list(bind(positional, keywords))
            # The attributes checked before `custom_vjp` sees them (a traced one is a TypeError
            # saying to mark it static, not JAX's error about `nondiff_argnums`), the arrays made
            # arrays (a Python number or list is not a residual `reverse` can read).
            for k, (pname, kind) in enumerate(params):
                if kind != "in":
                    _scalar(signature, pname, kind, values[k])
                elif not (hasattr(values[k], "shape") and hasattr(values[k], "dtype")):
                    values[k] = jnp.asarray(values[k])
            return finish(primal(*values))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.__signature__ = python_signature
    return function
