//! Data type names as array libraries spell them — `bool`, `int8`, `uint16`, `float32`,
//! `bfloat16`, `complex64`, `float8_e4m3fn`, `float6_e2m3fn`, `float4_e2m1fn`, with `x<lanes>` for
//! vectors (`float32x4`) and PyTorch's `_x<lanes>` after a minifloat (`float4_e2m1fn_x2`): one table,
//! read both ways, `Display` and `FromStr` of [`DLDataType`]. NumPy, PyTorch and ml_dtypes share
//! these names; the Python exchange, the tests and error messages all use this table.

use crate::ffi::{DLDataType, DLDataTypeCode};
use core::fmt;
use core::str::FromStr;

/// Displays a data type the way array libraries name it: `float32`, `bfloat16`, `complex64`,
/// `bool`, `float8_e4m3fn`, with `x<lanes>` for vectors (`float32x4`); unknown codes print their
/// numbers.
///
/// ```
/// use dlspan::dtype::{dtype_of, F32x4, Float8E5m2};
/// assert_eq!(dtype_of::<F32x4>().to_string(), "float32x4");
/// assert_eq!(dtype_of::<Float8E5m2>().to_string(), "float8_e5m2");
/// assert_eq!(dtype_of::<dlspan::dtype::Float4E2m1fnX2>().to_string(), "float4_e2m1fn_x2");
/// assert_eq!(dlspan::ffi::DLDataType { code: 99, bits: 8, lanes: 1 }.to_string(), "code99_bits8");
/// ```
///
/// [`FromStr`] reads the same names back.
impl fmt::Display for DLDataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.type_code();
        let base = match code {
            DLDataTypeCode::kDLInt => Some("int"),
            DLDataTypeCode::kDLUInt => Some("uint"),
            DLDataTypeCode::kDLFloat => Some("float"),
            DLDataTypeCode::kDLBfloat => Some("bfloat"),
            DLDataTypeCode::kDLComplex => Some("complex"),
            DLDataTypeCode::kDLOpaqueHandle => Some("opaque_handle"),
            _ => None,
        };
        match (base, code) {
            (Some(base), _) => write!(f, "{base}{}", self.bits)?,
            (None, DLDataTypeCode::kDLBool) if self.bits == 8 => f.write_str("bool")?,
            (None, _) => match code.name() {
                // Minifloat codes carry their format in the name: kDLFloat8_e4m3fn -> float8_e4m3fn.
                Some(name) if code.0 >= DLDataTypeCode::kDLFloat8_e3m4.0 && expected_bits(code) == Some(self.bits) => {
                    let name = name.trim_start_matches("kDL");
                    let mut chars = name.chars();
                    if let Some(first) = chars.next() {
                        write!(f, "{}{}", first.to_ascii_lowercase(), chars.as_str())?;
                    }
                }
                _ => write!(f, "code{}_bits{}", self.code, self.bits)?,
            },
        }
        if self.lanes != 1 {
            // `float32x4`, but `float4_e2m1fn_x2` (PyTorch's spelling) after a name ending in a letter.
            let separator =
                if base.is_none() && code.name().is_some() && code != DLDataTypeCode::kDLBool { "_x" } else { "x" };
            write!(f, "{separator}{}", self.lanes)?;
        }
        Ok(())
    }
}

/// Reads the names [`Display`](fmt::Display) writes, exactly (one spelling per data type; `lanes`
/// at least 1).
///
/// # Errors
///
/// [`ParseDtypeError`] for any other name.
///
/// ```
/// use dlspan::dtype::{dtype_of, Bool, F32x4, Float4E2m1fnX2, Float8E4m3fn};
/// use dlspan::ffi::DLDataType;
/// assert_eq!("float32x4".parse::<DLDataType>(), Ok(dtype_of::<F32x4>()));
/// assert_eq!("bool".parse::<DLDataType>(), Ok(dtype_of::<Bool>()));
/// assert_eq!("float8_e4m3fn".parse::<DLDataType>(), Ok(dtype_of::<Float8E4m3fn>()));
/// assert_eq!("float4_e2m1fn_x2".parse::<DLDataType>(), Ok(dtype_of::<Float4E2m1fnX2>()));
/// assert!("float32x0".parse::<DLDataType>().is_err(), "no lanes");
/// // Any `DLDataType` reads back, with or without a Rust element type.
/// assert_eq!("float33".parse::<DLDataType>().map(|d| d.bits), Ok(33));
/// assert!("Float32".parse::<DLDataType>().is_err(), "one spelling");
/// ```
impl FromStr for DLDataType {
    type Err = ParseDtypeError;

    fn from_str(name: &str) -> Result<Self, ParseDtypeError> {
        let unknown = || ParseDtypeError { name: name.into() };
        let (base, lanes) = split_lanes(name);
        let dtype = parse_base(base, lanes).filter(|dtype| dtype.lanes >= 1).ok_or_else(unknown)?;
        // One spelling per data type: what does not print back as `name` is not its name.
        if dtype.to_string() == name { Ok(dtype) } else { Err(unknown()) }
    }
}

