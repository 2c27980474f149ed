//! The only module that talks to c-blosc2 (through `blosc2-src`) and the only one with `unsafe`:
//! every `unsafe` block of the crate is in this folder, each with a `// SAFETY:` note, and
//! every other module has `#![forbid(unsafe_code)]`.
//!
//! It offers RAII handles with safe methods, one file each: [`Schunk`] (an opened or new
//! frame, `schunk.rs`), [`Dctx`] and [`HookedDctx`] (decompression contexts, `dctx.rs`),
//! [`Cctx`] (a compression context, `cctx.rs`), [`ChunkBytes`] (a chunk buffer C may hand
//! over, `buffer.rs`); LZ4 with a dictionary (`lz4.rs`); the atomic exchange of two paths
//! (`fs.rs`, Linux `renameat2`). C's return codes are decoded once,
//! into [`CError`] (`error.rs`). Everything above works with plain Rust types. The bindings of
//! `blosc2-src` 0.1.4 do not match the C sources for `blosc2_io_cb` and the `blosc2_stdio_*`
//! functions, so those are never used here.

use std::sync::Once;

use blosc2_src as sys;

mod buffer;
mod cctx;
mod codecs;
mod dctx;
mod error;
pub(crate) mod fs;
mod lz4;
mod schunk;

pub(crate) use buffer::{advise_huge_pages, try_zeroed, ChunkBytes};
pub(crate) use cctx::{Cctx, CompressParams};
pub(crate) use codecs::{blosclz_decompress_into, zstd_decompress};
pub(crate) use dctx::{BlockHook, Dctx, HookedDctx};
pub(crate) use error::CError;
pub(crate) use lz4::lz4_decompress_with_dict;
pub(crate) use schunk::{Schunk, SchunkParams};

/// c-blosc2's automatic split mode (python-blosc2's default).
pub(crate) const SPLIT_AUTO: i32 = sys::BLOSC_AUTO_SPLIT;
/// Split every block into one stream per item byte.
pub(crate) const SPLIT_ALWAYS: i32 = sys::BLOSC_ALWAYS_SPLIT;
/// Never split blocks.
pub(crate) const SPLIT_NEVER: i32 = sys::BLOSC_NEVER_SPLIT;

/// Length of an extended Blosc2 chunk header.
pub(crate) const EXTENDED_HEADER_LEN: usize = 32;

static INIT: Once = Once::new();

/// Initialise c-blosc2 once per process. Never destroyed: handles may live until exit.
pub(crate) fn init() {
    INIT.call_once(|| {
        // SAFETY: blosc2_init has no preconditions; `Once` guarantees a single call and that
        // it happens-before every other c-blosc2 call made through this module.
        unsafe { sys::blosc2_init() }
    });
}
