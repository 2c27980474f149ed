//! SQL over python-blosc2's tables (CTables) and N-d arrays with
//! [DataFusion](https://datafusion.apache.org), read by [b2nd](https://docs.rs/b2nd).
//!
//! - [`B2ndTable`]: a table or an array as a DataFusion `TableProvider` (projection, limit
//!   and numeric comparisons pushed down, the last skipping blocks of rows by python-blosc2's
//!   SUMMARY indexes or zone maps b2nd computes; filters over one string column applied in
//!   the scan, on a batch's few distinct strings; partitions of about equal rows; row counts,
//!   column bounds and no-NULL facts for the planner).
//! - [`B2ndSource`]: its scan, a DataFusion file scan (`DataSourceExec`) whose partitions are
//!   row ranges ([`Piece`]s) of its files ([`Source`]s).
//! - [`B2ndCodec`]: the datafusion-proto extension codec that ships scans to other processes,
//!   and [`B2ndLogicalCodec`] the one that ships tables in logical plans (to a Ballista
//!   scheduler).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use datafusion::prelude::SessionContext;
//! let ctx = SessionContext::new();
//! let t = b2nd_datafusion::B2ndTable::table("../tests/data/tables/basic.b2z")?;
//! ctx.register_table("t", std::sync::Arc::new(t))?;
//! let df = ctx.sql("SELECT id, score FROM t WHERE score IS NOT NULL ORDER BY id LIMIT 2").await?;
//! let batches = df.collect().await?;
//! assert!(batches.iter().map(|b| b.num_rows()).sum::<usize>() <= 2);
//! # Ok::<(), datafusion::error::DataFusionError>(())
//! # }).unwrap();
//! ```

#![forbid(unsafe_code)]

mod codec;
mod dml;
mod files;
mod guard;
mod live;
mod provider;
mod prune;
mod rows;
mod scan;
mod source;
mod strings;
mod terms;

pub use codec::{B2ndCodec, B2ndLogicalCodec};
pub use dml::B2ndDmlExec;
pub use guard::{session_context, B2ndQueryPlanner};
pub use provider::B2ndTable;
pub use scan::{B2ndSource, Piece};
pub use source::{Kind, Source};
