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

#![forbid(unsafe_code)]

use std::path::Path;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;
use crate::model::element::{self, Element};
use crate::model::expr::{self, Expression};
use crate::store::Store;

#[cfg(feature = "arrow")]
mod arrow;
#[cfg(feature = "arrow")]
pub use arrow::StringRows;
mod kind;
mod live;
mod summary;
mod utf8;

pub use kind::ColumnKind;
pub(crate) use live::LiveRows;
pub use summary::{BlockSummary, Bound, Segment};

/// One column of a table's schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    name: String,
    kind: ColumnKind,
    nullable: bool,
    null_value: Option<Value>,
    mask: bool,
    /// `timestamp` columns: the unit (`s`, `ms`, `us`, `ns`, ...).
    unit: Option<String>,
    /// A computed column's definition (it has no storage).
    computed: Option<Computed>,
    /// The schema entry as stored (a `struct` column's `fields` are read from it).
    spec: Value,
}

/// A computed column's definition: python-blosc2's `add_computed_column`, stored in the
/// table's schema and evaluated when read.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    /// A DSL kernel's name (its source is in `expression`); `None` for expressions.
    kernel: Option<String>,
    expression: String,
    deps: Vec<String>,
    dtype: String,
    /// The parsed expression, or why b2nd cannot evaluate this column.
    parsed: std::result::Result<Expression, String>,
}

impl Computed {
    /// The expression as stored, over operands `o0, o1, ...` (`(o0 * 2 + o1)`); a DSL
    /// kernel's source for DSL columns.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The columns bound to `o0, o1, ...`, in order.
    pub fn dependencies(&self) -> &[String] {
        &self.deps
    }

    /// The expression with its operands named (`(a * 2 + b)`), as python-blosc2 shows it;
    /// `kernel(a, b)` for a DSL kernel.
    pub fn readable(&self) -> String {
        if let Some(k) = &self.kernel {
            return format!("{k}({})", self.deps.join(", "));
        }
        let mut out = String::new();
        let b = self.expression.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            if word_start && b[i] == b'o' {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                let end = i + 1 + digits;
                let word_end = b
                    .get(end)
                    .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
                if digits > 0 && word_end {
                    if let Some(dep) = self.expression[i + 1..end]
                        .parse::<usize>()
                        .ok()
                        .and_then(|k| self.deps.get(k))
                    {
                        out.push_str(dep);
                        i = end;
                        continue;
                    }
                }
            }
            let ch = self.expression[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
        out
    }

    /// The result dtype python-blosc2 recorded (`float64`, `int32`, `bool`, ...).
    pub fn dtype(&self) -> &str {
        &self.dtype
    }

    /// `Ok` when b2nd evaluates this column; else why every read of it is refused (a DSL
    /// kernel, a function b2nd does not know, ...).
    pub fn evaluable(&self) -> std::result::Result<(), &str> {
        self.parsed.as_ref().map(|_| ()).map_err(String::as_str)
    }
}

impl Column {
    /// The column's name (`a.b` for a field of a struct column).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The schema kind ([`ColumnKind`]: `int64`, `float32`, `bool`, `string`, `bytes`,
    /// `timestamp`, `ndarray`, `utf8`, `dictionary`, `list`, `vlstring`, ...); compares
    /// equal to its name (`c.kind() == "utf8"`).
    pub fn kind(&self) -> &ColumnKind {
        &self.kind
    }

    /// Whether the column may hold nulls.
    pub fn nullable(&self) -> bool {
        self.nullable
    }

    /// Whether nulls are stored in a `.notnull` mask (else by an in-band `null_value`).
    pub fn mask_nulls(&self) -> bool {
        self.mask
    }

    /// The in-band value standing for a null (sentinel-stored nullable columns).
    pub(crate) fn null_value(&self) -> Option<&Value> {
        self.null_value.as_ref()
    }

    /// The schema entry as stored.
    pub(crate) fn spec(&self) -> &Value {
        &self.spec
    }

    /// The value the schema declares for rows that give none (`Some(Value::Nil)`: null);
    /// `None` when it declares no default (an append must give the column). Bytes, which
    /// python-blosc2 stores as `{"__bytes__": true, "base64": ...}`, are `Value::Bytes`.
    pub fn default_value(&self) -> Option<Value> {
        self.spec.get("default").map(declared)
    }

    /// A computed column's definition; `None` for stored columns. A computed column's
    /// [`Column::kind`] is the kind of its values (`float64`, `bool`, ...).
    pub fn computed(&self) -> Option<&Computed> {
        self.computed.as_ref()
    }

    /// Whether the column is one fixed-width array (read with [`Table::read_column`] and
    /// [`Table::read_column_bytes`]); the others (`utf8`, `dictionary`, `list`, `struct`,
    /// `vlstring`, `vlbytes`, `object`) read with [`Table::read_values`].
    pub fn is_fixed_width(&self) -> bool {
        self.kind.is_fixed_width()
    }
}

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

