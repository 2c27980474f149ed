//! The crate's one error type.

#![forbid(unsafe_code)]

use std::path::PathBuf;

/// Everything that can go wrong opening, reading or writing an array.
///
/// Variants carry the context needed to act on them: the source (a path, `<memory>`
/// or `path@offset`), the chunk index, the metalayer field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error on `path`; the message ends with the OS error, which
    /// is also the [`source`].
    ///
    /// [`source`]: std::error::Error::source
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A remote object (HTTP, S3) could not be read: not found, refused, cut short, or the
    /// request failed.
    #[error("{url}: {reason}")]
    Remote {
        /// The object's URL.
        url: String,
        /// What went wrong.
        reason: String,
    },

    /// The bytes are not a Blosc2 frame c-blosc2 can open.
    #[error("{source_name}: not a readable Blosc2 frame: {reason}")]
    Frame {
        /// Where the frame came from.
        source_name: String,
        /// What is wrong.
        reason: String,
    },

    /// The frame has neither a `b2nd` nor a `caterva` metalayer.
    #[error("{source_name}: not an N-d array: the frame has neither a `b2nd` nor a `caterva` metalayer (metalayers: {found})")]
    NotNdArray {
        /// Where the frame came from.
        source_name: String,
        /// The metalayer names present, comma separated.
        found: String,
    },

    /// The frame carries N-d metadata but holds no data of its own.
    #[error("{source_name}: holds no array data of its own: {reason}")]
    NoData {
        /// Where the frame came from.
        source_name: String,
        /// Why (lazy expression, proxy, ...).
        reason: String,
    },

    /// A metalayer's bytes are malformed or inconsistent.
    #[error("{source_name}: invalid `{layer}` metalayer: {field}: {reason}")]
    Metalayer {
        /// Where the frame came from.
        source_name: String,
        /// `b2nd` or `caterva`.
        layer: String,
        /// The field at fault (e.g. `shape[1]`, `dtype`).
        field: String,
        /// What is wrong.
        reason: String,
    },

    /// The metalayer is well formed but disagrees with the frame or is impossible.
    #[error("{source_name}: inconsistent geometry: {reason}")]
    Geometry {
        /// Where the frame came from.
        source_name: String,
        /// What disagrees.
        reason: String,
    },

    /// An unparsable or unsupported NumPy dtype string.
    #[error(transparent)]
    Dtype(#[from] DtypeError),

    /// A chunk is corrupt or inconsistent with the array.
    #[error("{source_name}: chunk {chunk}: {reason}")]
    Chunk {
        /// Where the frame came from.
        source_name: String,
        /// The chunk index.
        chunk: i64,
        /// What is wrong.
        reason: String,
    },

    /// A chunk uses a codec, filter or feature this build cannot decode.
    #[error("{source_name}: chunk {chunk}: unsupported {what}: {name}")]
    Unsupported {
        /// Where the frame came from.
        source_name: String,
        /// The chunk index.
        chunk: i64,
        /// `codec`, `filter`, `chunk format`, ...
        what: &'static str,
        /// The codec/filter/feature name (with its id).
        name: String,
    },

    /// The requested Rust element type does not match the array's dtype.
    #[error("type mismatch: array dtype {dtype} cannot be read as {requested}")]
    TypeMismatch {
        /// The array's dtype string.
        dtype: String,
        /// The Rust type asked for.
        requested: &'static str,
    },

    /// A `|b1` array holds a byte other than 0 or 1.
    #[error("invalid bool value {value:#04x} at item {index}")]
    InvalidBool {
        /// Item index in C order.
        index: usize,
        /// The offending byte.
        value: u8,
    },

    /// A string item that is not text (a `U` code point that is no character, an `S` item
    /// that is not UTF-8).
    #[error("item {index} is not a string: {reason}")]
    InvalidString {
        /// Item index in C order.
        index: usize,
        /// What is wrong.
        reason: String,
    },

    /// A structured array has no field of that name (or the array is not structured).
    #[error("no field {name:?} (fields: {fields})")]
    NoField {
        /// The name asked for.
        name: String,
        /// The array's field names.
        fields: String,
    },

    /// A caller-supplied buffer has the wrong length.
    #[error("output buffer has {got} bytes, {expected} needed")]
    BufferSize {
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        got: usize,
    },

    /// A vlmeta attribute could not be read or decoded.
    #[error("{source_name}: attribute {name:?}: {reason}")]
    Attr {
        /// Where the frame came from.
        source_name: String,
        /// Attribute name.
        name: String,
        /// What is wrong.
        reason: String,
    },

    /// A c-blosc2 call failed (writing, or on bytes Rust had checked).
    #[error("{context}: {reason}")]
    Blosc {
        /// What was being done.
        context: String,
        /// What c-blosc2 reported (its error code decoded, or what it could not do).
        reason: String,
        /// The negative c-blosc2 return code, when it returned one.
        code: Option<i64>,
    },

    /// The write target exists and overwriting was not asked for.
    #[error("{} exists (ask to overwrite to replace it)", path.display())]
    TargetExists {
        /// The existing file or directory.
        path: PathBuf,
    },

    /// Another writer holds the array's lock (see [`crate::ArrayMut`]).
    #[error("{}: another writer has it open (locked)", path.display())]
    Locked {
        /// The array's file or directory.
        path: PathBuf,
    },

    /// A change b2nd refuses (values that do not fit a table's schema, rows out of range, a
    /// layout it does not change); nothing was changed.
    #[error("{path}: change refused: {reason}")]
    Refused {
        /// The file or directory.
        path: String,
        /// Why.
        reason: String,
    },

    /// A store (`.b2z`, `.b2d`, `.b2e`) is malformed or not a store.
    #[error("{path}: not a readable store: {reason}")]
    Store {
        /// The store's path.
        path: String,
        /// What is wrong (naming the member or key at fault).
        reason: String,
    },

    /// A store has no member under this key.
    #[error("{store}: no member {key:?}")]
    KeyNotFound {
        /// The store's path.
        store: String,
        /// The key asked for.
        key: String,
    },

    /// An invalid argument from the caller (not from a file).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A buffer a read needs could not be allocated (the sizes come from the file's header
    /// and the caller's request: see `docs/limits.md`). Rust would otherwise abort.
    #[error("cannot allocate {bytes} bytes for {what}")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: u64,
        /// What the buffer was for.
        what: String,
    },
}

impl Error {
    /// A c-blosc2 failure while doing `context`.
    pub(crate) fn blosc(context: impl Into<String>, e: crate::ffi::CError) -> Error {
        Error::Blosc {
            context: context.into(),
            reason: e.to_string(),
            code: match e {
                crate::ffi::CError::Code(c) => Some(c),
                crate::ffi::CError::Os { code, .. } if code != 0 => Some(code),
                _ => None,
            },
        }
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A dtype string that cannot be parsed, or a dtype that cannot be represented.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid dtype {dtype:?}: {reason}")]
pub struct DtypeError {
    /// The offending dtype string (cut to its first 200 characters, with `…` appended, when
    /// longer).
    pub dtype: String,
    /// Why it was refused.
    pub reason: String,
}
