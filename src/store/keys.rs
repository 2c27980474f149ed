//! Store keys (`/dir1/node`) and the relative file paths of external members
//! (`dir1/node.b2nd`): the one place they are checked and mapped onto each other.

#![forbid(unsafe_code)]

/// File name suffixes python-blosc2 gives external members: NDArray, SChunk (and
/// ObjectArray), BatchArray / ListArray.
pub(crate) const EXTERNAL_SUFFIXES: [&str; 3] = [".b2nd", ".b2f", ".b2b"];

/// The embedded-store file of a `.b2d` / `.b2z` store.
pub(crate) const EMBED_FILE: &str = "embed.b2e";

/// A key as python-blosc2 accepts it: starts with `/`, no empty, `.` or `..` part, no
/// trailing `/` (except the root), none of `: \0 \n \r \t` (python's `_validate_key`; a
/// backslash is an ordinary character, as in python-blosc2's escaped column names).
pub(crate) fn check_key(key: &str) -> Result<(), String> {
    if !key.starts_with('/') {
        return Err("does not start with `/`".into());
    }
    if key == "/" {
        return Ok(());
    }
    if key[1..]
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err("has an empty, `.` or `..` part".into());
    }
    if let Some(c) = key
        .chars()
        .find(|c| matches!(c, ':' | '\0' | '\n' | '\r' | '\t'))
    {
        return Err(format!("holds the character {c:?}"));
    }
    Ok(())
}

/// The key of an external member at relative path `rel` (`/`-separated): the path without
/// its suffix, with a leading `/` (python's `_logical_key_from_relpath`).
pub(crate) fn key_of_path(rel: &str) -> String {
    let file_start = rel.rfind('/').map_or(0, |i| i + 1);
    let stem_end = rel[file_start..]
        .rfind('.')
        .filter(|&i| i > 0)
        .map_or(rel.len(), |i| file_start + i);
    format!("/{}", &rel[..stem_end])
}

/// The relative path of the external NDArray member at `key` (`/dir1/node` ->
/// `dir1/node.b2nd`), checked.
pub(crate) fn member_file(key: &str) -> Result<String, String> {
    check_key(key).map_err(|why| format!("key {key:?} {why}"))?;
    if key == "/" {
        return Err("the root is not a member".into());
    }
    Ok(format!("{}.b2nd", &key[1..]))
}

/// Whether `rel` ends with one of the [`EXTERNAL_SUFFIXES`].
pub(crate) fn has_external_suffix(rel: &str) -> bool {
    EXTERNAL_SUFFIXES.iter().any(|s| rel.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_paths() {
        assert_eq!(key_of_path("dir1/big.b2nd"), "/dir1/big");
        assert_eq!(key_of_path("a.b/c"), "/a.b/c");
        assert_eq!(key_of_path("x.y.b2f"), "/x.y");
        assert_eq!(key_of_path(".hidden"), "/.hidden");
        for good in ["/", "/a", "/dir1/big", "/a.b/c_d", "/_indexes/50%\\/x"] {
            assert!(check_key(good).is_ok(), "{good}");
        }
        for bad in ["", "a", "/a/", "//a", "/a/../b", "/./a", "/a:b", "/a\0"] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
    }
}
