//! [`LiveRows`]: which physical rows of a table are live (`_valid_rows`), and the one place
//! that converts between live-row positions (what readers count) and physical rows (where
//! the values are), in time independent of the table's length.

#![forbid(unsafe_code)]

/// Physical rows per checkpoint of the live-row count.
const STRIDE: usize = 4096;

/// The live flags of a table's physical rows (one byte each, 0 or 1: `_valid_rows`' own
/// bytes), with the count of live rows before every [`STRIDE`]-th physical row; or, when
/// every physical row is live, only their number.
#[derive(Debug, Clone)]
pub(crate) struct LiveRows {
    /// The flags; `None` when every physical row is live.
    valid: Option<Vec<u8>>,
    physical: usize,
    /// `marks[k]`: live rows among physical rows `0 .. k * STRIDE` (empty when all live).
    marks: Vec<u64>,
    live: u64,
}

impl LiveRows {
    /// The live rows of the flags `valid`, or the position and value of a byte that is
    /// neither 0 nor 1.
    pub(crate) fn new(valid: Vec<u8>) -> Result<LiveRows, (usize, u8)> {
        let mut marks = Vec::with_capacity(valid.len() / STRIDE + 1);
        let mut live = 0u64;
        for (k, part) in valid.chunks(STRIDE).enumerate() {
            marks.push(live);
            live += count(part).ok_or_else(|| {
                let at = part.iter().position(|&b| b > 1).unwrap_or(0);
                (k * STRIDE + at, part[at])
            })?;
        }
        Ok(LiveRows {
            physical: valid.len(),
            valid: Some(valid),
            marks,
            live,
        })
    }

    /// `physical` rows, every one live (no flag kept).
    pub(crate) fn all(physical: usize) -> LiveRows {
        LiveRows {
            valid: None,
            physical,
            marks: Vec::new(),
            live: physical as u64,
        }
    }

    /// Live rows.
    pub(crate) fn live(&self) -> u64 {
        self.live
    }

    /// The live flag (1 live, 0 deleted) of every physical row.
    pub(crate) fn flags(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.valid {
            Some(v) => std::borrow::Cow::Borrowed(v),
            None => std::borrow::Cow::Owned(vec![1; self.physical]),
        }
    }

    /// Physical rows.
    pub(crate) fn physical(&self) -> u64 {
        self.physical as u64
    }

    /// Live rows among physical rows `0 .. physical` (clamped to the table).
    pub(crate) fn before(&self, physical: u64) -> u64 {
        let p = (physical.min(self.physical())) as usize;
        let Some(valid) = &self.valid else {
            return p as u64;
        };
        let k = p / STRIDE;
        let Some(&mark) = self.marks.get(k) else {
            return self.live;
        };
        mark + count(&valid[k * STRIDE..p]).unwrap_or(0)
    }

    /// The physical row of live row `row`, `None` past the last.
    fn nth_live(&self, row: u64) -> Option<usize> {
        if row >= self.live {
            return None;
        }
        let Some(valid) = &self.valid else {
            return Some(row as usize);
        };
        // The last checkpoint at or before the row: its stride holds it.
        let k = self.marks.partition_point(|&m| m <= row).saturating_sub(1);
        let base = k * STRIDE;
        let end = (base + STRIDE).min(valid.len());
        let live_in = self.marks.get(k + 1).copied().unwrap_or(self.live) - self.marks[k];
        let skip = (row - self.marks[k]) as usize;
        if live_in as usize == end - base {
            // A stride of live rows only: no walk.
            return Some(base + skip);
        }
        valid[base..end]
            .iter()
            .enumerate()
            .filter(|(_, &v)| v != 0)
            .nth(skip)
            .map(|(i, _)| base + i)
    }

    /// The physical rows holding live rows `rows` (positions among live rows, in range).
    pub(crate) fn physical_of(&self, rows: std::ops::Range<u64>) -> Vec<usize> {
        let want = (rows.end.saturating_sub(rows.start)) as usize;
        let Some(first) = self.nth_live(rows.start).filter(|_| want > 0) else {
            return Vec::new();
        };
        let Some(valid) = &self.valid else {
            return (first..self.physical).take(want).collect();
        };
        let mut out = Vec::with_capacity(want.min(valid.len() - first));
        out.extend(
            valid[first..]
                .iter()
                .enumerate()
                .filter(|(_, &v)| v != 0)
                .map(|(i, _)| first + i)
                .take(want),
        );
        out
    }

    /// The physical rows of live rows `rows` when they are consecutive (no deleted row
    /// between them: one read gives them in order), else `None`.
    pub(crate) fn consecutive(&self, rows: std::ops::Range<u64>) -> Option<std::ops::Range<usize>> {
        if rows.is_empty() {
            return Some(0..0);
        }
        let first = self.nth_live(rows.start)?;
        let last = self.nth_live(rows.end - 1)?;
        ((last - first + 1) as u64 == rows.end - rows.start).then_some(first..last + 1)
    }

