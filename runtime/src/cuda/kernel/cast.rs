//! The conversions of cast kernels, one C++ function body per (output, input) scalar pair.

use super::element::Scalar;

/// Whether cast kernels are generated: they follow dlspan's CPU element cast, which they are
/// tested against bit for bit.
pub(crate) const AVAILABLE: bool = false;

/// The body of `dl_cast(x)` converting an input scalar `x` of `from` to `to`.
pub(crate) fn conversion(to: Scalar, from: Scalar) -> String {
    let _ = (to, from);
    "  return x;\n".to_owned()
}
