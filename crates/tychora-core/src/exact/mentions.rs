//! What an agent's text names besides identifier patterns: file paths, stack-trace frames
//! (`File "x/y.py", line 8, in parse_config`), code in backticks and dotted names
//! (`flask.Config.from_file`). The exact channel answers with the definitions those names have in
//! the snapshot and with the files those paths end in, in the order the text names them.
//!
//! A path from another machine (`/usr/lib/python3.8/site-packages/_pytest/main.py`) names the
//! corpus file whose path it ends with (`src/_pytest/main.py`), matched component by component: at
//! least two components, or a file name only one file of the snapshot has. A name counts only when
//! it is specific: defined by at most [`MAX_DEFINITIONS`] symbols of the snapshot (`get` is not).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::error::Result;
use crate::lexical::Filter;
use crate::store::identifiers as identifier_rows;
use crate::store::tx::Tx;

/// A name defined by more symbols than this names none of them.
const MAX_DEFINITIONS: usize = 3;

/// Mentions kept from one text, each list in order of first appearance.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mentions {
    /// Paths, `/`-separated, without a leading `./` or drive.
    pub paths: Vec<String>,
    /// Symbol names, lowercase: a dotted name's last component and last two (`config.from_file`).
    pub names: Vec<String>,
    /// `(path, function)` of each stack-trace frame.
    pub frames: Vec<(String, String)>,
}

impl Mentions {
    /// Nothing named.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.names.is_empty()
    }
}

static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"\n]{1,400})", line \d+, in ([A-Za-z_][A-Za-z0-9_]{0,100})"#)
        .expect("frame pattern")
});
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:[A-Za-z0-9_.\-]+[/\\])*[A-Za-z0-9_\-]+\.(?:py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|mts|cts|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala)\b",
    )
    .expect("path pattern")
});
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"`@?([A-Za-z_][A-Za-z0-9_]{0,100}(?:\.[A-Za-z_][A-Za-z0-9_]{0,100}){0,8})(?:\([^`)]{0,200}\))?`")
        .expect("backtick pattern")
});
static DOTTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]{0,100}(?:\.[A-Za-z_][A-Za-z0-9_]{0,100}){1,8}\b")
        .expect("dotted pattern")
});

/// The mentions of `text`. Bounded: at most 64 paths and 64 names.
#[must_use]
pub fn find(text: &str) -> Mentions {
    let mut m = Mentions::default();
    let push = |list: &mut Vec<String>, v: String| {
        if !v.is_empty() && list.len() < 64 && !list.contains(&v) {
            list.push(v);
        }
    };
    for c in FRAME.captures_iter(text) {
        let path = normal_path(&c[1]);
        push(&mut m.names, c[2].to_lowercase());
        if m.frames.len() < 64 {
            m.frames.push((path.clone(), c[2].to_lowercase()));
        }
        push(&mut m.paths, path);
    }
    for p in PATH.find_iter(text) {
        push(&mut m.paths, normal_path(p.as_str()));
    }
    let mut names = |dotted: &str| {
        let parts: Vec<&str> = dotted.split('.').collect();
        // `e.g`, `i.e`, version numbers: a name has a component of at least three characters.
        if !parts.iter().any(|p| p.len() >= 3) {
            return;
        }
        if let Some(last) = parts.last() {
            if parts.len() >= 2 {
                push(
                    &mut m.names,
                    format!("{}.{last}", parts[parts.len() - 2]).to_lowercase(),
                );
            }
            if last.len() >= 3 {
                push(&mut m.names, last.to_lowercase());
            }
        }
    };
    for c in BACKTICKED.captures_iter(text) {
        names(&c[1]);
    }
    for d in DOTTED.find_iter(text) {
        // A file name (`setup.py`) is a path, not a name; a URL's host is neither.
        let s = d.as_str();
        if PATH.is_match(s) || text[d.end()..].starts_with('/') {
            continue;
        }
        names(s);
    }
    m
}

/// `/`-separated, without `./`, a drive or a leading `/`.
fn normal_path(raw: &str) -> String {
    let p = raw.replace('\\', "/");
    let p = p.split_once(':').map_or(
        p.as_str(),
        |(drive, rest)| {
            if drive.len() == 1 { rest } else { p.as_str() }
        },
    );
    p.trim_start_matches("./")
        .trim_start_matches('/')
        .to_string()
}

