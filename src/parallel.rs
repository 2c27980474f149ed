//! Where the crate's parallel work runs: rayon's global pool by default, a pool the caller
//! shares, or one thread. The only place that calls rayon: every parallel read, slice, chunk
//! walk and write goes through [`Threads::for_each_lane`].

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

/// Which threads run an array's parallel reads or a writer's compression.
///
/// The default is rayon's global pool, shared by every array and writer of the process (sized
/// by `RAYON_NUM_THREADS` or the machine's cores), so opening many arrays starts no threads.
///
/// ```
/// use std::sync::Arc;
/// use b2nd::Threads;
///
/// let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
/// let a = b2nd::Array::open("tests/data/attrs_all.b2nd")?.with_threads(Threads::Pool(pool));
/// assert_eq!(a.threads(), 2);
/// # Ok::<(), b2nd::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Threads {
    /// rayon's global pool (the default).
    #[default]
    Global,
    /// No parallelism: everything on the calling thread.
    Single,
    /// A pool the caller built (and may share between arrays and writers).
    Pool(Arc<rayon::ThreadPool>),
}

impl Threads {
    /// A dedicated pool of `n` threads ([`Threads::Single`] for 0 or 1). Prefer
    /// [`Threads::Global`] or a shared [`Threads::Pool`] when opening many arrays.
    pub fn count(n: usize) -> std::io::Result<Threads> {
        if n <= 1 {
            return Ok(Threads::Single);
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map(|p| Threads::Pool(Arc::new(p)))
            .map_err(std::io::Error::other)
    }

    /// How many threads work runs on.
    pub fn len(&self) -> usize {
        match self {
            Threads::Global => rayon::current_num_threads(),
            Threads::Single => 1,
            Threads::Pool(p) => p.current_num_threads(),
        }
    }

    /// Whether there is no thread at all (never: at least the calling one).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Run `f(lane, item)` on every item, in lanes: each of `lanes` (one state per lane: a
    /// decoder, a compression context, buffers) takes the next item in order until none is
    /// left, the lanes running on these threads. With one lane, or [`Threads::Single`], the
    /// items run in order on the calling thread with `lanes[0]`. Stops at the first error
    /// (lanes finish the item they hold), which it returns. No lane: nothing runs.
    pub(crate) fn for_each_lane<S, I, E>(
        &self,
        lanes: &mut [S],
        items: impl IntoIterator<Item = I>,
        f: impl Fn(&mut S, I) -> Result<(), E> + Sync,
    ) -> Result<(), E>
    where
        S: Send,
        I: Send,
        E: Send,
    {
        let sequential = lanes.len() == 1 || matches!(self, Threads::Single);
        let Some(first) = lanes.first_mut() else {
            return Ok(());
        };
        if sequential {
            return items.into_iter().try_for_each(|i| f(first, i));
        }
        let queue = Mutex::new(items.into_iter().collect::<Vec<I>>().into_iter());
        let failed = AtomicBool::new(false);
        let lane = |s: &mut S| loop {
            if failed.load(Ordering::Relaxed) {
                return Ok(());
            }
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some(item) = next else {
                return Ok(());
            };
            if let Err(e) = f(s, item) {
                failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        };
        match self {
            Threads::Pool(p) => {
                p.install(|| lanes.par_iter_mut().with_max_len(1).try_for_each(lane))
            }
            Threads::Global | Threads::Single => {
                lanes.par_iter_mut().with_max_len(1).try_for_each(lane)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_run_every_item_once_and_stop_on_error() {
        for threads in [Threads::Single, Threads::Global, Threads::count(3).unwrap()] {
            let mut lanes = vec![Vec::new(); 3];
            threads
                .for_each_lane(&mut lanes, 0..100u32, |seen: &mut Vec<u32>, i| {
                    seen.push(i);
                    Ok::<(), ()>(())
                })
                .unwrap();
            let mut all: Vec<u32> = lanes.concat();
            all.sort();
            assert_eq!(all, (0..100).collect::<Vec<_>>());
            // Each lane takes items in order.
            assert!(lanes.iter().all(|l| l.windows(2).all(|w| w[0] < w[1])));
            let mut lanes = vec![0u32; 2];
            let r = threads.for_each_lane(&mut lanes, 0..100u32, |n, i| {
                *n += 1;
                if i == 10 {
                    Err(i)
                } else {
                    Ok(())
                }
            });
            assert_eq!(r, Err(10));
            assert!(lanes.iter().sum::<u32>() < 100);
        }
        let mut none: Vec<()> = Vec::new();
        assert_eq!(
            Threads::Global.for_each_lane(&mut none, 0..3, |_, _| Err(())),
            Ok(())
        );
    }
}
