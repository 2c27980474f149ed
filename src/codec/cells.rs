//! The cell layout of c-blosc2's NDCELL (id 32) and NDMEAN (id 33) filter plugins.
//!
//! Both filters work on one b2nd block (its shape from the `b2nd` metalayer, its items in C
//! order) and write it cell by cell: the block is cut into cells of side `meta` (the last cell
//! along a dimension is cut short by the block's edge), cells are taken in C order over the
//! cell grid, and the items of each cell are written row by row in C order. NDCELL only
//! reorders; NDMEAN also replaces every item of a cell by the cell's mean (lossy) before
//! writing. Decoding either is the inverse reordering (`ndcell_backward`, `ndmean_backward` in
//! c-blosc2's `plugins/filters/`), with two NDMEAN particulars reproduced here: its cell side
//! is clamped to the block's size per dimension, and the origin of a cell is computed with the
//! (clamped) side of dimension 0 for every dimension. Both need 1 to 8 dimensions.

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;

use crate::model::region::{step, ZEROS};

/// Most dimensions the plugins handle (`NDCELL_MAX_DIM`, `NDMEAN_MAX_DIM`).
pub(crate) const MAX_CELL_DIMS: usize = 8;

/// The cell layout of a block, as one filter wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cells {
    ndim: usize,
    block: [usize; MAX_CELL_DIMS],
    cell: [usize; MAX_CELL_DIMS],
    /// The cell side the plugin multiplies grid coordinates by to find a cell's origin.
    unit: usize,
    typesize: usize,
    /// NDMEAN (cells of means when writing) rather than NDCELL.
    mean: bool,
}

impl Cells {
    /// NDCELL with cell side `meta` over blocks of shape `block`.
    pub(crate) fn ndcell(meta: u8, block: &[usize], typesize: usize) -> Result<Cells, ChunkError> {
        let side = usize::from(meta);
        let cells = Cells::new(
            block,
            &[side; MAX_CELL_DIMS],
            side,
            typesize,
            i32::MAX as usize,
        )?;
        // ndcell_backward refuses cells with more items than the block (cell side unclamped).
        let cell_items = (0..cells.ndim).try_fold(1usize, |acc, _| acc.checked_mul(side));
        if cell_items.is_none_or(|n| n > cells.items()) {
            return Err(format!(
                "NDCELL cell side {side} makes cells larger than the block {:?}",
                &block
            )
            .into());
        }
        Ok(cells)
    }

    /// NDMEAN with cell side `meta` (a signed byte in c-blosc2) over blocks of shape `block`.
    pub(crate) fn ndmean(meta: u8, block: &[usize], typesize: usize) -> Result<Cells, ChunkError> {
        if meta == 0 || meta > 127 {
            return Err(format!("NDMEAN cell side {meta} (must be 1 to 127)").into());
        }
        let mut cell = [1usize; MAX_CELL_DIMS];
        for (c, &b) in cell.iter_mut().zip(block) {
            *c = usize::from(meta).min(b);
        }
        // ndmean_backward takes the typesize as a signed byte.
        let mut c = Cells::new(block, &cell, cell[0], typesize, 127)?;
        c.mean = true;
        Ok(c)
    }

    fn new(
        block: &[usize],
        cell: &[usize; MAX_CELL_DIMS],
        unit: usize,
        typesize: usize,
        max_typesize: usize,
    ) -> Result<Cells, ChunkError> {
        let ndim = block.len();
        if ndim == 0 || ndim > MAX_CELL_DIMS {
            return Err(format!(
                "{ndim} dimensions (the cell filters handle 1 to {MAX_CELL_DIMS})"
            )
            .into());
        }
        if typesize == 0
            || typesize > max_typesize
            || block.contains(&0)
            || cell[..ndim].contains(&0)
        {
            return Err(format!(
                "cells of {:?} over blocks of {block:?}, items of {typesize} bytes",
                &cell[..ndim]
            )
            .into());
        }
        let mut b = [1usize; MAX_CELL_DIMS];
        b[..ndim].copy_from_slice(block);
        let c = Cells {
            ndim,
            block: b,
            cell: *cell,
            unit,
            typesize,
            mean: false,
        };
        c.items()
            .checked_mul(typesize)
            .filter(|&n| i32::try_from(n).is_ok())
            .ok_or_else(|| format!("block {block:?} too large"))?;
        Ok(c)
    }

    fn items(&self) -> usize {
        self.block[..self.ndim].iter().product()
    }

