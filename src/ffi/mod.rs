//! The only module that talks to c-blosc2 (through `blosc2-src`) and the only one with `unsafe`:
//! every `unsafe` block of the crate is in this folder, each with a `// SAFETY:` note, and
//! every other module has `#![forbid(unsafe_code)]`.
//!
//! It offers RAII handles with safe methods, one file each: [`Schunk`] (a frame being written,
//! `schunk.rs`), [`Dctx`] and [`HookedDctx`] (decompression contexts, `dctx.rs`), [`Cctx`] (a
//! compression context, `cctx.rs`), [`ChunkBytes`] (a chunk buffer C may hand over, `buffer.rs`,
//! with fresh pages and a cache prefetch hint); LZ4 with a dictionary (`lz4.rs`); the atomic
//! exchange of two paths (`fs.rs`, Linux `renameat2`); the C library's inverse hyperbolic functions
//! (`libm.rs`). C's return codes are decoded once, into [`CError`] (`error.rs`). Everything above
//! works with plain Rust types. The bindings of `blosc2-src` 0.1.4 do not match the C sources for
//! `blosc2_io_cb` and the `blosc2_stdio_*` functions, so those are never used here.

use std::sync::Once;

use blosc2_src as sys;

mod buffer;
mod cctx;
mod codecs;
mod dctx;
mod error;
pub(crate) mod fs;
pub(crate) mod libm;
mod lz4;
mod schunk;

pub(crate) use buffer::{advise_huge_pages, prefetch, try_zeroed, ChunkBytes, FreshPages};
pub(crate) use cctx::{special_chunk, BlockFilter, Cctx, CompressParams};
pub(crate) use codecs::{blosclz_decompress_into, zstd_compress, zstd_decompress};
pub(crate) use dctx::{BlockHook, Dctx, HookedDctx};
pub(crate) use error::CError;
pub(crate) use lz4::{lz4_compress_append, lz4_decompress_with_dict};
pub(crate) use schunk::Schunk;

/// c-blosc2's automatic split mode (python-blosc2's default).
pub(crate) const SPLIT_AUTO: i32 = sys::BLOSC_AUTO_SPLIT;
/// Split every block into one stream per item byte.
pub(crate) const SPLIT_ALWAYS: i32 = sys::BLOSC_ALWAYS_SPLIT;
/// Never split blocks.
pub(crate) const SPLIT_NEVER: i32 = sys::BLOSC_NEVER_SPLIT;

/// Length of an extended Blosc2 chunk header.
pub(crate) const EXTENDED_HEADER_LEN: usize = 32;

static INIT: Once = Once::new();

/// c-blosc2 2.15's id of its memory-mapped file IO (`BLOSC2_IO_FILESYSTEM_MMAP` in its
/// `blosc2.h`; the bindings of `blosc2-src` 0.1.4 predate it).
const IO_FILESYSTEM_MMAP: u8 = 1;

/// Initialise c-blosc2 once per process. Never destroyed: handles may live until exit.
///
/// Also registers c-blosc2's file IO callbacks here, once: 2.15 registers them lazily on the
/// first `blosc2_get_io_cb` (frame creation, opening), without a lock, by bumping the table's
/// count before copying the entry in, so a second thread could find the still-zeroed entry
/// (whose id 0 is the file system's) and call its null `open`. Found as a SIGSEGV in
/// `frame_from_schunk` when two tests created their first files at the same moment.
pub(crate) fn init() {
    INIT.call_once(|| {
        // SAFETY: blosc2_init has no preconditions; `Once` guarantees a single call and that
        // it happens-before every other c-blosc2 call made through this module.
        unsafe { sys::blosc2_init() };
        for id in [sys::BLOSC2_IO_FILESYSTEM as u8, IO_FILESYSTEM_MMAP] {
            // SAFETY: c-blosc2 is initialised (above) and no other c-blosc2 call can run
            // before `call_once` returns; the returned pointer is only compared with null,
            // never dereferenced (the bindings' struct does not match 2.15's).
            let io = unsafe { sys::blosc2_get_io_cb(id) };
            debug_assert!(!io.is_null(), "c-blosc2 IO callbacks {id}");
        }
    });
}
