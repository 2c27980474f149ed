//! Compressed chunks of a remote frame fetched ahead of the readers and kept in memory
//! under a byte budget. A read that decodes whole chunks announces them (and the chunks
//! that follow, for sequential readers), and so does a reader of a large part of the frame
//! in many small reads; one background thread fetches them in windows of at most half the
//! budget not yet taken (the storage runs each window's requests concurrently and streams
//! each response in). A reader of a whole chunk takes it when all of it is here; a reader of
//! some of its blocks (`CachedChunk`) takes their bytes as soon as they arrived, so the
//! link stays busy while cores decode, and a chunk cut between threads is fetched once.
//! Chunks taken are dropped first when the budget is exceeded.

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::storage::{Piece, RangeRead};

/// One chunk's place in the cache.
enum Slot {
    /// Being fetched: this many bytes.
    Pending(u64),
    /// Arriving: the bytes so far (from the chunk's start) of this many, and whether a
    /// reader read from them.
    Arriving(Pieces, u64, bool),
    /// Its bytes (from its offset to the next chunk's) as they arrived, and whether a
    /// reader took them.
    Arrived(Arc<Pieces>, bool),
    /// Its fetch failed: the error, told to the readers of this read (for
    /// [`FAILURE_KEPT`]; a later read fetches the chunk again), and when.
    Failed(Error, Instant),
}

/// A chunk's bytes in the pieces they arrived in (kept as the source handed them over: a
/// chunk of tens of MiB is not copied into one buffer as it streams in).
#[derive(Default)]
pub(crate) struct Pieces {
    pieces: Vec<Piece>,
    /// Where each piece ends, from the chunk's start.
    ends: Vec<usize>,
}

impl Pieces {
    /// Bytes so far.
    pub(crate) fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    fn push(&mut self, piece: Piece) {
        let end = self.len() + (*piece).as_ref().len();
        self.pieces.push(piece);
        self.ends.push(end);
    }

    /// Bytes `at..at + buf.len()` into `buf`; `false` when they have not all arrived.
    pub(crate) fn copy_to(&self, at: usize, buf: &mut [u8]) -> bool {
        if at.checked_add(buf.len()).is_none_or(|end| end > self.len()) {
            return false;
        }
        let (mut k, mut pos, mut done) = (self.ends.partition_point(|&e| e <= at), at, 0);
        while done < buf.len() {
            let start = if k == 0 { 0 } else { self.ends[k - 1] };
            let from = &(*self.pieces[k]).as_ref()[pos - start..];
            let n = from.len().min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&from[..n]);
            (done, pos, k) = (done + n, pos + n, k + 1);
        }
        true
    }
}

/// How long a failed fetch is told to readers instead of being tried again: the readers of
/// one read (the threads cutting a chunk) share one failure rather than each waiting out the
/// retries again.
const FAILURE_KEPT: Duration = Duration::from_secs(2);

/// What a reader of part of a chunk finds: see [`ChunkCache::read`].
pub(crate) enum Part {
    /// The bytes are in the reader's buffer.
    Copied,
    /// The chunk's fetch failed (after the storage's retries): the reader reports this.
    Failed(Error),
    /// Not here (never announced, dropped, or beyond the bytes fetched): the reader fetches
    /// the bytes itself.
    Absent,
}

/// What a reader finds for its chunk.
pub(crate) enum Got {
    /// The chunk's bytes (from its offset to the next chunk's), as they arrived.
    Bytes(Arc<Pieces>),
    /// Its fetch failed (after the storage's retries): the reader reports this.
    Failed(Error),
    /// Not here: the reader fetches it itself.
    Absent,
}

/// A chunk to fetch: its number, position and length in the source.
type Want = (u64, u64, u64);

