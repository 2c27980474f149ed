//! Where the crate's parallel work runs: rayon's global pool by default, a pool the caller
//! shares, or one thread. The only place that chooses a rayon pool.

#![forbid(unsafe_code)]

use std::sync::Arc;

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

    /// Run `f`, whose rayon parallel iterators then use these threads.
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self {
            Threads::Pool(p) => p.install(f),
            Threads::Global | Threads::Single => f(),
        }
    }
}
