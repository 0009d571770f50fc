"""NumPy's and ml_dtypes' astype between scalar types, for dlspan's cast test (tests/cast_reference.rs).

Usage: cast_reference.py DIR

Reads DIR/types.txt (one NumPy or ml_dtypes type name a line) and, for every name S, DIR/S.bin
(values of S, native byte order); writes DIR/S.T.bin with those values cast to T by astype, for
every name T. A pair NumPy cannot cast is left out (the test counts the pairs it compares).
"""

import os
import sys
import warnings

import ml_dtypes
import numpy as np


def dtype(name):
    return getattr(ml_dtypes, name) if hasattr(ml_dtypes, name) else np.dtype(name)


def main(directory):
    with open(os.path.join(directory, "types.txt")) as f:
        names = f.read().split()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for source in names:
            values = np.fromfile(os.path.join(directory, f"{source}.bin"), dtype=dtype(source))
            for target in names:
                try:
                    cast = values.astype(dtype(target))
                except (TypeError, ValueError):
                    continue
                cast.tofile(os.path.join(directory, f"{source}.{target}.bin"))


if __name__ == "__main__":
    main(sys.argv[1])
