//! [`TableMut::compact`]: the live rows moved to the front of every column and the deleted
//! ones dropped, as python-blosc2's `CTable.compact` followed by its `close` leaves a table.
//!
//! Every array it rewrites (each stored column, each `.notnull` mask, `_valid_rows`) is
//! copied into a staged table beside the original, written there and published with the
//! rest of the table by one directory exchange (see `columns`): readers see the old rows
//! with their holes or the new compacted ones, never columns of one and flags of the other.
//! The writer's lock moves with `_valid_rows`: the staged copy is locked before the
//! exchange.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::{member_file, ArrayMut, TableMut};
use crate::error::Result;
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::model::region::Region;
use crate::table::{ColumnKind, Table};
use crate::write::batch::{write_items, At};

impl TableMut {
    /// Close the gaps deleted rows left, as python-blosc2's `CTable.compact` and `close`
    /// do: every stored column's (and null mask's) live rows moved to the front, in
    /// order, and the arrays cut to them; `_valid_rows` all live; `value_epoch` advanced
    /// and every index marked stale (python drops what indexes say about positions).
    /// Returns the deleted rows dropped (0, with nothing changed, when there is no gap).
    ///
    /// `utf8` columns are rewritten with the strings of the live rows only (python's
    /// `set_all`), and the columns of one msgpack item per row (`list`, `vlstring`,
    /// `vlbytes`, `object`, `struct`) with the live rows' items (python-blosc2 4.14.1's
    /// compact leaves those as they were, pairing rows with the wrong items:
    /// docs/meaning-audit.md). Refused, with nothing changed, for a msgpack column
    /// serialized as Arrow.
    ///
    /// ```
    /// use b2nd::{Table, TableBuilder, TableMut};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.b2d");
    /// TableBuilder::new().column("id", &[1i64, 2, 3, 4])?.write(&path)?;
    /// let mut t = TableMut::open(&path)?;
    /// t.delete(&[0, 2])?;
    /// assert_eq!(t.compact()?, 2);
    /// let t = Table::open(&path)?;
    /// assert_eq!(t.read_column::<i64>("id")?, [2, 4]);
    /// assert_eq!(t.column_array("id")?.shape(), [2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compact(&mut self) -> Result<u64> {
        let t = &self.table;
        let live = t.live_rows();
        let (n, end) = (live.live(), live.end());
        if n == end {
            return Ok(0);
        }
        if let Some(c) = t.columns().iter().find(|c| {
            c.computed().is_none()
                && super::varlen::is_batch_kind(c.kind())
                && c.spec()
                    .get("serializer")
                    .and_then(crate::model::attrs::Value::as_str)
                    .is_some_and(|s| !super::varlen::writes_serializer(s))
        }) {
            return Err(self.refuse(
                c.name(),
                format!(
                    "a {} column serialized as {:?}, {}",
                    c.kind(),
                    c.spec()
                        .get("serializer")
                        .and_then(crate::model::attrs::Value::as_str)
                        .unwrap_or_default(),
                    super::varlen::WRITTEN
                ),
            ));
        }
        let rows: Vec<usize> = live.iter().collect();
        // The arrays gathered: every stored column (a dictionary column's codes) and mask.
        let mut files: Vec<PathBuf> = Vec::new();
        // `utf8` columns: their offsets and bytes files, rewritten together.
        let mut utf8: Vec<(PathBuf, PathBuf)> = Vec::new();
        // Columns of one msgpack item per row: their BatchArray files, and the live items.
        let mut cells: Vec<(PathBuf, Vec<Value>)> = Vec::new();
        for c in t.columns().iter().filter(|c| c.computed().is_none()) {
            let file = member_file(t, &t.key(c.name(), Part::Values))?;
            if *c.kind() == ColumnKind::Utf8 {
                utf8.push((file, member_file(t, &t.key(c.name(), Part::Utf8Bytes))?));
            } else if super::varlen::is_batch_kind(c.kind()) {
                cells.push((file, t.read_values(c.name())?));
            } else {
                files.push(file);
            }
        }
        files.extend(self.mask_files()?);
        let utf8_rel: Vec<(PathBuf, PathBuf)> = utf8
            .iter()
            .map(|(o, s)| Ok((self.relative(o)?, self.relative(s)?)))
            .collect::<Result<_>>()?;
        let valid = member_file(t, &ctable::valid_rows_key(t.root()))?;
        let rel: Vec<PathBuf> = files
            .iter()
            .map(|f| self.relative(f))
            .collect::<Result<_>>()?;
        let (valid_rel, meta_rel) = (self.relative(&valid)?, self.relative(&self.meta_file()?)?);
        let cells_rel: Vec<(PathBuf, Vec<Value>)> = cells
            .into_iter()
            .map(|(f, v)| Ok((self.relative(&f)?, v)))
            .collect::<Result<_>>()?;
        let mut copies = files.clone();
        for (f, _) in &cells_rel {
            copies.push(self.path.join(f));
        }
        copies.extend(utf8.iter().flat_map(|(o, s)| [o.clone(), s.clone()]));
        copies.push(valid);
        let durability = self.durability;
        let before = Table::open(&self.path)?;
        let open = move |f: PathBuf| -> Result<ArrayMut> {
            Ok(ArrayMut::open_table_member(f)?.with_durability(durability))
        };
        let valid = self.restage_copying(&copies, |stage| {
            for (f, original) in rel.iter().zip(&files) {
                gather(&mut open(stage.join(f))?, &rows, original)?;
            }
            for ((o, s), (original, _)) in utf8_rel.iter().zip(&utf8) {
                super::utf8::gather(
                    &mut open(stage.join(o))?,
                    &mut open(stage.join(s))?,
                    &rows,
                    original,
                )?;
            }
            // No live row: python's compact writes nothing (the next append cuts them).
            for (f, items) in cells_rel.iter().filter(|(_, items)| !items.is_empty()) {
                write_items(&stage.join(f), At::Item(0), items, durability)?;
            }
            // python's close leaves every row live and no capacity after the last one (a
            // live row is left: `n == end` when none is).
            let mut v = open(stage.join(&valid_rel))?;
            v.resize(&[n])?;
            v.write_region_bytes(&Region::new([0], [n]), &vec![1u8; n as usize])?;
            super::edit_meta(
                &before,
                &stage.join(&meta_rel),
                Some(n),
                "value_epoch",
                true,
                durability,
            )?;
            Ok(v)
        })?;
        self.valid = valid.moved_to(self.path.join(&valid_rel))?;
        Ok(end - n)
    }
}

