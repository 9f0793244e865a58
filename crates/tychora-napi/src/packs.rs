//! Packs: which exist, what one says, whether it is valid, and what a workspace resolves.

use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tychora_core::config::{self, Config, PackFile};

use crate::contract::nullable;
use crate::task::{Blocking, blocking};

/// A pack file and what checking and resolving it found.
#[napi(object)]
pub struct PackEntry {
    pub name: String,
    pub version: Either<u32, Null>,
    pub description: Either<String, Null>,
    /// `built-in:packs/NAME/pack.json` or the file's path.
    pub origin: String,
    pub depends: Vec<String>,
    /// The kinds it defines itself.
    pub kinds: Vec<String>,
    /// Every problem, each naming file, line and field; empty when the pack resolves.
    pub problems: Vec<String>,
    /// What resolves but deserves a look.
    pub warnings: Vec<String>,
}

/// A pack file as written.
#[napi(object)]
pub struct PackSource {
    pub name: String,
    pub origin: String,
    pub text: String,
}

/// One resolved setting and the layer it came from.
#[napi(object)]
pub struct ResolvedSetting {
    /// JSON pointer into the resolved pack.
    pub path: String,
    #[napi(ts_type = "unknown")]
    pub value: serde_json::Value,
    /// `engine default`, `pack NAME (FILE)` or `workspace.toml`.
    pub origin: String,
}

/// One fingerprint per stage a setting can affect; a change touches its own stage only.
#[napi(object)]
pub struct StageFingerprints {
    pub acquisition: String,
    pub extraction: String,
    pub indexing: String,
    pub eligibility: String,
    pub query: String,
    pub output: String,
}

/// The configuration a workspace profile runs with.
#[napi(object)]
pub struct ResolvedPack {
    pub profile: String,
    pub pack: String,
    /// Packs applied, dependencies first.
    pub chain: Vec<String>,
    pub values: Vec<ResolvedSetting>,
    pub warnings: Vec<String>,
    pub fingerprints: StageFingerprints,
}

/// The workspace directory when `dir` holds one (its `packs/` are visible), else none.
fn workspace(dir: Option<&str>) -> Option<PathBuf> {
    let dir = Path::new(dir?);
    dir.join("workspace.toml")
        .is_file()
        .then(|| dir.to_path_buf())
}

fn entry(ws: Option<&Path>, file: PackFile) -> PackEntry {
    let mut out = PackEntry {
        name: file.name.clone(),
        version: Either::B(Null),
        description: Either::B(Null),
        origin: file.origin.clone(),
        depends: Vec::new(),
        kinds: Vec::new(),
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    // Every problem of every stage, one per entry: a pack is fixed in one round, not one per run.
    let config::PackCheck {
        value,
        problems,
        warnings,
    } = config::check_pack(ws, file);
    out.problems = problems;
    out.warnings = warnings;
    if let Some(value) = value {
        out.version = nullable(
            value
                .get("version")
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| u32::try_from(v).ok()),
        );
        out.description = nullable(
            value
                .get("description")
                .and_then(|d| d.as_str())
                .map(String::from),
        );
        let strings = |key: &str| -> Vec<String> {
            match value.get(key) {
                Some(serde_json::Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(String::from)
                    .collect(),
                Some(serde_json::Value::Object(o)) => o.keys().cloned().collect(),
                _ => Vec::new(),
            }
        };
        out.depends = strings("depends");
        out.kinds = strings("kinds");
    }
    out
}

/// Every pack visible from `dir` (built-in ones, then the workspace's `packs/`), each checked
/// and resolved.
#[napi(catch_unwind, ts_return_type = "Promise<PackEntry[]>")]
pub fn list_packs(dir: Option<String>) -> AsyncTask<Blocking<Vec<PackEntry>>> {
    blocking(None, move || {
        let ws = workspace(dir.as_deref());
        Ok(PackFile::all(ws.as_deref())?
            .into_iter()
            .map(|file| entry(ws.as_deref(), file))
            .collect())
    })
}

/// The pack files at `paths`, each checked and resolved (dependencies found from `dir`); a file
/// outside the workspace's `packs/` is the pack its `name` says.
#[napi(catch_unwind, ts_return_type = "Promise<PackEntry[]>")]
pub fn validate_packs(
    dir: Option<String>,
    paths: Vec<String>,
) -> AsyncTask<Blocking<Vec<PackEntry>>> {
    blocking(None, move || {
        let ws = workspace(dir.as_deref());
        paths
            .iter()
            .map(|p| {
                let file = PackFile::read_given(Path::new(p), ws.as_deref())?;
                Ok(entry(ws.as_deref(), file))
            })
            .collect()
    })
}

/// The pack of that name as written, the workspace's own first.
#[napi(catch_unwind, ts_return_type = "Promise<PackSource>")]
pub fn show_pack(dir: Option<String>, name: String) -> AsyncTask<Blocking<PackSource>> {
    blocking(None, move || {
        let ws = workspace(dir.as_deref());
        let file = PackFile::find(ws.as_deref(), &name)?;
        Ok(PackSource {
            name: file.name,
            origin: file.origin,
            text: file.text,
        })
    })
}

/// The configuration the workspace in `dir` resolves for a profile (its default one when
/// `None`), with the origin of every value. Reads `workspace.toml` and packs only.
#[napi(catch_unwind, ts_return_type = "Promise<ResolvedPack>")]
pub fn resolve_pack(dir: String, profile: Option<String>) -> AsyncTask<Blocking<ResolvedPack>> {
    blocking(None, move || {
        let config = Config::load(&Path::new(&dir).join("workspace.toml"))?;
        let profile = profile.unwrap_or_else(|| config.default_profile.clone());
        let resolved = config.resolved(Some(&profile))?;
        let config::StageFingerprints {
            acquisition,
            extraction,
            indexing,
            eligibility,
            query,
            output,
        } = config.stage_fingerprints(&resolved.pack);
        Ok(ResolvedPack {
            fingerprints: StageFingerprints {
                acquisition,
                extraction,
                indexing,
                eligibility,
                query,
                output,
            },
            pack: resolved.pack.name.clone(),
            profile,
            chain: resolved.chain,
            values: resolved
                .values
                .into_iter()
                .map(|v| ResolvedSetting {
                    path: v.path,
                    value: v.value,
                    origin: v.origin,
                })
                .collect(),
            warnings: resolved.warnings,
        })
    })
}