    /// The physical rows of live rows `rows`.
    fn live_range(&self, rows: std::ops::Range<u64>) -> Vec<usize> {
        self.valid.physical_of(rows)
    }

    /// The physical rows that are live.
    fn live(&self) -> impl Iterator<Item = usize> + '_ {
        self.valid.iter()
    }

    /// Live rows among physical rows `0 .. physical` (the position, among live rows, of the
    /// first live row at or after `physical`): maps physical segments, such as those of a
    /// [`BlockSummary`], to the live rows readers count.
    pub fn live_rows_before(&self, physical: u64) -> u64 {
        self.valid.before(physical)
    }

    /// A fixed-width column's live rows as raw bytes in C order, with its dtype and the shape
    /// of the result (`(n_rows, *item_shape)`), as python-blosc2's `t[name].to_numpy()`
    /// returns them (null slots hold whatever the column stores there).
    pub fn read_column_bytes(&self, name: &str) -> Result<(Dtype, Vec<u64>, Vec<u8>)> {
        self.read_rows_bytes(name, 0..self.valid.live())
    }

    /// Live rows `rows` (counted among live rows, as python-blosc2's `t[name][a:b]`) of a
    /// fixed-width column, as [`Table::read_column_bytes`]; only the chunks holding them
    /// are read.
    pub fn read_rows_bytes(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<(Dtype, Vec<u64>, Vec<u8>)> {
        let mut out = Vec::new();
        let (dtype, shape) = self.read_rows_bytes_into(name, rows, &mut out)?;
        Ok((dtype, shape, out))
    }

    /// [`Table::read_rows_bytes`] into `out` (resized to the rows' bytes): a reader of many
    /// row ranges reuses one buffer, writing no fresh pages for each range.
    pub fn read_rows_bytes_into(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        out: &mut Vec<u8>,
    ) -> Result<(Dtype, Vec<u64>)> {
        self.check_live_rows(&rows)?;
        if let Some(cc) = &self.column(name)?.computed {
            let (dtype, shape, bytes) = self.computed_rows(name, cc, rows)?;
            *out = bytes;
            return Ok((dtype, shape));
        }
        let a = self.column_shared(name)?;
        let row_items: u64 = a.shape()[1..].iter().product();
        let row_bytes = usize::try_from(row_items)
            .ok()
            .and_then(|r| r.checked_mul(a.itemsize()))
            .ok_or_else(|| self.bad(name, "rows too large".into()))?;
        let mut shape = vec![rows.end - rows.start];
        shape.extend_from_slice(&a.shape()[1..]);
        self.gather_live(name, rows, row_bytes, out, |span, buf| {
            a.read_slice_bytes_into(&rows_slice(&span), buf)?;
            Ok(true)
        })?;
        Ok((self.dtype_of(name, &a)?, shape))
    }

    /// Live rows `rows` of a stored little-endian `string` column (NumPy `<U`) as one byte a
    /// character into `out` (`chars` bytes a row: the strings' Latin-1, NUL-padded), read
    /// without unshuffling the column's other three bytes a character: `Ok(false)`, `out`
    /// unspecified, when a character read is beyond U+00FF or the column is not such a column
    /// (computed, big-endian, of items): read the rows whole instead.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
    pub(crate) fn read_rows_latin1_into(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        self.check_live_rows(&rows)?;
        if self.column(name)?.computed.is_some() {
            return Ok(false);
        }
        let a = self.column_shared(name)?;
        let little = matches!(
            self.dtype_of(name, &a)?,
            Dtype::Unicode {
                order: crate::model::dtype::ByteOrder::Little,
                ..
            }
        );
        if !little || a.shape().len() != 1 {
            return Ok(false);
        }
        self.gather_live(name, rows, a.itemsize() / 4, out, |span, buf| {
            a.read_rows_narrow_into(span.start as u64..span.end as u64, buf)
        })
    }

    /// An error unless `rows` are live rows of the table.
    fn check_live_rows(&self, rows: &std::ops::Range<u64>) -> Result<()> {
        if rows.start > rows.end || rows.end > self.valid.live() {
            return Err(Error::InvalidArgument(format!(
                "rows {}..{} of a table of {} rows",
                rows.start,
                rows.end,
                self.valid.live()
            )));
        }
        Ok(())
    }

    /// Live rows `rows` of column `name`, `row_bytes` a row, into `out` (resized to their
    /// bytes), physical rows read by `read` into a buffer of exactly their bytes: one read
    /// when no row among them is deleted, else one of the rows from the first live one to
    /// the last, the live ones then picked. `false` from `read` is handed back (`out`
    /// unspecified).
    fn gather_live(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        row_bytes: usize,
        out: &mut Vec<u8>,
        mut read: impl FnMut(std::ops::Range<usize>, &mut [u8]) -> Result<bool>,
    ) -> Result<bool> {
        let too_large = || self.bad(name, "rows too large".into());
        if let Some(span) = self.valid.consecutive(rows.clone()) {
            // No deleted row among them: one read is the answer.
            let n = span.len().checked_mul(row_bytes).ok_or_else(too_large)?;
            // Every byte is written by the read: a longer buffer is cut, not cleared.
            crate::alloc::fit(out, n, "the rows")?;
            return if n > 0 { read(span, out) } else { Ok(true) };
        }
        let picked = self.live_range(rows);
        let (Some(&first), Some(&last)) = (picked.first(), picked.last()) else {
            out.clear();
            return Ok(true);
        };
        // The physical rows spanning the live ones asked for.
        let n = (last + 1 - first)
            .checked_mul(row_bytes)
            .ok_or_else(too_large)?;
        let mut span = Vec::new();
        crate::alloc::fit(&mut span, n, "the rows")?;
        if !read(first..last + 1, &mut span)? {
            return Ok(false);
        }
        out.clear();
        out.reserve(picked.len() * row_bytes);
        for i in &picked {
            let at = (i - first) * row_bytes;
            out.extend_from_slice(&span[at..at + row_bytes]);
        }
        Ok(true)
    }

    /// Live rows `rows` of a fixed-width column as `T` (checked against its dtype).
    pub fn read_rows<T: Element + Default>(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<Vec<T>> {
        let stored = self.column(name)?.computed.is_none();
        if stored && rows.start <= rows.end && rows.end <= self.n_rows() {
            if let Some(span) = self.valid.consecutive(rows.clone()) {
                // No deleted row among them: read straight into the result.
                let a = self.column_shared(name)?;
                let dtype = self.dtype_of(name, &a)?;
                element::check::<T>(&dtype)?;
                let row_items: u64 = a.shape()[1..].iter().product();
                let n = usize::try_from(span.len() as u64 * row_items)
                    .map_err(|_| self.bad(name, "rows too large".into()))?;
                let mut out = vec![T::default(); n];
                if n > 0 {
                    T::fill_from_bytes(&mut out, &dtype, &mut |buf| {
                        a.read_slice_bytes_into(&rows_slice(&span), buf)
                    })?;
                }
                return Ok(out);
            }
        }
        let (dtype, shape, bytes) = self.read_rows_bytes(name, rows)?;
        element::check::<T>(&dtype)?;
        let n = shape.iter().product::<u64>() as usize;
        let mut out = vec![T::default(); n];
        T::fill_from_bytes(&mut out, &dtype, &mut |buf| {
            buf.copy_from_slice(&bytes);
            Ok(())
        })?;
        Ok(out)
    }

    /// The dtype of a computed column's values.
    fn computed_dtype(&self, name: &str, cc: &Computed) -> Result<Dtype> {
        numpy_type(&cc.dtype)
            .and_then(|s| Dtype::parse(s).ok())
            .ok_or_else(|| {
                self.bad(
                    name,
                    format!(
                        "a computed column ({}) of dtype {:?}, which b2nd does not evaluate",
                        cc.readable(),
                        cc.dtype
                    ),
                )
            })
    }

    /// Bounds of computed column `name`'s values on rows where each of its dependencies
    /// (in [`Computed::dependencies`] order) lies within `deps[i]` (finite, no NaN), after
    /// the cast to its recorded dtype; `None` when b2nd cannot bound them (see
    /// [`Expression::bounds`]), a dependency holds nulls (python evaluates over their
    /// placeholder slots), or the cast could wrap. Integer results are whole bounds.
    pub fn computed_bounds(&self, name: &str, deps: &[(f64, f64)]) -> Option<(f64, f64)> {
        let cc = self.column(name).ok()?.computed.as_ref()?;
        let e = cc.parsed.as_ref().ok()?;
        if deps.len() != cc.deps.len() {
            return None;
        }
        let mut types = Vec::with_capacity(deps.len());
        for (dep, r) in cc.deps.iter().zip(deps) {
            let c = self.column(dep).ok()?;
            if c.nullable() || c.computed.is_some() {
                return None;
            }
            let (dtype, item) = self.column_dtype(dep).ok()?;
            if !item.is_empty() {
                return None;
            }
            let s = dtype.to_numpy_str();
            let little = s
                .strip_prefix('>')
                .map_or(s.clone(), |rest| format!("<{rest}"));
            types.push((little, r.0, r.1));
        }
        let ops: Vec<(&str, f64, f64)> =
            types.iter().map(|(t, a, b)| (t.as_str(), *a, *b)).collect();
        let (lo, hi) = e.bounds(&ops)?;
        let out = self.computed_dtype(name, cc).ok()?;
        let (min, max, whole) = match out {
            Dtype::Float { size: 8, .. } => (f64::MIN, f64::MAX, false),
            Dtype::Float { size: 4, .. } => (f64::from(f32::MIN), f64::from(f32::MAX), false),
            Dtype::Float { size: 2, .. } => (-65504.0, 65504.0, false),
            Dtype::Int { size, .. } => {
                let m = 2f64.powi(size as i32 * 8 - 1);
                (-m, m - 1.0, true)
            }
            Dtype::UInt { size, .. } => (0.0, 2f64.powi(size as i32 * 8) - 1.0, true),
            _ => return None,
        };
        // Float results cast to an integer truncate toward zero: floor / ceil bound them.
        let (lo, hi) = if whole {
            (lo.floor(), hi.ceil())
        } else {
            (lo, hi)
        };
        (lo >= min && hi <= max).then_some((lo, hi))
    }

    /// Live rows `rows` of a computed column: its expression evaluated over its
    /// dependencies' rows (raw stored values, null slots included, as python-blosc2 does),
    /// in batches of rows so memory stays bounded by the batch, cast to the recorded dtype.
    fn computed_rows(
        &self,
        name: &str,
        cc: &Computed,
        rows: std::ops::Range<u64>,
    ) -> Result<(Dtype, Vec<u64>, Vec<u8>)> {
        const BATCH: u64 = 1 << 16;
        let refuse = |why: &str| {
            self.bad(
                name,
                format!(
                    "computed column ({}) cannot be evaluated: {why}",
                    cc.readable()
                ),
            )
        };
        let e = cc.parsed.as_ref().map_err(|why| refuse(why))?;
        let dtype = self.computed_dtype(name, cc)?;
        let kind = dtype.to_numpy_str();
        let mut out = Vec::with_capacity(
            usize::try_from(rows.end - rows.start)
                .unwrap_or(0)
                .saturating_mul(dtype.itemsize())
                .min(1 << 30),
        );
        let mut at = rows.start;
        while at < rows.end {
            let part = at..(at + BATCH).min(rows.end);
            let n = (part.end - part.start) as usize;
            let mut operands = Vec::with_capacity(cc.deps.len());
            for dep in &cc.deps {
                operands.push(self.operand(name, dep, part.clone())?);
            }
            let values = e
                .eval(&operands, n)
                .and_then(|v| v.astype(&kind))
                .and_then(|v| v.to_le_bytes())
                .map_err(|why| refuse(&why))?;
            out.extend_from_slice(&values);
            at = part.end;
        }
        Ok((dtype, vec![rows.end - rows.start], out))
    }

    /// Dependency `dep` of computed column `name`, live rows `rows`, as an operand.
    fn operand(&self, name: &str, dep: &str, rows: std::ops::Range<u64>) -> Result<expr::Column> {
        let d = self.column(dep).map_err(|_| {
            self.bad(
                name,
                format!("computed from column {dep:?}, which the table does not have"),
            )
        })?;
        if d.computed.is_some() || !d.is_fixed_width() {
            return Err(self.bad(
                name,
                format!(
                    "computed from column {dep:?}, a {} column: only stored fixed-width columns are operands",
                    if d.computed.is_some() { "computed" } else { d.kind.as_str() }
                ),
            ));
        }
        let (dtype, shape, mut bytes) = self.read_rows_bytes(dep, rows)?;
        if shape.len() != 1 {
            return Err(self.bad(
                name,
                format!("computed from {dep:?}, an ndarray column (one value per row needed)"),
            ));
        }
        let s = dtype.to_numpy_str();
        let kind_char = s.as_bytes().get(1).copied().unwrap_or(b'?');
        if matches!(kind_char, b'U' | b'S') {
            let strings = crate::read::typed::strings(&dtype, &bytes, "String")?;
            return Ok(expr::Column::Str(strings));
        }
        let isz = dtype.itemsize().max(1);
        let little = if let Some(rest) = s.strip_prefix('>') {
            for item in bytes.chunks_exact_mut(isz) {
                item.reverse();
            }
            format!("<{rest}")
        } else {
            s.clone()
        };
        expr::Column::from_le_bytes(&little, &bytes).map_err(|why| {
            self.bad(
                name,
                format!("computed from {dep:?}, whose values b2nd cannot evaluate: {why}"),
            )
        })
    }

    /// The dtype of a fixed-width column's values as python-blosc2 returns them, and the
    /// shape of one row's item (`[]` but for `ndarray` columns).
    pub fn column_dtype(&self, name: &str) -> Result<(Dtype, Vec<u64>)> {
        if let Some(cc) = &self.column(name)?.computed {
            return Ok((self.computed_dtype(name, cc)?, Vec::new()));
        }
        let a = self.column_shared(name)?;
        Ok((self.dtype_of(name, &a)?, a.shape()[1..].to_vec()))
    }

    fn dtype_of(&self, name: &str, a: &Array) -> Result<Dtype> {
        let c = self.column(name)?;
        Ok(match &c.unit {
            // Stored as int64; python-blosc2 hands them out as datetime64 of the unit.
            Some(unit) if a.dtype_str().ends_with("i8") => {
                let order = &a.dtype_str()[..1];
                Dtype::parse(&format!("{order}M8[{unit}]"))
                    .map_err(|e| self.bad(name, format!("timestamp unit {unit:?}: {e}")))?
            }
            _ => a.dtype().clone(),
        })
    }

    /// A fixed-width column's live rows as `T` (checked against its dtype).
    pub fn read_column<T: Element + Default>(&self, name: &str) -> Result<Vec<T>> {
        self.read_rows(name, 0..self.valid.live())
    }

    /// A fixed-width column's live rows as `T`, `None` for nulls (what
    /// [`Table::read_column`] and [`Table::read_validity`] give together).
    pub fn read_column_opt<T: Element + Default>(&self, name: &str) -> Result<Vec<Option<T>>> {
        let values = self.read_column::<T>(name)?;
        Ok(match self.read_validity(name)? {
            None => values.into_iter().map(Some).collect(),
            Some(valid) => values
                .into_iter()
                .zip(valid)
                .map(|(v, ok)| ok.then_some(v))
                .collect(),
        })
    }

    /// A text column's live rows as strings, `None` for nulls, whatever its kind: `string`
    /// (fixed-width `U`), `utf8`, `vlstring` or `dictionary` (of strings).
    pub fn read_strings(&self, name: &str) -> Result<Vec<Option<String>>> {
        let c = self.column(name)?;
        match &c.kind {
            ColumnKind::Utf8 => self.read_utf8(name),
            ColumnKind::String | ColumnKind::VlString | ColumnKind::Dictionary => {
                let valid = if c.kind == ColumnKind::String {
                    self.read_validity(name)?
                } else {
                    None
                };
                self.read_values(name)?
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        _ if valid.as_ref().is_some_and(|ok| !ok[i]) => Ok(None),
                        Value::Str(s) => Ok(Some(s)),
                        Value::Nil => Ok(None),
                        other => Err(self.bad(name, format!("row {i}: {other:?}, not a string"))),
                    })
                    .collect()
            }
            other => Err(self.bad(name, format!("a {other} column, not a text column"))),
        }
    }

    /// Which live rows of column `name` hold a value (`true`) rather than a null; `None`
    /// when the column is not nullable. Mask-stored nulls come from the `.notnull` array
    /// (absent: no nulls), sentinel-stored ones from comparing with `null_value` (`NaN`
    /// matching any NaN).
    pub fn read_validity(&self, name: &str) -> Result<Option<Vec<bool>>> {
        self.read_validity_rows(name, 0..self.valid.live())
    }

    /// [`Table::read_validity`] for live rows `rows` only (only the chunks of the mask, or
    /// of the column for sentinel nulls, holding them are read).
    pub fn read_validity_rows(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<Option<Vec<bool>>> {
        let c = self.column(name)?.clone();
        self.check_live_rows(&rows)?;
        let n = (rows.end - rows.start) as usize;
        if !c.nullable && c.null_value.is_none() {
            return Ok(None);
        }
        let mask_key = self.key(name, Part::NotNull);
        if self.store.contains(&mask_key) {
            let m = self.shared_array(&mask_key)?;
            if m.ndim() != 1 || m.dtype_str() != "|b1" || m.shape()[0] < self.physical_rows() {
                return Err(self.bad(
                    name,
                    format!(
                        "its `.notnull` mask is {} of shape {:?}",
                        m.dtype_str(),
                        m.shape()
                    ),
                ));
            }
            if let Some(span) = self.valid.consecutive(rows.clone()) {
                if span.is_empty() {
                    return Ok(Some(Vec::new()));
                }
                let bytes = m.read_slice_bytes(&rows_slice(&span))?;
                return Ok(Some(bytes.iter().map(|&b| b != 0).collect()));
            }
            let picked = self.live_range(rows.clone());
            let (Some(&first), Some(&last)) = (picked.first(), picked.last()) else {
                return Ok(Some(Vec::new()));
            };
            let span = m.read_slice_bytes(&[crate::model::selection::SliceItem::Range {
                start: Some(first as i64),
                stop: Some(last as i64 + 1),
                step: 1,
            }])?;
            return Ok(Some(picked.iter().map(|&i| span[i - first] != 0).collect()));
        }
        if matches!(
            c.kind,
            ColumnKind::Dictionary
                | ColumnKind::List
                | ColumnKind::VlString
                | ColumnKind::VlBytes
                | ColumnKind::Object
                | ColumnKind::Struct
        ) {
            // Nulls in the items themselves: a dictionary code of -1, a nil item.
            let values = self.read_values(name)?;
            return Ok(Some(
                values[rows.start as usize..rows.end as usize]
                    .iter()
                    .map(|v| !v.is_nil())
                    .collect(),
            ));
        }
        let Some(sentinel) = &c.null_value else {
            // Mask storage with no mask written yet (or no sentinel): every row holds a value.
            return Ok(Some(vec![true; n]));
        };
        if c.kind == ColumnKind::Utf8 {
            let Value::Str(sentinel) = sentinel else {
                return Err(self.bad(
                    name,
                    format!("a utf8 column whose null_value {sentinel:?} is not a string"),
                ));
            };
            let strings = self.utf8_rows(name, rows)?;
            return Ok(Some(
                (0..strings.len())
                    .map(|i| strings.row(i) != sentinel.as_bytes())
                    .collect(),
            ));
        }
        let (dtype, shape, bytes) = self.read_rows_bytes(name, rows)?;
        if shape.len() != 1 {
            return Err(self.bad(name, "sentinel nulls on an ndarray column".into()));
        }
        sentinel_validity(&dtype, &bytes, sentinel)
            .map(Some)
            .map_err(|why| self.bad(name, why))
    }

    /// Any column's live rows as msgpack-style values, as python-blosc2's `t[name][:]` gives
    /// them: `Nil` for nulls. Variable-length kinds (`list`, `vlstring`, `vlbytes`,
    /// `object`, `struct`) come from their BatchArray / ListArray (one item per physical
    /// row), `dictionary` columns from their int32 codes (-1: null) and their values,
    /// `utf8` from offsets and bytes, fixed-width columns from their numbers, bools and
    /// strings (other fixed-width dtypes: read them with [`Table::read_column_bytes`]).
    pub fn read_values(&self, name: &str) -> Result<Vec<Value>> {
        let c = self.column(name)?.clone();
        match &c.kind {
            ColumnKind::Utf8 => Ok(self
                .read_utf8(name)?
                .into_iter()
                .map(|s| s.map_or(Value::Nil, Value::Str))
                .collect()),
            ColumnKind::Dictionary => {
                let codes_arr = self.store.open_array(&self.key(name, Part::Values))?;
                if codes_arr.dtype_str() != "<i4" || codes_arr.ndim() != 1 {
                    return Err(self.bad(
                        name,
                        format!(
                            "dictionary codes are {} of shape {:?}, not 1-d int32",
                            codes_arr.dtype_str(),
                            codes_arr.shape()
                        ),
                    ));
                }
                let codes: Vec<i32> = codes_arr.read()?;
                if (codes.len() as u64) < self.physical_rows() {
                    return Err(self.bad(
                        name,
                        format!("{} codes for {} rows", codes.len(), self.physical_rows()),
                    ));
                }
                let values = self
                    .store
                    .open_schunk(&self.key(name, Part::Dict))?
                    .read_objects()?;
                self.live()
                    .map(|i| match codes[i] {
                        -1 => Ok(Value::Nil),
                        k => usize::try_from(k)
                            .ok()
                            .and_then(|k| values.get(k))
                            .cloned()
                            .ok_or_else(|| {
                                self.bad(
                                    name,
                                    format!(
                                        "row {i}: code {k} outside its {} values",
                                        values.len()
                                    ),
                                )
                            }),
                    })
                    .collect()
            }
            ColumnKind::List
            | ColumnKind::VlString
            | ColumnKind::VlBytes
            | ColumnKind::Object
            | ColumnKind::Struct => {
                let items = self
                    .store
                    .open_schunk(&self.key(name, Part::Values))?
                    .read_objects()?;
                if (items.len() as u64) < self.physical_rows() {
                    return Err(self.bad(
                        name,
                        format!(
                            "{} stored rows for the table's {}",
                            items.len(),
                            self.physical_rows()
                        ),
                    ));
                }
                Ok(self.live().map(|i| items[i].clone()).collect())
            }
            _ => {
                let (dtype, shape, bytes) = self.read_column_bytes(name)?;
                if shape.len() != 1 {
                    return Err(self.bad(
                        name,
                        "an ndarray column: read it with read_column_bytes".into(),
                    ));
                }
                let s = dtype.to_numpy_str();
                let isz = dtype.itemsize().max(1);
                let values: Vec<Value> = if matches!(s.as_bytes()[1], b'U' | b'S') {
                    crate::read::typed::strings(&dtype, &bytes, "String")?
                        .into_iter()
                        .map(Value::Str)
                        .collect()
                } else {
                    bytes
                        .chunks_exact(isz)
                        .map(|b| number(&s, b))
                        .collect::<Option<_>>()
                        .ok_or_else(|| {
                            self.bad(
                                name,
                                format!("{s} values: read them with read_column_bytes"),
                            )
                        })?
                };
                let valid = self.read_validity(name)?;
                Ok(values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| match &valid {
                        Some(ok) if !ok[i] => Value::Nil,
                        _ => v,
                    })
                    .collect())
            }
        }
    }
}