    /// One past the last live physical row (0 with none): where python-blosc2 writes the
    /// next appended row (`CTable._resolve_last_pos`).
    pub(crate) fn end(&self) -> u64 {
        let Some(valid) = &self.valid else {
            return self.physical as u64;
        };
        valid
            .iter()
            .rposition(|&v| v != 0)
            .map_or(0, |i| i as u64 + 1)
    }

    /// The physical rows of live rows `rows` (sorted, distinct, each below [`Self::live`]),
    /// in one walk; `None` when they are not.
    pub(crate) fn physical_of_sorted(&self, rows: &[u64]) -> Option<Vec<usize>> {
        if rows.windows(2).any(|w| w[0] >= w[1]) || rows.last().is_some_and(|&r| r >= self.live) {
            return None;
        }
        let Some(valid) = &self.valid else {
            return Some(rows.iter().map(|&r| r as usize).collect());
        };
        let mut out = Vec::with_capacity(rows.len());
        let mut want = rows.iter().peekable();
        let mut seen = 0u64;
        for (i, &v) in valid.iter().enumerate() {
            let Some(&&next) = want.peek() else { break };
            if v != 0 {
                if seen == next {
                    out.push(i);
                    want.next();
                }
                seen += 1;
            }
        }
        Some(out)
    }

    /// The physical rows that are live, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let valid = self.valid.as_deref();
        (0..self.physical).filter(move |&i| valid.is_none_or(|v| v[i] != 0))
    }
}