/// The corpus files `mentioned` names: the file whose path ends with the longest run of the
/// mention's trailing components (two or more, or a file name no other file has).
fn resolve_paths(files: &[(i64, String)], mentioned: &[String]) -> Vec<i64> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (_, path)) in files.iter().enumerate() {
        by_name
            .entry(path.rsplit('/').next().unwrap_or(path))
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    for mention in mentioned {
        let parts: Vec<&str> = mention.split('/').filter(|p| !p.is_empty()).collect();
        let Some(name) = parts.last() else { continue };
        let Some(candidates) = by_name.get(name) else {
            continue;
        };
        let shared = |path: &str| {
            let theirs: Vec<&str> = path.split('/').collect();
            theirs
                .iter()
                .rev()
                .zip(parts.iter().rev())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let best = candidates.iter().map(|&i| (shared(&files[i].1), i)).max();
        if let Some((n, i)) = best {
            let tied = candidates
                .iter()
                .filter(|&&j| shared(&files[j].1) == n)
                .count();
            if (n >= 2 || candidates.len() == 1) && tied == 1 && !out.contains(&files[i].0) {
                out.push(files[i].0);
            }
        }
    }
    out
}

/// `(chunk_id, owner_id)` of what `mentions` names, best first: a frame's function in its file,
/// then the specific names' definitions, then each named file's first window.
///
/// # Errors
/// SQLite errors.
pub fn search(
    conn: &dyn Tx,
    snapshot_id: i64,
    mentions: &Mentions,
    filter: &Filter,
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    if mentions.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let mut out: Vec<(i64, i64)> = Vec::new();
    let mut push = |hit: (i64, i64)| {
        if out.len() < limit && !out.iter().any(|h| h.1 == hit.1) {
            out.push(hit);
        }
    };
    // Every file of the snapshot (within the filter) with its path, read once for the paths and
    // the frames alike.
    let rows: Vec<(i64, String)> = if mentions.paths.is_empty() {
        Vec::new()
    } else {
        identifier_rows::member_paths(conn, snapshot_id, filter)?
    };
    let files = resolve_paths(&rows, &mentions.paths);
    // Definitions of the names, with the source each is in.
    let mut defined: Vec<(String, i64, i64, i64)> = Vec::new();
    if !mentions.names.is_empty() {
        defined = identifier_rows::symbol_definitions(conn, snapshot_id, &mentions.names, filter)?;
    }
    let definitions = |name: &str| -> Vec<(i64, i64, i64)> {
        let mut owners: Vec<(i64, i64, i64)> = Vec::new();
        for (n, chunk, owner, source) in &defined {
            if n == name && !owners.iter().any(|o| o.1 == *owner) {
                owners.push((*chunk, *owner, *source));
            }
        }
        owners
    };
    // A frame's function inside the file the frame names.
    // Deepest frame first: where the error was raised.
    for (path, function) in mentions.frames.iter().rev() {
        if let Some(&source) = resolve_paths(&rows, std::slice::from_ref(path)).first() {
            for (chunk, owner, s) in definitions(function) {
                if s == source {
                    push((chunk, owner));
                }
            }
        }
    }
    for name in &mentions.names {
        let owners = definitions(name);
        if owners.len() <= MAX_DEFINITIONS {
            for (chunk, owner, _) in owners {
                push((chunk, owner));
            }
        }
    }
    for source in files {
        let first = identifier_rows::first_window(conn, snapshot_id, source)?;
        if let Some(hit) = first {
            push(hit);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_paths_frames_backticks_and_dotted_names() {
        let text = "Calling `flask.Config.from_file()` fails:\n  File \"/usr/lib/python3.8/site-packages/_pytest/main.py\", line 191, in wrap_session\nSee src\\_pytest\\skipping.py and e.g. version 3.8.1; https://docs.python.org/3/x.html";
        let m = find(text);
        assert_eq!(
            m.paths,
            [
                "usr/lib/python3.8/site-packages/_pytest/main.py",
                "src/_pytest/skipping.py"
            ]
        );
        assert_eq!(
            m.frames,
            [(
                "usr/lib/python3.8/site-packages/_pytest/main.py".to_string(),
                "wrap_session".to_string()
            )]
        );
        assert!(m.names.contains(&"wrap_session".to_string()));
        assert!(m.names.contains(&"config.from_file".to_string()));
        assert!(m.names.contains(&"from_file".to_string()));
        assert!(!m.names.iter().any(|n| n == "g" || n == "8" || n == "org"));
    }

    #[test]
    fn a_foreign_path_names_the_file_it_ends_with() {
        let files = vec![
            (1, "src/_pytest/main.py".to_string()),
            (2, "testing/main.py".to_string()),
            (3, "src/_pytest/skipping.py".to_string()),
        ];
        let found = resolve_paths(
            &files,
            &[
                "usr/lib/site-packages/_pytest/main.py".into(),
                "skipping.py".into(),
                // Two files are called main.py and the mention shares only the name with both.
                "elsewhere/main.py".into(),
                "nothing.py".into(),
            ],
        );
        assert_eq!(found, [1, 3]);
    }

    #[test]
    fn hostile_text_is_bounded() {
        let text = "`a.b.c` ".repeat(5_000) + &"x/".repeat(5_000) + "y.py";
        let m = find(&text);
        assert!(m.paths.len() <= 64 && m.names.len() <= 64);
    }
}
