//! [`TableMut`]: a CTable python-blosc2 wrote as a directory (`.b2d`), changed in place: rows
//! appended ([`Rows`]), deleted and updated, leaving the table as python-blosc2's own
//! `extend`, `delete`, column assignment and `close` leave it, each change crash-safe;
//! columns renamed and dropped (`columns`) and added (`add`); deleted rows compacted away
//! (`compact`); user attributes (`attrs`). A zipped table (`.b2z`) is unpacked beside
//! itself, changed as a directory and packed anew after each change (`zipped`). One file per
//! verb: `append`, `delete`, `update`; the values given (`rows`) and encoded for each column
//! (`encode`, with `utf8`, `dictionary`, `varlen`, `ndarray` for their kinds); the manifest
//! (`meta`); generated columns (`generated`).
//!
//! A table is many files; each step below is one atomic in-place change of one file (see
//! `docs/in-place-writes.md`), and the `_valid_rows` change is the one readers see:
//! 1. `_meta`: the schema's cached `n_rows` is removed (python-blosc2 trusts it when it opens
//!    a table; without it python counts `_valid_rows`); an append advances `value_epoch` and
//!    marks every index descriptor stale (`CTable._mark_all_indexes_stale`), a delete advances
//!    `visibility_epoch`;
//! 2. append: every stored column's new values go to the rows after the last live row, as
//!    python's `extend` puts them (the arrays grown when there is no room: to the new end,
//!    which is what python's `extend` and `close` leave; a `utf8` column's offsets and
//!    bytes end at the new rows, see `utf8`); mask-stored nulls go to the
//!    column's `.notnull` mask (made at the first null, every earlier row valid), and null
//!    slots hold python's fill (NaN, `int64.min` for timestamps, else zero) or the column's
//!    sentinel;
//! 3. `_valid_rows`: the new rows set live, or the deleted ones cleared;
//! 4. a delete tidies as python's `close` does after one: the `.notnull` rows after the last
//!    live row made valid, the arrays trimmed to the last live row (`utf8` strings past it
//!    cut); an append trims the capacity an emptied table kept past its new rows;
//! 5. `_meta`: the schema's `n_rows` set to the new count of live rows.
//!
//! A crash or failure before step 3 leaves the old table (rows after the last live one are
//! never read) and fails the call; from step 3 on the change stands and the call succeeds:
//! a failure in steps 4–5 (a full disk) leaves the cached count absent, and the next
//! [`TableMut::open`] makes the dead mask rows valid and sets the count. The cached count is
//! absent or true at every moment.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::builder::ArrayBuilder;
use super::derived;
use super::edit::set_attrs_with;
use super::inplace::ArrayMut;
use super::options::Target;
use crate::error::{Error, Result};
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;
use crate::model::durability::Durability;
use crate::model::element::Element;
use crate::model::region::Region;
use crate::table::{Column, ColumnKind, Table};
use crate::write::batch::{write_items, At};

mod add;
mod append;
mod attrs;
mod columns;
mod compact;
mod delete;
mod dictionary;
mod encode;
mod generated;
mod meta;
mod ndarray;
mod rows;
mod update;
mod utf8;
mod varlen;
mod zipped;

pub use add::NewColumn;
use append::*;
use delete::*;
use encode::*;
use meta::*;
pub use rows::Rows;
use rows::*;

/// A CTable opened for changes: a `.b2d` directory python-blosc2 (or
/// [`TableBuilder`](crate::TableBuilder)) wrote.
///
/// Each method is one change of the table, published atomically for readers of the table
/// (b2nd and python-blosc2) and left as python-blosc2 leaves its own changes; see
/// the module documentation for the steps. One writer at a time: the table's `_valid_rows`
/// stays locked (`flock`) for the life of the `TableMut`. Tables in `.b2z` zips, tables
/// inside larger stores, and members embedded in `embed.b2e` are refused by name.
/// Appends and updates take columns of fixed-width kinds (numbers, bools, `timestamp`,
/// `string`), sub-arrays for `ndarray` columns, `utf8` and `dictionary` strings, and
/// msgpack values for `list`, `vlstring`, `vlbytes`, `object` and `struct` columns; other
/// kinds (`complex64`, `complex128`) are refused by name.
#[derive(Debug)]
pub struct TableMut {
    path: PathBuf,
    table: Table,
    /// The `_valid_rows` array: changed by every change, and the table's writer lock.
    valid: ArrayMut,
    durability: Durability,
    /// For a `.b2z` table: the zip, which `path` is unpacked from and packed into after
    /// every change.
    zipped: Option<zipped::Zipped>,
}

impl TableMut {
    /// A refusal naming column `column`.
    fn refuse(&self, column: &str, reason: String) -> Error {
        Error::Refused {
            path: self.path.display().to_string(),
            reason: format!("column {column:?}: {reason}"),
        }
    }

    /// The physical rows of live rows `sorted` (ascending, distinct), or a refusal naming the
    /// last when one is out of range.
    fn physical_rows(&self, sorted: &[u64]) -> Result<Vec<usize>> {
        let live = self.table.live_rows();
        live.physical_of_sorted(sorted)
            .ok_or_else(|| Error::Refused {
                path: self.path.display().to_string(),
                reason: format!(
                    "row {} is out of range: the table has {} live rows",
                    sorted.last().copied().unwrap_or(0),
                    live.live()
                ),
            })
    }

