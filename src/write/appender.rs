//! [`Sink`]: where a [`Writer`](super::writer::Writer)'s compressed chunks go, in order: the
//! new frame itself (one thread), or a thread that appends one slab's chunks while the next
//! slab is compressed (the page-cache copies of a write overlap its compression).

#![forbid(unsafe_code)]

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::format::frame_writer::NewFrame;

/// The frame a writer appends to, here or on its appending thread.
pub(super) enum Sink {
    /// Appended on the calling thread.
    Here(NewFrame),
    /// Appended on a thread of its own.
    Thread(Appender),
}

/// A thread appending slabs of compressed chunks to a frame, in the order they are sent;
/// it hands every slab's buffers back for reuse. At most one slab waits for it, so a writer
/// compressing faster than the frame takes chunks waits (memory stays about three slabs).
pub(super) struct Appender {
    slabs: SyncSender<Vec<Vec<u8>>>,
    spent: Receiver<Vec<Vec<u8>>>,
    thread: JoinHandle<(NewFrame, Result<()>)>,
}

impl Sink {
    /// A sink for `frame`: on its own thread when `overlap`.
    pub(super) fn new(frame: NewFrame, overlap: bool) -> Result<Sink> {
        if !overlap {
            return Ok(Sink::Here(frame));
        }
        let (slabs, todo) = sync_channel::<Vec<Vec<u8>>>(1);
        let (done, spent) = sync_channel::<Vec<Vec<u8>>>(2);
        let thread = std::thread::Builder::new()
            .name("b2nd-append".into())
            .spawn(move || {
                let mut frame = frame;
                let mut result = Ok(());
                for slab in todo {
                    // After a failure the rest is drained, not written: the writer learns of
                    // it on its next slab or at its end.
                    if result.is_ok() {
                        result = slab.iter().try_for_each(|c| frame.append(c));
                    }
                    let _ = done.try_send(slab);
                }
                (frame, result)
            })
            .map_err(|e| Error::InvalidArgument(format!("starting the appending thread: {e}")))?;
        Ok(Sink::Thread(Appender {
            slabs,
            spent,
            thread,
        }))
    }

    /// Buffers of an appended slab to compress the next one into (empty when none is back).
    pub(super) fn spent(&mut self) -> Vec<Vec<u8>> {
        match self {
            Sink::Here(_) => Vec::new(),
            Sink::Thread(a) => a.spent.try_recv().unwrap_or_default(),
        }
    }

    /// Append the chunks of `slab` in order. Returns buffers to reuse (the slab's own when
    /// appended here).
    pub(super) fn append(&mut self, slab: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        match self {
            Sink::Here(frame) => {
                slab.iter().try_for_each(|c| frame.append(c))?;
                Ok(slab)
            }
            Sink::Thread(a) => {
                if a.thread.is_finished() || a.slabs.send(slab).is_err() {
                    // The thread ends only when told to: it panicked.
                    return Err(Error::InvalidArgument(
                        "the appending thread ended early".into(),
                    ));
                }
                Ok(Vec::new())
            }
        }
    }

    /// The frame, every chunk sent appended (or the first error appending them).
    pub(super) fn into_frame(self) -> Result<NewFrame> {
        match self {
            Sink::Here(frame) => Ok(frame),
            Sink::Thread(a) => {
                drop(a.slabs);
                let (frame, result) = a
                    .thread
                    .join()
                    .map_err(|_| Error::InvalidArgument("the appending thread panicked".into()))?;
                result.map(|()| frame)
            }
        }
    }
}