/// The columns of a parsed schema.
fn parse_columns(schema: &Value) -> std::result::Result<Vec<Column>, String> {
    let cols = schema
        .get("columns")
        .and_then(Value::as_slice)
        .ok_or("no `columns` list")?;
    let mut out: Vec<Column> = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("column {i} has no name"))?;
        let kind = c
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("column {name:?} has no kind"))?;
        if name.is_empty() || out.iter().any(|o| o.name == name) {
            return Err(format!("column name {name:?} is empty or repeated"));
        }
        let null_value = c.get("null_value").filter(|v| !v.is_nil()).cloned();
        out.push(Column {
            name: name.to_string(),
            kind: ColumnKind::from_name(kind),
            nullable: c.get("nullable").and_then(Value::as_bool).unwrap_or(false)
                || null_value.is_some(),
            mask: c.get("null_storage").and_then(Value::as_str) == Some("mask"),
            unit: (kind == "timestamp").then(|| {
                c.get("unit")
                    .and_then(Value::as_str)
                    .unwrap_or("us")
                    .to_string()
            }),
            null_value,
            computed: None,
            spec: c.clone(),
        });
    }
    let computed = schema
        .get("computed_columns")
        .and_then(Value::as_slice)
        .unwrap_or(&[]);
    for (i, c) in computed.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("computed column {i} has no name"))?;
        if name.is_empty() || out.iter().any(|o| o.name == name) {
            return Err(format!(
                "computed column name {name:?} is empty or repeated"
            ));
        }
        let deps: Vec<String> = c
            .get("col_deps")
            .and_then(Value::as_slice)
            .ok_or_else(|| format!("computed column {name:?} has no col_deps"))?
            .iter()
            .map(|d| d.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("computed column {name:?}: a col_deps entry is not a name"))?;
        let dtype = c
            .get("dtype")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let kind = c
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("expression");
        let mut kernel = None;
        let (expression, parsed) = match kind {
            "expression" => {
                let text = c
                    .get("expression")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("computed column {name:?} has no expression"))?;
                let parsed = Expression::parse(text).and_then(|e| {
                    if e.operands() > deps.len() {
                        Err(format!(
                            "the expression names o{} but the column has {} dependencies",
                            e.operands() - 1,
                            deps.len()
                        ))
                    } else {
                        Ok(e)
                    }
                });
                (text.to_string(), parsed)
            }
            "dsl" => {
                let source = c.get("dsl_source").and_then(Value::as_str).unwrap_or("");
                // python-blosc2 names the column's kernel by its `def NAME(`.
                kernel = Some(
                    source
                        .split("def ")
                        .nth(1)
                        .and_then(|r| r.split('(').next())
                        .map(str::trim)
                        .filter(|n| !n.is_empty())
                        .unwrap_or("dsl_kernel")
                        .to_string(),
                );
                (
                    source.to_string(),
                    Err("a DSL kernel (python source b2nd does not run)".to_string()),
                )
            }
            other => (
                String::new(),
                Err(format!("a computed column of kind {other:?}")),
            ),
        };
        let parsed = parsed.and_then(|e| {
            numpy_type(&dtype)
                .map(|_| e)
                .ok_or_else(|| format!("its dtype {dtype:?} is not a number or bool"))
        });
        out.push(Column {
            name: name.to_string(),
            kind: ColumnKind::from_name(
                numpy_type(&dtype).map(kind_of_numpy).unwrap_or("computed"),
            ),
            nullable: false,
            null_value: None,
            mask: false,
            unit: None,
            spec: c.clone(),
            computed: Some(Computed {
                kernel,
                expression,
                deps,
                dtype,
                parsed,
            }),
        });
    }
    Ok(out)
}

