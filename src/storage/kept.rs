//! Byte ranges of a remote object kept after they were fetched, for the reads that come back
//! to them: a store opens each member's frame more than once (to list it, then to read it),
//! and each open reads the frame's header and trailer again. Bounded: the oldest ranges go
//! first once the budget is spent.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, VecDeque};

/// How many kept ranges before a position are searched for one covering a read.
const SEARCH_BACK: usize = 16;

/// Fetched ranges by start, at most `budget` bytes of them.
pub(crate) struct Kept {
    ranges: BTreeMap<u64, bytes::Bytes>,
    order: VecDeque<u64>,
    bytes: usize,
    budget: usize,
}

impl Kept {
    /// An empty set that keeps at most `budget` bytes.
    pub(crate) fn new(budget: usize) -> Kept {
        Kept {
            ranges: BTreeMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            budget,
        }
    }

    /// Bytes `pos..end`, if one kept range holds them all.
    pub(crate) fn get(&self, pos: u64, end: u64) -> Option<&[u8]> {
        self.ranges
            .range(..=pos)
            .rev()
            .take(SEARCH_BACK)
            .find(|(&start, b)| end <= start + b.len() as u64)
            .map(|(&start, b)| &b[(pos - start) as usize..(end - start) as usize])
    }

    /// Whether `pos..end` is held.
    pub(crate) fn holds(&self, pos: u64, end: u64) -> bool {
        self.get(pos, end).is_some()
    }

    /// Keep `bytes`, fetched at `pos` (a range larger than the budget is not kept).
    pub(crate) fn put(&mut self, pos: u64, bytes: bytes::Bytes) {
        if bytes.is_empty()
            || bytes.len() > self.budget
            || self.holds(pos, pos + bytes.len() as u64)
        {
            return;
        }
        self.bytes += bytes.len();
        match self.ranges.insert(pos, bytes) {
            Some(old) => self.bytes -= old.len(),
            None => self.order.push_back(pos),
        }
        while self.bytes > self.budget {
            let Some(p) = self.order.pop_front() else {
                break;
            };
            if let Some(old) = self.ranges.remove(&p) {
                self.bytes -= old.len();
            }
        }
    }

    /// How many bytes are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_a_kept_range_are_served_and_the_oldest_go_first() {
        let mut k = Kept::new(100);
        k.put(10, bytes::Bytes::from(vec![10u8, 11]));
        k.put(0, bytes::Bytes::from((0u8..60).collect::<Vec<_>>()));
        // The smaller range kept before does not hide the larger one around it.
        assert_eq!(k.get(20, 25), Some(&[20u8, 21, 22, 23, 24][..]));
        assert_eq!(k.get(10, 12), Some(&[10u8, 11][..]));
        assert!(k.get(55, 61).is_none());
        assert_eq!(k.len(), 62);
        // Covered already: not kept twice.
        k.put(5, bytes::Bytes::from(vec![5u8; 10]));
        assert_eq!(k.len(), 62);
        // Over the budget: the oldest go first (10..12, then 0..60).
        k.put(200, bytes::Bytes::from(vec![7u8; 50]));
        assert!(k.get(20, 25).is_none() && k.get(10, 12).is_none());
        assert_eq!(k.get(200, 250), Some(&[7u8; 50][..]));
        assert_eq!(k.len(), 50);
        // Larger than the whole budget: never kept.
        k.put(1000, bytes::Bytes::from(vec![1u8; 101]));
        assert!(k.get(1000, 1001).is_none());
    }
}
