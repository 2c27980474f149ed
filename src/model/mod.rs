//! The model layer: what an array is, independent of its bytes on disk: [`dtype`] (NumPy
//! dtypes), [`geometry`] (shape, chunks, blocks and the layout of items in chunks), `region` (regions
//! of grids and all index arithmetic: strides, ravel, the odometer),
//! [`attrs`] (vlmeta values with python-blosc2's conventions), [`element`] (the Rust types
//! typed reads produce), `durability` ([`crate::Durability`]: what in-place changes and whole writes survive), `chunk_data` (a decoded chunk and its region), `codec` ([`crate::Codec`], [`crate::Filter`]) on `ids` (the one
//! registry of codec and filter ids and names) and `selection` (NumPy basic indexing: [`crate::Slice`]).

#![forbid(unsafe_code)]

pub mod attrs;
pub(crate) mod chunk_data;
pub(crate) mod codec;
pub mod dtype;
pub(crate) mod durability;
pub(crate) mod element;
pub(crate) mod geometry;
pub(crate) mod ids;
pub(crate) mod region;
pub(crate) mod selection;