#[derive(Default)]
struct State {
    slots: HashMap<u64, Slot>,
    /// Chunks whose bytes all arrived, oldest first.
    order: VecDeque<u64>,
    /// Bytes of arrived chunks.
    bytes: usize,
    /// Chunks announced and not fetched yet, in order.
    queue: VecDeque<Want>,
    queued: HashSet<u64>,
    /// Queued chunks a reader waits for: fetched next, whatever the window's room.
    urgent: HashSet<u64>,
    /// Arriving chunks readers wait in, and the fewest bytes of each that one of them
    /// needs: they are woken when that many arrived (not at every piece).
    needs: HashMap<u64, usize>,
    /// Whether the fetching thread runs.
    worker: bool,
    /// Whether a fetch of the current window failed (the rest of it is dropped).
    failing: bool,
}

impl State {
    /// Drop chunk `n`'s failure when it is older than [`FAILURE_KEPT`].
    fn forget_old_failure(&mut self, n: u64) {
        if matches!(self.slots.get(&n), Some(Slot::Failed(_, at)) if at.elapsed() > FAILURE_KEPT) {
            self.slots.remove(&n);
        }
    }

    /// Bytes fetched or being fetched that no reader took yet.
    fn ahead(&self) -> u64 {
        self.slots
            .values()
            .map(|s| match s {
                Slot::Pending(len) | Slot::Arriving(_, len, false) => *len,
                Slot::Arrived(b, false) => b.len() as u64,
                Slot::Arriving(_, _, true) | Slot::Arrived(_, true) | Slot::Failed(..) => 0,
            })
            .sum()
    }
}

/// The cache of one frame.
pub(crate) struct ChunkCache {
    budget: usize,
    state: Mutex<State>,
    arrived: Condvar,
}

impl ChunkCache {
    /// A cache holding about `budget` bytes.
    pub(crate) fn new(budget: usize) -> ChunkCache {
        ChunkCache {
            budget,
            state: Mutex::new(State::default()),
            arrived: Condvar::new(),
        }
    }

