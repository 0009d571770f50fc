# The package is the Rust extension `dlspan.dlspan` (built by maturin into this directory) under its
# own name, as maturin writes it for a package without Python code: this directory exists to ship
# one stub per module (`__init__.pyi`, `examples.pyi`, `diagnostics.pyi`) and `py.typed`. The
# extension registers its submodules `dlspan.examples` and `dlspan.diagnostics` in `sys.modules`.
from .dlspan import *  # noqa: F403
from .dlspan import _C_API  # noqa: F401  (the C API extensions built on the crate find: rule Y18)

__doc__ = dlspan.__doc__  # noqa: F405
if hasattr(dlspan, "__all__"):  # noqa: F405
    __all__ = dlspan.__all__  # noqa: F405
