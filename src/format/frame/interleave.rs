//! A test's writer between an open's reads: after the `k`-th read of a contiguous frame's
//! bytes while it is opened (on this thread), a closure runs once, as a writer's change in
//! place (python-blosc2 takes no lock) landing between them.

use super::*;
use std::cell::{Cell, RefCell};

/// The read after which the closure runs, and the closure.
type Pending = Option<(usize, Box<dyn FnOnce()>)>;

thread_local! {
    /// The reads made so far (counted from the last [`set`]).
    static READS: Cell<usize> = const { Cell::new(0) };
    /// What runs after which read.
    static AFTER: RefCell<Pending> = const { RefCell::new(None) };
}

/// Run `f` once after the `k`-th read from now (counting from 1); the reads counted
/// again from 0.
pub(crate) fn set(k: usize, f: impl FnOnce() + 'static) {
    READS.with(|r| r.set(0));
    AFTER.with(|a| *a.borrow_mut() = Some((k, Box::new(f))));
}

/// The reads made since the last [`set`], and whether its closure ran.
pub(crate) fn reads() -> (usize, bool) {
    (READS.with(Cell::get), AFTER.with(|a| a.borrow().is_none()))
}

/// A source whose reads are counted and followed by the closure when their turn comes.
pub(crate) struct Interleaved(pub(crate) Arc<dyn RangeRead>);

impl RangeRead for Interleaved {
    fn location(&self) -> String {
        self.0.location()
    }

    fn size(&self) -> Result<u64> {
        self.0.size()
    }

    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        let r = self.0.read_vectored_at(reads);
        let n = READS.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        let due = AFTER.with(|a| {
            let mut a = a.borrow_mut();
            match a.as_ref() {
                Some((k, _)) if *k == n => a.take().map(|(_, f)| f),
                _ => None,
            }
        });
        if let Some(f) = due {
            f();
        }
        r
    }
}
