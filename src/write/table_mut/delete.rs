//! Deleting rows (python's `delete`), and the tidying python's `close` does after one.

#![forbid(unsafe_code)]

use super::*;

impl TableMut {
    /// Delete live rows `rows` (positions among live rows, as python-blosc2's
    /// `CTable.delete` takes them; repeats count once); returns the rows deleted. Their
    /// values stay in the columns until python-blosc2 compacts the table, as python leaves
    /// them. Nothing changes when a position is out of range.
    pub fn delete(&mut self, rows: &[u64]) -> Result<u64> {
        let mut rows = rows.to_vec();
        rows.sort_unstable();
        rows.dedup();
        let live = self.table.live_rows();
        let physical = self.physical_rows(&rows)?;
        let (Some(&first), Some(&last)) = (physical.first(), physical.last()) else {
            return Ok(0);
        };
        let mut flags = live.flags()[first..=last].to_vec();
        for &p in &physical {
            flags[p - first] = 0;
        }
        let new_live = live.live() - rows.len() as u64;
        let capacity = live.physical();
        // The last live row afterwards: python's close trims the arrays to it.
        let end = {
            let mut after = live.flags().to_vec();
            for &p in &physical {
                after[p] = 0;
            }
            after
                .iter()
                .rposition(|&v| v != 0)
                .map_or(0, |i| i as u64 + 1)
        };
        let masks = self.mask_files()?;

        let meta = self.meta_file()?;
        edit_meta(
            &self.table,
            &meta,
            None,
            "visibility_epoch",
            false,
            self.durability,
        )?;
        self.valid
            .write_region_bytes(&Region::new([first as u64], [flags.len() as u64]), &flags)?;
        // The rows are deleted: what follows tidies, and a failure of it (a full disk) does
        // not undo or fail the delete; without the cached count, the next `open` finishes it.
        let _ = self.tidy_after_delete(end, capacity, &masks, &meta, new_live);
        self.table = Table::open(&self.path)?;
        self.published()?;
        Ok(rows.len() as u64)
    }

    /// After a delete: the mask rows after the last live row (`end`) made valid (python's
    /// extend writes its next rows there and writes a mask only for batches holding a null,
    /// so a row it writes where a deleted null was would read as null); python-blosc2's
    /// close() after a delete (`trim_capacity`: the arrays end at the last live row, unless
    /// no row is left); the strings of `utf8` columns past `end` cut off (python's next
    /// extend would append after them: `utf8`); the cached count set.
    pub(super) fn tidy_after_delete(
        &mut self,
        end: u64,
        capacity: u64,
        masks: &[PathBuf],
        meta: &Path,
        live: u64,
    ) -> Result<()> {
        if end < capacity {
            clear_dead_masks(end, masks, self.durability)?;
            if end > 0 {
                self.trim(end, masks)?;
            }
        }
        self.cut_utf8(end)?;
        self.cut_cells(end)?;
        edit_meta(&self.table, meta, Some(live), "", false, self.durability)
    }

    /// The `.notnull` mask files of the table's columns.
    pub(super) fn mask_files(&self) -> Result<Vec<PathBuf>> {
        let t = &self.table;
        t.columns()
            .iter()
            .filter(|c| c.computed().is_none())
            .map(|c| t.key(c.name(), Part::NotNull))
            .filter(|k| t.store().contains(k))
            .map(|k| member_file(t, &k))
            .collect()
    }

    /// Shrink the table's arrays to `end` rows, as python-blosc2's `trim_capacity`:
    /// `_valid_rows`, every fixed-width column and dictionary codes (variable-length columns
    /// are left as python leaves them), the masks.
    pub(super) fn trim(&mut self, end: u64, masks: &[PathBuf]) -> Result<()> {
        self.valid.resize(&[end])?;
        let t = &self.table;
        let columns: Vec<String> = t
            .columns()
            .iter()
            .filter(|c| {
                c.computed().is_none()
                    && (c.is_fixed_width() || *c.kind() == ColumnKind::Dictionary)
            })
            .map(|c| t.key(c.name(), Part::Values))
            .collect();
        for key in columns {
            let mut a = self.member(member_file(t, &key)?)?;
            let mut shape = a.array().shape().to_vec();
            if shape.first().is_some_and(|&n| n > end) {
                shape[0] = end;
                a.resize(&shape)?;
            }
        }
        for m in masks {
            let mut a = self.member(m)?;
            if a.array().shape().first().is_some_and(|&n| n > end) {
                a.resize(&[end])?;
            }
        }
        Ok(())
    }
}

/// Make the rows `end..` of each mask valid (rows no live row uses).
pub(super) fn clear_dead_masks(end: u64, masks: &[PathBuf], durability: Durability) -> Result<()> {
    for m in masks {
        let mut a = ArrayMut::open_table_member(m)?.with_durability(durability);
        let len = a.array().shape().first().copied().unwrap_or(0);
        if len > end {
            let valid = vec![1u8; (len - end) as usize];
            a.write_region_bytes(&Region::new([end], [len - end]), &valid)?;
        }
    }
    Ok(())
}
