//! Updating rows (python's column assignment).

#![forbid(unsafe_code)]

use super::*;

impl TableMut {
    /// Set the values of live rows `rows` (positions among live rows, as python-blosc2's
    /// `Column.__setitem__` takes them; no position twice): `values` holds, for each column
    /// it names, one value per position, in the order of `rows`. Columns left out keep their
    /// values; nulls go only to nullable columns. Returns the rows changed.
    ///
    /// As python-blosc2's assignment of each column: every index descriptor stale and
    /// `value_epoch` advanced once per column, the materialized columns that depend on a changed column marked stale, a
    /// `.notnull` mask written (made at the first null); a `utf8` column's bytes and
    /// offsets rewritten from the first row changed on. The changed column files are
    /// written as copies beside the table and the whole `_cols` directory is swapped in at
    /// once: readers see every changed column old or every one new. Nothing changes when a
    /// check fails.
    ///
    /// ```
    /// use b2nd::{Rows, Table, TableBuilder, TableMut};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.b2d");
    /// TableBuilder::new()
    ///     .column("id", &[1i64, 2, 3])?
    ///     .nullable_column("score", &[0.5f64, 1.5, 2.5], &[true, true, true])?
    ///     .write(&path)?;
    /// let mut t = TableMut::open(&path)?;
    /// let values = Rows::new().column_opt("score", &[None, Some(9.0f64)])?;
    /// assert_eq!(t.update(&[2, 0], &values)?, 2);
    /// let t = Table::open(&path)?;
    /// assert_eq!(t.read_column_opt::<f64>("score")?, [Some(9.0), Some(1.5), None]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn update(&mut self, rows: &[u64], values: &Rows) -> Result<u64> {
        if values.columns.is_empty() || rows.is_empty() {
            return Ok(0);
        }
        if values.len() != rows.len() as u64 {
            return Err(Error::InvalidArgument(format!(
                "{} rows given for {} positions",
                values.len(),
                rows.len()
            )));
        }
        // Positions sorted, each with the index of its values.
        let mut order: Vec<(u64, usize)> = rows.iter().copied().zip(0..).collect();
        order.sort_unstable();
        if let Some(w) = order.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::InvalidArgument(format!(
                "row {} given twice",
                w[0].0
            )));
        }
        let sorted: Vec<u64> = order.iter().map(|&(r, _)| r).collect();
        let live = self.table.live_rows();
        let physical = self.physical_rows(&sorted)?;
        let n = rows.len();
        let t = &self.table;
        let mut changes = Vec::new();
        for (name, cells) in &values.columns {
            let c = self.stored_column(name)?;
            let e = self.encode_one(c, Some(cells), n)?;
            if let Items::Utf8 { .. } = e.items {
                self.check_utf8(name, live.end())?;
            }
            changes.push((c.clone(), e));
        }
        let meta = self.meta_file()?;
        let changed: Vec<&str> = changes.iter().map(|(c, _)| c.name()).collect();
        let cols_dir = self.path.join(ctable::COLS);
        let mut files = Vec::new();
        for (c, e) in &changes {
            files.push(member_file(t, &t.key(c.name(), Part::Values))?);
            match &e.items {
                Items::Utf8 { .. } => {
                    files.push(member_file(t, &t.key(c.name(), Part::Utf8Bytes))?)
                }
                Items::Dictionary { added, .. } if !added.is_empty() => {
                    files.push(self.dictionary_file(c.name())?)
                }
                _ => {}
            }
            let mask = t.key(c.name(), Part::NotNull);
            if t.store().contains(&mask) {
                files.push(member_file(t, &mask)?);
            }
        }
        if let Some(f) = files
            .iter()
            .find(|f| f.parent() != Some(cols_dir.as_path()))
        {
            return Err(Error::Refused {
                path: self.path.display().to_string(),
                reason: format!(
                    "{} is not a file of the table's _cols directory",
                    f.display()
                ),
            });
        }

        // python-blosc2 assigns one column at a time, each advancing `value_epoch`.
        let by = changed.len() as i64;
        edit_meta_columns(
            t,
            &meta,
            Some(live.live()),
            ("value_epoch", by),
            true,
            &changed,
            self.durability,
        )?;
        // The new `_cols`, staged inside the table: unchanged members linked, changed ones
        // copied and written.
        let staging = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempdir_in(&self.path)
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })?;
        let new_cols = staging.path().join(ctable::COLS);
        link_tree(&cols_dir, &new_cols, &files)?;
        let in_stage = |f: &Path| new_cols.join(f.file_name().unwrap_or_default());
        for (c, e) in &changes {
            let file = in_stage(&member_file(t, &t.key(c.name(), Part::Values))?);
            match &e.items {
                Items::Fixed(bytes) => scatter(&mut self.member(&file)?, &physical, &order, bytes)?,
                Items::Dictionary { codes, added } => {
                    if !added.is_empty() {
                        let dict = in_stage(&self.dictionary_file(c.name())?);
                        dictionary::add_values(&dict, added, self.durability)?;
                    }
                    scatter(&mut self.member(&file)?, &physical, &order, codes)?
                }
                Items::Cells(cells) => {
                    // The items from the first row changed on, rewritten with the new ones.
                    let first = physical.first().copied().unwrap_or(0);
                    let mut tail = crate::schunk::SChunk::open(&file)?.read_objects()?;
                    if tail.len() < physical.last().map_or(0, |&p| p + 1) {
                        return Err(self.refuse(
                            c.name(),
                            format!("it holds {} items, fewer than the rows", tail.len()),
                        ));
                    }
                    tail.drain(..first);
                    for (&p, &(_, i)) in physical.iter().zip(&order) {
                        tail[p - first] = cells[i].clone();
                    }
                    write_items(&file, At::Item(first as u64), &tail, self.durability)?
                }
                Items::Utf8 { data, lengths } => {
                    let strings = in_stage(&member_file(t, &t.key(c.name(), Part::Utf8Bytes))?);
                    utf8::rewrite(
                        &mut self.member(&file)?,
                        &mut self.member(&strings)?,
                        &physical,
                        &order,
                        data,
                        lengths,
                    )?
                }
            }
            let mask = &e.mask;
            if c.mask_nulls() {
                let flags: Vec<u8> = match mask {
                    Some(v) => v.iter().map(|&ok| u8::from(ok)).collect(),
                    None => vec![1; n],
                };
                let key = t.key(c.name(), Part::NotNull);
                if t.store().contains(&key) {
                    let file = in_stage(&member_file(t, &key)?);
                    scatter(&mut self.member(&file)?, &physical, &order, &flags)?;
                } else if mask.is_some() {
                    let len = t
                        .column_array(c.name())?
                        .shape()
                        .first()
                        .copied()
                        .unwrap_or(0);
                    if physical.last().is_some_and(|&p| p as u64 >= len) {
                        return Err(self.refuse(
                            c.name(),
                            format!("its array has {len} rows, fewer than _valid_rows"),
                        ));
                    }
                    let mut all = vec![1u8; len as usize];
                    for (&p, &(_, i)) in physical.iter().zip(&order) {
                        all[p] = flags[i];
                    }
                    let all: Vec<bool> = all.into_iter().map(|f| f == 1).collect();
                    let rel =
                        crate::store::keys::member_file(&key).map_err(|reason| Error::Store {
                            path: self.path.display().to_string(),
                            reason,
                        })?;
                    let name = Path::new(&rel).file_name().unwrap_or_default();
                    ArrayBuilder::for_type::<bool>(&[len])
                        .write(Target::File(new_cols.join(name)), &all)?;
                }
            }
        }
        if self.durability == Durability::Disk {
            super::super::staging::sync_tree(&new_cols).map_err(|source| Error::Io {
                path: new_cols.clone(),
                source,
            })?;
        }
        super::super::staging::replace(&new_cols, &cols_dir).map_err(|source| Error::Io {
            path: cols_dir.clone(),
            source,
        })?;
        drop(staging);
        self.table = Table::open(&self.path)?;
        self.published()?;
        Ok(n as u64)
    }
}

/// Write `items` (one item per entry of `order`, indexed by its second field) at the
/// physical rows `physical` (sorted, paired with `order`) of a 1-d array: one region write
/// over the span they cover, the rows between kept.
pub(super) fn scatter(
    a: &mut ArrayMut,
    physical: &[usize],
    order: &[(u64, usize)],
    items: &[u8],
) -> Result<()> {
    let (Some(&first), Some(&last)) = (physical.first(), physical.last()) else {
        return Ok(());
    };
    let isz = row_bytes(a);
    let region = rows_region(a, first as u64, (last - first + 1) as u64);
    let mut span = vec![0u8; (last - first + 1) * isz];
    a.array().read_region_into(&region, &mut span)?;
    for (&p, &(_, i)) in physical.iter().zip(order) {
        let at = (p - first) * isz;
        span[at..at + isz].copy_from_slice(&items[i * isz..(i + 1) * isz]);
    }
    a.write_region_bytes(&region, &span)
}