/// Move rows `rows` (physical, ascending) of the 1st dimension of array `a` (the staged
/// copy of `original`, which refusals name) to its front, in order, and cut it to them; an
/// empty `rows` leaves it as it is (python's compact of a table with no live row writes
/// nothing and its close keeps the capacity).
fn gather(a: &mut ArrayMut, rows: &[usize], original: &Path) -> Result<()> {
    let refuse = |reason: String| crate::error::Error::Refused {
        path: original.display().to_string(),
        reason,
    };
    let shape = a.array().shape().to_vec();
    let Some(&len) = shape.first() else {
        return Err(refuse(
            "a column array without rows (0-d) in a table".into(),
        ));
    };
    if rows.is_empty() {
        return Ok(());
    }
    let keep = rows.len() as u64;
    let mut cut = shape.clone();
    cut[0] = keep;
    let row = shape[1..].iter().product::<u64>() as usize * a.array().dtype().itemsize().max(1);
    let whole = Region::new(vec![0; shape.len()], shape.clone());
    let mut bytes = vec![0u8; len as usize * row];
    a.array().read_region_into(&whole, &mut bytes)?;
    let mut out = Vec::with_capacity(rows.len() * row);
    for &r in rows {
        if let Some(item) = bytes.get(r * row..(r + 1) * row) {
            out.extend_from_slice(item);
        }
    }
    if out.len() != rows.len() * row {
        return Err(refuse(format!(
            "the array has {len} rows, fewer than _valid_rows"
        )));
    }
    if len > keep {
        a.resize(&cut)?;
    }
    a.write_region_bytes(&Region::new(vec![0; cut.len()], cut), &out)
}
