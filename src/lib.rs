//! # b2nd
//!
//! Read and write Blosc2 N-dimensional arrays — the `.b2nd` files python-blosc2 writes, and
//! legacy `caterva` files — from Rust, bit-exact, without Python.
//!
//! ## Open and read
//!
//! [`Array::open`] takes a CFrame file (`.b2nd`) or a sparse-frame directory;
//! [`Array::open_at`] a frame at an offset of a larger file; [`Array::from_bytes`] an in-memory
//! frame. Reads are typed ([`Element`]: numbers, `bool`, optional `f16` and complex numbers),
//! checked against the dtype and converted from big-endian; any dtype reads as raw bytes;
//! strings and structured fields have their own typed reads.
//!
//! ```
//! use b2nd::Array;
//!
//! let a = Array::open("tests/data/attrs_all.b2nd")?;
//! assert_eq!((a.shape(), a.chunks(), a.blocks()), (&[6u64][..], &[4u64][..], &[2u64][..]));
//! let values: Vec<i32> = a.read()?;           // typed, checked against the dtype
//! let raw: Vec<u8> = a.read_bytes()?;         // any dtype, C order, the dtype's byte order
//! assert_eq!(raw.len(), values.len() * 4);
//! if let Some(unit) = a.attr("unit")? {       // vlmeta attributes, python-blosc2's conventions
//!     println!("unit = {unit:?}");
//! }
//! let names = Array::open("tests/data/dtype_le_U3.b2nd")?.read_strings()?; // U and S arrays
//! let ids: Vec<i32> = Array::open("tests/data/dtype_struct_list.b2nd")?.read_field("a")?;
//! # let _ = (names, ids);
//! # Ok::<(), b2nd::Error>(())
//! ```
//!
//! ## Slices and chunks (arrays larger than memory)
//!
//! A [`Slice`] is NumPy basic indexing; only the chunks, and inside them the blocks, that hold
//! selected items are read and decoded. [`Array::slice_slabs`] streams a selection in parts of
//! bounded size; [`Array::iter_chunks`] and [`Array::par_for_each_chunk`] walk the chunks.
//!
//! ```
//! # use b2nd::{Array, Slice};
//! let a = Array::open("tests/data/attrs_all.b2nd")?;
//! let s: Slice = "1:5:2".parse()?;
//! let v = a.read_slice::<i32>(&s)?;
//! assert_eq!((v.len(), a.slice_shape(&s)?), (2, vec![2]));
//! for chunk in a.iter_chunks() {
//!     let c = chunk?;
//!     assert_eq!(c.data().len() as u64, c.nitems() * 4);
//! }
//! # Ok::<(), b2nd::Error>(())
//! ```
//!
//! ## Write
//!
//! [`ArrayBuilder`] writes arrays python-blosc2 opens as its own: to a file or sparse
//! directory (written aside and renamed into place: an error leaves nothing behind), or to
//! memory; whole, or streamed through a [`Writer`]. [`ArrayBuilder::like`] copies an existing
//! array's layout and compression.
//!
//! ```
//! use b2nd::{ArrayBuilder, Codec, Filter};
//!
//! let frame = ArrayBuilder::for_type::<f64>(&[100, 100])
//!     .chunks(&[50, 100])
//!     .blocks(&[10, 100])
//!     .codec(Codec::Zstd)
//!     .filters(&[Filter::Shuffle])
//!     .to_vec(&vec![0.5f64; 100 * 100])?; // or .write(Target::File(path), &data)
//! assert_eq!(b2nd::Array::from_bytes(frame)?.read::<f64>()?[42], 0.5);
//! # Ok::<(), b2nd::Error>(())
//! ```
//!
//! ## Stores and tables
//!
//! [`ArrayMut`] changes an existing array in place (region writes, resizes, appends, attribute
//! edits), each change published atomically: a crash leaves the whole old or the whole new
//! contents (`docs/in-place-writes.md`).
//!
//! [`Store`] opens what python-blosc2's `DictStore`, `TreeStore` and `EmbedStore` write
//! (`.b2z` zips read in place, `.b2d` directories, `.b2e` files): keys as python lists them,
//! each key's [`MemberKind`], arrays and [`SChunk`]s by key, TreeStore group attributes.
//! [`Table`] reads a `CTable`: its schema, live rows, fixed-width and utf8 columns and their
//! nulls, and its computed columns, evaluated by [`expr`] as python-blosc2 evaluates them.
//!
//! ```
//! use b2nd::{Store, Table};
//!
//! let store = Store::open("tests/data/stores/tree_ext.b2z")?;
//! let x: Vec<u16> = store.open_array("/a/b/x")?.read()?;
//! assert_eq!(x, [0, 1, 2, 3, 4]);
//! let t = Table::open("tests/data/tables/basic.b2z")?;
//! let names = t.read_utf8("txt")?; // None for nulls, deleted rows left out
//! assert_eq!(names.len() as u64, t.n_rows());
//! # Ok::<(), b2nd::Error>(())
//! ```
//!
//! ## Threads
//!
//! Reads and writes run on rayon's global pool by default, shared by every array; hand an
//! array or a builder a [`Threads`] to use a pool of your own or one thread.
//!
//! ## Errors
//!
//! Everything fails with [`Error`], whose variants name the file, chunk and field at fault;
//! a file's bytes never cause a panic. What this crate cannot decode (a codec or filter it
//! does not know, a container that holds no data of its own) is refused by name, never
//! returned as wrong values.
//!
//! ## Features
//!
//! None by default. `ndarray`: `read_ndarray`, `read_slice_ndarray` and `write_ndarray`;
//! `f16`: `half::f16` elements; `complex`: `num_complex::Complex<f32|f64>` elements;
//! `arrow`: [`Table::to_record_batch`] (a CTable as an Arrow `RecordBatch`, nulls included);
//! `remote`: `Array`, `SChunk`, `Store` and `Table` `::open_url` (arrays, sparse frames,
//! super-chunks, `.b2z`/`.b2e` stores and tables over HTTP(S), S3, GCS, Azure or `file://`,
//! `.b2d` where the store lists prefixes; read by byte ranges through `object_store`, with
//! timeouts, retries and requests in flight set by `RemoteOptions`, on a Tokio runtime of
//! b2nd's own), `Array::open_object` on a caller's `Arc<dyn ObjectStore>`, and async
//! versions of the opens and reads for engines (`open_url_async`, `read_slice_bytes_async`,
//! ...: the sync call on the caller's Tokio blocking pool). The `b2nd`
//! command-line tool is the separate `b2nd-cli` package; it enables `remote`, so `info`,
//! `ls`, `cat` and `to-npy` take URLs (`--timeout`, `--retries`; `--threads` bounds the
//! requests in flight).
//!
//! ## Layers
//!
//! The source tree shows the layers, bottom up; each depends only on those below it:
//!
//! | folder | layer |
//! |---|---|
//! | `ffi/` | c-blosc2: the empty frame (header and metalayers) a new frame starts from, (de)compression contexts, its return codes decoded once, the LZ4 / Zstandard / BloscLZ stream decoders it carries; the only `unsafe` code |
//! | `storage/` | where the bytes live, read by ranges: local files (`pread`), a sparse frame's directory, memory, a frame at an offset inside another source, and (feature `remote`) objects and prefixes in object storage or behind HTTP; every read goes through it |
//! | `model/` | what an array is, apart from bytes: [`dtype`], [`Geometry`], [`Region`], selections ([`Slice`]; all index arithmetic lives here), [`attrs`], [`Element`], the codec and filter ids with [`Codec`] and [`Filter`] |
//! | `format/` | the bytes, one parser/writer per layout: the frame (header, chunk index, trailer; parsed from byte ranges, and one frame writer for changes), chunk headers, the `b2nd` / `caterva` metalayers, [`npy`] headers, the `.b2z` zip, the names of a CTable's layout, MessagePack and JSON, the lock sidecar and the in-place journal |
//! | `codec/` | a chunk's decode and encode pipeline (variable-length-block chunks included), with the codecs and filters the linked c-blosc2 2.15 lacks or does differently from 3.x (ZLIB, LZ4 dictionaries, NDLZ, ZFP, byte-group SHUFFLE, BYTEDELTA, NDCELL, NDMEAN, ...) done in Rust, per block |
//! | `expr/` | python-blosc2's lazy expressions ([`expr`]): parsed, then typed and evaluated as numexpr or NumPy would (`eval/`: kinds and promotion, casts, which engine, operators, functions), and the bounds of their values |
//! | `parallel.rs` | where work runs ([`Threads`]): the one caller of rayon |
//! | `array.rs`, `read/`, `write/` | [`Array`] (open, metadata, attributes); whole, region, slice, chunk and typed reads; [`ArrayBuilder`], [`Writer`], [`ArrayMut`] (in-place changes) and attribute edits |
//! | `schunk.rs`, `store/`, `table/` | [`SChunk`] (any frame as bytes, format-3 frames, ObjectArray / BatchArray items); [`Store`] (DictStore, TreeStore, EmbedStore: key map, keys); [`Table`] (CTable, and as Arrow); writing them: [`StoreBuilder`], [`TableBuilder`] in `write/` |

