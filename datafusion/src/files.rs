//! The files a table name stands for: one path or URL, or many read as one table (a glob
//! such as `events/*.b2z` or `s3://bucket/events/*.b2z`, or a directory or prefix ending in
//! `/`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use datafusion::common::{DataFusionError, Result};

use crate::source::{Kind, Source};

/// Whether `location` names many files: a `*` or `?` in it, or a trailing `/`.
pub(crate) fn is_many(location: &str) -> bool {
    location.contains(['*', '?']) || location.ends_with('/')
}

/// The sources `spec` names, sorted by location: `spec` itself when it names one file (a
/// path or URL, `PATH#KEY` inside a store); every file a glob matches (`*` and `?` within one
/// path component, a leading `.` matched only by a `.`); or, for a directory or prefix ending
/// in `/`, every file directly in it whose name ends as `kind`'s files do (`.b2z`, `.b2d` for
/// tables; `.b2nd`, `.b2frame` for arrays). URLs are listed through their store (S3 lists; a
/// plain HTTP server does not).
pub(crate) fn expand(spec: &str, kind: Kind) -> Result<Vec<Source>> {
    let one = Source::parse(spec, kind);
    if !is_many(&one.location) {
        return Ok(vec![one]);
    }
    let plan = |why: String| DataFusionError::Plan(format!("{spec}: {why}"));
    if one.key.is_some() {
        return Err(plan(
            "a glob or directory names files, not members of a store (#KEY)".into(),
        ));
    }
    let (pattern, ends): (String, &[&str]) = if one.location.ends_with('/') {
        let ends: &[&str] = match kind {
            Kind::Table => &[".b2z", ".b2d"],
            Kind::Array => &[".b2nd", ".b2frame"],
        };
        (format!("{}*", one.location), ends)
    } else {
        (one.location.clone(), &[])
    };
    let found = if one.is_url() {
        listed(&pattern)?
    } else {
        walked(&pattern).map_err(|e| plan(e.to_string()))?
    };
    let found: Vec<Source> = found
        .into_iter()
        .filter(|f| ends.is_empty() || ends.iter().any(|e| f.trim_end_matches('/').ends_with(e)))
        .map(|location| Source {
            location,
            key: None,
            kind,
        })
        .collect();
    if found.is_empty() {
        return Err(plan("no file matches".into()));
    }
    Ok(found)
}

/// The local paths matching `pattern`, component by component.
fn walked(pattern: &str) -> std::io::Result<BTreeSet<String>> {
    let mut at: Vec<PathBuf> = vec![if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    }];
    for part in pattern.split('/').filter(|p| !p.is_empty() && *p != ".") {
        let mut next = Vec::new();
        for dir in &at {
            if !part.contains(['*', '?']) {
                let p = dir.join(part);
                if p.exists() {
                    next.push(p);
                }
                continue;
            }
            let listing = match std::fs::read_dir(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            }) {
                Ok(l) => l,
                Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for entry in listing {
                let name = entry?.file_name();
                if let Some(name) = name.to_str().filter(|n| glob_matches(part, n)) {
                    next.push(dir.join(name));
                }
            }
        }
        at = next;
    }
    Ok(at
        .into_iter()
        .filter_map(|p| p.to_str().map(str::to_string))
        .collect())
}

/// The objects (or directories of objects: a `.b2d`) of a store matching the URL `pattern`:
/// the prefix before its first glob component is listed, and each listed path's first
/// components are matched against the rest.
#[cfg(feature = "remote")]
fn listed(pattern: &str) -> Result<BTreeSet<String>> {
    let glob = pattern.find(['*', '?']).unwrap_or(pattern.len());
    let base = &pattern[..pattern[..glob].rfind('/').map_or(0, |i| i + 1)];
    let parts: Vec<&str> = pattern[base.len()..].split('/').collect();
    let urls = b2nd::list_url(base, &b2nd::RemoteOptions::new())
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    let base = base.trim_end_matches('/');
    let mut out = BTreeSet::new();
    for url in urls {
        let Some(rel) = url.strip_prefix(base) else {
            continue;
        };
        let rel: Vec<&str> = rel.trim_start_matches('/').split('/').collect();
        if rel.len() >= parts.len() && parts.iter().zip(&rel).all(|(p, n)| glob_matches(p, n)) {
            out.insert(format!("{base}/{}", rel[..parts.len()].join("/")));
        }
    }
    Ok(out)
}

#[cfg(not(feature = "remote"))]
fn listed(pattern: &str) -> Result<BTreeSet<String>> {
    Err(DataFusionError::Plan(format!(
        "{pattern}: URLs need b2nd-datafusion's `remote` feature"
    )))
}

/// Whether `name` matches the glob component `pat` (`*`: any run of characters, `?`: one;
/// a leading `.` of `name` only by a `.`).
fn glob_matches(pat: &str, name: &str) -> bool {
    if name.starts_with('.') && !pat.starts_with('.') {
        return false;
    }
    let (p, n): (Vec<char>, Vec<char>) = (pat.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    // The last `*` seen, and where in `name` it was last tried to end.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_components() {
        for (p, n, want) in [
            ("*.b2z", "a.b2z", true),
            ("*.b2z", "a.b2d", false),
            ("*.b2z", ".hidden.b2z", false),
            (".*.b2z", ".hidden.b2z", true),
            ("ev-??.b2z", "ev-01.b2z", true),
            ("ev-??.b2z", "ev-1.b2z", false),
            ("*a*b*", "xaybz", true),
            ("*a*b", "xaybz", false),
            ("*", "", true),
            ("a", "a", true),
        ] {
            assert_eq!(glob_matches(p, n), want, "{p} {n}");
        }
    }

    #[test]
    fn globs_and_directories_name_many_files() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["b.b2z", "a.b2z", "c.b2nd", ".d.b2z"] {
            std::fs::write(dir.path().join(f), b"").unwrap();
        }
        std::fs::create_dir(dir.path().join("e.b2d")).unwrap();
        let root = dir.path().to_str().unwrap();
        let names = |spec: &str, kind| -> Vec<String> {
            expand(spec, kind)
                .unwrap()
                .into_iter()
                .map(|s| s.location[root.len() + 1..].to_string())
                .collect()
        };
        assert_eq!(
            names(&format!("{root}/*.b2z"), Kind::Table),
            ["a.b2z", "b.b2z"]
        );
        assert_eq!(
            names(&format!("{root}/"), Kind::Table),
            ["a.b2z", "b.b2z", "e.b2d"]
        );
        assert_eq!(names(&format!("{root}/"), Kind::Array), ["c.b2nd"]);
        assert_eq!(names(&format!("{root}/?.b2*"), Kind::Array).len(), 4);
        // One file: the spec itself, opened later.
        let one = expand(&format!("{root}/a.b2z"), Kind::Table).unwrap();
        assert_eq!(one.len(), 1);
        for bad in [
            format!("{root}/*.npy"),
            format!("{root}/x/*.b2z"),
            format!("{root}/*.b2z#t"),
        ] {
            let e = expand(&bad, Kind::Table).unwrap_err().to_string();
            assert!(e.contains(&bad), "{e}");
        }
    }
}
