import numpy as np, jax, jax.numpy as jnp, dlspan
a = jnp.arange(8, dtype=jnp.float32)+0
tt = dlspan.from_dlpack(a)
v = np.asarray(tt)
try: v.setflags(write=True); v[0]=99; print("setflags allowed! a=", a)
except Exception as e: print("setflags refused", e)
try: b = np.frombuffer(tt, dtype=np.float32); print("frombuffer writeable", b.flags.writeable)
except Exception as e: print("frombuffer", e)
try: c = tt.__dlpack__(); print("legacy capsule of RO given!")
except Exception as e: print("legacy refused", type(e).__name__, getattr(e,'kind',None))
try: c = tt.__dlpack__(max_version=(1,0)); x = np.from_dlpack(tt); print("np from_dlpack writeable", x.flags.writeable)
except Exception as e: print("versioned", type(e).__name__, e)
try:
    v2 = tt.__array__(copy=False); print("array copy=False writeable", v2.flags.writeable)
    v2.setflags(write=True); print("setflags2 allowed")
except Exception as e: print("array", type(e).__name__, e)
# buffer protocol writable request
import ctypes
try:
    m = (ctypes.c_float*8).from_buffer(tt); m[0]=5; print("ctypes from_buffer allowed! a=", a)
except Exception as e: print("ctypes from_buffer refused", type(e).__name__, e)
# typed view args of jax in the test extension
import dlspan_test_extension as ext
print([n for n in dir(ext) if not n.startswith('_')])
