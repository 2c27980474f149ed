//! [`ChunkError`]: why a chunk could not be decoded or encoded, the one error of the codec
//! layer (the layers above add the file and chunk number).

#![forbid(unsafe_code)]

use crate::error::Error;
use crate::ffi::CError;

/// Why a chunk could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChunkError {
    /// Corrupt or inconsistent with the array: why.
    Corrupt(String),
    /// c-blosc2 failed on it.
    C(CError),
    /// Uses something this build cannot decode: (`what`, name).
    Unsupported(&'static str, String),
}

impl ChunkError {
    /// The public error for chunk `chunk` of the frame named `source`: the one place a
    /// chunk's failure (c-blosc2's included) becomes an [`Error`].
    pub(crate) fn at(self, source: &str, chunk: u64) -> Error {
        let source_name = source.to_string();
        let chunk = chunk as i64;
        match self {
            ChunkError::Corrupt(reason) => Error::Chunk {
                source_name,
                chunk,
                reason,
            },
            ChunkError::C(e) => Error::Chunk {
                source_name,
                chunk,
                reason: format!("could not decompress it ({e})"),
            },
            ChunkError::Unsupported(what, name) => Error::Unsupported {
                source_name,
                chunk,
                what,
                name,
            },
        }
    }
}

impl From<crate::format::Malformed> for ChunkError {
    fn from(e: crate::format::Malformed) -> ChunkError {
        ChunkError::Corrupt(e.0)
    }
}

impl From<CError> for ChunkError {
    fn from(e: CError) -> ChunkError {
        ChunkError::C(e)
    }
}

/// A description of what is wrong with the bytes is a corruption report.
impl From<String> for ChunkError {
    fn from(why: String) -> ChunkError {
        ChunkError::Corrupt(why)
    }
}

impl From<&str> for ChunkError {
    fn from(why: &str) -> ChunkError {
        ChunkError::Corrupt(why.to_string())
    }
}

impl std::fmt::Display for ChunkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkError::Corrupt(why) => f.write_str(why),
            ChunkError::C(e) => write!(f, "{e}"),
            ChunkError::Unsupported(what, name) => write!(f, "unsupported {what}: {name}"),
        }
    }
}