    /// Open the table saved on its own at `path` for changes: a directory (`.b2d`), changed
    /// in place, or a zip (`.b2z`), unpacked beside itself and packed into a new zip renamed
    /// over it after every change, as python-blosc2 rewrites one.
    pub fn open(path: impl AsRef<Path>) -> Result<TableMut> {
        let path = path.as_ref().to_path_buf();
        let is_zip = path.is_file() && path.extension().is_some_and(|e| e == "b2z");
        if !path.is_dir() && !is_zip {
            return Err(Error::Refused {
                path: path.display().to_string(),
                reason: "a table saved on its own is a directory (.b2d) or a zip (.b2z)".into(),
            });
        }
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let zipped = if is_zip {
            // Under the zip's lock, what a killed change left beside it goes first.
            let lock = crate::format::lock::writer_lock(&path, &path)?;
            sweep_staging(&parent, &columns::staging_prefix(&path));
            Some(zipped::Zipped::unpack(
                &path,
                &columns::staging_prefix(&path),
                lock,
            )?)
        } else {
            None
        };
        let (path, parent) = match &zipped {
            Some(z) => (z.dir(), z.dir().parent().unwrap_or(&parent).to_path_buf()),
            None => (path, parent),
        };
        let table = Table::open(&path)?;
        let valid_file = member_file(&table, &ctable::valid_rows_key(""))?;
        let valid = ArrayMut::open_table_member(valid_file)?;
        // With the table's lock held, no other change is under way: staging directories
        // (`.b2nd-*.tmp`) a killed change left are removed (python-blosc2 warns about them).
        for dir in [path.clone(), path.join(ctable::COLS)] {
            sweep_staging(&dir, ".b2nd-");
        }
        sweep_staging(&parent, &columns::staging_prefix(&path));
        let mut t = TableMut {
            path,
            table,
            valid,
            durability: Durability::Disk,
            zipped,
        };
        // Without the cached count, a change stopped after publishing its rows (a full disk,
        // a crash): its tidying is done now.
        if !t.has_cached_count()? {
            let live = t.table.live_rows();
            let (end, n) = (live.end(), live.live());
            clear_dead_masks(end, &t.mask_files()?, Durability::Disk)?;
            edit_meta(
                &t.table,
                &t.meta_file()?,
                Some(n),
                "",
                false,
                Durability::Disk,
            )?;
            t.table = Table::open(&t.path)?;
        }
        Ok(t)
    }

    /// The table as it is now (after the last change).
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The path being changed (the `.b2z` of a zipped table).
    pub fn path(&self) -> &Path {
        match &self.zipped {
            Some(z) => z.zip(),
            None => &self.path,
        }
    }

    /// After a change: a zipped table's new zip published (on a failure, the old zip stays
    /// and the unpacked table goes back to it).
    fn published(&mut self) -> Result<()> {
        let Some(z) = &mut self.zipped else {
            return Ok(());
        };
        if let Err(e) = z.publish(self.durability) {
            z.reset()?;
            self.valid = ArrayMut::open_table_member(member_file(
                &self.table,
                &ctable::valid_rows_key(""),
            )?)?
            .with_durability(self.durability);
            self.table = Table::open(&self.path)?;
            return Err(e);
        }
        Ok(())
    }

    /// Choose what reaches the disk before each change returns (the default,
    /// [`Durability::Disk`], syncs every file a change writes; [`Durability::Process`]
    /// leaves that to the operating system, as python-blosc2 does). A killed process
    /// leaves the whole old or the whole new table either way.
    pub fn with_durability(mut self, durability: Durability) -> TableMut {
        self.valid = self.valid.with_durability(durability);
        self.durability = durability;
        self
    }

    /// Member array `file` of the table, opened for a change.
    fn member(&self, file: impl AsRef<Path>) -> Result<ArrayMut> {
        Ok(ArrayMut::open_table_member(file)?.with_durability(self.durability))
    }
}

/// A copy of directory `from` at `to`: the files of `copy` (paths inside `from`) copied,
/// every other file hard-linked, subdirectories recreated the same way.
fn link_tree(from: &Path, to: &Path, copy: &[PathBuf]) -> Result<()> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    std::fs::create_dir(to).map_err(io(to))?;
    for e in std::fs::read_dir(from).map_err(io(from))? {
        let e = e.map_err(io(from))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().map_err(io(&src))?;
        if kind.is_dir() {
            link_tree(&src, &dst, copy)?;
        } else if copy.contains(&src) {
            std::fs::copy(&src, &dst).map_err(io(&src))?;
        } else {
            std::fs::hard_link(&src, &dst).map_err(io(&src))?;
        }
    }
    Ok(())
}

/// Remove the staging directories and files (`PREFIX*.tmp`) in `dir`, as far as possible.
fn sweep_staging(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(prefix) && name.ends_with(".tmp") {
            let _ = match e.file_type() {
                Ok(k) if k.is_dir() => std::fs::remove_dir_all(e.path()),
                _ => std::fs::remove_file(e.path()),
            };
        }
    }
}

/// The file of member `key` of `table`'s directory store; embedded members are refused.
fn member_file(table: &Table, key: &str) -> Result<PathBuf> {
    table
        .store()
        .member_path(key)
        .ok_or_else(|| embedded(table, key))
}

fn embedded(table: &Table, key: &str) -> Error {
    Error::Store {
        path: table.store().path().display().to_string(),
        reason: format!(
            "member {key} is not a file of the directory (embedded in embed.b2e, or absent): \
             it cannot be changed in place"
        ),
    }
}
