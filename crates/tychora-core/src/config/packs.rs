//! Pack files and their resolution.
//!
//! A pack is a JSON file (`packs/<name>/pack.json`): the built-in ones are embedded, and a
//! workspace may add its own under `WORKSPACE/packs/<name>/pack.json` (a workspace pack of a
//! built-in's name replaces it). Each file is checked against the published JSON Schema
//! (`packs/pack.schema.json`, generated from the zod contract) by the `jsonschema` crate; every
//! error names the file, the line and the field. Resolution layers, in order: engine defaults →
//! the selected pack's dependencies (depth first, each once) → the pack → `workspace.toml`
//! overrides; a request may then override only what the pack lists in `request_overrides`.
//! Objects merge field by field; arrays, values and whole kind definitions replace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jsonc_parser::ast::{ObjectPropName, Value as Ast};
use jsonc_parser::common::Ranged as _;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::pack::{Pack, Strategy};
use crate::error::{Error, Result};

/// The published JSON Schema every pack file is validated against.
pub const PACK_SCHEMA: &str = include_str!("../../../../packs/pack.schema.json");

/// The embedded packs, by name.
const BUILTIN: [(&str, &str); 3] = [
    ("core", include_str!("../../../../packs/core/pack.json")),
    (
        "documents",
        include_str!("../../../../packs/documents/pack.json"),
    ),
    ("code", include_str!("../../../../packs/code/pack.json")),
];

/// A pack file larger than this is refused unread (the built-in ones are ~10 KB).
const MAX_PACK_BYTES: u64 = 1 << 20;

/// Deepest dependency chain followed; a longer one is almost certainly a mistake.
const MAX_DEPTH: usize = 16;

/// One pack file: its name, where it came from and its text.
#[derive(Debug, Clone, Serialize)]
pub struct PackFile {
    /// The pack's name (its directory's).
    pub name: String,
    /// `built-in:packs/NAME/pack.json` or the file's path.
    pub origin: String,
    /// The file as written.
    pub text: String,
}

