//! The format layer: the bytes on disk and what they say, parsed and written by one type
//! each: [`frame`] (CFrame / SFrame containers, parsed in Rust from byte ranges of `crate::storage`),
//! [`chunk`] (the 32-byte chunk header), [`meta`] (the `b2nd` and
//! `caterva` metalayers) and [`npy`] (NumPy `.npy` headers).

#![forbid(unsafe_code)]

#[cfg(feature = "arrow")]
pub(crate) mod arrow_ipc;
pub(crate) mod chunk;
pub(crate) mod chunk_cache;
pub(crate) mod ctable;
pub mod frame;
pub(crate) mod frame_writer;
pub(crate) mod journal;
pub(crate) mod json;
pub(crate) mod lock;
pub mod meta;
pub(crate) mod msgpack;
pub mod npy;
pub(crate) mod parts;
pub(crate) mod zip;

/// Bytes that break their layout's rules, and why: the error of every parser of this layer
/// (the layers above add the file, chunk or field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub(crate) String);

/// How many bytes from a frame's start its reader asks for first (the header of most
/// frames); a store prefetches that much of each member.
pub(crate) const FRAME_HEADER_GUESS: u64 = 8192;

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Malformed {}

impl From<String> for Malformed {
    fn from(why: String) -> Malformed {
        Malformed(why)
    }
}

impl From<&str> for Malformed {
    fn from(why: &str) -> Malformed {
        Malformed(why.to_string())
    }
}