    /// The byte budget.
    pub(crate) fn budget(&self) -> usize {
        self.budget
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether chunk `n` is here or on its way.
    pub(crate) fn has(&self, n: u64) -> bool {
        let mut st = self.lock();
        st.forget_old_failure(n);
        st.slots.contains_key(&n) || st.queued.contains(&n)
    }

    /// Chunk `n`, waiting while it is being fetched: its bytes, its fetch's error, or
    /// [`Got::Absent`] when it is not here (never announced, dropped, or not fetched yet:
    /// the caller then fetches it itself).
    pub(crate) fn get(&self, n: u64) -> Got {
        self.wait(n, None, Got::Absent, |slot| match slot {
            Slot::Arrived(b, taken) => {
                *taken = true;
                Some(Got::Bytes(b.clone()))
            }
            Slot::Failed(e, _) => Some(Got::Failed(copy_error(e))),
            Slot::Pending(_) | Slot::Arriving(..) => None,
        })
    }

    /// Bytes `at..at + buf.len()` of chunk `n` into `buf`, waiting only until those bytes
    /// arrived (a chunk is decoded block by block as it streams in).
    pub(crate) fn read(&self, n: u64, at: usize, buf: &mut [u8]) -> Part {
        let Some(end) = at.checked_add(buf.len()) else {
            return Part::Absent;
        };
        self.wait(n, Some(end), Part::Absent, |slot| {
            let (copied, taken) = match slot {
                Slot::Arrived(b, taken) => match b.copy_to(at, buf) {
                    true => (true, taken),
                    false => return Some(Part::Absent),
                },
                Slot::Arriving(_, len, _) if end as u64 > *len => return Some(Part::Absent),
                Slot::Arriving(b, _, taken) => (b.copy_to(at, buf), taken),
                Slot::Failed(e, _) => return Some(Part::Failed(copy_error(e))),
                Slot::Pending(_) => return None,
            };
            // Not arrived yet: wait.
            copied.then(|| {
                *taken = true;
                Part::Copied
            })
        })
    }

    /// Wait on chunk `n` until `answer` answers from its slot; `absent` when it is not
    /// here and not coming. A chunk announced and not fetched yet is fetched next. A reader
    /// of the chunk's first `need` bytes is woken when they arrived; others when the chunk
    /// is whole (or failed).
    fn wait<R>(
        &self,
        n: u64,
        need: Option<usize>,
        absent: R,
        mut answer: impl FnMut(&mut Slot) -> Option<R>,
    ) -> R {
        let mut st = self.lock();
        st.forget_old_failure(n);
        loop {
            let pending = match st.slots.get_mut(&n) {
                Some(slot) => {
                    if let Some(r) = answer(slot) {
                        return r;
                    }
                    true
                }
                None => false,
            };
            let coming = pending || (st.worker && st.queued.contains(&n));
            if !coming {
                if st.queued.remove(&n) {
                    st.queue.retain(|w| w.0 != n);
                }
                return absent;
            }
            if !pending && st.urgent.insert(n) {
                // Announced, not fetched yet: fetched next; wait for it.
                if let Some(i) = st.queue.iter().position(|w| w.0 == n) {
                    let w = st.queue.remove(i).expect("found");
                    st.queue.push_front(w);
                }
            }
            if let Some(need) = need {
                let least = st.needs.entry(n).or_insert(need);
                *least = (*least).min(need);
            }
            st = self.arrived.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Announce `wanted` (in the order they will be read): they are fetched in the
    /// background from `src`.
    pub(crate) fn prefetch(self: &Arc<Self>, src: &Arc<dyn RangeRead>, wanted: &[Want]) {
        let mut st = self.lock();
        for &w in wanted {
            if matches!(st.slots.get(&w.0), Some(Slot::Failed(..))) {
                st.slots.remove(&w.0); // announced again: fetched again
            }
            if !st.slots.contains_key(&w.0) && st.queued.insert(w.0) {
                st.queue.push_back(w);
            }
        }
        if st.worker || st.queue.is_empty() {
            return;
        }
        st.worker = true;
        drop(st);
        // The first window is marked pending now, so that readers starting at once wait
        // for it rather than fetch their chunks themselves.
        let first = self.next_window().unwrap_or_default();
        let (weak, src) = (Arc::downgrade(self), src.clone());
        let unstarted = first.clone();
        let spawned = std::thread::Builder::new()
            .name("b2nd-prefetch".into())
            .spawn(move || run(weak, src, first));
        if spawned.is_err() {
            // No thread: the readers fetch their chunks themselves.
            let mut st = self.lock();
            st.worker = false;
            st.queue.clear();
            st.queued.clear();
            st.urgent.clear();
            for w in unstarted {
                st.slots.remove(&w.0);
            }
            drop(st);
            self.arrived.notify_all();
        }
    }

    /// The next window of chunks to fetch (marked pending), empty when the window is full
    /// or nothing is queued; `None` when nothing is queued (the thread then ends).
    fn next_window(&self) -> Option<Vec<Want>> {
        let mut st = self.lock();
        if st.queue.is_empty() {
            st.worker = false;
            return None;
        }
        let room = (self.budget as u64 / 2).saturating_sub(st.ahead());
        let mut window = Vec::new();
        let mut size = 0u64;
        while let Some(&w) = st.queue.front() {
            let urgent = st.urgent.remove(&w.0);
            if !urgent && size + w.2 > room && !(window.is_empty() && st.ahead() == 0) {
                break;
            }
            st.queue.pop_front();
            st.queued.remove(&w.0);
            st.slots.insert(w.0, Slot::Pending(w.2));
            size += w.2;
            window.push(w);
        }
        Some(window)
    }

    /// Take the next piece of chunk `n`'s bytes (or its fetch's failure); a chunk whose
    /// bytes are all here is published whole, then taken chunks are dropped, oldest first,
    /// while over the budget. `false` after a failure (the rest of the window is dropped).
    fn arrive(&self, n: u64, piece: crate::error::Result<Piece>) -> bool {
        let mut guard = self.lock();
        let st = &mut *guard;
        let failed = |st: &mut State, e: Error| {
            st.slots.insert(n, Slot::Failed(e, Instant::now()));
            st.needs.remove(&n);
            st.failing = true;
        };
        // Whether a reader may be answered now (a piece that completes nothing wakes none).
        let mut wake = true;
        if let Ok(b) = &piece {
            wake = (**b).as_ref().is_empty();
        }
        match piece {
            Ok(b) => {
                let pending = match st.slots.get(&n) {
                    Some(Slot::Pending(len)) => Some(*len),
                    _ => None,
                };
                if let Some(len) = pending {
                    st.slots
                        .insert(n, Slot::Arriving(Pieces::default(), len, false));
                }
                let size = (*b).as_ref().len();
                let whole = match st.slots.get_mut(&n) {
                    Some(Slot::Arriving(v, len, _)) if (v.len() + size) as u64 <= *len => {
                        v.push(b);
                        let (have, whole) = (v.len(), v.len() as u64 == *len);
                        // The readers waiting in this chunk are woken when what one of
                        // them needs arrived.
                        if st.needs.get(&n).is_some_and(|&need| have >= need) {
                            st.needs.remove(&n);
                            wake = true;
                        }
                        whole
                    }
                    Some(Slot::Arriving(_, len, _)) => {
                        let e = Error::Remote {
                            url: String::new(),
                            reason: format!("more than the {len} bytes asked for a chunk"),
                        };
                        failed(st, e);
                        false
                    }
                    _ => false, // failed or dropped meanwhile: the piece is not wanted
                };
                if whole {
                    wake = true;
                    st.needs.remove(&n);
                    if let Some(Slot::Arriving(v, _, taken)) = st.slots.remove(&n) {
                        st.bytes += v.len();
                        st.order.push_back(n);
                        st.slots.insert(n, Slot::Arrived(Arc::new(v), taken));
                    }
                }
            }
            Err(e) => failed(st, e),
        }
        let mut i = 0;
        while st.bytes > self.budget && i < st.order.len() {
            let old = st.order[i];
            if matches!(st.slots.get(&old), Some(Slot::Arrived(_, true))) {
                st.order.remove(i);
                if let Some(Slot::Arrived(b, _)) = st.slots.remove(&old) {
                    st.bytes -= b.len();
                }
            } else {
                i += 1;
            }
        }
        let go_on = !st.failing;
        drop(guard);
        if wake || !go_on {
            self.arrived.notify_all();
        }
        go_on
    }
}

/// Chunk `n` of a cache as a source of ranges, the chunk starting at `base` of `src`: a read
/// waits only for the bytes it needs (a chunk is decoded block by block as it streams in),
/// and reads bytes the cache does not hold (dropped, never announced) from `src`.
pub(crate) struct CachedChunk<'a> {
    pub(crate) cache: &'a ChunkCache,
    pub(crate) n: u64,
    pub(crate) base: u64,
    pub(crate) src: &'a dyn RangeRead,
}

impl RangeRead for CachedChunk<'_> {
    fn location(&self) -> String {
        self.src.location()
    }

    fn size(&self) -> crate::error::Result<u64> {
        self.src.size()
    }

    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> crate::error::Result<()> {
        let mut rest = Vec::new();
        for (pos, buf) in reads.iter_mut() {
            let at = pos
                .checked_sub(self.base)
                .and_then(|a| usize::try_from(a).ok());
            match at.map(|a| self.cache.read(self.n, a, buf)) {
                Some(Part::Copied) => {}
                Some(Part::Failed(e)) => return Err(e),
                Some(Part::Absent) | None => rest.push((*pos, &mut **buf)),
            }
        }
        if rest.is_empty() {
            return Ok(());
        }
        self.src.read_vectored_at(&mut rest)
    }
}

/// The same error again (errors are not `Clone`): a remote error as it is, any other by its
/// message.
fn copy_error(e: &Error) -> Error {
    match e {
        Error::Remote { url, reason } => Error::Remote {
            url: url.clone(),
            reason: reason.clone(),
        },
        other => Error::Remote {
            url: String::new(),
            reason: other.to_string(),
        },
    }
}

/// The fetching thread: windows of announced chunks until none is left or the frame is
/// gone. A window full of chunks no reader takes for a second (a reader that stopped)
/// ends it, forgetting what is still queued.
fn run(cache: Weak<ChunkCache>, src: Arc<dyn RangeRead>, first: Vec<Want>) {
    let mut idle = 0;
    let mut next = Some(first);
    loop {
        let Some(c) = cache.upgrade() else {
            return;
        };
        let window = match next.take() {
            Some(w) if !w.is_empty() => w,
            _ => match c.next_window() {
                Some(w) => w,
                None => {
                    c.arrived.notify_all();
                    return;
                }
            },
        };
        if window.is_empty() {
            idle += 1;
            if idle > 500 {
                let mut st = c.lock();
                st.queue.clear();
                st.queued.clear();
                st.urgent.clear();
                st.worker = false;
                drop(st);
                c.arrived.notify_all();
                return;
            }
            drop(c);
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        idle = 0;
        let reads: Vec<(u64, usize)> = window.iter().map(|w| (w.1, w.2 as usize)).collect();
        src.read_each(&reads, &mut |i, piece| c.arrive(window[i].0, piece));
        if c.lock().failing {
            // A fetch failed (after the storage's retries): the source is failing; nothing
            // more is fetched ahead, readers fetch (and report) for themselves.
            let mut st = c.lock();
            st.queue.clear();
            st.queued.clear();
            st.urgent.clear();
            st.failing = false;
            // The chunks of the window not fetched yet share the failure: their readers
            // report it at once rather than wait out the retries again.
            let failure = window.iter().find_map(|w| match st.slots.get(&w.0) {
                Some(Slot::Failed(e, at)) => Some((copy_error(e), *at)),
                _ => None,
            });
            for w in &window {
                if matches!(
                    st.slots.get(&w.0),
                    Some(Slot::Pending(_) | Slot::Arriving(..))
                ) {
                    match &failure {
                        Some((e, at)) => {
                            st.slots.insert(w.0, Slot::Failed(copy_error(e), *at));
                        }
                        None => {
                            st.slots.remove(&w.0);
                        }
                    }
                }
            }
            st.worker = false;
            drop(st);
            c.arrived.notify_all();
            return;
        }
        // A read the source never answered (or not whole) must not keep readers waiting.
        let mut st = c.lock();
        for w in &window {
            if matches!(
                st.slots.get(&w.0),
                Some(Slot::Pending(_) | Slot::Arriving(..))
            ) {
                st.slots.remove(&w.0);
                st.needs.remove(&w.0);
            }
        }
        drop(st);
        c.arrived.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A source of `len` bytes (`i % 251`) whose `read_each` hands each range over in
    /// pieces of 64 KiB, waits for `go` after the first `held` pieces of the first range,
    /// and fails instead of sending the rest when `fail` is set.
    struct Gated {
        len: usize,
        held: usize,
        go: Mutex<mpsc::Receiver<()>>,
        fail: bool,
    }

    fn byte(i: usize) -> u8 {
        (i % 251) as u8
    }

    impl RangeRead for Gated {
        fn location(&self) -> String {
            "gated".into()
        }
        fn size(&self) -> crate::error::Result<u64> {
            Ok(self.len as u64)
        }
        fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> crate::error::Result<()> {
            for (pos, buf) in reads.iter_mut() {
                for (k, b) in buf.iter_mut().enumerate() {
                    *b = byte(*pos as usize + k);
                }
            }
            Ok(())
        }
        fn read_each(
            &self,
            reads: &[(u64, usize)],
            piece: &mut (dyn FnMut(usize, crate::error::Result<Piece>) -> bool + Send),
        ) {
            for (i, &(pos, len)) in reads.iter().enumerate() {
                let bytes: Vec<u8> = (pos as usize..pos as usize + len).map(byte).collect();
                for (k, p) in bytes.chunks(64 << 10).enumerate() {
                    if i == 0 && k == self.held {
                        self.go.lock().unwrap().recv().unwrap();
                        if self.fail {
                            let e = Error::Remote {
                                url: "gated".into(),
                                reason: "cut".into(),
                            };
                            piece(i, Err(e));
                            return;
                        }
                    }
                    if !piece(i, Ok(Box::new(p.to_vec()))) {
                        return;
                    }
                }
            }
        }
    }

    /// A chunk's first bytes are read while the rest of it is still on its way (the fetch
    /// holds back after four pieces until the reader got them), and its last ones once they
    /// arrive; a chunk whose fetch fails midway gives its first bytes and then the failure.
    #[test]
    fn a_chunks_bytes_are_read_as_they_arrive() {
        for fail in [false, true] {
            let len = 1 << 20;
            let (go, wait) = mpsc::channel();
            let src: Arc<dyn RangeRead> = Arc::new(Gated {
                len,
                held: 4,
                go: Mutex::new(wait),
                fail,
            });
            let cache = Arc::new(ChunkCache::new(8 << 20));
            cache.prefetch(&src, &[(7, 0, len as u64)]);
            let cached = |n| CachedChunk {
                cache: &cache,
                n,
                base: 0,
                src: src.as_ref(),
            };
            let chunk = cached(7);
            // Four pieces (256 KiB) are all that can arrive before `go`.
            let mut first = vec![0u8; 200_000];
            assert!(matches!(cache.read(7, 1000, &mut first), Part::Copied));
            assert!(first.iter().enumerate().all(|(k, &b)| b == byte(1000 + k)));
            go.send(()).unwrap();
            let mut last = vec![0u8; 5000];
            let got = chunk.read_vectored_at(&mut [(len as u64 - 5000, &mut last[..])]);
            if fail {
                assert!(got.is_err(), "a failed fetch is told, not read around");
            } else {
                got.unwrap();
                assert!(last
                    .iter()
                    .enumerate()
                    .all(|(k, &b)| b == byte(len - 5000 + k)));
                assert!(matches!(cache.get(7), Got::Bytes(b) if b.len() == len));
            }
            // A chunk never announced is read from the source.
            let other = cached(8);
            let mut some = vec![0u8; 300];
            other
                .read_vectored_at(&mut [(4242, &mut some[..])])
                .unwrap();
            assert!(some.iter().enumerate().all(|(k, &b)| b == byte(4242 + k)));
        }
    }

    /// Bytes read from pieces of any sizes (empty ones too) are the bytes at that place of
    /// the whole, for every start and length inside it; past the end nothing is copied.
    #[test]
    fn pieces_read_as_the_bytes_they_join() {
        let whole: Vec<u8> = (0..300).map(byte).collect();
        let mut pieces = Pieces::default();
        let mut at = 0;
        for size in [0, 1, 7, 0, 64, 3, 100, 0, 125] {
            pieces.push(Box::new(whole[at..at + size].to_vec()));
            at += size;
        }
        assert_eq!(at, whole.len());
        let mut joined = vec![0u8; whole.len()];
        assert!(pieces.copy_to(0, &mut joined));
        assert_eq!(joined, whole);
        for start in 0..=whole.len() {
            for len in [0, 1, 2, 6, 8, 65, 170, whole.len()] {
                let mut buf = vec![0u8; len];
                let fits = start + len <= whole.len();
                assert_eq!(pieces.copy_to(start, &mut buf), fits, "{start}+{len}");
                if fits {
                    assert_eq!(buf, whole[start..start + len], "{start}+{len}");
                }
            }
        }
    }
}