/// The NumPy type string of a recorded computed-column dtype: `float64`, `int32`, `bool`,
/// ..., and the `<class 'blosc2.schema.float64'>` python-blosc2 4.14.1 records for true
/// divisions (see docs/meaning-audit.md).
fn numpy_type(recorded: &str) -> Option<&'static str> {
    let name = recorded
        .strip_prefix("<class 'blosc2.schema.")
        .and_then(|r| r.strip_suffix("'>"))
        .unwrap_or(recorded);
    Some(match name {
        "bool" => "|b1",
        "int8" => "|i1",
        "int16" => "<i2",
        "int32" => "<i4",
        "int64" => "<i8",
        "uint8" => "|u1",
        "uint16" => "<u2",
        "uint32" => "<u4",
        "uint64" => "<u8",
        "float16" => "<f2",
        "float32" => "<f4",
        "float64" => "<f8",
        _ => return None,
    })
}

/// The schema kind of a NumPy type string from [`numpy_type`].
fn kind_of_numpy(s: &str) -> &'static str {
    match s {
        "|b1" => "bool",
        "|i1" => "int8",
        "<i2" => "int16",
        "<i4" => "int32",
        "<i8" => "int64",
        "|u1" => "uint8",
        "<u2" => "uint16",
        "<u4" => "uint32",
        "<u8" => "uint64",
        "<f2" => "float16",
        "<f4" => "float32",
        _ => "float64",
    }
}

