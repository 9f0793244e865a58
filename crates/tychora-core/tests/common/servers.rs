//! What a test does when the real server it runs against is not installed: skip with the reason,
//! or fail where this run requires servers (`TYCHORA_REQUIRE` naming `servers` or `all`, as
//! `.ci/run` sets it).

/// `None`, after printing why the test did nothing; panics instead when servers are required.
/// `missing` says what is absent, `remedy` how to get it.
#[allow(clippy::print_stderr)] // the reason a test did nothing must reach whoever ran it
pub fn missing<T>(missing: &str, remedy: &str) -> Option<T> {
    let require = std::env::var("TYCHORA_REQUIRE").unwrap_or_default();
    assert!(
        !require
            .split(',')
            .map(str::trim)
            .any(|n| n == "servers" || n == "all"),
        "{missing} and TYCHORA_REQUIRE={require} requires it ({remedy})"
    );
    eprintln!("skipped: {missing} ({remedy})");
    None
}
