//! Writing arrays python-blosc2 opens as its own: [`ArrayBuilder`], the streaming [`Writer`],
//! and attribute edits on existing files.
//!
//! Every write goes through one mechanism: data arrives in C order and is cut into *slabs*
//! of whole chunk rows along the first dimension; each slab's chunks are gathered into the
//! extended-chunk block layout (padding zeroed), compressed in parallel (all-zero chunks
//! become zero special chunks, as python-blosc2 writes them) and appended in order. Files
//! are written to a temporary path in the target directory and renamed on success, so an
//! error leaves nothing at the target.

#![forbid(unsafe_code)]

mod appender;
mod batch;
mod builder;
mod derived;
mod edit;
mod inplace;
mod options;
mod plan;
mod staging;
mod store;
mod summary;
mod table;
mod table_mut;
mod writer;

pub use crate::model::codec::{Codec, Filter};
pub use builder::ArrayBuilder;
pub use edit::{delete_attrs, set_attrs};
pub use inplace::ArrayMut;
pub use options::{default_chunks_blocks, Target};
pub use store::StoreBuilder;
pub use table::TableBuilder;
pub use table_mut::{NewColumn, Rows, TableMut};
pub use writer::Writer;