impl PackFile {
    /// The embedded pack of that name.
    #[must_use]
    pub fn builtin(name: &str) -> Option<Self> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Self {
                name: (*n).to_string(),
                origin: format!("built-in:packs/{n}/pack.json"),
                text: (*text).to_string(),
            })
    }

    /// Reads a pack file; its name is its directory's.
    ///
    /// # Errors
    /// `E_IO` when unreadable, `E_INVALID_ARGUMENT` when too large or not UTF-8.
    pub fn read(path: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.len() > MAX_PACK_BYTES {
            return Err(Error::InvalidArgument(format!(
                "{}: {} bytes; a pack file may hold at most {MAX_PACK_BYTES}",
                path.display(),
                meta.len()
            )));
        }
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::InvalidArgument(format!(
                "{}: not UTF-8 (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ))
        })?;
        let name = path
            .parent()
            .and_then(Path::file_name)
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        Ok(Self {
            name,
            origin: path.display().to_string(),
            text,
        })
    }

    /// Reads a pack file named as such (`tychora packs validate FILE`). A workspace finds its
    /// packs by folder (`WORKSPACE/packs/NAME/pack.json`), so there the folder is the name and
    /// the declared `name` must agree with it; anywhere else a folder means nothing to the engine,
    /// and the pack is what its `name` says (a verbatim copy of a built-in pack is that pack).
    ///
    /// # Errors
    /// As [`Self::read`].
    pub fn read_given(path: &Path, workspace: Option<&Path>) -> Result<Self> {
        let mut file = Self::read(path)?;
        if workspace.is_some_and(|w| in_packs_folder(path, w)) {
            return Ok(file);
        }
        if let Ok(value) = serde_json::from_str::<Value>(&file.text)
            && let Some(declared) = value.get("name").and_then(Value::as_str)
            && valid_name(declared)
        {
            file.name = declared.to_string();
        }
        Ok(file)
    }

    /// The pack of that name: the workspace's own first, then the built-in one.
    ///
    /// # Errors
    /// `E_NOT_FOUND` when neither exists.
    pub fn find(workspace: Option<&Path>, name: &str) -> Result<Self> {
        if valid_name(name)
            && let Some(path) = workspace.map(|w| local_path(w, name))
            && path.is_file()
        {
            return Self::read(&path);
        }
        Self::builtin(name).ok_or_else(|| Error::NotFound {
            what: "pack",
            id: name.to_string(),
        })
    }

    /// Every pack visible from a workspace: the built-in ones, then the workspace's own (a
    /// workspace pack of a built-in's name is listed in its place).
    ///
    /// # Errors
    /// `E_IO` when the workspace's `packs/` cannot be listed.
    pub fn all(workspace: Option<&Path>) -> Result<Vec<Self>> {
        let mut out: Vec<Self> = BUILTIN
            .iter()
            .filter_map(|(n, _)| Self::builtin(n))
            .collect();
        let Some(dir) = workspace.map(|w| w.join("packs")) else {
            return Ok(out);
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(out);
        };
        let mut local = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|e| Error::io(&dir, e))?
                .path()
                .join("pack.json");
            if path.is_file() {
                local.push(Self::read(&path)?);
            }
        }
        local.sort_by(|a, b| a.name.cmp(&b.name));
        for pack in local {
            match out.iter_mut().find(|p| p.name == pack.name) {
                Some(slot) => *slot = pack,
                None => out.push(pack),
            }
        }
        Ok(out)
    }

    /// Parses the file and checks it against the published schema.
    ///
    /// # Errors
    /// One line per problem, each `FILE:LINE: FIELD: what is wrong`.
    pub fn check(&self) -> std::result::Result<Value, Vec<String>> {
        match self.examine() {
            (Some(value), problems) if problems.is_empty() => Ok(value),
            (_, problems) => Err(problems),
        }
    }

    /// As [`Self::check`], keeping the parsed value when only the schema or the name is wrong,
    /// so what lies beyond (dependencies, regexes, record schemas) is checked in the same run.
    fn examine(&self) -> (Option<Value>, Vec<String>) {
        let (value, problems) = self.examine_at();
        (value, problems.into_iter().map(|(_, p)| p).collect())
    }

    /// As [`Self::examine`], each problem with the JSON pointer it is about.
    fn examine_at(&self) -> (Option<Value>, Vec<(String, String)>) {
        let value: Value = match serde_json::from_str(&self.text) {
            Ok(value) => value,
            Err(e) => {
                let problem = format!("{}:{}: not JSON: {e}", self.origin, e.line());
                return (None, vec![(String::new(), problem)]);
            }
        };
        if self.is_embedded() {
            // The packs compiled into the engine are checked against the schema by a test
            // (`built_in_packs_pass_the_published_schema`): building the validator for them on
            // every open cost a CLI search ~3 ms of its start (issue 11).
            return (Some(value), Vec::new());
        }
        let problems = self.problems(&value);
        (Some(value), problems)
    }

    /// Whether this is an embedded pack, exactly as compiled in.
    fn is_embedded(&self) -> bool {
        BUILTIN
            .iter()
            .any(|(name, text)| *name == self.name && *text == self.text)
    }

    /// The schema check of [`Self::check`], whatever the pack's origin.
    #[cfg(test)]
    fn validate(&self, value: Value) -> std::result::Result<Value, Vec<String>> {
        let problems: Vec<String> = self.problems(&value).into_iter().map(|(_, p)| p).collect();
        if problems.is_empty() {
            Ok(value)
        } else {
            Err(problems)
        }
    }

    /// Every schema violation (each unexpected field on its own), and a declared name other than
    /// the one the pack is found by; each with the pointer of the value it finds wrong (empty when
    /// it finds no value wrong, only one missing).
    fn problems(&self, value: &Value) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        for e in schema_validator().iter_errors(value) {
            let pointer = e.instance_path().as_str().to_string();
            let message = e.to_string();
            match e.kind() {
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }
                    if !unexpected.is_empty() =>
                {
                    for field in unexpected {
                        let at = format!("{pointer}/{}", escape(field));
                        let one = format!(
                            "Additional properties are not allowed ({field:?} was unexpected)"
                        );
                        problems.push((at.clone(), self.locate(&at, &one)));
                    }
                }
                // A missing field is about its object, whose other fields are still checked.
                jsonschema::error::ValidationErrorKind::Required { .. } => {
                    problems.push((String::new(), self.locate(&pointer, &message)));
                }
                _ => problems.push((pointer.clone(), self.locate(&pointer, &message))),
            }
        }
        // A missing or non-string name is the schema's to report.
        if let Some(declared) = value.get("name").and_then(Value::as_str)
            && declared != self.name
        {
            let message = format!(
                "the pack is named {declared:?} but lives under {:?}: a workspace finds a pack by its folder (packs/NAME/pack.json), so the two must agree",
                self.name
            );
            problems.push(("/name".into(), self.locate("/name", &message)));
        }
        problems
    }

    /// `FILE:LINE: POINTER: message`, the line of the deepest part of `pointer` the file holds.
    fn locate(&self, pointer: &str, message: &str) -> String {
        let field = if pointer.is_empty() { "/" } else { pointer };
        match line_of(&self.text, pointer) {
            Some(line) => format!("{}:{line}: {field}: {message}", self.origin),
            None => format!("{}: {field}: {message}", self.origin),
        }
    }
}

fn local_path(workspace: &Path, name: &str) -> PathBuf {
    workspace.join("packs").join(name).join("pack.json")
}

/// A name a workspace pack's folder may have.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Whether `path` is `WORKSPACE/packs/<folder>/pack.json`, where the workspace finds packs.
fn in_packs_folder(path: &Path, workspace: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let packs = real(&workspace.join("packs"));
    path.file_name().is_some_and(|n| n == "pack.json")
        && path
            .parent()
            .and_then(Path::parent)
            .is_some_and(|folder| real(folder) == packs)
}

/// The schema validator, built once. Patterns in it run on the `regex` crate (linear time).
fn schema_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(PACK_SCHEMA).expect("the published pack schema");
        record_schema_options()
            .build(&schema)
            .expect("the published pack schema compiles")
    })
}

/// Options for schemas from packs: `pattern` on the linear-time `regex` crate, so a schema
/// cannot make validation backtrack catastrophically.
pub(crate) fn record_schema_options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options().with_pattern_options(jsonschema::PatternOptions::regex())
}

