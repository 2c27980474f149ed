//! [`Table`]: a python-blosc2 `CTable`, read.
//!
//! Layout: python-blosc2's, named in [`crate::format::ctable`] (`_meta`, `_valid_rows`,
//! `_cols/<name>` and its companions, `_indexes/`); how each column kind is stored there:
//! [`ColumnKind`].
//!
//! Computed columns have no storage; the schema's `computed_columns` list gives each one's
//! `expression` over operands `o0, o1, ...` bound to `col_deps`, and its `dtype`. They are
//! listed after the stored columns, as python-blosc2 lists them, and read by evaluating the
//! expression ([`crate::expr`]) over their dependencies' rows.
//!
//! Here: opening a table and what it holds; `schema.rs` its columns as recorded, `live.rs`
//! which rows are live, `rows.rs` fixed-width row reads, `utf8.rs` utf8 row reads,
//! `values.rs` strings, validity and values of every kind, `computed.rs` computed columns,
//! `summary.rs` python's block summaries, `arrow.rs` rows as Arrow.

#![forbid(unsafe_code)]

use std::path::Path;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::store::Store;

#[cfg(feature = "arrow")]
mod arrow;
#[cfg(feature = "arrow")]
pub use arrow::StringRows;
mod computed;
mod kind;
mod live;
mod rows;
mod schema;
mod summary;
mod utf8;
mod values;

pub use kind::ColumnKind;
pub(crate) use live::LiveRows;
use rows::rows_slice;
pub(crate) use schema::number;
use schema::parse_columns;
pub use schema::{Column, Computed};
pub use summary::{BlockSummary, Bound, Segment};

/// A python-blosc2 `CTable` opened for reading: its schema, live rows and columns.
///
/// ```
/// let t = b2nd::Table::open("tests/data/tables/basic.b2z")?;
/// let ids: Vec<i64> = t.read_column("id")?; // live rows only
/// assert_eq!(ids.len() as u64, t.n_rows());
/// # Ok::<(), b2nd::Error>(())
/// ```
pub struct Table {
    store: Store,
    /// The table's root key (`""` for a table that is the whole store).
    root: String,
    schema: String,
    columns: Vec<Column>,
    /// Which physical rows are live.
    valid: LiveRows,
    /// The arrays read so far, by key, kept open: every read of a column shares one frame
    /// (its parsed index, and over a URL its chunk cache and fetches ahead).
    arrays: std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<Array>>>,
    /// The last block each recent range read of a variable-length column's arrays decoded,
    /// for the read of the rows after them (`utf8`).
    tails: utf8::Tails,
    /// Where the column arrays' reads run.
    threads: crate::parallel::Threads,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("store", &self.store.path())
            .field("root", &self.root)
            .field("n_rows", &self.valid.live())
            .field("columns", &self.columns.len())
            .finish()
    }
}

// Opening a table is the store's, like its arrays and super-chunks; the method lives here,
// above `store/`, which knows nothing of tables.
impl Store {
    /// Open the CTable stored under `key` (`/` for a store that is a table): the one way
    /// to open a table inside a store, beside [`Store::open_array`] and
    /// [`Store::open_schunk`]. The table reads its columns through a store of its own,
    /// opened again from this store's path.
    ///
    /// ```
    /// let store = b2nd::Store::open("tests/data/tables/basic.b2z")?;
    /// let t = store.open_table("/")?;
    /// assert!(t.n_rows() > 0);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn open_table(&self, key: &str) -> Result<Table> {
        Table::from_store(self.reopen()?, key)
    }
}

impl Table {
    /// Open a table saved on its own (`CTable(..., urlpath="t.b2z")`, `.b2z` or `.b2d`); a
    /// table inside a TreeStore is opened with [`Store::open_table`].
    pub fn open(path: impl AsRef<Path>) -> Result<Table> {
        Table::from_store(Store::open(path)?, "/")
    }

    /// Open the table stored as one object (a `.b2z`) at `url` (feature `remote`; URLs as
    /// [`Array::open_url`] takes them): its columns are read by ranges, column by column.
    #[cfg(feature = "remote")]
    pub fn open_url(url: &str) -> Result<Table> {
        Table::open_url_with(url, &crate::storage::RemoteOptions::new())
    }

    /// [`Table::open_url`] with explicit options.
    #[cfg(feature = "remote")]
    pub fn open_url_with(url: &str, options: &crate::storage::RemoteOptions) -> Result<Table> {
        Table::from_store(Store::open_url_with(url, options)?, "/")
    }

