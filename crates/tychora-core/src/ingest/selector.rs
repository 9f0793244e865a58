//! Which source a path names, for the commands that take one (`manage withdraw`,
//! `delete-original`, `sensitivity`). A person names a source the way they named it to `add`:
//! absolute, relative to the current directory, relative to its capture root, or as its
//! `file://` URI. A name that matches nothing is answered with the nearest known sources, so a
//! typo or a wrong base directory is fixed from the error alone.

use std::path::{Component, Path, PathBuf};

use crate::capture::names::encode_path;
use crate::error::{Error, Result};
use crate::store::sources as source_rows;
use crate::store::tx::Tx;

/// Suggestions in a "not found" error.
const NEAREST: usize = 3;
/// Below this similarity (0..1) a source is not offered as what was meant.
const MIN_SIMILARITY: f64 = 0.5;

/// The sources `selector` names: more than one when the same file is a source of several
/// collections, or a root-relative path exists under several roots. Tried in order, the first
/// form that matches wins:
/// 1. a source's `file://` URI exactly as stored (and printed);
/// 2. the file the path names as `add` reads it: absolute, or relative to the current directory,
///    with its directories resolved as capture resolves them (a link named last is not followed);
///    a `file://` URI with percent-escapes is decoded first;
/// 3. a path relative to a capture root, as stored (`./` and doubled slashes ignored).
///
/// # Errors
/// `E_NOT_FOUND` naming the nearest known sources when nothing matches; SQLite errors.
pub(super) fn sources_named(conn: &dyn Tx, selector: &str) -> Result<Vec<i64>> {
    let by_uri = source_rows::with_uri(conn, selector)?;
    if !by_uri.is_empty() {
        return Ok(by_uri);
    }
    let path = match selector.strip_prefix("file://") {
        Some(rest) => PathBuf::from(percent_decoded(rest)),
        None => PathBuf::from(selector),
    };
    let mut found = Vec::new();
    for candidate in file_forms(&path) {
        let uri = format!("file://{}", encode_path(&candidate));
        for id in source_rows::with_uri(conn, &uri)? {
            if !found.contains(&id) {
                found.push(id);
            }
        }
    }
    if !found.is_empty() {
        return Ok(found);
    }
    // The stored form as given (names escaped as output prints them), then normalised.
    let mut relative = vec![selector.to_string()];
    relative.extend(root_relative(&path).filter(|r| r != selector));
    for form in relative {
        let under_root = source_rows::with_path(conn, &form)?;
        if !under_root.is_empty() {
            return Ok(under_root);
        }
    }
    Err(not_found(conn, selector)?)
}

/// `%XX` escapes of a URI's path as bytes (a browser's or a file manager's copy of a file URI).
fn percent_decoded(text: &str) -> std::ffi::OsString {
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(text).collect();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        std::ffi::OsString::from_vec(bytes)
    }
    #[cfg(not(unix))]
    {
        std::ffi::OsString::from(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The absolute forms a path may have been captured under: as written (made absolute against
/// the current directory, `.` and `..` taken lexically) and with its directories resolved
/// through links, as capture resolves a root (`/tmp` → `/private/tmp`).
fn file_forms(path: &Path) -> Vec<PathBuf> {
    let Ok(absolute) = std::path::absolute(path) else {
        return Vec::new();
    };
    let lexical = lexically_normal(&absolute);
    let mut forms = vec![lexical.clone()];
    if let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name())
        && let Ok(real_parent) = std::fs::canonicalize(parent)
    {
        let real = real_parent.join(name);
        if real != lexical {
            forms.push(real);
        }
    }
    forms
}

/// `path` without `.` components, each `..` removing the component before it.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A relative path as sources store it under their root: `/`-separated, without `.`; none for an
/// absolute path or one that climbs out with `..`.
fn root_relative(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => parts.push(encode_path(Path::new(name))),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `E_NOT_FOUND`, naming the known sources whose paths are nearest to `selector`.
fn not_found(conn: &dyn Tx, selector: &str) -> Result<Error> {
    let wanted = selector.strip_prefix("file://").unwrap_or(selector);
    let wanted_parts: Vec<&str> = wanted.split('/').filter(|p| !p.is_empty()).collect();
    let wanted_name = wanted_parts.last().copied().unwrap_or(wanted);
    let mut nearest: Vec<(f64, i64, String)> = Vec::new();
    for (id, rel_path, uri) in source_rows::all_paths(conn)? {
        let score = similarity(&wanted_parts, wanted_name, &rel_path);
        if score < MIN_SIMILARITY {
            continue;
        }
        let at = nearest.partition_point(|(s, _, _)| *s >= score);
        if at < NEAREST {
            let shown = uri.strip_prefix("file://").unwrap_or(&uri).to_string();
            nearest.insert(at, (score, id, shown));
            nearest.truncate(NEAREST);
        }
    }
    let hint = if nearest.is_empty() {
        "no known source has a similar path".to_string()
    } else {
        format!(
            "nearest: {}",
            nearest
                .iter()
                .map(|(_, id, path)| format!("source:{id} {path}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Ok(Error::NotFound {
        what: "source",
        id: format!(
            "{selector:?} (as source:N, a file:// URI, or a path absolute, relative to here or to its capture root); {hint}"
        ),
    })
}

/// How near a source's root-relative path is to what was asked for, 0..1: the better of its file
/// name against the asked name (the same name in another folder: a wrong base directory) and its
/// whole path against as many trailing components of the asked path (a typo).
fn similarity(wanted_parts: &[&str], wanted_name: &str, rel_path: &str) -> f64 {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    let by_name = strsim::normalized_levenshtein(wanted_name, name) * 0.95;
    let depth = rel_path.split('/').count();
    let tail = wanted_parts[wanted_parts.len().saturating_sub(depth)..].join("/");
    let by_path = strsim::normalized_levenshtein(&tail, rel_path);
    by_name.max(by_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_normalised_as_roots_store_them() {
        assert_eq!(
            root_relative(Path::new("./a//b.md")).as_deref(),
            Some("a/b.md")
        );
        assert_eq!(root_relative(Path::new("../a.md")), None);
        assert_eq!(root_relative(Path::new("/a.md")), None);
        assert_eq!(
            lexically_normal(Path::new("/x/./y/../z.md")),
            PathBuf::from("/x/z.md")
        );
        assert_eq!(
            percent_decoded("/tmp/a%20b.md"),
            std::ffi::OsString::from("/tmp/a b.md")
        );
    }

    #[test]
    fn a_same_named_file_or_a_typo_is_near_and_an_unrelated_one_is_not() {
        let parts = ["corpus", "x.docx"];
        assert!(similarity(&parts, "x.docx", "x.docx") > 0.9);
        assert!(similarity(&parts, "x.docx", "sub/x.docx") > 0.9);
        let typo = ["corpus", "repotr.md"];
        assert!(similarity(&typo, "repotr.md", "report.md") >= MIN_SIMILARITY);
        let other = ["corpus", "x.docx"];
        assert!(similarity(&other, "x.docx", "meeting-notes-2024.md") < MIN_SIMILARITY);
    }
}