/// The 1-based line where the deepest existing part of a JSON pointer starts in `text`.
fn line_of(text: &str, pointer: &str) -> Option<usize> {
    let parsed = jsonc_parser::parse_to_ast(text, &Default::default(), &Default::default()).ok()?;
    let mut node = parsed.value.as_ref()?;
    let mut at = node.range().start;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = match node {
            Ast::Object(object) => object.properties.iter().find(|p| {
                let name = match &p.name {
                    ObjectPropName::String(s) => s.value.as_ref(),
                    ObjectPropName::Word(w) => w.value,
                };
                name == token
            }),
            Ast::Array(array) => {
                let element = token
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| array.elements.get(i));
                if let Some(element) = element {
                    at = element.range().start;
                    node = element;
                    continue;
                }
                None
            }
            _ => None,
        };
        let Some(prop) = next else { break };
        at = prop.range.start;
        node = &prop.value;
    }
    Some(text[..at.min(text.len())].matches('\n').count() + 1)
}

/// One resolved setting and the layer it came from.
#[derive(Debug, Clone, Serialize)]
pub struct ResolvedValue {
    /// JSON pointer into the resolved pack.
    pub path: String,
    /// Its value.
    pub value: Value,
    /// `engine default`, `pack NAME (FILE)` or `workspace.toml`.
    pub origin: String,
}

/// A resolved pack, with where each setting came from.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// What the engine runs with.
    pub pack: Pack,
    /// The packs applied, dependencies first.
    pub chain: Vec<String>,
    /// Every leaf setting (a kind definition counts as one) and its origin.
    pub values: Vec<ResolvedValue>,
    /// What works but deserves a look (a kind citing an identifier pattern no layer defines).
    pub warnings: Vec<String>,
}

/// The required sections' values when no pack sets them.
fn engine_defaults() -> Value {
    json!({
        "formats": ["markdown", "text", "json", "jsonl"],
        "chunking": { "target_tokens": 512, "soft_ceiling_tokens": 800 },
        "lexical": { "language": "english", "stemmer": true, "stopwords": false, "capsule_boost": 0.5 },
        "identifiers": { "patterns": [] },
        "fusion": { "k": 60, "weights": { "exact": 2.0, "lexical": 1.0 } },
        "output": { "budget_tokens": 4000, "max_per_source": 3, "limit": 10 }
    })
}

/// A layer of resolution: its label and, for a pack, its file.
struct Layer {
    label: String,
    file: Option<PackFile>,
}

/// Resolves pack `name` for a workspace (`None`: built-in packs only), with `overrides` from
/// `workspace.toml` applied last.
///
/// # Errors
/// `E_NOT_FOUND` for an unknown pack; `E_INVALID_ARGUMENT` listing every problem found, each
/// naming its file, line and field (schema violations, dependency cycles, regexes that are not
/// linear-time, algorithms the engine does not have, invalid record schemas).
pub fn resolve(workspace: Option<&Path>, name: &str, overrides: &Value) -> Result<Resolved> {
    resolve_file(workspace, PackFile::find(workspace, name)?, overrides)
}

/// As [`resolve`], for a pack file given as such (`tychora packs validate FILE`); its
/// dependencies are found as usual.
///
/// # Errors
/// As [`resolve`].
pub fn resolve_file(
    workspace: Option<&Path>,
    file: PackFile,
    overrides: &Value,
) -> Result<Resolved> {
    let name = file.name.clone();
    let (resolved, problems) = resolve_collecting(workspace, file, overrides);
    match resolved {
        Some(resolved) if problems.is_empty() => Ok(resolved),
        _ => Err(Error::InvalidArgument(format!(
            "pack {name:?} cannot be used:\n  {}",
            problems.join("\n  ")
        ))),
    }
}

/// What checking a pack found: its value when it parses, every problem (each
/// `FILE:LINE: POINTER: what is wrong`) and the warnings of resolving it.
#[derive(Debug, Clone)]
pub struct PackCheck {
    /// The file's JSON, when it parses.
    pub value: Option<Value>,
    /// Every problem, empty when the pack resolves.
    pub problems: Vec<String>,
    /// What resolves but deserves a look.
    pub warnings: Vec<String>,
}

/// Checks a pack file and resolves it with its dependencies, listing every problem of every
/// stage in one pass (`tychora packs validate`, `packs list`): schema violations, a name its
/// folder contradicts, missing dependencies and cycles, invalid dependencies, regexes, record
/// schemas, facets and algorithms. Only a file that is not JSON stops the check at once.
#[must_use]
pub fn check_pack(workspace: Option<&Path>, file: PackFile) -> PackCheck {
    let (value, _) = file.examine();
    let (resolved, problems) = resolve_collecting(workspace, file, &json!({}));
    PackCheck {
        value,
        warnings: resolved.map(|r| r.warnings).unwrap_or_default(),
        problems,
    }
}

