//! `b2nd cat`: the contents of a store member that is not an N-d array.

use std::io::Write as _;
use std::path::Path;

use b2nd::MemberKind;

/// Write member `key` of the store at `path` to standard output: a plain SChunk's bytes as
/// they are, the items of an ObjectArray, BatchArray or ListArray as one JSON array (values
/// as `b2nd info --json` shows attributes).
pub fn run(path: &Path, key: &str) -> Result<(), Box<dyn std::error::Error>> {
    let store = crate::open_store(path)?;
    let kind = store.member_kind(key)?;
    let s = match kind {
        MemberKind::SChunk
        | MemberKind::ObjectArray
        | MemberKind::BatchArray
        | MemberKind::ListArray => store.open_schunk(key)?,
        other => {
            return Err(format!(
                "{}:{key} is a {}: `b2nd cat` writes SChunks and object arrays (to-npy writes \
                 N-d arrays)",
                path.display(),
                other.name()
            )
            .into())
        }
    };
    if kind == MemberKind::SChunk {
        let bytes = s.read_bytes()?;
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes)?;
        out.flush()?;
        return Ok(());
    }
    let items: Vec<serde_json::Value> = s.read_objects()?.iter().map(crate::json::value).collect();
    crate::emit(&format!("{}\n", serde_json::to_string(&items)?))
}
