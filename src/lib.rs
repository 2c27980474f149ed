//! # b2nd
//!
//! Read (and write) Blosc2 N-dimensional arrays — the `.b2nd` files python-blosc2 writes, and
//! legacy `caterva` files — from Rust, through c-blosc2.
//!
//! ```no_run
//! use b2nd::Array;
//!
//! let a = Array::open("tests/data/attrs_all.b2nd")?;
//! println!("shape {:?}, chunks {:?}, blocks {:?}, dtype {}", a.shape(), a.chunks(), a.blocks(), a.dtype());
//! let values: Vec<i32> = a.read()?;          // typed, checked against the dtype
//! let raw: Vec<u8> = a.read_bytes()?;         // any dtype, C order
//! if let Some(unit) = a.attr("unit")? {       // vlmeta attributes
//!     println!("unit = {unit:?}");
//! }
//! # Ok::<(), b2nd::Error>(())
//! ```
//!
//! Layers: [`ffi`](crate) wraps c-blosc2 (the only `unsafe` code); [`frame`] opens frames;
//! [`meta`] parses metalayers; [`dtype`] parses NumPy dtype strings; [`Geometry`] validates
//! shapes and maps chunks and blocks to array coordinates; [`Array`] reads, decoding chunks in
//! parallel; [`write`](mod@write) writes. Filters the linked c-blosc2 2.15 lacks or encodes differently
//! from c-blosc2 3.x (byte-group SHUFFLE, BYTEDELTA, ...) are done in Rust, per block, with
//! SSE2 kernels where available.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod array;
pub mod attrs;
mod cells;
mod chunk;
mod chunk_iter;
mod codecs;
pub mod dtype;
mod element;
mod error;
mod ffi;
mod filters;
pub mod frame;
mod geometry;
mod kernels;
pub mod meta;
mod ndlz;
pub mod npy;
mod parallel;
mod read;
mod slice;
mod typed;
pub mod write;
mod zfp;

pub use array::{Array, MAX_ATTR_BYTES};
pub use attrs::Value;
pub use chunk_iter::{ChunkData, ChunkIter};
pub use dtype::{ByteOrder, Dtype};
pub use element::Element;
pub use error::{Error, Result};
pub use frame::Storage;
pub use geometry::{Geometry, GeometryError};
pub use meta::Format;
pub use parallel::Threads;
pub use slice::{Slice, SliceItem, SliceSlabs};
pub use write::{ArrayBuilder, Codec, Filter, Target, Writer};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