/// One item of a numeric or bool dtype (`s` its NumPy string, `b` its bytes) as a value;
/// `None` for other dtypes.
pub(crate) fn number(s: &str, b: &[u8]) -> Option<Value> {
    let little = !s.starts_with('>');
    let mut w = [0u8; 8];
    if b.len() > 8 {
        return None;
    }
    let word = if little {
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    } else {
        w[8 - b.len()..].copy_from_slice(b);
        u64::from_be_bytes(w)
    };
    let shift = 64 - 8 * b.len() as u32;
    Some(match (s.as_bytes().get(1)?, b.len()) {
        (b'b', 1) => Value::Bool(word != 0),
        (b'i' | b'M' | b'm', 1..=8) => Value::Int(((word << shift) as i64) >> shift),
        (b'u', 1..=7) => Value::Int(word as i64),
        (b'u', 8) => match i64::try_from(word) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(word),
        },
        (b'f', 4) => Value::Float(f64::from(f32::from_bits(word as u32))),
        (b'f', 8) => Value::Float(f64::from_bits(word)),
        _ => return None,
    })
}

/// Which items of a 1-d column (`bytes`, its raw values) differ from the sentinel (`NaN`
/// matching any NaN).
fn sentinel_validity(
    dtype: &Dtype,
    bytes: &[u8],
    sentinel: &Value,
) -> std::result::Result<Vec<bool>, String> {
    let isz = dtype.itemsize();
    if isz == 0 {
        return Err("a zero-size dtype".into());
    }
    let s = dtype.to_numpy_str();
    if matches!(s.as_bytes().get(1), Some(b'U' | b'S')) {
        let target = match sentinel {
            Value::Str(t) => t.clone(),
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            other => return Err(format!("sentinel {other:?} on a {s} column")),
        };
        let strings =
            crate::read::typed::strings(dtype, bytes, "String").map_err(|e| e.to_string())?;
        return Ok(strings.iter().map(|v| *v != target).collect());
    }
    let differs = |v: Value| -> Option<bool> {
        Some(match (v, sentinel) {
            (Value::Float(x), t) => {
                let t = t.as_f64()?;
                if t.is_nan() {
                    !x.is_nan()
                } else {
                    x != t
                }
            }
            (Value::Bool(x), Value::Bool(t)) => x != *t,
            (Value::Bool(x), t) => u64::from(x) != t.as_u64()?,
            (v, t) => match (v.as_i64(), t.as_i64()) {
                (Some(a), Some(b)) => a != b,
                _ => v.as_u64()? != t.as_u64()?,
            },
        })
    };
    bytes
        .chunks_exact(isz)
        .map(|b| number(&s, b).and_then(differs))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("sentinel {sentinel:?} on a {s} column"))
}