    /// The table under `key` (`/`: the store itself) of `store`, which the table keeps
    /// (see [`Store::open_table`]).
    pub(crate) fn from_store(store: Store, key: &str) -> Result<Table> {
        let root = key.trim_end_matches('/').to_string();
        let bad = |reason: String| Error::Store {
            path: store.path().display().to_string(),
            reason: format!(
                "table {}: {reason}",
                if root.is_empty() { "/" } else { &root }
            ),
        };
        let meta_key = ctable::meta_key(&root);
        if !store.contains(&meta_key) {
            return Err(bad("no `_meta` manifest: not a table".into()));
        }
        let meta = store.open_schunk(&meta_key)?;
        match meta.attr("kind")? {
            Some(Value::Str(k)) if k == "ctable" => {}
            Some(Value::Bytes(k)) if k == b"ctable" => {}
            other => return Err(bad(format!("manifest kind {other:?}, not \"ctable\""))),
        }
        let schema = match meta.attr("schema")? {
            Some(Value::Str(s)) => s,
            Some(Value::Bytes(b)) => {
                String::from_utf8(b).map_err(|_| bad("schema is not UTF-8".into()))?
            }
            other => return Err(bad(format!("no schema text in the manifest ({other:?})"))),
        };
        let parsed =
            crate::format::json::parse(&schema).map_err(|e| bad(format!("schema: {e}")))?;
        let columns = parse_columns(&parsed).map_err(|e| bad(format!("schema: {e}")))?;
        let valid_key = ctable::valid_rows_key(&root);
        let valid_arr = store.open_array(&valid_key)?;
        if valid_arr.ndim() != 1 || valid_arr.dtype_str() != "|b1" {
            return Err(bad(format!(
                "`_valid_rows` is {} of shape {:?}, not a 1-d bool array",
                valid_arr.dtype_str(),
                valid_arr.shape()
            )));
        }
        // Blocks stored as runs of 1 (what python writes for a table without deletions) say
        // every row is live without decoding a flag.
        let valid = match valid_arr.uniform_byte()? {
            Some(1) => LiveRows::all(
                usize::try_from(valid_arr.shape()[0])
                    .map_err(|_| bad("`_valid_rows` is longer than the address space".into()))?,
            ),
            _ => LiveRows::new(valid_arr.read_bytes()?).map_err(|(index, value)| {
                bad(format!("`_valid_rows` item {index} is {value}, not a bool"))
            })?,
        };
        let t = Table {
            store,
            root,
            schema,
            columns,
            valid,
            arrays: Default::default(),
            tails: Default::default(),
            threads: Default::default(),
        };
        // Every readable column must exist and cover the physical rows.
        for c in t
            .columns
            .iter()
            .filter(|c| c.is_fixed_width() && c.computed.is_none())
        {
            let a = t.column_shared(&c.name)?;
            if a.ndim() == 0 || a.shape()[0] < t.physical_rows() {
                return Err(t.bad(
                    &c.name,
                    format!(
                        "its array has shape {:?}, fewer rows than the table's {}",
                        a.shape(),
                        t.physical_rows()
                    ),
                ));
            }
            // One value per row: only `ndarray` columns hold a sub-array per row.
            if *c.kind() != ColumnKind::NdArray && a.ndim() != 1 {
                return Err(t.bad(
                    &c.name,
                    format!(
                        "a {} column stored as an array of shape {:?}: one value per row needs 1 dimension",
                        c.kind(),
                        a.shape()
                    ),
                ));
            }
        }
        Ok(t)
    }

    pub(crate) fn bad(&self, column: &str, reason: String) -> Error {
        Error::Store {
            path: self.store.path().display().to_string(),
            reason: format!(
                "table {}: column {column:?}: {reason}",
                if self.root.is_empty() {
                    "/"
                } else {
                    &self.root
                }
            ),
        }
    }

    /// Live rows (deleted rows excluded).
    pub fn n_rows(&self) -> u64 {
        self.valid.live()
    }

    /// Physical rows, deleted ones included.
    pub fn physical_rows(&self) -> u64 {
        self.valid.physical()
    }

    /// The columns, in schema order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Result<&Column> {
        self.columns.iter().find(|c| c.name == name).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "no column {name:?} (columns: {})",
                self.columns
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// The table's user attributes (python-blosc2's `CTable.attrs` / `vlmeta`, kept in the
    /// `_vlmeta` super-chunk), in stored order; none when the table has no `_vlmeta`.
    pub fn attrs(&self) -> Result<Vec<(String, Value)>> {
        let key = format!("{}/_vlmeta", self.root);
        if !self.store.contains(&key) {
            return Ok(Vec::new());
        }
        self.store.open_schunk(&key)?.attrs()
    }