    /// Walk the layout: for each row of each cell, in the order the filter writes them,
    /// `row(cell, at, n)` with the cell's number, the C-order item index where the row starts
    /// and its length in items. Rows that would leave the block, or a walk that does not end
    /// at the block's last item (as the plugins check), are errors.
    fn walk(&self, mut row: impl FnMut(usize, usize, usize)) -> Result<(), ChunkError> {
        let nd = self.ndim;
        let items = self.items();
        let mut grid = [1usize; MAX_CELL_DIMS];
        let mut stride = [1usize; MAX_CELL_DIMS];
        for d in (0..nd).rev() {
            grid[d] = self.block[d].div_ceil(self.cell[d]);
            if d + 1 < nd {
                stride[d] = stride[d + 1] * self.block[d + 1];
            }
        }
        let ncells: usize = grid[..nd].iter().product();
        let ends: Vec<u64> = grid[..nd].iter().map(|&g| g as u64).collect();
        let mut ii = [0u64; MAX_CELL_DIMS];
        let mut pad = [0usize; MAX_CELL_DIMS];
        let mut end = 0usize;
        for cell in 0..ncells {
            let mut origin = 0usize;
            for d in 0..nd {
                origin += ii[d] as usize * self.unit * stride[d];
                let rem = self.block[d] % self.cell[d];
                pad[d] = if rem != 0 && ii[d] as usize == grid[d] - 1 {
                    rem
                } else {
                    self.cell[d]
                };
            }
            let n = pad[nd - 1];
            let rows: usize = pad[..nd - 1].iter().product();
            for r in 0..rows {
                // Row `r` of the cell, in C order over its leading dimensions.
                let (mut rest, mut at) = (r, origin);
                for d in (0..nd - 1).rev() {
                    at += (rest % pad[d]) * stride[d];
                    rest /= pad[d];
                }
                if at + n > items {
                    return Err("a cell reaches outside the block".into());
                }
                row(cell, at, n);
                end = at + n;
            }
            // Next cell.
            step(&mut ii[..nd], &ZEROS[..nd], &ends);
        }
        if end != items {
            return Err(format!(
                "the cells end at item {end}, the block has {items} (blockshape mismatch)"
            )
            .into());
        }
        Ok(())
    }

    fn check_lengths(&self, src: &[u8], dst: &[u8]) -> Result<(), ChunkError> {
        let want = self.items() * self.typesize;
        if src.len() != want || dst.len() != want {
            return Err(
                format!("block of {} bytes, the cell layout needs {want}", src.len()).into(),
            );
        }
        Ok(())
    }

