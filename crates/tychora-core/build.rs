//! Whether `../shared/data` (the workplace's evaluation data, outside the repository) is present.
//!
//! The tests that read it are `#[cfg_attr(not(shared_data), ignore = …)]`: without the data they
//! show as ignored, with the reason, so a checkout of the repository alone still tests the rest —
//! unless `TYCHORA_REQUIRE` names `data` (or `all`), as `.ci/run` does, when the build fails
//! instead and CI can never pass by skipping. The same rule as `test/support/requirements.ts`.
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_data)");
    println!("cargo::rerun-if-env-changed=TYCHORA_REQUIRE");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let data = manifest.join("../../../shared/data");
    if data.join("README.md").is_file() {
        // Watch the README only: if the data goes, the cfg follows.
        println!(
            "cargo::rerun-if-changed={}",
            data.join("README.md").display()
        );
        println!("cargo::rustc-cfg=shared_data");
        return;
    }
    // Nothing to watch that exists (a missing path would rerun this, and rebuild the crate, on
    // every build): data added later takes effect on the next `cargo clean` or edit of this file.
    println!("cargo::rerun-if-changed=build.rs");
    let require = std::env::var("TYCHORA_REQUIRE").unwrap_or_default();
    let required = require
        .split(',')
        .map(str::trim)
        .any(|n| n == "data" || n == "all");
    assert!(
        !required,
        "{} is missing and TYCHORA_REQUIRE={require} requires it: the tests that read it would be ignored",
        data.display()
    );
    println!(
        "cargo::warning=shared/data not found next to the repository ({}): the tests that read it are ignored (after adding it, touch crates/tychora-core/build.rs)",
        data.display()
    );
}