/// Resolution, collecting every problem instead of stopping at the first: each pack is checked
/// whole, every dependency followed, and the semantic checks run on what merges even when a file
/// broke the schema (a problem already reported at a field is not reported again beneath it).
fn resolve_collecting(
    workspace: Option<&Path>,
    file: PackFile,
    overrides: &Value,
) -> (Option<Resolved>, Vec<String>) {
    let name = file.name.clone();
    let mut order = Vec::new();
    let mut problems = Vec::new();
    let mut flagged = Vec::new();
    collect(
        workspace,
        file,
        &mut vec![name.clone()],
        &mut order,
        &mut problems,
        &mut flagged,
    );
    if order.is_empty() {
        return (None, problems);
    }
    let mut layers = vec![Layer {
        label: "engine default".into(),
        file: None,
    }];
    let mut merged = engine_defaults();
    let mut origins: BTreeMap<String, usize> = BTreeMap::new();
    record_origins(&merged, "", 0, &mut origins);
    for (file, value) in order {
        let index = layers.len();
        let mut value = value;
        if let Some(object) = value.as_object_mut() {
            for meta in ["$schema", "depends"] {
                object.remove(meta);
            }
        }
        merge(&mut merged, &value, "", index, &mut origins);
        layers.push(Layer {
            label: format!("pack {} ({})", file.name, file.origin),
            file: Some(file),
        });
    }
    if overrides.as_object().is_some_and(|o| !o.is_empty()) {
        let index = layers.len();
        merge(&mut merged, overrides, "", index, &mut origins);
        layers.push(Layer {
            label: "workspace.toml".into(),
            file: None,
        });
    }
    let locate = |pointer: &str, message: &str| -> String {
        let layer = origin_of(&origins, pointer).map(|i| &layers[i]);
        match layer.and_then(|l| l.file.as_ref()) {
            Some(file) => file.locate(pointer, message),
            None => format!(
                "{}: {pointer}: {message}",
                layer.map_or("resolved pack", |l| l.label.as_str())
            ),
        }
    };
    let already = |pointer: &str| {
        flagged
            .iter()
            .any(|f: &String| pointer == f || pointer.starts_with(&format!("{f}/")))
    };
    let (errors, warnings): (Vec<_>, Vec<_>) = semantic_problems(&merged)
        .into_iter()
        .filter(|p| !already(&p.pointer))
        .partition(|p| p.error);
    problems.extend(errors.iter().map(|p| locate(&p.pointer, &p.message)));
    let warnings = warnings
        .iter()
        .map(|p| locate(&p.pointer, &p.message))
        .collect();
    if !problems.is_empty() {
        return (None, problems);
    }
    let pack: Pack = match serde_json::from_value(merged.clone()) {
        Ok(pack) => pack,
        Err(e) => {
            problems.push(format!("pack {name:?} resolves incomplete: {e}"));
            return (None, problems);
        }
    };
    let chain = layers
        .iter()
        .filter_map(|l| l.file.as_ref().map(|f| f.name.clone()))
        .collect();
    // Every setting the engine runs with, including those only serde's defaults fill.
    let complete = serde_json::to_value(&pack).unwrap_or(merged);
    let mut leaves = BTreeMap::new();
    leaves_of(&complete, "", &mut leaves);
    let values = leaves
        .into_iter()
        .map(|(path, value)| ResolvedValue {
            origin: origin_of(&origins, &path)
                .map_or_else(|| "engine default".into(), |i| layers[i].label.clone()),
            path,
            value,
        })
        .collect();
    let resolved = Resolved {
        pack,
        chain,
        values,
        warnings,
    };
    (Some(resolved), problems)
}

/// Depth-first: dependencies before the pack, each pack once. `path` is the chain of packs being
/// resolved, `file`'s name last; a dependency already on it is a cycle. Every problem is pushed
/// to `problems` and the walk goes on; the pointers of schema problems go to `flagged`.
fn collect(
    workspace: Option<&Path>,
    file: PackFile,
    path: &mut Vec<String>,
    order: &mut Vec<(PackFile, Value)>,
    problems: &mut Vec<String>,
    flagged: &mut Vec<String>,
) {
    let (value, found) = file.examine_at();
    for (pointer, problem) in found {
        // A problem of the whole document (a missing field) hides nothing beneath it.
        if !pointer.is_empty() {
            flagged.push(pointer);
        }
        problems.push(problem);
    }
    let Some(value) = value else { return };
    let depends: Vec<String> = value
        .get("depends")
        .and_then(Value::as_array)
        .map(|d| {
            d.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    for (i, dependency) in depends.iter().enumerate() {
        let at = format!("/depends/{i}");
        if order.iter().any(|(f, _)| f.name == *dependency) {
            continue;
        }
        if path.iter().any(|p| p == dependency) || path.len() >= MAX_DEPTH {
            let mut cycle = path.clone();
            cycle.push(dependency.clone());
            problems.push(file.locate(
                &at,
                &format!("pack dependency cycle: {}", cycle.join(" → ")),
            ));
            continue;
        }
        match PackFile::find(workspace, dependency) {
            Ok(dependency_file) => {
                path.push(dependency.clone());
                collect(workspace, dependency_file, path, order, problems, flagged);
                path.pop();
            }
            Err(Error::NotFound { .. }) => problems.push(file.locate(
                &at,
                &format!("depends on pack {dependency:?}, which does not exist"),
            )),
            Err(e) => problems.push(file.locate(&at, &e.to_string())),
        }
    }
    order.push((file, value));
}

/// Kind definitions are replaced whole: a pack that redefines a kind states all of it.
fn atomic(pointer: &str) -> bool {
    pointer.starts_with("/kinds/")
}

fn merge(
    into: &mut Value,
    from: &Value,
    pointer: &str,
    layer: usize,
    origins: &mut BTreeMap<String, usize>,
) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) if !atomic(pointer) => {
            for (key, value) in from {
                let child = format!("{pointer}/{}", escape(key));
                match into.get_mut(key) {
                    Some(slot) if slot.is_object() && value.is_object() && !atomic(&child) => {
                        merge(slot, value, &child, layer, origins);
                    }
                    _ => {
                        origins.retain(|p, _| !p.starts_with(&format!("{child}/")) && *p != child);
                        into.insert(key.clone(), value.clone());
                        record_origins(value, &child, layer, origins);
                    }
                }
            }
        }
        (into, from) => {
            origins.retain(|p, _| !p.starts_with(&format!("{pointer}/")) && *p != pointer);
            *into = from.clone();
            record_origins(from, pointer, layer, origins);
        }
    }
}