// `unsafe` is denied everywhere but in `ffi` (and forbidden, which no `allow` can undo, in
// every other module's own file).
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

// The layers, bottom up (dependencies point down): see "Layers" above.
mod alloc;
mod array;
mod codec;
mod error;
pub mod expr;
#[allow(unsafe_code)]
mod ffi;
mod format;
mod model;
#[cfg(feature = "remote")]
mod nonblocking;
mod parallel;
mod read;
mod schunk;
mod storage;
mod store;
mod table;
pub mod write;

pub use format::npy;
pub use model::{attrs, dtype};

pub use array::Array;
pub use error::{Error, Result};
pub use format::chunk::ChunkKind;
pub use format::frame::Storage;
pub use format::meta::Format;
pub use model::attrs::Value;
pub use model::chunk_data::ChunkData;
pub use model::dtype::{ByteOrder, Dtype};
pub use model::durability::Durability;
pub use model::element::Element;
pub use model::geometry::{Geometry, GeometryError};
pub use model::region::Region;
pub use model::selection::{Slice, SliceItem};
#[cfg(feature = "remote")]
pub use object_store;
pub use parallel::Threads;
pub use read::chunk_iter::ChunkIter;
pub use read::slice::SliceSlabs;
pub use schunk::{SChunk, MAX_ATTR_BYTES};
#[cfg(feature = "remote")]
pub use storage::{list_url, RemoteOptions};
pub use store::{MemberKind, Store, StoreKind};
#[cfg(feature = "arrow")]
pub use table::StringRows;
pub use table::{BlockSummary, Bound, Column, ColumnKind, Computed, Segment, Table};
pub use write::ArrayMut;
pub use write::{ArrayBuilder, Codec, Filter, StoreBuilder, TableBuilder, Target, Writer};
pub use write::{NewColumn, Rows, TableMut};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The library tour's examples (`docs/library.md`), compiled and run as doctests.
#[doc = include_str!("../docs/library.md")]
#[cfg(doctest)]
pub struct LibraryTourDoctests;

/// Entry points for the fuzz targets in `fuzz/` (and the replay of their corpora in
/// `tests/fuzz_corpora.rs`) into parsers the API reaches only through whole files: not part
/// of the API, exempt from semantic versioning.
#[doc(hidden)]
pub mod __fuzz {
    /// Parse `bytes` as the metalayer of `format`: `Err` with the reason when refused.
    pub fn parse_metalayer(
        format: crate::format::meta::Format,
        bytes: &[u8],
    ) -> Result<(), String> {
        crate::format::meta::parse(format, bytes)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// Parse `bytes` as an Arrow BatchArray's `arrow_schema`.
    #[cfg(feature = "arrow")]
    pub fn arrow_schema(bytes: &[u8]) -> Result<(), String> {
        crate::format::arrow_ipc::block_schema(bytes).map(drop)
    }

    /// Read `block` as an Arrow BatchArray's block (`schema`: the metalayer's
    /// `arrow_schema`): its number of items.
    #[cfg(feature = "arrow")]
    pub fn arrow_block(block: &[u8], schema: Option<&[u8]>) -> Result<usize, String> {
        crate::format::arrow_ipc::block_items(block, schema, None).map(|items| items.len())
    }
}
