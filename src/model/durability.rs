//! [`Durability`]: what an in-place change or a whole write is guaranteed to survive once it
//! returns.

#![forbid(unsafe_code)]

/// What an in-place change ([`ArrayMut`](crate::ArrayMut)) or a whole write
/// ([`ArrayBuilder::durability`](crate::ArrayBuilder::durability)) survives once it has
/// returned.
///
/// Both settings write in the same order and publish each change atomically (a journaled
/// header write, or a rename): a process killed at any moment (`kill -9`, a panic, an
/// abort) leaves the whole old or the whole new contents. They differ in what reaches the
/// disk before a change returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// The default. Data and journal record, then the header, are synced to the disk
    /// before the change is published and before it returns (two `fdatasync`s for a
    /// contiguous file; chunk files, the index and the directory for a sparse frame): the
    /// change also survives an operating-system crash or a power loss. A whole write syncs
    /// the new file (or every file of a new sparse frame) before the rename that publishes
    /// it, and the directory after.
    #[default]
    Disk,
    /// No syncs: the change is in the operating system's page cache when it returns. A
    /// killed process still leaves the old or the new contents, but an operating-system
    /// crash or a power loss may lose recent changes or leave the file unreadable (the
    /// disk may receive the new header before the data it refers to), as with
    /// python-blosc2, which never syncs. For many small appends where the data can be
    /// written again after such a crash: each change saves two disk flushes, and a whole
    /// write the wait for its bytes to reach the disk.
    Process,
}

impl Durability {
    /// Whether changes are synced to the disk.
    pub(crate) fn syncs(self) -> bool {
        self == Durability::Disk
    }
}
