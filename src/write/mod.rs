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

use std::path::{Path, PathBuf};

use crate::codec::filters;
use crate::codec::RustCodec;
use crate::error::{Error, Result};
use crate::ffi::{Cctx, CompressParams, Schunk};
use crate::format::frame::Frame;
use crate::format::meta::{self, Format};
use crate::model::attrs::Value;
use crate::model::dtype::{ByteOrder, Dtype};
use crate::model::element::Element;
use crate::model::geometry::Geometry;
use crate::model::region::Region;

mod builder;
mod derived;
mod edit;
mod inplace;
mod options;
mod staging;
mod store;
mod summary;
mod table;
mod writer;

pub use crate::model::codec::{Codec, Filter};
pub use builder::ArrayBuilder;
use builder::Plan;
pub use edit::{delete_attrs, set_attrs};
pub use inplace::ArrayMut;
pub use options::{default_chunks_blocks, Target};
use staging::{parent_dir, Staging};
pub use store::StoreBuilder;
pub use table::TableBuilder;
pub use writer::Writer;
