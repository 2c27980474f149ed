//! The C library's inverse hyperbolic functions. Rust's `f64::asinh`, `acosh` and `atanh`
//! (and the `f32` ones) are computed in Rust with formulas that differ from the platform's
//! `libm` in the last places; numexpr and NumPy call `libm`, so b2nd calls it too.

use std::os::raw::{c_double, c_float};

extern "C" {
    fn asinh(x: c_double) -> c_double;
    fn acosh(x: c_double) -> c_double;
    fn atanh(x: c_double) -> c_double;
    fn asinhf(x: c_float) -> c_float;
    fn acoshf(x: c_float) -> c_float;
    fn atanhf(x: c_float) -> c_float;
}

macro_rules! pure {
    ($($name:ident => $c:ident: $t:ty),* $(,)?) => {$(
        #[doc = concat!("The C library's `", stringify!($c), "`.")]
        pub(crate) fn $name(x: $t) -> $t {
            // SAFETY: a C99 <math.h> function of one floating-point value: no pointers, no
            // state, defined for every input (NaN or infinity for those outside its domain).
            unsafe { $c(x) }
        }
    )*};
}

pure! {
    asinh64 => asinh: f64,
    acosh64 => acosh: f64,
    atanh64 => atanh: f64,
    asinh32 => asinhf: f32,
    acosh32 => acoshf: f32,
    atanh32 => atanhf: f32,
}
