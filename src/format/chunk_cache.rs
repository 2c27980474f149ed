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
use std::time::Duration;

use crate::storage::RangeRead;

/// One chunk's place in the cache.
enum Slot {
    /// Being fetched: this many bytes.
    Pending(u64),
    /// Its bytes (from its offset to the next chunk's), and whether a reader took it.
    Ready(Arc<Vec<u8>>, bool),
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
}

impl State {
    /// Bytes fetched or being fetched that no reader took yet.
    fn ahead(&self) -> u64 {
        self.slots
            .values()
            .map(|s| match s {
                Slot::Pending(len) => *len,
                Slot::Ready(b, false) => b.len() as u64,
                Slot::Ready(_, true) => 0,
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
        let st = self.lock();
        st.slots.contains_key(&n) || st.queued.contains(&n)
    }

    /// Chunk `n`'s bytes, waiting while it is being fetched; `None` when it is not here
    /// (never announced, dropped, not fetched yet, or its fetch failed: the caller then
    /// fetches it itself and reports any error).
    pub(crate) fn get(&self, n: u64) -> Option<Arc<Vec<u8>>> {
        let mut st = self.lock();
        loop {
            let pending = match st.slots.get_mut(&n) {
                Some(Slot::Ready(b, taken)) => {
                    *taken = true;
                    return Some(b.clone());
                }
                Some(Slot::Pending(_)) => true,
                None => false,
            };
            let coming = pending || (st.worker && st.queued.contains(&n));
            if !coming {
                if st.queued.remove(&n) {
                    st.queue.retain(|w| w.0 != n);
                }
                return None;
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

    /// Publish chunk `n` (or drop it after a failed fetch), then drop taken chunks, oldest
    /// first, while over the budget.
    fn arrive(&self, n: u64, got: crate::error::Result<Vec<u8>>) {
        let mut st = self.lock();
        match got {
            Ok(b) => {
                st.bytes += b.len();
                st.order.push_back(n);
                st.slots.insert(n, Slot::Ready(Arc::new(b), false));
            }
            Err(_) => {
                st.slots.remove(&n);
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
        drop(st);
        self.arrived.notify_all();
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
