//! Rust element types for typed reads, checked against the array's dtype.

#![forbid(unsafe_code)]

use crate::model::dtype::{ByteOrder, Dtype};

/// Native byte order, for the dtypes of multi-byte element types.
const N: ByteOrder = if cfg!(target_endian = "little") {
    ByteOrder::Little
} else {
    ByteOrder::Big
};
use crate::error::{Error, Result};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type an array can be read as: `bool`, `i8`..`i64`, `u8`..`u64`, `f32`, `f64`,
/// `half::f16` (feature `f16`) and `num_complex::Complex<f32|f64>` (feature `complex`).
///
/// Big-endian data is converted to native order. `i64` also reads `datetime64` and
/// `timedelta64` arrays (their stored integer counts).
pub trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The Rust type's name, for errors.
    const NAME: &'static str;
    /// Whether values of `dtype` can be read as `Self`.
    fn matches(dtype: &Dtype) -> bool;
    /// The native-order NumPy dtype of this type (what a write stores).
    fn dtype() -> Dtype;
    /// The items' bytes in native order.
    #[doc(hidden)]
    fn as_bytes(data: &[Self]) -> std::borrow::Cow<'_, [u8]>;
    /// Fill `out` with items decoded from the raw bytes that `fill` writes into the buffer it is
    /// given (items of `dtype` in C order).
    #[doc(hidden)]
    fn fill_from_bytes(
        out: &mut [Self],
        dtype: &Dtype,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()>;
}

/// Reverse the byte order of every `unit`-byte group.
fn swap_units(bytes: &mut [u8], unit: usize) {
    if unit > 1 {
        for c in bytes.chunks_exact_mut(unit) {
            c.reverse();
        }
    }
}

macro_rules! pod_element {
    ($t:ty, $unit:expr, $pat:pat, $dt:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            fn dtype() -> Dtype {
                $dt
            }
            fn as_bytes(data: &[Self]) -> std::borrow::Cow<'_, [u8]> {
                std::borrow::Cow::Borrowed(bytemuck::cast_slice(data))
            }
            fn matches(dtype: &Dtype) -> bool {
                matches!(dtype, $pat)
            }
            fn fill_from_bytes(
                out: &mut [Self],
                dtype: &Dtype,
                fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
            ) -> Result<()> {
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
                fill(bytes)?;
                if !dtype.is_native_order() {
                    swap_units(bytes, $unit);
                }
                Ok(())
            }
        }
    };
}

pod_element!(
    i8,
    1,
    Dtype::Int { size: 1, .. },
    Dtype::Int {
        size: 1,
        order: ByteOrder::NotApplicable
    }
);
pod_element!(
    i16,
    2,
    Dtype::Int { size: 2, .. },
    Dtype::Int { size: 2, order: N }
);
pod_element!(
    i32,
    4,
    Dtype::Int { size: 4, .. },
    Dtype::Int { size: 4, order: N }
);
pod_element!(
    i64,
    8,
    Dtype::Int { size: 8, .. } | Dtype::Datetime { .. } | Dtype::Timedelta { .. },
    Dtype::Int { size: 8, order: N }
);
pod_element!(
    u8,
    1,
    Dtype::UInt { size: 1, .. },
    Dtype::UInt {
        size: 1,
        order: ByteOrder::NotApplicable
    }
);
pod_element!(
    u16,
    2,
    Dtype::UInt { size: 2, .. },
    Dtype::UInt { size: 2, order: N }
);
pod_element!(
    u32,
    4,
    Dtype::UInt { size: 4, .. },
    Dtype::UInt { size: 4, order: N }
);
pod_element!(
    u64,
    8,
    Dtype::UInt { size: 8, .. },
    Dtype::UInt { size: 8, order: N }
);
pod_element!(
    f32,
    4,
    Dtype::Float { size: 4, .. },
    Dtype::Float { size: 4, order: N }
);
pod_element!(
    f64,
    8,
    Dtype::Float { size: 8, .. },
    Dtype::Float { size: 8, order: N }
);
#[cfg(feature = "f16")]
pod_element!(
    half::f16,
    2,
    Dtype::Float { size: 2, .. },
    Dtype::Float { size: 2, order: N }
);
#[cfg(feature = "complex")]
pod_element!(
    num_complex::Complex<f32>,
    4,
    Dtype::Complex { size: 8, .. },
    Dtype::Complex { size: 8, order: N }
);
#[cfg(feature = "complex")]
pod_element!(
    num_complex::Complex<f64>,
    8,
    Dtype::Complex { size: 16, .. },
    Dtype::Complex { size: 16, order: N }
);

impl sealed::Sealed for bool {}
impl Element for bool {
    const NAME: &'static str = "bool";
    fn dtype() -> Dtype {
        Dtype::Bool
    }
    fn as_bytes(data: &[Self]) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Owned(data.iter().map(|&b| u8::from(b)).collect())
    }
    fn matches(dtype: &Dtype) -> bool {
        matches!(dtype, Dtype::Bool)
    }
    fn fill_from_bytes(
        out: &mut [Self],
        _dtype: &Dtype,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        let mut raw = vec![0u8; out.len()];
        fill(&mut raw)?;
        // Checked in one vectorised pass (a byte over 1 sets a bit above the lowest in the
        // OR of all), then converted; the position of a bad byte is looked for only then.
        if raw.iter().fold(0u8, |m, &b| m | b) > 1 {
            if let Some(index) = raw.iter().position(|&b| b > 1) {
                return Err(Error::InvalidBool {
                    index,
                    value: raw[index],
                });
            }
        }
        for (o, &b) in out.iter_mut().zip(&raw) {
            *o = b != 0;
        }
        Ok(())
    }
}

/// Check that `T` can read `dtype`.
pub(crate) fn check<T: Element>(dtype: &Dtype) -> Result<()> {
    if T::matches(dtype) {
        Ok(())
    } else {
        Err(Error::TypeMismatch {
            dtype: dtype.to_numpy_str(),
            requested: T::NAME,
        })
    }
}
