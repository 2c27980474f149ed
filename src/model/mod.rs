//! The model layer: what an array is, independent of its bytes on disk: [`dtype`] (NumPy
//! dtypes), [`geometry`] (shape, chunks, blocks and the index arithmetic between them),
//! [`attrs`] (vlmeta values with python-blosc2's conventions), [`element`] (the Rust types
//! typed reads produce) and `selection` (NumPy basic indexing: [`crate::Slice`]).

pub mod attrs;
pub mod dtype;
pub(crate) mod element;
pub(crate) mod geometry;
pub(crate) mod selection;