/// Live rows among `flags`, `None` when one is neither 0 nor 1. Words of 8 flags are summed
/// bytewise and OR-ed 4 at a time, a [`STRIDE`] at a time (a byte lane adds at most
/// `STRIDE / 32` ones, so it cannot carry), then each word's bytes are added up.
fn count(flags: &[u8]) -> Option<u64> {
    const _: () = assert!(STRIDE / 32 <= u8::MAX as usize);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    let bytes = |w: u64| {
        let pairs = (w & 0x00FF_00FF_00FF_00FF) + ((w >> 8) & 0x00FF_00FF_00FF_00FF);
        pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48
    };
    let mut n = 0u64;
    for part in flags.chunks(STRIDE) {
        let (mut sum, mut or) = ([0u64; 4], 0u64);
        let mut quads = part.chunks_exact(32);
        for q in &mut quads {
            for (i, s) in sum.iter_mut().enumerate() {
                let w = word(&q[8 * i..8 * i + 8]);
                *s += w;
                or |= w;
            }
        }
        for &b in quads.remainder() {
            n += u64::from(b);
            or |= u64::from(b);
        }
        if or & !0x0101_0101_0101_0101 != 0 {
            return None;
        }
        n += sum.iter().map(|&s| bytes(s)).sum::<u64>();
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(flags: &[bool]) -> LiveRows {
        LiveRows::new(flags.iter().map(|&v| u8::from(v)).collect()).unwrap()
    }

    #[test]
    fn strides_all_live_and_not_agree_with_a_walk() {
        // Strides 0 and 2 and the short last one all live, stride 1 with holes.
        let valid: Vec<bool> = (0..3 * STRIDE + 100)
            .map(|i| !(STRIDE..2 * STRIDE).contains(&i) || i % 3 != 0)
            .collect();
        let rows = live(&valid);
        let walk: Vec<usize> = (0..valid.len()).filter(|&i| valid[i]).collect();
        let n = walk.len() as u64;
        for r in [
            0..1,
            0..n,
            4095..4097,
            4096..4200,
            6000..9000,
            n - 150..n,
            n - 1..n,
        ] {
            let want = &walk[r.start as usize..r.end as usize];
            assert_eq!(rows.physical_of(r.clone()), want, "{r:?}");
            let run = want.last().map(|&l| l + 1 - want[0] == want.len());
            assert_eq!(
                rows.consecutive(r.clone()),
                run.filter(|&c| c)
                    .map(|_| want[0]..want[want.len() - 1] + 1),
                "{r:?}"
            );
        }
        assert_eq!(rows.physical_of(n..n + 3), Vec::<usize>::new());
        assert_eq!(rows.consecutive(n - 1..n + 1), None);
    }

    /// Rows known all live without flags answer every question as their flags (all 1) do.
    #[test]
    fn all_live_rows_agree_with_their_flags() {
        for n in [0usize, 1, 7, STRIDE, 3 * STRIDE + 77] {
            let (all, flags) = (LiveRows::all(n), LiveRows::new(vec![1; n]).unwrap());
            let m = n as u64;
            assert_eq!((all.live(), all.physical(), all.end()), (m, m, flags.end()));
            assert_eq!(all.flags(), flags.flags(), "{n}");
            assert!(all.iter().eq(flags.iter()), "{n}");
            for p in [0, 1, m / 2, m, m + 9] {
                assert_eq!(all.before(p), flags.before(p), "{n}: before({p})");
            }
            let ranges = [
                0..0,
                0..1,
                0..m,
                m / 3..m / 2,
                m.saturating_sub(1)..m,
                m..m + 2,
            ];
            for r in ranges {
                assert_eq!(
                    all.physical_of(r.clone()),
                    flags.physical_of(r.clone()),
                    "{r:?}"
                );
                assert_eq!(
                    all.consecutive(r.clone()),
                    flags.consecutive(r.clone()),
                    "{r:?}"
                );
            }
            for picks in [
                vec![],
                vec![0, m / 2, m.saturating_sub(1)],
                vec![3, 3],
                vec![m],
            ] {
                assert_eq!(
                    all.physical_of_sorted(&picks),
                    flags.physical_of_sorted(&picks),
                    "{n}: {picks:?}"
                );
            }
        }
    }

    #[test]
    fn count_is_the_number_of_ones() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for len in [
            0,
            1,
            31,
            32,
            33,
            STRIDE - 1,
            STRIDE,
            STRIDE + 7,
            3 * STRIDE + 45,
        ] {
            let flags: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x & 1) as u8
                })
                .collect();
            let ones = flags.iter().filter(|&&b| b == 1).count() as u64;
            assert_eq!(count(&flags), Some(ones), "{len} flags");
            assert_eq!(count(&vec![1; len]), Some(len as u64), "{len} ones");
            for at in [0, len / 2, len.saturating_sub(1)]
                .into_iter()
                .filter(|&a| a < len)
            {
                let mut bad = flags.clone();
                bad[at] = 0x81;
                assert_eq!(count(&bad), None, "{len} flags, 0x81 at {at}");
            }
        }
    }

    #[test]
    fn a_flag_byte_over_one_is_refused_with_its_position() {
        let mut bytes = vec![1u8; 2 * STRIDE];
        bytes[STRIDE + 3] = 2;
        bytes[STRIDE + 9] = 7;
        assert_eq!(LiveRows::new(bytes).unwrap_err(), (STRIDE + 3, 2));
    }

    #[test]
    fn positions_agree_with_a_walk_of_the_flags() {
        // A pseudo-random pattern with long deleted runs across checkpoints.
        let mut x = 12345u64;
        let valid: Vec<bool> = (0..3 * STRIDE + 77)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                !(STRIDE..STRIDE + 5000).contains(&i) && (x >> 60) != 0
            })
            .collect();
        let rows = live(&valid);
        let walk: Vec<usize> = (0..valid.len()).filter(|&i| valid[i]).collect();
        assert_eq!(rows.live(), walk.len() as u64);
        assert_eq!(rows.iter().collect::<Vec<_>>(), walk);
        for p in [
            0,
            1,
            STRIDE - 1,
            STRIDE,
            STRIDE + 4999,
            2 * STRIDE + 3,
            valid.len(),
            valid.len() + 9,
        ] {
            let want = walk.iter().filter(|&&i| i < p).count() as u64;
            assert_eq!(rows.before(p as u64), want, "before({p})");
        }
        let n = walk.len() as u64;
        for r in [
            0..0,
            0..1,
            0..n,
            5..6,
            n - 1..n,
            1000..3000,
            4090..4100,
            n..n,
        ] {
            let want = &walk[r.start as usize..r.end as usize];
            assert_eq!(rows.physical_of(r.clone()), want, "{r:?}");
        }
        assert_eq!(
            rows.consecutive(0..10),
            Some(0..10).filter(|_| walk[9] == 9)
        );
        let all = live(&[true; 3 * STRIDE]);
        assert_eq!(all.consecutive(5..9000), Some(5..9000));
        assert_eq!(
            rows.consecutive(n - 1..n),
            Some(walk[n as usize - 1]..walk[n as usize - 1] + 1)
        );
        let holes = live(&[true, false, true, true]);
        assert_eq!(
            (holes.consecutive(0..2), holes.consecutive(1..3)),
            (None, Some(2..4))
        );
        let mut picks = vec![0, 3, 4095, n / 2, n - 1];
        picks.sort_unstable();
        assert_eq!(
            rows.physical_of_sorted(&picks),
            Some(picks.iter().map(|&r| walk[r as usize]).collect())
        );
        assert_eq!(rows.physical_of_sorted(&[3, 3]), None);
        assert_eq!(rows.physical_of_sorted(&[n]), None);
        assert_eq!(rows.end(), *walk.last().unwrap() as u64 + 1);
        assert_eq!(holes.end(), 4);
        assert_eq!(live(&[true, false, false]).end(), 1);
        let none = live(&[]);
        assert_eq!((none.live(), none.before(5), none.end()), (0, 0, 0));
        assert!(none.physical_of(0..0).is_empty());
    }
}
