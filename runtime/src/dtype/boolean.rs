//! [`Bool`]: DLPack's boolean as the byte it is, valid for every byte.

use super::{DlElement, PlainBits};
use crate::ffi::{DLDataType, DLDataTypeCode};
use core::fmt;
use core::hash::{Hash, Hasher};

/// A DLPack boolean (`kDLBool`, 8 bits): one byte, nonzero meaning `true`, as in C and NumPy.
///
/// Producers may store any byte in a `kDLBool` element (NumPy's `view(np.bool_)` of any bytes, a C
/// library's `char` flags), and a Rust `bool` holding a byte other than 0 and 1 is undefined
/// behaviour. `Bool` accepts every byte, so its views import without reading the data; a view of
/// `bool` imports only after every byte it reaches was checked ([rule I18](crate::rules#i18)). The
/// runtime dtype [`dispatch`](crate::dtype::dispatch) maps `kDLBool` to `Bool`.
///
/// Values compare, hash and print as truth values (`Bool` holding 2 equals [`Bool::TRUE`]);
/// arithmetic ([`Numeric`](crate::dtype::Numeric): `add` is *or*, `mul` is *and*) and
/// [`cast`](crate::dtype::cast) into `Bool` produce the bytes 0 and 1.
///
/// ```
/// use dlspan::dtype::{Bool, Numeric, cast};
/// use dlspan::{DlElement, HostMdspan, ManagedTensor};
///
/// // Bytes as NumPy may hold them: `np.array([2, 1, 0, 255], np.uint8).view(np.bool_)`.
/// let bytes = vec![2u8, 1, 0, 255];
/// let flags: Vec<Bool> = bytes.iter().map(|&b| Bool::from_bits(b)).collect();
/// let tensor = ManagedTensor::from_owner(flags, [4])?;
/// assert_eq!(tensor.dtype(), bool::DTYPE);
///
/// let view = tensor.view::<Bool, 1, dlspan::LayoutRight>()?;
/// assert_eq!(view.iter().map(|b| b.get()).collect::<Vec<_>>(), [true, true, false, true]);
/// assert_eq!(view.fold_unordered(0i64, |n, &b| n + b.to_acc()), 3); // NumPy's sum
/// assert_eq!(view[[0]], Bool::TRUE);
/// assert_eq!(view[[0]].to_bits(), 2);
/// assert_eq!(cast::<Bool, Bool>(view[[0]]).to_bits(), 1);
/// // The same tensor as `bool` is refused: byte 2 is no Rust `bool`.
/// assert!(matches!(tensor.view::<bool, 1, dlspan::LayoutRight>(), Err(dlspan::DlpackError::InvalidBool { found: 2 })));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct Bool(u8);

impl Bool {
    /// `false`, the byte 0.
    pub const FALSE: Self = Self(0);

    /// `true`, the byte 1.
    pub const TRUE: Self = Self(1);

    /// The boolean `value`, as the byte 0 or 1.
    ///
    /// ```
    /// assert_eq!(dlspan::dtype::Bool::new(true).to_bits(), 1);
    /// ```
    #[inline]
    pub const fn new(value: bool) -> Self {
        Self(value as u8)
    }

    /// The boolean stored as `byte`: `true` for every byte but 0, which is kept as it is.
    ///
    /// ```
    /// use dlspan::dtype::Bool;
    /// assert!(Bool::from_bits(2).get());
    /// assert_eq!(Bool::from_bits(2).to_bits(), 2);
    /// ```
    #[inline]
    pub const fn from_bits(byte: u8) -> Self {
        Self(byte)
    }

    /// The truth value: whether the byte is nonzero.
    ///
    /// ```
    /// use dlspan::dtype::Bool;
    /// assert!(!Bool::FALSE.get() && Bool::from_bits(255).get());
    /// ```
    #[inline]
    pub const fn get(self) -> bool {
        self.0 != 0
    }

    /// The stored byte, as the producer wrote it.
    ///
    /// ```
    /// assert_eq!(dlspan::dtype::Bool::from_bits(7).to_bits(), 7);
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u8 {
        self.0
    }
}

impl From<bool> for Bool {
    /// ```
    /// assert_eq!(dlspan::dtype::Bool::from(true), dlspan::dtype::Bool::TRUE);
    /// ```
    #[inline]
    fn from(value: bool) -> Self {
        Self::new(value)
    }
}

impl From<Bool> for bool {
    /// ```
    /// assert!(bool::from(dlspan::dtype::Bool::from_bits(3)));
    /// ```
    #[inline]
    fn from(value: Bool) -> Self {
        value.get()
    }
}

impl PartialEq for Bool {
    /// Truth values: every nonzero byte is the same `true`.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Bool {}

impl Hash for Bool {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.get().hash(state);
    }
}

impl fmt::Debug for Bool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl fmt::Display for Bool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.get(), f)
    }
}

/// Makes the bytes of elements of `T` valid values of `T` where `T` needs its bytes checked
/// ([`Validity::BoolBytes`](super::Validity::BoolBytes): every nonzero byte becomes 1, as the
/// truth value it stands for); leaves them as they are for every other type. For bytes copied from
/// memory that no import checked (device memory).
#[cfg(feature = "cuda")]
pub(crate) fn make_valid<T: DlElement>(bytes: &mut [u8]) {
    if const { T::VALIDITY.needs_check() } {
        bytes.iter_mut().for_each(|byte| *byte = u8::from(*byte != 0));
    }
}

// SAFETY: `#[repr(transparent)]` over `u8`: one byte, every bit pattern valid, no interior
// mutability; `kDLBool` is one byte per element.
unsafe impl DlElement for Bool {
    const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::kDLBool, 8, 1);
}

// SAFETY: `#[repr(transparent)]` over `u8`.
unsafe impl PlainBits for Bool {}
