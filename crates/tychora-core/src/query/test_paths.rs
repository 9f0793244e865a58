//! Which code files are tests, by their path (the code profile ranks test files after the code
//! they test).

/// Test files by the common conventions: a `test`/`tests`/`testing`/`__tests__`/`spec` directory,
/// `test_*.py`, `*_test.py`, `conftest.py`, `*.test.*`, `*.spec.*`.
pub fn is_test_path(path: &str) -> bool {
    let mut parts = path.split('/');
    let name = parts.next_back().unwrap_or(path);
    parts.any(|d| matches!(d, "test" | "tests" | "testing" | "__tests__" | "spec"))
        || name.starts_with("test_")
        || name == "conftest.py"
        || name.rsplit_once('.').is_some_and(|(stem, _)| {
            stem.ends_with("_test") || stem.ends_with(".test") || stem.ends_with(".spec")
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn test_paths_follow_the_common_conventions() {
        for path in [
            "testing/test_config.py",
            "tests/unit/models.py",
            "src/__tests__/a.tsx",
            "pkg/test_io.py",
            "pkg/io_test.py",
            "conftest.py",
            "src/a.test.ts",
            "src/a.spec.js",
        ] {
            assert!(super::is_test_path(path), "{path}");
        }
        for path in [
            "src/_pytest/python.py",
            "src/testing_utils.py",
            "src/contest.py",
            "latest.py",
        ] {
            assert!(!super::is_test_path(path), "{path}");
        }
    }
}
