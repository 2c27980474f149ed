//! Items written to a BatchArray python-blosc2 wrote (its `msgpack` serializer, or `arrow` with
//! feature `arrow`, in the array's `arrow_schema`): one item per
//! row of a table's variable-length column (`list`, `vlstring`, `vlbytes`, `object`,
//! `struct`) or per value of a dictionary column's values store. Appended items become
//! batches of the array's `batch_rows` (python's pending rows flushed: full batches, then
//! the rest at close), each written as `BatchArray.append` writes one: the items cut into
//! blocks of the array's `items_per_block`, each block a msgpack list, the blocks one
//! variable-length-block chunk appended to the frame, and the batch's length added to the
//! `_batch_array_metadata` attribute's `batch_lengths`. Items that replace others from a row
//! on (rows past a table's end cut off, rows updated, a compaction) are written the same
//! way: the batches before that row stay, the batch holding it is cut there, and the new
//! items join what is left of it. An array that holds no batch yet takes its
//! `items_per_block` from the first batch as python-blosc2 chooses it (`_guess_blocksize`),
//! up to 127 (the metalayer keeps its size when it changes in place; python may choose more,
//! which changes how items group into blocks, not what is read). One atomic change of the
//! frame.

#![forbid(unsafe_code)]

use std::path::Path;

use super::edit::{edit_frame, FrameAt, Tail};
use crate::codec::chunk::Decoder;
use crate::codec::vlblocks::{decode_blocks, encode_blocks};
use crate::error::{Error, Result};
use crate::format::frame_writer::attr_chunk;
use crate::model::attrs::Value;
use crate::model::durability::Durability;

/// The attribute holding a BatchArray's batch lengths (python-blosc2 `batch_array.py`).
const LENGTHS: &str = "_batch_array_metadata";
/// The metalayer holding a BatchArray's layout.
const META: &str = "batcharray";
/// The largest `items_per_block` b2nd records in place of a nil one (a msgpack fixint).
const MAX_INPLACE_ITEMS_PER_BLOCK: usize = 127;
/// Items per batch when the array's metalayers name none (python-blosc2's `batch_rows`).
const BATCH_ROWS: usize = 2048;
/// The most decoded bytes of one batch read back to be cut.
const MAX_BATCH_BYTES: usize = 1 << 31;

/// Where written items go in a BatchArray.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    /// After its last item.
    End,
    /// From item `n` on: the items from there are replaced (the array ends with the new
    /// ones).
    Item(u64),
}

/// Write `items` to the BatchArray frame at `path` at `at` (nothing for no items at the end).
pub(crate) fn write_items(
    path: &Path,
    at: At,
    items: &[Value],
    durability: Durability,
) -> Result<()> {
    if items.is_empty() && at == At::End {
        return Ok(());
    }
    edit_frame(path, durability, |frame, vlmeta, source| {
        let bad = |reason: String| Error::Frame {
            source_name: source.to_string(),
            reason: format!("BatchArray: {reason}"),
        };
        let disk = frame.disk;
        let raw = disk
            .parts
            .metalayer(META)
            .ok_or_else(|| bad(format!("no `{META}` metalayer")))?;
        let layout = Value::decode(raw).map_err(|e| bad(format!("`{META}`: {}", e.reason)))?;
        let Value::Map(fields) = &layout else {
            return Err(bad(format!("`{META}` is not a map")));
        };
        let field = |k: &str| {
            fields
                .iter()
                .find(|(key, _)| key.as_str() == Some(k))
                .map(|(_, v)| v)
        };
        let blocks = Blocks::of(field).map_err(bad)?;
        let codec = disk.parts.codec().map_err(|e| bad(e.0))?;
        let nchunks = disk.offsets()?.len();
        let mut lengths = batch_lengths(frame, &blocks, vlmeta, nchunks, source)?;
        // The batches kept, and the items of the one cut that stay before the new ones.
        let (keep, mut batch) = match at {
            At::End => (nchunks, Vec::new()),
            At::Item(n) => {
                let mut start = 0u64;
                let mut k = 0;
                while k < lengths.len() && start + lengths[k] <= n {
                    start += lengths[k];
                    k += 1;
                }
                if k == lengths.len() && start < n {
                    return Err(bad(format!("item {n} is past its {start} items")));
                }
                let head = if start < n {
                    let mut items = read_batch(frame, &blocks, k, source)?;
                    items.truncate((n - start) as usize);
                    items
                } else {
                    Vec::new()
                };
                (k, head)
            }
        };
        lengths.truncate(keep);
        batch.extend_from_slice(items);
        // Batches of the array's `batch_rows` items, the last one shorter (python's
        // `_flush_full_batches`, then `flush` at close).
        let batch_rows = disk
            .parts
            .metalayers()
            .iter()
            .filter_map(|(_, raw)| Value::decode(raw).ok())
            .find_map(|m| m.get("batch_rows").and_then(Value::as_u64))
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0)
            .unwrap_or(BATCH_ROWS);
        let payloads: Vec<Vec<u8>> = batch.iter().take(batch_rows).map(Value::encode).collect();
        let (per_block, meta) = match field("items_per_block") {
            Some(v) if !v.is_nil() => (
                v.as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad(format!("items_per_block {v:?}")))?,
                None,
            ),
            _ if nchunks > 0 => {
                return Err(bad(format!("{nchunks} batches and no items_per_block")))
            }
            _ if batch.is_empty() => (1, None),
            _ => {
                let n =
                    guess_items_per_block(&payloads, codec.clevel).min(MAX_INPLACE_ITEMS_PER_BLOCK);
                let mut new = fields.clone();
                match new
                    .iter_mut()
                    .find(|(k, _)| k.as_str() == Some("items_per_block"))
                {
                    Some(slot) => slot.1 = Value::Int(n as i64),
                    None => return Err(bad("no items_per_block in its layout".into())),
                }
                let content = Value::Map(new).encode();
                if layout.encode() != raw || content.len() != raw.len() {
                    return Err(bad(format!(
                        "`{META}` is not laid out as python-blosc2 writes it"
                    )));
                }
                (n, Some((META, content)))
            }
        };
        let mut chunks = Vec::new();
        for part in batch.chunks(batch_rows) {
            let encoded = part
                .chunks(per_block)
                .map(|block| blocks.encode(block))
                .collect::<std::result::Result<Vec<Vec<u8>>, String>>()
                .map_err(bad)?;
            chunks.push(encode_blocks(&encoded, &codec).map_err(|e| bad(e.to_string()))?);
            lengths.push(part.len() as u64);
        }
        if let Some(lengths) = lengths.recorded {
            store_lengths(vlmeta, lengths, source)?;
        }
        Ok(Some(Tail { keep, chunks, meta }))
    })
}

