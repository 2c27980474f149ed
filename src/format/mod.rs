//! The format layer: the bytes on disk and what they say, parsed and written by one type
//! each: [`frame`] (CFrame / SFrame containers, read through c-blosc2 after Rust checks),
//! [`chunk`] (the 32-byte chunk header), `ids` (codec and filter ids and names), [`meta`] (the `b2nd` and
//! `caterva` metalayers) and [`npy`] (NumPy `.npy` headers).

#![forbid(unsafe_code)]

pub(crate) mod chunk;
pub mod frame;
pub(crate) mod ids;
pub(crate) mod journal;
pub(crate) mod lock;
pub mod meta;
pub mod npy;
pub(crate) mod parts;
pub(crate) mod zip;

/// Bytes that break their layout's rules, and why: the error of every parser of this layer
/// (the layers above add the file, chunk or field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub(crate) String);

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

/// Read exactly `buf.len()` bytes of `file` at `pos` (without moving a shared cursor).
pub(crate) fn read_at(file: &std::fs::File, buf: &mut [u8], pos: u64) -> Option<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, pos).ok()
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match file.seek_read(&mut buf[done..], pos + done as u64) {
                Ok(0) | Err(_) => return None,
                Ok(k) => done += k,
            }
        }
        Some(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, pos);
        None
    }
}