/// Physical rows `span` of a column as the slice that reads them.
fn rows_slice(span: &std::ops::Range<usize>) -> [crate::model::selection::SliceItem; 1] {
    [crate::model::selection::SliceItem::Range {
        start: Some(span.start as i64),
        stop: Some(span.end as i64),
        step: 1,
    }]
}

/// A declared default as the value it stands for (python-blosc2 stores bytes as
/// `{"__bytes__": true, "base64": ...}`).
fn declared(v: &Value) -> Value {
    if let Value::Map(fields) = v {
        let get = |k: &str| {
            fields
                .iter()
                .find(|(key, _)| key.as_str() == Some(k))
                .map(|(_, v)| v)
        };
        if let (Some(Value::Bool(true)), Some(Value::Str(b64))) = (get("__bytes__"), get("base64"))
        {
            if let Some(bytes) = base64(b64) {
                return Value::Bytes(bytes);
            }
        }
    }
    v.clone()
}

/// Standard base64 (with padding) decoded; `None` when it is not.
fn base64(s: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for group in s.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in group.iter().enumerate() {
            acc |= digit(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        match group.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
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

    #[test]
    fn base64_decodes() {
        assert_eq!(base64("").unwrap(), b"");
        assert_eq!(base64("aGk=").unwrap(), b"hi");
        assert_eq!(base64("aGV5").unwrap(), b"hey");
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert!(base64("a").is_none() && base64("**").is_none());
    }
}
