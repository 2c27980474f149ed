//! Appending rows (python's `extend`).

#![forbid(unsafe_code)]

use super::*;

impl TableMut {
    /// Append `rows` after the last live row; returns the rows appended. Every stored
    /// column is given or declares a default; values must have the column's dtype (a
    /// `timestamp` column takes `i64` counts of its unit, `string` and `utf8` columns
    /// text), nulls go only to nullable columns, and text fits a `string` column's
    /// `max_length`. A generated column left out is computed from the values given for its
    /// dependencies, as python-blosc2's `extend` fills it (`generated`). Nothing changes
    /// when any of that fails.
    pub fn append(&mut self, rows: &Rows) -> Result<u64> {
        let n = rows.len();
        if n == 0 {
            return Ok(0);
        }
        let filled = self.autofill_generated(rows)?;
        let encoded = self.encode(filled.as_ref().unwrap_or(rows))?;
        let live = self.table.live_rows();
        let start = live.end();
        for e in encoded
            .iter()
            .filter(|e| matches!(e.items, Items::Utf8 { .. }))
        {
            self.check_utf8(&e.name, start)?;
        }
        let end = start + n;
        let capacity = live.physical().max(end);
        let new_live = live.live() + n;

        // Every file found before the first change.
        let dictionaries = encoded
            .iter()
            .map(|e| match &e.items {
                Items::Dictionary { added, .. } if !added.is_empty() => {
                    self.dictionary_file(&e.name).map(Some)
                }
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>>>()?;
        let files = encoded
            .iter()
            .map(|e| {
                let mask = self.table.key(&e.name, Part::NotNull);
                if self.table.store().contains(&mask) {
                    member_file(&self.table, &mask)?;
                }
                member_file(&self.table, &self.table.key(&e.name, Part::Values))
            })
            .collect::<Result<Vec<_>>>()?;
        let meta = self.meta_file()?;

        edit_meta(
            &self.table,
            &meta,
            None,
            "value_epoch",
            true,
            self.durability,
        )?;
        for ((e, file), dict) in encoded.iter().zip(files).zip(dictionaries) {
            match &e.items {
                Items::Fixed(bytes) => write_rows(&mut self.member(file)?, start, bytes, capacity)?,
                Items::Utf8 { data, lengths } => self.write_utf8(&e.name, start, data, lengths)?,
                Items::Dictionary { codes, added } => {
                    if let Some(dict) = dict {
                        dictionary::add_values(&dict, added, self.durability)?;
                    }
                    write_rows(&mut self.member(file)?, start, codes, capacity)?
                }
                Items::Cells(cells) => write_items(&file, At::Item(start), cells, self.durability)?,
            }
        }
        for e in &encoded {
            self.write_mask(e, start, end, capacity)?;
        }
        write_rows(&mut self.valid, start, &vec![1u8; n as usize], capacity)?;
        // The rows are appended. The capacity an emptied table kept past them is trimmed, as
        // python's close does (a failure leaves rows no reader reads); a failure to cache
        // the count is finished by the next `open`.
        if capacity > end {
            if let Ok(masks) = self.mask_files() {
                let _ = self.trim(end, &masks);
            }
        }
        let _ = edit_meta(
            &self.table,
            &meta,
            Some(new_live),
            "",
            false,
            self.durability,
        );
        self.table = Table::open(&self.path)?;
        self.published()?;
        Ok(n)
    }

    /// Write the mask rows of an appended column: its batch validity where it has one,
    /// every other row of the mask's new room valid (python's `_grow` keeps spare rows
    /// valid: its `extend` writes a mask only for batches holding a null).
    pub(super) fn write_mask(
        &self,
        e: &Encoded,
        start: u64,
        end: u64,
        capacity: u64,
    ) -> Result<()> {
        let key = self.table.key(&e.name, Part::NotNull);
        let n = (end - start) as usize;
        match self.table.store().member_path(&key) {
            Some(file) => {
                let mut mask = self.member(file)?;
                let len = mask.array().shape().first().copied().unwrap_or(0);
                let from = len.min(start);
                let to = len.max(capacity);
                let mut flags = vec![1u8; (to - from) as usize];
                if let Some(v) = &e.mask {
                    let at = (start - from) as usize;
                    for (f, &ok) in flags[at..at + n].iter_mut().zip(v) {
                        *f = u8::from(ok);
                    }
                }
                if to > len {
                    mask.resize(&[to])?;
                }
                mask.write_region_bytes(&Region::new([from], [to - from]), &flags)
            }
            None if self.table.store().contains(&key) => Err(embedded(&self.table, &key)),
            None => {
                let Some(v) = &e.mask else { return Ok(()) };
                let mut flags = vec![true; capacity as usize];
                flags[start as usize..end as usize].copy_from_slice(v);
                let rel = crate::store::keys::member_file(&key).map_err(|reason| Error::Store {
                    path: self.path.display().to_string(),
                    reason,
                })?;
                ArrayBuilder::for_type::<bool>(&[capacity])
                    .write(Target::File(self.path.join(rel)), &flags)
            }
        }
    }
}

/// Write `bytes` (whole items) at rows `start..` of a 1-d array, growing it to `capacity`
/// rows first when it is shorter: one change when the rows go right after its end (an
/// append), else a resize and a region write.
pub(super) fn write_rows(a: &mut ArrayMut, start: u64, bytes: &[u8], capacity: u64) -> Result<()> {
    let len = a.array().shape().first().copied().unwrap_or(0);
    let n = (bytes.len() / row_bytes(a)) as u64;
    if len == start && start + n == capacity {
        return a.append_bytes(0, bytes);
    }
    if capacity > len {
        let mut shape = a.array().shape().to_vec();
        shape[0] = capacity;
        a.resize(&shape)?;
    }
    a.write_region_bytes(&rows_region(a, start, n), bytes)
}

/// The bytes of one row of a column's array: an item, or a sub-array (`ndarray` columns).
pub(super) fn row_bytes(a: &ArrayMut) -> usize {
    let shape = a.array().shape();
    let items: u64 = shape.iter().skip(1).product();
    (a.array().dtype().itemsize() * items as usize).max(1)
}

/// Rows `start..start + n` of a column's array, whole rows.
pub(super) fn rows_region(a: &ArrayMut, start: u64, n: u64) -> Region {
    let shape = a.array().shape();
    let mut at = vec![0; shape.len().max(1)];
    let mut len = shape.to_vec();
    at[0] = start;
    if len.is_empty() {
        len.push(n);
    } else {
        len[0] = n;
    }
    Region::new(at, len)
}