fn record_origins(
    value: &Value,
    pointer: &str,
    layer: usize,
    origins: &mut BTreeMap<String, usize>,
) {
    match value {
        Value::Object(map) if !atomic(pointer) || pointer.matches('/').count() < 2 => {
            for (key, child) in map {
                record_origins(child, &format!("{pointer}/{}", escape(key)), layer, origins);
            }
            if map.is_empty() {
                origins.insert(pointer.to_string(), layer);
            }
        }
        _ => {
            origins.insert(pointer.to_string(), layer);
        }
    }
}

/// The leaves shown by `packs resolved`: values, arrays, and whole kind definitions.
fn leaves_of(value: &Value, pointer: &str, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map)
            if !map.is_empty() && (!atomic(pointer) || pointer.matches('/').count() < 2) =>
        {
            for (key, child) in map {
                leaves_of(child, &format!("{pointer}/{}", escape(key)), out);
            }
        }
        _ => {
            out.insert(pointer.to_string(), value.clone());
        }
    }
}

/// The layer that set `pointer` or its nearest set ancestor.
fn origin_of(origins: &BTreeMap<String, usize>, pointer: &str) -> Option<usize> {
    let mut at = pointer;
    loop {
        if let Some(i) = origins.get(at) {
            return Some(*i);
        }
        at = &at[..at.rfind('/')?];
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

struct Problem {
    pointer: String,
    message: String,
    error: bool,
}

/// What the schema cannot say: regexes that must compile on a linear-time engine, algorithms the
/// engine has, lanes that exist, facets and record schemas that are well formed.
/// Every identifier pattern of the embedded packs.
fn embedded_patterns() -> &'static std::collections::HashSet<String> {
    static PATTERNS: std::sync::LazyLock<std::collections::HashSet<String>> =
        std::sync::LazyLock::new(|| {
            BUILTIN
                .iter()
                .filter_map(|(_, text)| serde_json::from_str::<Value>(text).ok())
                .filter_map(|pack| {
                    pack.pointer("/identifiers/patterns")
                        .and_then(Value::as_array)
                        .cloned()
                })
                .flatten()
                .filter_map(|p| p.get("regex").and_then(Value::as_str).map(String::from))
                .collect()
        });
    &PATTERNS
}

/// An identifier pattern compiled as the engine runs it (case-insensitive), once per process:
/// resolving a pack checks each pattern by compiling it and opening a workspace compiles the same
/// ones again, and the 11 built-in patterns take ~4 ms to compile (a CLI search's open, issue 11).
///
/// # Errors
/// The `regex` crate's, for a pattern it cannot run in linear time.
pub(crate) fn identifier_regex(pattern: &str) -> std::result::Result<regex::Regex, regex::Error> {
    static COMPILED: std::sync::LazyLock<
        std::sync::Mutex<std::collections::HashMap<String, regex::Regex>>,
    > = std::sync::LazyLock::new(Default::default);
    if let Some(regex) = COMPILED.lock().ok().and_then(|c| c.get(pattern).cloned()) {
        return Ok(regex);
    }
    let regex = regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()?;
    if let Ok(mut compiled) = COMPILED.lock() {
        compiled.insert(pattern.to_string(), regex.clone());
    }
    Ok(regex)
}

/// A regex error on one line: the `regex` crate draws a syntax error over several (the pattern,
/// a caret under the fault, then what is wrong), which would break a `FILE:LINE:` listing.
fn regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    let last = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or_default();
    last.strip_prefix("error: ").unwrap_or(last).to_string()
}

