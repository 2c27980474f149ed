//! c-blosc2's return codes, decoded here and nowhere else, and the checks of arguments C
//! cannot take.

use std::ffi::CString;

/// A c-blosc2 return code as text: `error -5 (not enough space to read)`. The one place the
/// codes (`BLOSC2_ERROR_*` in `blosc2.h`) are decoded.
pub(crate) fn describe_code(code: i64) -> String {
    let what = match code {
        -1 => "generic failure",
        -2 => "bad stream",
        -3 => "invalid data",
        -4 => "memory allocation failure",
        -5 => "not enough space to read",
        -6 => "not enough space to write",
        -7 => "codec not supported",
        -8 => "invalid codec parameter",
        -9 => "codec dictionary error",
        -10 => "version not supported",
        -11 => "invalid value in header",
        -12 => "invalid parameter",
        -13 => "file read failure",
        -14 => "file write failure",
        -15 => "file open failure",
        -16 => "not found",
        -17 => "bad run-length encoding",
        -18 => "filter pipeline error",
        -19 => "chunk insert failure",
        -20 => "chunk append failure",
        -21 => "chunk update failure",
        -22 => "sizes over 2 GB not supported",
        -23 => "super-chunk copy failure",
        -24 => "wrong frame type",
        -25 => "file truncate failure",
        -26 => "thread creation failure",
        -27 => "postfilter failure",
        -28 => "special frame failure",
        -29 => "special super-chunk failure",
        -30 => "I/O plugin error",
        -31 => "file remove failure",
        -32 => "null pointer",
        -33 => "invalid index",
        -34 => "metalayer not found",
        -35 => "maximum buffer size exceeded",
        -36 => "tuner failure",
        -37 => "frame lock failure",
        _ => return format!("error {code}"),
    };
    format!("error {code} ({what})")
}

/// Why a c-blosc2 call failed, decoded once, here: every fallible function of this module
/// returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CError {
    /// c-blosc2 returned this negative code (see [`describe_code`]).
    Code(i64),
    /// A c-blosc2 call returning a pointer returned NULL: what it could not do.
    Null(&'static str),
    /// An argument C cannot take or a result it must not return (a size over `i32`, a path
    /// that is not UTF-8 or holds a NUL, a chunk outside its frame): what was wrong.
    Invalid(&'static str),
    /// A call that writes files failed (`code`, or 0 for a NULL result with `what`), and the
    /// system error right after it explains why (a full disk, a quota, an I/O error, a
    /// read-only file system, a permission): see [`CError::with_os_error`].
    Os {
        /// c-blosc2's return code, 0 when the call returned NULL.
        code: i64,
        /// What a NULL-returning call could not do.
        what: &'static str,
        /// The `errno` that explains it.
        errno: i32,
    },
}

impl CError {
    /// `self`, from a c-blosc2 call that writes files, with the system error that explains
    /// its failure when there is one (read from `errno` right after the call: c-blosc2 does
    /// not report why a file write failed).
    pub(super) fn with_os_error(self) -> CError {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let explains = [
            libc::ENOSPC,
            libc::EDQUOT,
            libc::EFBIG,
            libc::EIO,
            libc::EROFS,
            libc::EACCES,
            libc::EPERM,
        ];
        if !explains.contains(&errno) {
            return self;
        }
        match self {
            CError::Code(code) => CError::Os {
                code,
                what: "",
                errno,
            },
            CError::Null(what) => CError::Os {
                code: 0,
                what,
                errno,
            },
            other => other,
        }
    }
}

impl std::fmt::Display for CError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CError::Code(c) => write!(f, "c-blosc2 {}", describe_code(*c)),
            CError::Null(what) => write!(f, "c-blosc2 {what}"),
            CError::Invalid(what) => f.write_str(what),
            CError::Os { code, what, errno } => {
                let os = std::io::Error::from_raw_os_error(*errno);
                if *code != 0 {
                    write!(f, "c-blosc2 {}: {os}", describe_code(*code))
                } else {
                    write!(f, "c-blosc2 {what}: {os}")
                }
            }
        }
    }
}

impl std::error::Error for CError {}

/// A c-blosc2 size argument, which must fit `int32_t`.
pub(super) fn c_size(n: usize) -> Result<i32, CError> {
    i32::try_from(n).map_err(|_| CError::Invalid("a size over 2 GiB for c-blosc2"))
}

/// A name for c-blosc2 (NUL-terminated).
pub(super) fn c_name(name: &str) -> Result<CString, CError> {
    CString::new(name).map_err(|_| CError::Invalid("a name or path holding a NUL byte"))
}

#[cfg(test)]
mod code_tests {
    use super::describe_code;

    #[test]
    fn codes_are_named() {
        assert_eq!(describe_code(-5), "error -5 (not enough space to read)");
        assert_eq!(describe_code(-37), "error -37 (frame lock failure)");
        assert_eq!(describe_code(-99), "error -99");
    }
}
