//! Compressed chunks of a remote frame fetched ahead of the readers and kept in memory
//! under a byte budget. A read that decodes whole chunks announces them (and the chunks
//! that follow, for sequential readers); one background thread fetches them in windows of
//! at most half the budget not yet taken (the storage runs each window's requests
//! concurrently) and publishes each chunk as it arrives. Readers take their chunk when it is
//! here, so the link stays busy while cores decode, and a chunk cut between threads is
//! fetched once. Chunks taken are dropped first when the budget is exceeded.

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::storage::RangeRead;

/// One chunk's place in the cache.
enum Slot {
    /// Being fetched: this many bytes.
    Pending(u64),
    /// Its bytes (from its offset to the next chunk's), and whether a reader took it.
    Ready(Arc<Vec<u8>>, bool),
    /// Its fetch failed: the error, told to the readers of this read (for
    /// [`FAILURE_KEPT`]; a later read fetches the chunk again), and when.
    Failed(Error, Instant),
}

/// How long a failed fetch is told to readers instead of being tried again: the readers of
/// one read (the threads cutting a chunk) share one failure rather than each waiting out the
/// retries again.
const FAILURE_KEPT: Duration = Duration::from_secs(2);

/// What a reader finds for its chunk.
pub(crate) enum Got {
    /// The chunk's bytes (from its offset to the next chunk's).
    Bytes(Arc<Vec<u8>>),
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
    /// Ready chunks, oldest first.
    order: VecDeque<u64>,
    /// Bytes of ready chunks.
    bytes: usize,
    /// Chunks announced and not fetched yet, in order.
    queue: VecDeque<Want>,
    queued: HashSet<u64>,
    /// Queued chunks a reader waits for: fetched next, whatever the window's room.
    urgent: HashSet<u64>,
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
                Slot::Pending(len) => *len,
                Slot::Ready(b, false) => b.len() as u64,
                Slot::Ready(_, true) | Slot::Failed(..) => 0,
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
        let mut st = self.lock();
        st.forget_old_failure(n);
        loop {
            let pending = match st.slots.get_mut(&n) {
                Some(Slot::Ready(b, taken)) => {
                    *taken = true;
                    return Got::Bytes(b.clone());
                }
                Some(Slot::Failed(e, _)) => return Got::Failed(copy_error(e)),
                Some(Slot::Pending(_)) => true,
                None => false,
            };
            let coming = pending || (st.worker && st.queued.contains(&n));
            if !coming {
                if st.queued.remove(&n) {
                    st.queue.retain(|w| w.0 != n);
                }
                return Got::Absent;
            }
            if !pending && st.urgent.insert(n) {
                // Announced, not fetched yet: fetched next; wait for it.
                if let Some(i) = st.queue.iter().position(|w| w.0 == n) {
                    let w = st.queue.remove(i).expect("found");
                    st.queue.push_front(w);
                }
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

    /// Publish chunk `n` (or its fetch's failure), then drop taken chunks, oldest first,
    /// while over the budget; `false` after a failure (the rest of the window is dropped).
    fn arrive(&self, n: u64, got: crate::error::Result<Vec<u8>>) -> bool {
        let mut st = self.lock();
        match got {
            Ok(b) => {
                st.bytes += b.len();
                st.order.push_back(n);
                st.slots.insert(n, Slot::Ready(Arc::new(b), false));
            }
            Err(e) => {
                st.slots.insert(n, Slot::Failed(e, Instant::now()));
                st.failing = true;
            }
        }
        let mut i = 0;
        while st.bytes > self.budget && i < st.order.len() {
            let old = st.order[i];
            if matches!(st.slots.get(&old), Some(Slot::Ready(_, true))) {
                st.order.remove(i);
                if let Some(Slot::Ready(b, _)) = st.slots.remove(&old) {
                    st.bytes -= b.len();
                }
            } else {
                i += 1;
            }
        }
        let go_on = !st.failing;
        drop(st);
        self.arrived.notify_all();
        go_on
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
        src.read_each(&reads, &mut |i, got| c.arrive(window[i].0, got));
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
                if matches!(st.slots.get(&w.0), Some(Slot::Pending(_))) {
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
        // A read the source never answered must not keep readers waiting.
        let mut st = c.lock();
        for w in &window {
            if matches!(st.slots.get(&w.0), Some(Slot::Pending(_))) {
                st.slots.remove(&w.0);
            }
        }
        drop(st);
        c.arrived.notify_all();
    }
}
