//! The format layer: the bytes on disk and what they say, parsed and written by one type
//! each: [`frame`] (CFrame / SFrame containers, read through c-blosc2 after Rust checks),
//! [`chunk`] (the 32-byte chunk header), `ids` (codec and filter ids and names), [`meta`] (the `b2nd` and
//! `caterva` metalayers) and [`npy`] (NumPy `.npy` headers).

pub(crate) mod chunk;
pub mod frame;
pub(crate) mod ids;
pub mod meta;
pub mod npy;