    /// Undo the layout: `src` holds a block cell by cell, `dst` gets it in C order. Both must
    /// be exactly one block long.
    pub(crate) fn uncell_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), ChunkError> {
        self.check_lengths(src, dst)?;
        let ts = self.typesize;
        let mut ip = 0;
        self.walk(|_, at, n| {
            dst[at * ts..(at + n) * ts].copy_from_slice(&src[ip..ip + n * ts]);
            ip += n * ts;
        })
    }

    /// What the filter writes for the block `src` (C order): [`Cells::mean_into`] for NDMEAN,
    /// [`Cells::cell_into`] for NDCELL.
    pub(crate) fn forward_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), ChunkError> {
        if self.mean {
            self.mean_into(src, dst)
        } else {
            self.cell_into(src, dst)
        }
    }

    /// The layout NDCELL writes: `src` a block in C order, `dst` gets it cell by cell.
    pub(crate) fn cell_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), ChunkError> {
        self.check_lengths(src, dst)?;
        let ts = self.typesize;
        let mut op = 0;
        self.walk(|_, at, n| {
            dst[op..op + n * ts].copy_from_slice(&src[at * ts..(at + n) * ts]);
            op += n * ts;
        })
    }

    /// What NDMEAN writes for little-endian `f4` (`typesize` 4) or `f8` items: every item of
    /// a cell replaced by the cell's mean (summed in the item type, in the order the cell is
    /// walked, divided by its item count, as the plugin does), cell by cell.
    pub(crate) fn mean_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), ChunkError> {
        self.check_lengths(src, dst)?;
        let ts = self.typesize;
        if ts != 4 && ts != 8 {
            return Err(format!("NDMEAN takes 4- or 8-byte floats, not {ts}-byte items").into());
        }
        // Per cell: (sum in f32, sum in f64, items), filled in walk order.
        let mut cells: Vec<(f32, f64, usize)> = Vec::new();
        self.walk(|cell, at, n| {
            if cells.len() == cell {
                cells.push((0.0, 0.0, 0));
            }
            let c = &mut cells[cell];
            for i in at..at + n {
                let b = &src[i * ts..(i + 1) * ts];
                if ts == 4 {
                    c.0 += f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                } else {
                    c.1 += f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                }
            }
            c.2 += n;
        })?;
        let mut op = 0;
        for (s32, s64, n) in cells {
            for _ in 0..n {
                if ts == 4 {
                    dst[op..op + 4].copy_from_slice(&(s32 / n as f32).to_le_bytes());
                } else {
                    dst[op..op + 8].copy_from_slice(&(s64 / n as f64).to_le_bytes());
                }
                op += ts;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forward NDCELL written straight from its definition, for the round trip.
    fn cell_forward(block: &[usize], side: usize, src: &[u32]) -> Vec<u32> {
        let nd = block.len();
        let grid: Vec<usize> = block.iter().map(|b| b.div_ceil(side)).collect();
        let mut out = Vec::new();
        let ncells: usize = grid.iter().product();
        for c in 0..ncells {
            let mut ii = vec![0; nd];
            let mut r = c;
            for d in (0..nd).rev() {
                ii[d] = r % grid[d];
                r /= grid[d];
            }
            // Every item of the cell in C order.
            let lo: Vec<usize> = (0..nd).map(|d| ii[d] * side).collect();
            let hi: Vec<usize> = (0..nd).map(|d| (lo[d] + side).min(block[d])).collect();
            let n: usize = (0..nd).map(|d| hi[d] - lo[d]).product();
            for k in 0..n {
                let mut r = k;
                let mut idx = vec![0; nd];
                for d in (0..nd).rev() {
                    let w = hi[d] - lo[d];
                    idx[d] = lo[d] + r % w;
                    r /= w;
                }
                let lin = idx.iter().zip(block).fold(0, |a, (&i, &b)| a * b + i);
                out.push(src[lin]);
            }
        }
        out
    }

    #[test]
    fn ndcell_inverse_of_its_definition() {
        for (block, side) in [
            (vec![7usize], 3usize),
            (vec![4, 6], 2),
            (vec![5, 7], 3),
            (vec![3, 4, 5], 2),
            (vec![2, 3, 2, 3], 4),
            (vec![1, 1, 9], 4),
        ] {
            let n: usize = block.iter().product();
            let data: Vec<u32> = (0..n as u32).map(|i| i * 7 + 1).collect();
            let fwd = cell_forward(&block, side, &data);
            let cells = match Cells::ndcell(side as u8, &block, 4) {
                Ok(c) => c,
                Err(_) => {
                    // Cells larger than the block are refused, as by the plugin.
                    assert!(side.pow(block.len() as u32) > n, "{block:?} {side}");
                    continue;
                }
            };
            let mut out = vec![0u8; n * 4];
            cells
                .uncell_into(bytemuck::cast_slice(&fwd), &mut out)
                .unwrap();
            assert_eq!(
                out,
                bytemuck::cast_slice::<u32, u8>(&data),
                "{block:?} {side}"
            );
            // The forward layout is the definition's.
            let mut celled = vec![0u8; n * 4];
            cells
                .cell_into(bytemuck::cast_slice(&data), &mut celled)
                .unwrap();
            assert_eq!(
                celled,
                bytemuck::cast_slice::<u32, u8>(&fwd),
                "{block:?} {side}"
            );
        }
    }

    #[test]
    fn bad_layouts_are_errors() {
        assert!(Cells::ndcell(0, &[4, 4], 4).is_err());
        assert!(Cells::ndcell(2, &[], 4).is_err());
        assert!(Cells::ndcell(2, &[2; 9], 4).is_err());
        assert!(Cells::ndmean(200, &[4, 4], 4).is_err());
        let c = Cells::ndcell(2, &[4, 4], 4).unwrap();
        let mut out = vec![0u8; 60];
        assert!(c.uncell_into(&[0u8; 60], &mut out).is_err());
        // NDMEAN clamps the cell to the block and steps cell origins by dimension 0's side:
        // with block (2, 8) and side 4 the cells are (2, 4), and the second cell starts at
        // column 2, not 4, so the layout ends before the block does: an error, as in C.
        let m = Cells::ndmean(4, &[2, 8], 4).unwrap();
        let mut out = vec![0u8; 64];
        assert!(m.uncell_into(&[0u8; 64], &mut out).is_err());
        // Means: a (2, 2) block in one cell of side 2 holding 1, 2, 3, 6 becomes four 3.0.
        let m = Cells::ndmean(2, &[2, 2], 8).unwrap();
        let src: Vec<u8> = [1.0f64, 2.0, 3.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut out = vec![0u8; 32];
        m.mean_into(&src, &mut out).unwrap();
        let got: Vec<f64> = out
            .chunks(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, vec![3.0; 4]);
        // ... while square blocks decode.
        let m = Cells::ndmean(2, &[4, 4], 4).unwrap();
        let mut out = vec![0u8; 64];
        assert!(m.uncell_into(&[1u8; 64], &mut out).is_ok());
    }
}