/// How a BatchArray's blocks hold their items (its metalayer's `serializer`).
enum Blocks {
    /// A msgpack list per block.
    Msgpack,
    /// An Arrow IPC stream per block, of the metalayer's `arrow_schema` (kept as stored, for
    /// blocks of the older bare form).
    #[cfg(feature = "arrow")]
    Arrow {
        raw: Vec<u8>,
        schema: arrow_schema::Schema,
    },
}

impl Blocks {
    /// The blocks of the layout whose fields `field` looks up.
    fn of<'a>(field: impl Fn(&str) -> Option<&'a Value>) -> std::result::Result<Self, String> {
        match field("serializer").and_then(Value::as_str) {
            None | Some("msgpack") => Ok(Blocks::Msgpack),
            #[cfg(feature = "arrow")]
            Some("arrow") => match field("arrow_schema") {
                Some(Value::Bytes(raw)) => Ok(Blocks::Arrow {
                    schema: crate::format::arrow_ipc::block_schema(raw)?,
                    raw: raw.clone(),
                }),
                _ => Err(
                    "serialized as Arrow with no arrow_schema yet: b2nd writes the \
                          items of an Arrow BatchArray python-blosc2 gave its first batch"
                        .into(),
                ),
            },
            #[cfg(not(feature = "arrow"))]
            Some("arrow") => {
                Err("serialized as Arrow: b2nd writes those with feature `arrow`".into())
            }
            Some(other) => Err(format!(
                "batches serialized as {other:?} are not written (msgpack and Arrow ones are)"
            )),
        }
    }

    fn encode(&self, items: &[Value]) -> std::result::Result<Vec<u8>, String> {
        match self {
            Blocks::Msgpack => Ok(Value::Array(items.to_vec()).encode()),
            #[cfg(feature = "arrow")]
            Blocks::Arrow { schema, .. } => crate::format::arrow_ipc::encode_block(items, schema),
        }
    }

    fn decode(&self, block: &[u8]) -> std::result::Result<Vec<Value>, String> {
        match self {
            Blocks::Msgpack => {
                match Value::decode(block).map_err(|e| format!("not msgpack: {}", e.reason))? {
                    Value::Array(v) => Ok(v),
                    other => Err(format!("a block holds {other:?}, not a list")),
                }
            }
            #[cfg(feature = "arrow")]
            Blocks::Arrow { raw, .. } => {
                crate::format::arrow_ipc::block_items(block, Some(raw), None)
            }
        }
    }
}

/// The items of batch `k` of a BatchArray.
fn read_batch(frame: &FrameAt<'_>, blocks: &Blocks, k: usize, source: &str) -> Result<Vec<Value>> {
    let bad = |reason: String| Error::Chunk {
        source_name: source.to_string(),
        chunk: k as i64,
        reason,
    };
    let chunk = frame.chunk(k)?;
    let mut items = Vec::new();
    for block in decode_blocks(&chunk, MAX_BATCH_BYTES).map_err(|e| bad(e.to_string()))? {
        items.extend(blocks.decode(&block).map_err(bad)?);
    }
    Ok(items)
}

