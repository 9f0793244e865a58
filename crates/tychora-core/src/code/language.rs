//! The languages the code extractor understands, and how a file path names its module.

use serde::Serialize;

/// A source language with a tree-sitter grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python (`.py`, `.pyi`).
    Python,
    /// JavaScript, including JSX (`.js`, `.mjs`, `.cjs`, `.jsx`): the JavaScript grammar parses JSX.
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`): a separate grammar, because `<T>x` casts and JSX collide.
    Tsx,
}

impl Language {
    /// The language's name, e.g. `typescript`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::JavaScript => "javascript",
            Self::TypeScript => "typescript",
            Self::Tsx => "tsx",
        }
    }

    /// The language named by [`Self::as_str`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "python" => Some(Self::Python),
            "javascript" => Some(Self::JavaScript),
            "typescript" => Some(Self::TypeScript),
            "tsx" => Some(Self::Tsx),
            _ => None,
        }
    }

    /// The language a file name implies, if any.
    #[must_use]
    pub fn from_path(path: &str) -> Option<Self> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        match ext.as_str() {
            "py" | "pyi" => Some(Self::Python),
            "js" | "mjs" | "cjs" | "jsx" => Some(Self::JavaScript),
            "ts" | "mts" | "cts" => Some(Self::TypeScript),
            "tsx" => Some(Self::Tsx),
            _ => None,
        }
    }

    /// The module path a file path names: `pkg/mod.py` → `pkg.mod`, `pkg/__init__.py` → `pkg`,
    /// `src/a.ts` → `src/a`. Paths are taken as given (relative to the source root); `\` is read
    /// as `/` and a leading `./` is dropped.
    #[must_use]
    pub fn module_path(self, path: &str) -> String {
        let path = normalize(path);
        match self {
            Self::Python => {
                let stem = strip_ext(&path, &[".py", ".pyi"]);
                let stem = match stem.strip_suffix("__init__") {
                    // The package's own module; a bare `__init__.py` keeps its name.
                    Some("") => stem,
                    Some(pkg) if pkg.ends_with('/') => &pkg[..pkg.len() - 1],
                    _ => stem,
                };
                stem.replace('/', ".")
            }
            Self::JavaScript | Self::TypeScript | Self::Tsx => strip_ext(
                &path,
                &[
                    ".d.ts", ".d.mts", ".d.cts", ".ts", ".mts", ".cts", ".tsx", ".js", ".mjs",
                    ".cjs", ".jsx",
                ],
            )
            .to_string(),
        }
    }

    /// The tree-sitter grammar.
    pub(super) fn grammar(self) -> tree_sitter::Language {
        match self {
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        }
    }
}

/// `\` as `/`, without a leading `./`.
pub(crate) fn normalize(path: &str) -> String {
    let path = path.replace('\\', "/");
    match path.strip_prefix("./") {
        Some(rest) => rest.to_string(),
        None => path,
    }
}

/// `path` without the first of `exts` it ends with (ASCII case-insensitive).
fn strip_ext<'a>(path: &'a str, exts: &[&str]) -> &'a str {
    exts.iter()
        .find_map(|ext| {
            let cut = path.len().checked_sub(ext.len())?;
            (path.is_char_boundary(cut) && path[cut..].eq_ignore_ascii_case(ext))
                .then(|| &path[..cut])
        })
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_from_extensions() {
        let cases = [
            ("pkg/mod.py", Some(Language::Python)),
            ("stubs/a.pyi", Some(Language::Python)),
            ("src/a.js", Some(Language::JavaScript)),
            ("src/a.mjs", Some(Language::JavaScript)),
            ("src/a.cjs", Some(Language::JavaScript)),
            ("src/App.jsx", Some(Language::JavaScript)),
            ("src/a.ts", Some(Language::TypeScript)),
            ("src/a.mts", Some(Language::TypeScript)),
            ("src/a.cts", Some(Language::TypeScript)),
            ("src/App.TSX", Some(Language::Tsx)),
            ("README.md", None),
            ("Makefile", None),
            ("dir.ts/file", None),
        ];
        for (path, expected) in cases {
            assert_eq!(Language::from_path(path), expected, "{path}");
        }
    }

    #[test]
    fn module_paths() {
        let cases = [
            (Language::Python, "pkg/mod.py", "pkg.mod"),
            (Language::Python, "pkg/__init__.py", "pkg"),
            (Language::Python, "./a/b/c.pyi", "a.b.c"),
            (Language::Python, "__init__.py", "__init__"),
            (Language::Python, "pkg\\sub\\m.py", "pkg.sub.m"),
            (Language::TypeScript, "src/a.ts", "src/a"),
            (Language::TypeScript, "types/lib.d.ts", "types/lib"),
            (Language::Tsx, "src/App.tsx", "src/App"),
            (Language::JavaScript, "./index.mjs", "index"),
        ];
        for (language, path, expected) in cases {
            assert_eq!(language.module_path(path), expected, "{path}");
        }
    }
}
