//! The key map of an embed store (`estore_metadata`, a vlmeta entry of the store's SChunk):
//! for each embedded key, where its frame lies in the SChunk's decoded byte stream, or the
//! remote array it refers to.

#![forbid(unsafe_code)]

use crate::model::attrs::Value;

/// Where an embedded key's value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Embedded {
    /// A whole CFrame at `offset..offset + length` of the decoded stream.
    Frame { offset: u64, length: u64 },
    /// A reference to a remote array (python-blosc2's `C2Array`): nothing stored here.
    Remote { urlbase: String, path: String },
}

/// Parse `estore_metadata` (`{"embed_map": {key: {"offset", "length"} | {"urlbase",
/// "path"}}, "current_offset": n}`) against a stream of `nbytes` decoded bytes: every frame
/// must lie inside the stream, every key must be valid and appear once. Keys in map order.
pub(crate) fn parse_map(meta: &Value, nbytes: u64) -> Result<Vec<(String, Embedded)>, String> {
    let map = meta
        .get("embed_map")
        .ok_or("no `embed_map` in `estore_metadata`")?
        .as_map()
        .ok_or("`embed_map` is not a map")?;
    let mut out: Vec<(String, Embedded)> = Vec::with_capacity(map.len());
    let mut seen = std::collections::HashSet::new();
    for (k, v) in map {
        let key = k
            .as_str()
            .ok_or_else(|| format!("a key that is not a string: {k:?}"))?;
        super::keys::check_key(key).map_err(|why| format!("key {key:?}: {why}"))?;
        if !seen.insert(key) {
            return Err(format!("key {key:?} occurs twice"));
        }
        let field = |name: &str| v.get(name);
        let place = match (
            field("offset"),
            field("length"),
            field("urlbase"),
            field("path"),
        ) {
            (Some(o), Some(l), None, None) => {
                let (offset, length) = (o.as_u64(), l.as_u64());
                let (Some(offset), Some(length)) = (offset, length) else {
                    return Err(format!("key {key:?}: offset or length is not a count"));
                };
                if offset.checked_add(length).is_none_or(|e| e > nbytes) {
                    return Err(format!(
                        "key {key:?}: bytes {offset}..{offset}+{length} lie outside the \
                         {nbytes}-byte stream"
                    ));
                }
                Embedded::Frame { offset, length }
            }
            (None, None, Some(u), Some(p)) => match (u.as_str(), p.as_str()) {
                (Some(u), Some(p)) => Embedded::Remote {
                    urlbase: u.to_string(),
                    path: p.to_string(),
                },
                _ => return Err(format!("key {key:?}: urlbase or path is not a string")),
            },
            _ => {
                return Err(format!(
                    "key {key:?}: neither {{offset, length}} nor {{urlbase, path}}: {v:?}"
                ))
            }
        };
        out.push((key.to_string(), place));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    fn frame(offset: i64, length: i64) -> Value {
        Value::Map(vec![
            (s("offset"), Value::Int(offset)),
            (s("length"), Value::Int(length)),
        ])
    }

    fn meta(entries: Vec<(Value, Value)>) -> Value {
        Value::Map(vec![
            (s("embed_map"), Value::Map(entries)),
            (s("current_offset"), Value::Int(0)),
        ])
    }

    #[test]
    fn frames_and_remotes() {
        let remote = Value::Map(vec![(s("urlbase"), s("https://x/")), (s("path"), s("a/b"))]);
        let m = meta(vec![(s("/a"), frame(0, 10)), (s("/r"), remote)]);
        let got = parse_map(&m, 10).unwrap();
        assert_eq!(
            got[0],
            (
                "/a".into(),
                Embedded::Frame {
                    offset: 0,
                    length: 10
                }
            )
        );
        assert!(matches!(got[1].1, Embedded::Remote { .. }));
    }

    #[test]
    fn hostile_maps_are_refused() {
        let cases = [
            meta(vec![(s("/a"), frame(5, 6))]),  // past the end
            meta(vec![(s("/a"), frame(-1, 2))]), // negative
            meta(vec![(s("/a"), frame(0, 1)), (s("/a"), frame(1, 1))]), // duplicate
            meta(vec![(s("a"), frame(0, 1))]),   // not absolute
            meta(vec![(s("/../x"), frame(0, 1))]), // escaping
            meta(vec![(Value::Int(3), frame(0, 1))]), // not a string
            meta(vec![(s("/a"), Value::Int(1))]), // no place
            Value::Map(vec![]),                  // no embed_map
        ];
        for (i, m) in cases.iter().enumerate() {
            assert!(parse_map(m, 10).is_err(), "case {i}");
        }
        // offset + length overflows u64.
        let big = Value::Map(vec![
            (s("offset"), Value::UInt(u64::MAX)),
            (s("length"), Value::Int(2)),
        ]);
        assert!(parse_map(&meta(vec![(s("/a"), big)]), u64::MAX).is_err());
    }
}
