"""ml_dtypes' values and encodings for dlspan's minifloat test (tests/minifloat_reference.rs).

Usage: minifloat_reference.py DIR

Reads DIR/inputs_f32.bin and DIR/inputs_f64.bin (little-endian floats) and writes, for every
format NAME: DIR/NAME.decode.bin (the float32 value of every byte 0..255), DIR/NAME.f32.bin and
DIR/NAME.f64.bin (the code ml_dtypes gives each input, one byte each).

float32 inputs go through NumPy's astype. float64 inputs go through the scalar constructor, which
rounds once (ml_dtypes' C++ conversion from double); NumPy's astype from float64 rounds to float32
first, which rounds twice near the formats' midpoints.
"""

import os
import sys
import warnings

import ml_dtypes
import numpy as np

FORMATS = [
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
]


def main(directory):
    inputs = {
        "f32": np.fromfile(os.path.join(directory, "inputs_f32.bin"), dtype="<f4"),
        "f64": np.fromfile(os.path.join(directory, "inputs_f64.bin"), dtype="<f8"),
    }
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name in FORMATS:
            dtype = getattr(ml_dtypes, name)
            codes = np.arange(256, dtype=np.uint8)
            codes.view(dtype).astype("<f4").tofile(os.path.join(directory, f"{name}.decode.bin"))
            encoded = {
                "f32": inputs["f32"].astype(dtype),
                "f64": np.array([dtype(value) for value in inputs["f64"].tolist()], dtype=dtype),
            }
            for kind, values in encoded.items():
                values.view(np.uint8).tofile(os.path.join(directory, f"{name}.{kind}.bin"))


if __name__ == "__main__":
    main(sys.argv[1])