fn semantic_problems(pack: &Value) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut error = |pointer: String, message: String| {
        out.push(Problem {
            pointer,
            message,
            error: true,
        });
    };
    let mut defined = Vec::new();
    if let Some(patterns) = pack
        .pointer("/identifiers/patterns")
        .and_then(Value::as_array)
    {
        for (i, p) in patterns.iter().enumerate() {
            let regex = p.get("regex").and_then(Value::as_str).unwrap_or_default();
            // An embedded pack's patterns are compiled by its test; a workspace compiles them
            // when it opens, so checking them here too would compile them twice.
            if embedded_patterns().contains(regex) {
                defined.extend(p.get("name").and_then(Value::as_str).map(String::from));
                continue;
            }
            if let Err(e) = identifier_regex(regex) {
                error(
                    format!("/identifiers/patterns/{i}/regex"),
                    format!(
                        "not a regex the engine runs in linear time (no look-around, no back-references): {}",
                        regex_error(&e)
                    ),
                );
            }
            defined.extend(p.get("name").and_then(Value::as_str).map(String::from));
        }
    }
    let target = pack
        .pointer("/chunking/target_tokens")
        .and_then(Value::as_u64);
    let ceiling = pack
        .pointer("/chunking/soft_ceiling_tokens")
        .and_then(Value::as_u64);
    if let (Some(target), Some(ceiling)) = (target, ceiling)
        && ceiling < target
    {
        error(
            "/chunking/soft_ceiling_tokens".into(),
            format!("{ceiling} is below target_tokens {target}"),
        );
    }
    let lanes: Vec<&str> = pack
        .get("lanes")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut warnings = Vec::new();
    for (name, kind) in pack
        .get("kinds")
        .and_then(Value::as_object)
        .unwrap_or(&Map::new())
    {
        let at = format!("/kinds/{}", escape(name));
        let strategy = kind
            .pointer("/normalisation/strategy")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if serde_json::from_value::<Strategy>(Value::String(strategy.into())).is_err() {
            error(
                format!("{at}/normalisation/strategy"),
                format!(
                    "{strategy:?} is not a normalisation algorithm this engine has ({}); a pack can reuse one with new parameters, a new algorithm needs code in tychora-core",
                    Strategy::NAMES.join(", ")
                ),
            );
        }
        let lane = kind.get("lane").and_then(Value::as_str).unwrap_or_default();
        if !lanes.is_empty() && !lanes.contains(&lane) {
            error(
                format!("{at}/lane"),
                format!("lane {lane:?} is not one of the pack's lanes {lanes:?}"),
            );
        }
        for (facet, definition) in kind
            .get("facets")
            .and_then(Value::as_object)
            .unwrap_or(&Map::new())
        {
            let is_enum = definition.get("type").and_then(Value::as_str) == Some("enum");
            let has_values = definition.get("values").is_some();
            if is_enum != has_values {
                error(
                    format!("{at}/facets/{}", escape(facet)),
                    if is_enum {
                        "an enum facet lists its values".into()
                    } else {
                        "only an enum facet lists values".into()
                    },
                );
            }
        }
        for (record, schema) in kind
            .get("schemas")
            .and_then(Value::as_object)
            .unwrap_or(&Map::new())
        {
            let pointer = format!("{at}/schemas/{}", escape(record));
            if let Err(e) = jsonschema::meta::validate(schema) {
                error(
                    pointer,
                    format!(
                        "not a valid JSON Schema: {e} (at {})",
                        e.instance_path().as_str()
                    ),
                );
            } else if let Err(e) = record_schema_options().build(schema) {
                error(pointer, format!("cannot be compiled: {e}"));
            }
        }
        let schemas = kind.get("schemas").and_then(Value::as_object);
        for (record, rule) in kind
            .get("records")
            .and_then(Value::as_object)
            .unwrap_or(&Map::new())
        {
            let pattern = rule
                .get("key_pattern")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if let Err(e) = regex::Regex::new(pattern) {
                error(
                    format!("{at}/records/{}/key_pattern", escape(record)),
                    format!(
                        "not a regex the engine runs in linear time (no look-around, no back-references): {}",
                        regex_error(&e)
                    ),
                );
            }
            if !schemas.is_some_and(|s| s.contains_key(record)) {
                error(
                    format!("{at}/records/{}", escape(record)),
                    format!(
                        "record type {record:?} has no schema in this kind's `schemas`: records are validated against it"
                    ),
                );
            }
        }
        let missing: Vec<&str> = kind
            .get("identifiers")
            .and_then(Value::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .filter(|id| !defined.iter().any(|d| d == id))
                    .collect()
            })
            .unwrap_or_default();
        // A pack with no patterns at all (`core`) is a base others complete.
        if !missing.is_empty() && !defined.is_empty() {
            warnings.push(Problem {
                pointer: format!("{at}/identifiers"),
                message: format!("cites identifier patterns this pack does not define ({}); the exact channel does not find them", missing.join(", ")),
                error: false,
            });
        }
    }
    out.extend(warnings);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Value {
        json!({})
    }

    /// A workspace whose `packs/` holds the given files.
    fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = local_path(dir.path(), name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn refusal(files: &[(&str, &str)], name: &str) -> String {
        let dir = workspace(files);
        resolve(Some(dir.path()), name, &none())
            .unwrap_err()
            .to_string()
            .replace(&dir.path().display().to_string(), "WS")
    }

    #[test]
    fn built_in_packs_pass_the_published_schema() {
        for (name, _) in BUILTIN {
            let file = PackFile::builtin(name).unwrap();
            assert!(file.is_embedded());
            let value: Value = serde_json::from_str(&file.text).unwrap();
            if let Err(problems) = file.validate(value) {
                panic!("built-in pack {name}: {problems:?}");
            }
        }
        assert!(embedded_patterns().len() >= 11);
        for pattern in embedded_patterns() {
            identifier_regex(pattern).unwrap();
        }
        // The same text from anywhere else is validated on every read.
        let copy = PackFile {
            origin: "/elsewhere/core/pack.json".into(),
            ..PackFile::builtin("core").unwrap()
        };
        assert!(copy.is_embedded(), "identical text needs no second check");
        let edited = PackFile {
            text: PackFile::builtin("core")
                .unwrap()
                .text
                .replacen('{', "{\"bogus\": 1, ", 1),
            ..PackFile::builtin("core").unwrap()
        };
        assert!(!edited.is_embedded());
        assert!(edited.check().unwrap_err()[0].contains("bogus"));
    }

    #[test]
    fn built_in_packs_resolve_over_core_and_say_where_each_value_came_from() {
        let documents = resolve(None, "documents", &none()).unwrap();
        assert_eq!(documents.chain, ["core", "documents"]);
        assert_eq!(documents.pack.name, "documents");
        let mut kinds: Vec<&str> = documents.pack.kinds.keys().map(String::as_str).collect();
        kinds.sort_unstable();
        for builtin in [
            "law",
            "regulation",
            "decision",
            "standard",
            "guidance",
            "manual",
            "template",
            "procedure",
            "feedback",
            "evidence",
            "example",
            "rationale",
            "research_note",
            "code_file",
            "architecture_decision",
        ] {
            assert!(kinds.contains(&builtin), "{builtin} missing from {kinds:?}");
        }
        let origin = |path: &str| {
            documents
                .values
                .iter()
                .find(|v| v.path == path)
                .map(|v| v.origin.clone())
                .unwrap_or_else(|| panic!("{path} not resolved"))
        };
        assert_eq!(
            origin("/kinds/law"),
            "pack core (built-in:packs/core/pack.json)"
        );
        assert_eq!(
            origin("/lexical/stemmer"),
            "pack documents (built-in:packs/documents/pack.json)"
        );
        assert_eq!(origin("/fusion/weights/visual"), "engine default");
        for name in ["core", "documents", "code"] {
            let r = resolve(None, name, &none()).unwrap();
            assert!(r.warnings.is_empty(), "{name}: {:?}", r.warnings);
        }
        // A pack whose patterns leave out one a kind cites: said, not refused.
        let dir = workspace(&[(
            "few",
            r#"{"name":"few","version":1,"description":"x","depends":["documents"],"identifiers":{"patterns":[{"name":"cve","regex":"CVE-\\d+"}]}}"#,
        )]);
        let few = resolve(Some(dir.path()), "few", &none()).unwrap();
        assert!(few.warnings.iter().any(|w| w.contains("/kinds/regulation/identifiers")
            && w.contains("article_point")));
        // workspace.toml is the last layer.
        let tuned = resolve(None, "documents", &json!({"lexical": {"stemmer": false}})).unwrap();
        assert!(!tuned.pack.lexical.stemmer);
        let stemmer = tuned
            .values
            .iter()
            .find(|v| v.path == "/lexical/stemmer")
            .unwrap();
        assert_eq!(stemmer.origin, "workspace.toml");
    }

    #[test]
    fn a_workspace_pack_depends_on_a_built_in_one_and_redefines_a_kind_whole() {
        let dir = workspace(&[(
            "legal-eu",
            r#"{
  "name": "legal-eu",
  "version": 2,
  "description": "EU law",
  "depends": ["documents"],
  "output": { "limit": 5 },
  "kinds": {
    "regulation": {
      "version": 2, "description": "EU regulation", "role": "binding", "lane": "authority",
      "normalisation": { "strategy": "legal" },
      "facets": { "jurisdiction": { "type": "enum", "values": ["EU"] } }
    }
  }
}"#,
        )]);
        let r = resolve(Some(dir.path()), "legal-eu", &none()).unwrap();
        assert_eq!(r.chain, ["core", "documents", "legal-eu"]);
        assert_eq!(r.pack.output.limit, 5);
        assert_eq!(
            r.pack.output.budget_tokens, 4000,
            "the rest of output comes from documents"
        );
        let regulation = &r.pack.kinds["regulation"];
        assert_eq!(regulation.version, 2);
        assert!(
            regulation.identifiers.is_empty(),
            "a kind is replaced whole, not merged"
        );
        assert_ne!(regulation.fingerprint(), r.pack.kinds["law"].fingerprint());
        assert_eq!(
            PackFile::all(Some(dir.path()))
                .unwrap()
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["core", "documents", "code", "legal-eu"]
        );
    }

    #[test]
    fn every_problem_of_every_stage_is_listed_in_one_run() {
        let dir = workspace(&[(
            "many",
            "{\n\"name\": \"other\",\n\"version\": 1,\n\"description\": \"x\",\n\"depends\": [\"documents\", \"nowhere\"],\n\"output\": {\"limt\": 3, \"budgte\": 1},\n\"identifiers\": {\"patterns\": [{\"name\": \"twice\", \"regex\": \"(a+)+\\\\1\"}]}\n}\n",
        )]);
        let file = PackFile::find(Some(dir.path()), "many").unwrap();
        let check = check_pack(Some(dir.path()), file);
        let problems: Vec<String> = check
            .problems
            .iter()
            .map(|p| p.replace(&dir.path().display().to_string(), "WS"))
            .collect();
        for expected in [
            "WS/packs/many/pack.json:6: /output/limt:",
            "WS/packs/many/pack.json:6: /output/budgte:",
            "WS/packs/many/pack.json:2: /name: the pack is named \"other\" but lives under \"many\"",
            "WS/packs/many/pack.json:5: /depends/1: depends on pack \"nowhere\"",
            "WS/packs/many/pack.json:7: /identifiers/patterns/0/regex: not a regex",
        ] {
            assert!(
                problems.iter().any(|p| p.starts_with(expected)),
                "{expected} missing from {problems:#?}"
            );
        }
        assert_eq!(problems.len(), 5, "{problems:#?}");
        assert!(problems.iter().all(|p| !p.contains('\n')), "one line each");
        assert!(check.value.is_some());
    }

    #[test]
    fn a_missing_field_does_not_hide_what_is_wrong_beside_it() {
        let dir = workspace(&[(
            "k",
            "{\"name\":\"k\",\"version\":1,\"description\":\"x\",\"depends\":[\"documents\"],\n\"kinds\":{\"memo\":\n{\"version\":1,\"lane\":\"guidance\",\"normalisation\":{\"strategy\":\"summarise\"}}}}",
        )]);
        let file = PackFile::find(Some(dir.path()), "k").unwrap();
        let problems = check_pack(Some(dir.path()), file).problems;
        assert!(
            problems
                .iter()
                .any(|p| p.contains("/kinds/memo: \"role\" is a required")),
            "{problems:#?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("/kinds/memo/normalisation/strategy: \"summarise\" is not")),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_pack_file_outside_a_workspace_is_the_pack_its_name_says() {
        let elsewhere = tempfile::tempdir().unwrap();
        let copy = elsewhere.path().join("packtest").join("pack.json");
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::write(&copy, PackFile::builtin("documents").unwrap().text).unwrap();
        let file = PackFile::read_given(&copy, None).unwrap();
        assert_eq!(file.name, "documents");
        let check = check_pack(None, file);
        assert!(check.problems.is_empty(), "{:?}", check.problems);
        // Inside a workspace's packs/, the folder is how the pack is found: the names must agree.
        let dir = workspace(&[("packtest", &PackFile::builtin("documents").unwrap().text)]);
        let placed = local_path(dir.path(), "packtest");
        let file = PackFile::read_given(&placed, Some(dir.path())).unwrap();
        assert_eq!(file.name, "packtest");
        let check = check_pack(Some(dir.path()), file);
        assert_eq!(check.problems.len(), 1, "{:?}", check.problems);
        assert!(
            check.problems[0]
                .contains("/name: the pack is named \"documents\" but lives under \"packtest\"")
        );
    }

    #[test]
    fn bad_packs_are_refused_naming_file_line_and_field() {
        let unknown = refusal(
            &[(
                "p",
                "{\n  \"name\": \"p\",\n  \"version\": 1,\n  \"description\": \"x\",\n  \"output\": {\n    \"limt\": 3\n  }\n}\n",
            )],
            "p",
        );
        assert!(
            unknown.contains("WS/packs/p/pack.json:6: /output/limt:"),
            "{unknown}"
        );
        let wrong_type = refusal(
            &[(
                "p",
                "{\n  \"name\": \"p\",\n  \"version\": \"one\",\n  \"description\": \"x\"\n}\n",
            )],
            "p",
        );
        assert!(
            wrong_type.contains("pack.json:3: /version:") && wrong_type.contains("integer"),
            "{wrong_type}"
        );
        let cycle = refusal(
            &[
                (
                    "a",
                    r#"{"name":"a","version":1,"description":"x","depends":["b"]}"#,
                ),
                (
                    "b",
                    r#"{"name":"b","version":1,"description":"x","depends":["a"]}"#,
                ),
            ],
            "a",
        );
        assert!(cycle.contains("cycle: a → b → a"), "{cycle}");
        let missing = refusal(
            &[(
                "a",
                "{\"name\":\"a\",\"version\":1,\"description\":\"x\",\n\"depends\":[\"nowhere\"]}",
            )],
            "a",
        );
        assert!(
            missing.contains("pack.json:2: /depends/0: depends on pack \"nowhere\""),
            "{missing}"
        );
        let kind = |body: &str| {
            refusal(
                &[(
                    "k",
                    &format!(
                        "{{\"name\":\"k\",\"version\":1,\"description\":\"x\",\"depends\":[\"documents\"],\n\"kinds\":{{\"memo\":\n{{\"version\":1,\"description\":\"m\",\"role\":\"r\",\"lane\":\"guidance\",{body}}}}}}}"
                    ),
                )],
                "k",
            )
        };
        let algorithm = kind(r#""normalisation":{"strategy":"summarise"}"#);
        assert!(
            algorithm.contains("/kinds/memo/normalisation/strategy")
                && algorithm.contains("needs code"),
            "{algorithm}"
        );
        let schema =
            kind(r#""normalisation":{"strategy":"format"},"schemas":{"memo":{"type":"objekt"}}"#);
        assert!(
            schema.contains("pack.json:3: /kinds/memo/schemas/memo: not a valid JSON Schema"),
            "{schema}"
        );
        let facet =
            kind(r#""normalisation":{"strategy":"format"},"facets":{"level":{"type":"enum"}}"#);
        assert!(
            facet.contains("/kinds/memo/facets/level: an enum facet lists its values"),
            "{facet}"
        );
        let backtracking = refusal(
            &[(
                "r",
                r#"{"name":"r","version":1,"description":"x","identifiers":{"patterns":[{"name":"twice","regex":"(a+)+\\1"}]}}"#,
            )],
            "r",
        );
        assert!(
            backtracking.contains(
                "/identifiers/patterns/0/regex: not a regex the engine runs in linear time"
            ),
            "{backtracking}"
        );
        let misnamed = refusal(
            &[("n", r#"{"name":"other","version":1,"description":"x"}"#)],
            "n",
        );
        assert!(
            misnamed.contains("/name: the pack is named \"other\" but lives under \"n\""),
            "{misnamed}"
        );
        let not_json = refusal(&[("j", "{\n\"name\": \"j\",,\n}")], "j");
        assert!(not_json.contains("pack.json:2: not JSON"), "{not_json}");
    }
}