/// A BatchArray's batch lengths: from its attribute, or counted from the batches when it has
/// none (python-blosc2 counts them then too).
struct Lengths {
    all: Vec<u64>,
    /// Whether the attribute records them (it is then kept true).
    recorded: Option<Vec<u64>>,
}

impl std::ops::Deref for Lengths {
    type Target = Vec<u64>;
    fn deref(&self) -> &Vec<u64> {
        &self.all
    }
}

impl Lengths {
    fn truncate(&mut self, n: usize) {
        self.all.truncate(n);
        if let Some(r) = &mut self.recorded {
            r.truncate(n);
        }
    }

    fn push(&mut self, len: u64) {
        self.all.push(len);
        if let Some(r) = &mut self.recorded {
            r.push(len);
        }
    }
}

fn batch_lengths(
    frame: &FrameAt<'_>,
    blocks: &Blocks,
    vlmeta: &[(String, Vec<u8>)],
    nchunks: usize,
    source: &str,
) -> Result<Lengths> {
    let bad = |reason: String| Error::Attr {
        source_name: source.to_string(),
        name: LENGTHS.to_string(),
        reason,
    };
    match vlmeta.iter().find(|(k, _)| k == LENGTHS) {
        Some((_, stored)) => {
            let bytes = Decoder::new(1)
                .decode_standalone(stored, crate::schunk::MAX_ATTR_BYTES)
                .map_err(|e| bad(e.to_string()))?;
            let value = Value::decode(&bytes).map_err(|e| bad(e.reason))?;
            let list = match &value {
                Value::Map(fields) => fields
                    .iter()
                    .find(|(k, _)| k.as_str() == Some("batch_lengths"))
                    .map(|(_, v)| v.clone()),
                _ => None,
            };
            let all: Option<Vec<u64>> = match &list {
                Some(Value::Array(v)) if v.len() == nchunks => {
                    v.iter().map(Value::as_u64).collect()
                }
                _ => None,
            };
            let all =
                all.ok_or_else(|| bad(format!("batch_lengths {list:?} for {nchunks} batches")))?;
            Ok(Lengths {
                recorded: Some(all.clone()),
                all,
            })
        }
        None => {
            let all = (0..nchunks)
                .map(|k| read_batch(frame, blocks, k, source).map(|v| v.len() as u64))
                .collect::<Result<Vec<u64>>>()?;
            Ok(Lengths {
                // An array that held no batch starts the attribute, as python's first append.
                recorded: (nchunks == 0).then(Vec::new),
                all,
            })
        }
    }
}

/// The batch lengths stored in the attribute.
fn store_lengths(
    vlmeta: &mut Vec<(String, Vec<u8>)>,
    lengths: Vec<u64>,
    source: &str,
) -> Result<()> {
    let value = Value::Map(vec![(
        Value::Str("batch_lengths".into()),
        Value::Array(lengths.into_iter().map(|n| Value::Int(n as i64)).collect()),
    )]);
    let stored = attr_chunk(&value.encode()).map_err(|e| Error::Attr {
        source_name: source.to_string(),
        name: LENGTHS.to_string(),
        reason: format!("could not store it ({e})"),
    })?;
    match vlmeta.iter_mut().find(|(k, _)| k == LENGTHS) {
        Some(slot) => slot.1 = stored,
        None => vlmeta.push((LENGTHS.to_string(), stored)),
    }
    Ok(())
}

/// python-blosc2's `BatchArray._guess_blocksize`: items per block from a first batch's
/// msgpack sizes and the level (a fixed budget of bytes per block for levels 1-8).
fn guess_items_per_block(payloads: &[Vec<u8>], clevel: u8) -> usize {
    let budget: usize = match clevel {
        1..=3 => 1 << 20,
        4..=6 => 1 << 23,
        7 | 8 => 1 << 24,
        _ => return payloads.len(),
    };
    let (mut total, mut count) = (0usize, 0usize);
    for p in payloads {
        if count > 0 && total + p.len() > budget {
            break;
        }
        total += p.len();
        count += 1;
    }
    count.clamp(1, payloads.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_per_block_follows_python() {
        let small = vec![vec![0u8; 10]; 50];
        assert_eq!(guess_items_per_block(&small, 5), 50);
        assert_eq!(guess_items_per_block(&small, 9), 50);
        assert_eq!(guess_items_per_block(&small, 0), 50);
        let big = vec![vec![0u8; 300 << 10]; 10];
        // 1 MiB at levels 1-3: three items of 300 KiB fit, the fourth does not.
        assert_eq!(guess_items_per_block(&big, 2), 3);
        // One item larger than the budget still makes a block.
        assert_eq!(guess_items_per_block(&[vec![0u8; 2 << 20]], 1), 1);
    }
}