/// A name and its lane count: `float32x4` is (`float32`, 4), `float4_e2m1fn_x2` (`float4_e2m1fn`, 2).
fn split_lanes(name: &str) -> (&str, u16) {
    if let Some(at) = name.rfind('x') {
        let digits = &name[at + 1..];
        // The `x` of lanes follows the bits (`float32x4`) or an underscore (`…_x2`), never a
        // letter of the name (`complex64`).
        let after = name[..at].bytes().last().is_some_and(|b| b.is_ascii_digit() || b == b'_');
        if after
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(lanes) = digits.parse()
        {
            let base = &name[..at];
            return (base.strip_suffix('_').unwrap_or(base), lanes);
        }
    }
    (name, 1)
}

/// The data type a base name (no lanes) denotes.
fn parse_base(base: &str, lanes: u16) -> Option<DLDataType> {
    let with = |code: DLDataTypeCode, bits: u8| Some(DLDataType { code: code.0, bits, lanes });
    if base == "bool" {
        return with(DLDataTypeCode::kDLBool, 8);
    }
    const SIZED: [(&str, DLDataTypeCode); 6] = [
        ("opaque_handle", DLDataTypeCode::kDLOpaqueHandle),
        ("uint", DLDataTypeCode::kDLUInt),
        ("int", DLDataTypeCode::kDLInt),
        ("bfloat", DLDataTypeCode::kDLBfloat),
        ("float", DLDataTypeCode::kDLFloat),
        ("complex", DLDataTypeCode::kDLComplex),
    ];
    for (prefix, code) in SIZED {
        if let Some(bits) = base.strip_prefix(prefix).and_then(|bits| bits.parse::<u8>().ok()) {
            return with(code, bits);
        }
    }
    // The minifloat codes, by the names `Display` gives them.
    for code in DLDataTypeCode::kDLFloat8_e3m4.0..=DLDataTypeCode::kDLFloat4_e2m1fn.0 {
        let code = DLDataTypeCode(code);
        if let Some(bits) = expected_bits(code)
            && (DLDataType { code: code.0, bits, lanes: 1 }).to_string() == base
        {
            return with(code, bits);
        }
    }
    let (code, bits) = base.strip_prefix("code")?.split_once("_bits")?;
    Some(DLDataType { code: code.parse().ok()?, bits: bits.parse().ok()?, lanes })
}

/// A name that is no data type's ([`DLDataType`]'s `FromStr`).
///
/// ```
/// let err = "float32y".parse::<dlspan::ffi::DLDataType>().unwrap_err();
/// assert_eq!(err.name(), "float32y");
/// assert!(err.to_string().contains("bfloat16"), "the message lists the names");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDtypeError {
    name: String,
}

impl ParseDtypeError {
    /// The name that was read.
    ///
    /// ```
    /// assert_eq!("int7x".parse::<dlspan::ffi::DLDataType>().unwrap_err().name(), "int7x");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for ParseDtypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} names no data type: the names are bool, int8-int128, uint8-uint128, float16, float32, float64, \
             bfloat16, complex32, complex64, complex128, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, \
             float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float6_e2m3fn, \
             float6_e3m2fn, float4_e2m1fn, with x<lanes> for vectors (float32x4, float4_e2m1fn_x2)",
            self.name
        )
    }
}

impl std::error::Error for ParseDtypeError {}

/// The only `bits` value DLPack defines for a minifloat code.
const fn expected_bits(code: DLDataTypeCode) -> Option<u8> {
    match code.0 {
        7..=14 => Some(8),
        15 | 16 => Some(6),
        17 => Some(4),
        _ => None,
    }
}

impl DLDataTypeCode {
    /// The one width, in bits, DLPack gives a scalar of this code when it fixes one: 8 for bool and
    /// the FP8 codes, 6 for the FP6 codes, 4 for FP4; `None` for codes of several widths (integers,
    /// floats, complex, opaque handles). DLPack leaves other widths unspecified and tells consumers
    /// to stop importing them, so `dlspan.Tensor` refuses them (`DlpackError::UnsupportedDtype`).
    ///
    /// ```
    /// use dlspan::ffi::DLDataTypeCode;
    /// assert_eq!(DLDataTypeCode::kDLFloat4_e2m1fn.fixed_bits(), Some(4));
    /// assert_eq!(DLDataTypeCode::kDLBool.fixed_bits(), Some(8));
    /// assert_eq!(DLDataTypeCode::kDLFloat.fixed_bits(), None);
    /// ```
    pub const fn fixed_bits(self) -> Option<u8> {
        if self.0 == DLDataTypeCode::kDLBool.0 { Some(8) } else { expected_bits(self) }
    }
}