    /// User attribute `name` (see [`Table::attrs`]), `None` if absent.
    pub fn attr(&self, name: &str) -> Result<Option<Value>> {
        Ok(self
            .attrs()?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v))
    }

    /// The schema as stored (JSON text).
    pub fn schema_json(&self) -> &str {
        &self.schema
    }

    /// The names of the table's generated (materialized) columns: stored columns
    /// python-blosc2 computes from others when rows are appended without them
    /// (`add_generated_column`; the schema's `materialized_columns`).
    pub fn generated_columns(&self) -> Vec<String> {
        crate::format::json::parse(&self.schema)
            .ok()
            .and_then(|s| {
                s.get("materialized_columns")
                    .and_then(Value::as_slice)
                    .map(|l| {
                        l.iter()
                            .filter_map(|g| g.get("name").and_then(Value::as_str))
                            .map(str::to_string)
                            .collect()
                    })
            })
            .unwrap_or_default()
    }

    /// The store key of `part` of column `name`.
    pub(crate) fn key(&self, name: &str, part: Part) -> String {
        ctable::column_key(&self.root, name, part)
    }

    /// The store the table lives in.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The table's root key (`""`: the whole store).
    pub(crate) fn root(&self) -> &str {
        &self.root
    }

    /// Which physical rows are live.
    pub(crate) fn live_rows(&self) -> &LiveRows {
        &self.valid
    }

    /// The array holding a fixed-width column's values for every physical row (deleted rows
    /// and null slots included).
    pub fn column_array(&self, name: &str) -> Result<Array> {
        let c = self.column(name)?;
        if !c.is_fixed_width() || c.computed.is_some() {
            return Err(self.unsupported(c));
        }
        self.store.open_array(&self.key(name, Part::Values))
    }

    /// The rows one chunk and one block of the table's first stored fixed-width column
    /// hold: how reads of its rows are best cut (each chunk read by one reader, each batch a
    /// block). `None` when the table has no such column. The column's array is the one the
    /// table's reads share (opened once).
    ///
    /// ```
    /// let t = b2nd::Table::open("tests/data/tables/basic.b2z")?;
    /// let (chunk, block) = t.row_grid().expect("a table of numeric columns");
    /// let id = t.column_array("id")?;
    /// assert_eq!((chunk, block), (id.chunks()[0], id.blocks()[0]));
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn row_grid(&self) -> Option<(u64, u64)> {
        let a = self
            .columns
            .iter()
            .find_map(|c| self.column_shared(&c.name).ok())?;
        let along = |v: &[u64]| v.first().copied().unwrap_or(1).max(1);
        Some((along(a.chunks()), along(a.blocks())))
    }

    /// Where the reads of the table's columns run (default: rayon's global pool, see
    /// [`Threads`](crate::Threads)). A caller that reads many row ranges at once, each on a
    /// thread of its own (a query engine's partitions), gives [`Threads::Single`] so that a
    /// read does not also wake threads to decode its blocks.
    ///
    /// [`Threads::Single`]: crate::Threads::Single
    ///
    /// ```
    /// use b2nd::{Table, Threads};
    /// let path = "tests/data/tables/basic.b2z";
    /// let one = Table::open(path)?.with_threads(Threads::Single);
    /// let n = one.n_rows();
    /// let ids: Vec<i64> = one.read_rows("id", 0..n)?;
    /// assert_eq!(ids, Table::open(path)?.read_rows::<i64>("id", 0..n)?);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn with_threads(mut self, threads: crate::parallel::Threads) -> Table {
        let arrays = self.arrays.get_mut().unwrap_or_else(|e| e.into_inner());
        let open = std::mem::take(arrays);
        for (key, a) in open {
            // An array no read holds is given the threads; one still held is opened again
            // when next read.
            if let Ok(a) = std::sync::Arc::try_unwrap(a) {
                arrays.insert(key, std::sync::Arc::new(a.with_threads(threads.clone())));
            }
        }
        self.threads = threads;
        self
    }

    /// The array at `key`, opened once and shared by the table's reads.
    fn shared_array(&self, key: &str) -> Result<std::sync::Arc<Array>> {
        let mut arrays = self.arrays.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = arrays.get(key) {
            return Ok(a.clone());
        }
        let a = std::sync::Arc::new(
            self.store
                .open_array(key)?
                .with_threads(self.threads.clone()),
        );
        arrays.insert(key.to_string(), a.clone());
        Ok(a)
    }

    /// A hint for a table opened from a URL: live rows `rows` of the fixed-width `columns`
    /// will be read soon, in reads of a few blocks each (a query's partition reading its
    /// rows in batches). When the rows cover a good share (an eighth or more) of the chunks
    /// holding them, those chunks are fetched in the background, and each read takes its
    /// blocks as soon as their bytes arrived. Nothing for a local table, for other columns,
    /// or for fewer rows (their reads fetch only the blocks they need: better read in one
    /// go, one request a column). Whether every one of `columns` is fetched so.
    pub fn fetch_rows_ahead(&self, columns: &[&str], rows: std::ops::Range<u64>) -> bool {
        let physical = match self.valid.consecutive(rows.clone()) {
            Some(span) => span.start as u64..span.end as u64,
            None => {
                let picked = self.live_range(rows);
                match (picked.first(), picked.last()) {
                    (Some(&a), Some(&b)) => a as u64..b as u64 + 1,
                    _ => return false,
                }
            }
        };
        let mut all = true;
        for name in columns {
            all &= self
                .column_shared(name)
                .is_ok_and(|a| a.fetch_rows_ahead(physical.clone()));
        }
        all
    }

    /// Column `name`'s array (a fixed-width column), shared by the table's reads.
    fn column_shared(&self, name: &str) -> Result<std::sync::Arc<Array>> {
        let c = self.column(name)?;
        if !c.is_fixed_width() || c.computed.is_some() {
            return Err(self.unsupported(c));
        }
        self.shared_array(&self.key(name, Part::Values))
    }

    fn unsupported(&self, c: &Column) -> Error {
        if let Some(cc) = &c.computed {
            return self.bad(
                &c.name,
                format!(
                    "a computed column ({}) has no array: its values are read by evaluating it",
                    cc.readable()
                ),
            );
        }
        self.bad(
            &c.name,
            format!(
                "a {} column is not one fixed-width array: read it with read_values{}",
                c.kind,
                if c.kind == ColumnKind::Utf8 {
                    " or read_utf8"
                } else {
                    ""
                }
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The live flags of a python table without deletions (`nested.b2z`: chunks of one row,
    /// stored as is) say every row is live undecoded; a table with deletions needs its flags
    /// decoded. Both open to python's row counts (`tables_read_as_python_reads_them` checks
    /// every value). Flags stored as runs: the test below.
    #[test]
    fn live_flags_of_python_tables_are_read_from_their_chunks() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tables");
        for (name, runs) in [
            ("nested.b2z", true),
            ("kinds.b2z", false),
            ("basic.b2z", false),
        ] {
            let store = Store::open(dir.join(name)).unwrap();
            let flags = store.open_array("/_valid_rows").unwrap();
            let uniform = flags.uniform_byte().unwrap();
            assert_eq!(uniform, runs.then_some(1), "{name}");
            let t = Table::open(dir.join(name)).unwrap();
            let decoded = LiveRows::new(flags.read_bytes().unwrap()).unwrap();
            assert_eq!(t.n_rows(), decoded.live(), "{name}");
            assert_eq!(t.physical_rows(), decoded.physical(), "{name}");
            assert_eq!(t.valid.end(), decoded.end(), "{name}");
        }
    }

    /// Flags whose last block holds padding past the last row (stored as data, not a run)
    /// read that block to tell; a deleted row, in a run block or a data block, is no one value.
    #[test]
    fn flags_with_a_padded_last_block_read_that_block_to_tell() {
        use crate::write::ArrayBuilder;
        let flags = |rows: usize, zero: Option<usize>| {
            let mut v = vec![true; rows];
            if let Some(z) = zero {
                v[z] = false;
            }
            let bytes = ArrayBuilder::for_type::<bool>(&[rows as u64])
                .chunks(&[4096])
                .blocks(&[1024])
                .to_vec(&v)
                .unwrap();
            Array::from_bytes(bytes).unwrap()
        };
        assert_eq!(flags(3000, None).uniform_byte().unwrap(), Some(1));
        assert_eq!(flags(8192, None).uniform_byte().unwrap(), Some(1));
        assert_eq!(flags(6000, None).uniform_byte().unwrap(), Some(1));
        for zero in [0, 1500, 2999] {
            assert_eq!(
                flags(3000, Some(zero)).uniform_byte().unwrap(),
                None,
                "{zero}"
            );
        }
    }
}
