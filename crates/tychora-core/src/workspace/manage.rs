//! `tychora manage status|verify` and `tychora inspect`: counts, integrity checks, provenance.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::Workspace;
use crate::error::{Error, Result};
use crate::snapshot;
use crate::store::migrate;

fn dir_size(path: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

fn count(conn: &Connection, sql: &str) -> Result<i64> {
    Ok(conn.query_row(sql, [], |r| r.get(0))?)
}

/// One problem `verify` found.
#[derive(Debug, serde::Serialize)]
pub struct Problem {
    /// What was checked.
    pub object: String,
    /// Stable code.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

/// The verification report.
#[derive(Debug, serde::Serialize)]
pub struct VerifyReport {
    /// True when no problem was found.
    pub ok: bool,
    /// Artifacts re-hashed.
    pub artifacts_checked: usize,
    /// Rows referencing artifacts that were checked.
    pub references_checked: usize,
    /// Snapshots whose indexes were checked.
    pub snapshots_checked: usize,
    /// Problems, if any.
    pub problems: Vec<Problem>,
}

impl Workspace {
    /// Counts, sizes and the current snapshot.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn status(&self) -> Result<Value> {
        self.query_log().flush();
        self.with_reader(|conn| {
            let current = snapshot::current(conn)?;
            let snapshot = match current {
                Some(id) => conn
                    .query_row(
                        "SELECT id, created_at, chunk_count, (SELECT COUNT(*) FROM snapshot_members WHERE snapshot_id = s.id), job_id FROM snapshots s WHERE id = ?1",
                        params![id],
                        |r| Ok(json!({ "id": r.get::<_, i64>(0)?, "created_at": r.get::<_, i64>(1)?, "chunks": r.get::<_, i64>(2)?, "sources": r.get::<_, i64>(3)?, "job_id": r.get::<_, Option<i64>>(4)? })),
                    )
                    .optional()?,
                None => None,
            };
            let collections: Vec<Value> = conn
                .prepare("SELECT c.name, (SELECT COUNT(*) FROM sources s WHERE s.collection_id = c.id AND s.status = 'active') FROM collections c ORDER BY c.name")?
                .query_map([], |r| Ok(json!({ "name": r.get::<_, String>(0)?, "active_sources": r.get::<_, i64>(1)? })))?
                .collect::<rusqlite::Result<_>>()?;
            let db = self.dir().join("corpus.sqlite3");
            let db_bytes = [db.clone(), db.with_extension("sqlite3-wal")].iter().map(|p| std::fs::metadata(p).map_or(0, |m| m.len())).sum::<u64>();
            Ok(json!({
                "dir": self.dir().display().to_string(),
                "schema_version": migrate::latest(),
                "engine_version": super::ENGINE_VERSION,
                "profile": self.config().default_profile,
                "current_snapshot": snapshot,
                "collections": collections,
                "counts": {
                    "sources": count(conn, "SELECT COUNT(*) FROM sources WHERE status = 'active'")?,
                    "removed_sources": count(conn, "SELECT COUNT(*) FROM sources WHERE status = 'removed'")?,
                    "revisions": count(conn, "SELECT COUNT(*) FROM revisions")?,
                    "extractions": count(conn, "SELECT COUNT(*) FROM extractions")?,
                    "evidence_units": count(conn, "SELECT COUNT(*) FROM evidence_units")?,
                    "chunks": count(conn, "SELECT COUNT(*) FROM chunks")?,
                    "identifiers": count(conn, "SELECT COUNT(*) FROM identifiers")?,
                    "artifacts": count(conn, "SELECT COUNT(*) FROM artifacts")?,
                    "snapshots": count(conn, "SELECT COUNT(*) FROM snapshots")?,
                    "jobs": count(conn, "SELECT COUNT(*) FROM jobs")?,
                    "query_runs": count(conn, "SELECT COUNT(*) FROM query_runs")?,
                },
                "bytes": {
                    "corpus": db_bytes,
                    "artifacts": dir_size(&self.dir().join("artifacts")),
                    "indexes": dir_size(&self.dir().join("indexes")),
                },
            }))
        })
    }

    /// Re-hashes every artifact, checks every row that references one, and checks that each
    /// retained snapshot's lexical index matches its chunk rows.
    ///
    /// # Errors
    /// SQLite errors (problems found are data in the report).
    pub fn verify(&self) -> Result<VerifyReport> {
        self.with_reader(|conn| {
            let mut problems = Vec::new();
            let artifacts: Vec<(String, i64)> = conn.prepare("SELECT sha256, size FROM artifacts")?.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
            let mut sizes = std::collections::HashMap::new();
            for (sha, size) in &artifacts {
                match self.artifacts().get(sha) {
                    Ok(bytes) if bytes.len() as i64 == *size => {
                        sizes.insert(sha.clone(), *size);
                    }
                    Ok(bytes) => problems.push(Problem { object: format!("artifact {sha}"), code: "E_CHECKSUM_MISMATCH", message: format!("size {} but {} recorded", bytes.len(), size) }),
                    Err(e) => problems.push(Problem { object: format!("artifact {sha}"), code: e.code().as_str(), message: e.to_string() }),
                }
            }
            let references: Vec<(String, String, i64)> = conn
                .prepare(
                    "SELECT 'revision ' || r.id, r.sha256, r.size FROM revisions r
                     UNION ALL SELECT 'revision_artifact ' || ra.revision_id || '/' || ra.role, ra.sha256, -1 FROM revision_artifacts ra",
                )?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?;
            for (object, sha, size) in &references {
                match sizes.get(sha) {
                    None => problems.push(Problem { object: object.clone(), code: "E_NOT_FOUND", message: format!("references artifact {sha}, which is missing or damaged") }),
                    Some(actual) if *size >= 0 && actual != size => {
                        problems.push(Problem { object: object.clone(), code: "E_CHECKSUM_MISMATCH", message: format!("records size {size}, artifact has {actual}") });
                    }
                    Some(_) => {}
                }
            }
            let out_of_range = count(
                conn,
                "SELECT COUNT(*) FROM chunks c JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id WHERE c.byte_end > r.size OR c.byte_start > c.byte_end",
            )?;
            if out_of_range > 0 {
                problems.push(Problem { object: "chunks".into(), code: "E_CORRUPT", message: format!("{out_of_range} chunk spans fall outside their revision's bytes") });
            }
            let snapshots: Vec<(i64, i64, String, i64)> = conn
                .prepare(
                    "SELECT s.id, s.chunk_count, b.generation, (SELECT COALESCE(SUM(e.chunk_count), 0) FROM snapshot_members m JOIN extractions e ON e.id = m.extraction_id WHERE m.snapshot_id = s.id)
                     FROM snapshots s JOIN snapshot_indexes si ON si.snapshot_id = s.id JOIN index_batches b ON b.id = si.batch_id WHERE b.status = 'verified'",
                )?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<rusqlite::Result<_>>()?;
            for (id, chunk_count, generation, member_chunks) in &snapshots {
                if chunk_count != member_chunks {
                    problems.push(Problem { object: format!("snapshot {id}"), code: "E_CORRUPT", message: format!("records {chunk_count} chunks, its members have {member_chunks}") });
                }
                match self.lexical(generation) {
                    Ok(index) if index.num_docs() as i64 == *chunk_count => {}
                    Ok(index) => problems.push(Problem {
                        object: format!("snapshot {id}"),
                        code: "E_CORRUPT",
                        message: format!("lexical generation {generation} holds {} documents, the snapshot {chunk_count} chunks; rebuild it", index.num_docs()),
                    }),
                    Err(e) => problems.push(Problem { object: format!("snapshot {id}"), code: e.code().as_str(), message: e.to_string() }),
                }
            }
            Ok(VerifyReport { ok: problems.is_empty(), artifacts_checked: artifacts.len(), references_checked: references.len(), snapshots_checked: snapshots.len(), problems })
        })
    }

    /// Sources of the current snapshot (or of `snapshot_id`), optionally in one collection.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown collection; SQLite errors.
    pub fn list_sources(
        &self,
        collection: Option<&str>,
        snapshot_id: Option<i64>,
        limit: usize,
        offset: usize,
    ) -> Result<Value> {
        self.with_reader(|conn| {
            if let Some(name) = collection {
                Workspace::collection_id(conn, name, false)?;
            }
            let snapshot = match snapshot_id {
                Some(id) => Some(id),
                None => snapshot::current(conn)?,
            };
            let Some(snapshot) = snapshot else { return Ok(json!({ "snapshot_id": null, "total": 0, "sources": [] })) };
            let filter = "m.snapshot_id = ?1 AND (?2 IS NULL OR c.name = ?2)";
            let total: i64 = conn.query_row(
                &format!("SELECT COUNT(*) FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections c ON c.id = s.collection_id WHERE {filter}"),
                params![snapshot, collection],
                |r| r.get(0),
            )?;
            let sources: Vec<Value> = conn
                .prepare(&format!(
                    "SELECT json_object('id', s.id, 'path', s.rel_path, 'uri', s.uri, 'collection', c.name, 'kind', s.kind, 'revision_id', r.id, 'seq', r.seq, 'sha256', r.sha256, 'size', r.size, 'captured_at', r.captured_at)
                     FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections c ON c.id = s.collection_id JOIN revisions r ON r.id = m.revision_id
                     WHERE {filter} ORDER BY s.rel_path LIMIT ?3 OFFSET ?4"
                ))?
                .query_map(params![snapshot, collection, limit as i64, offset as i64], |r| r.get::<_, String>(0))?
                .map(|r| r.map(|t| serde_json::from_str(&t).unwrap_or(Value::Null)))
                .collect::<rusqlite::Result<_>>()?;
            Ok(json!({ "snapshot_id": snapshot, "total": total, "sources": sources }))
        })
    }

    /// Published snapshots, newest first, with whether their indexes are still retained.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn list_snapshots(&self) -> Result<Value> {
        self.with_reader(|conn| {
            let rows: Vec<Value> = conn
                .prepare(
                    "SELECT json_object('id', sn.id, 'parent_id', sn.parent_id, 'job_id', sn.job_id, 'chunks', sn.chunk_count, 'created_at', sn.created_at,
                        'sources', (SELECT COUNT(*) FROM snapshot_members m WHERE m.snapshot_id = sn.id),
                        'current', json(CASE WHEN sn.id = (SELECT current_snapshot_id FROM workspaces WHERE id = 1) THEN 'true' ELSE 'false' END),
                        'retained', json(CASE WHEN EXISTS (SELECT 1 FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id WHERE si.snapshot_id = sn.id AND b.status = 'verified') THEN 'true' ELSE 'false' END))
                     FROM snapshots sn ORDER BY sn.id DESC",
                )?
                .query_map([], |r| r.get::<_, String>(0))?
                .map(|r| r.map(|t| serde_json::from_str(&t).unwrap_or(Value::Null)))
                .collect::<rusqlite::Result<_>>()?;
            Ok(json!({ "snapshots": rows }))
        })
    }

    /// A job's row, steps and receipt, plus its live progress while it runs in this process.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown job.
    pub fn job_status(&self, job_id: i64) -> Result<Value> {
        let mut job = self.inspect(&format!("job:{job_id}"))?;
        if let (Some(progress), Some(obj)) = (self.job_progress(job_id), job.as_object_mut()) {
            obj.insert(
                "progress".into(),
                serde_json::to_value(progress).unwrap_or(Value::Null),
            );
        }
        Ok(job)
    }

    /// Shows one object with its provenance. `id` is `source:N`, `revision:N`, `unit:N`,
    /// `chunk:N`, `snapshot:N`, `job:N`, or a segment id `seg_S_C`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an unparseable id, `E_NOT_FOUND` for a missing object.
    pub fn inspect(&self, id: &str) -> Result<Value> {
        let (kind, number) = parse_id(id)?;
        self.with_reader(|conn| {
            let found = match kind {
                "source" => one(conn, "SELECT json_object('type', 'source', 'id', s.id, 'uri', s.uri, 'path', s.rel_path, 'root', ro.path, 'collection', c.name, 'kind', s.kind, 'status', s.status, 'created_at', s.created_at, 'updated_at', s.updated_at, 'revisions', (SELECT json_group_array(json_object('id', r.id, 'seq', r.seq, 'sha256', r.sha256, 'size', r.size, 'captured_at', r.captured_at)) FROM revisions r WHERE r.source_id = s.id)) FROM sources s JOIN collections c ON c.id = s.collection_id JOIN roots ro ON ro.id = s.root_id WHERE s.id = ?1", number)?,
                "revision" => one(conn, "SELECT json_object('type', 'revision', 'id', r.id, 'source_id', r.source_id, 'path', s.rel_path, 'seq', r.seq, 'sha256', r.sha256, 'size', r.size, 'metadata', json(r.metadata_json), 'captured_at', r.captured_at, 'extractions', (SELECT json_group_array(json_object('id', e.id, 'parser', e.parser, 'fingerprint', e.fingerprint, 'units', e.unit_count, 'chunks', e.chunk_count, 'diagnostics', json(e.diagnostics_json))) FROM extractions e WHERE e.revision_id = r.id)) FROM revisions r JOIN sources s ON s.id = r.source_id WHERE r.id = ?1", number)?,
                "unit" => one(conn, "SELECT json_object('type', 'unit', 'id', u.id, 'unit_type', u.unit_type, 'extraction_id', u.extraction_id, 'revision_id', e.revision_id, 'path', s.rel_path, 'sha256', r.sha256, 'heading_path', json(u.heading_path_json), 'anchor', u.anchor, 'tokens', u.token_count, 'locator', json_object('byte_start', l.byte_start, 'byte_end', l.byte_end, 'line_start', l.line_start, 'col_start', l.col_start, 'line_end', l.line_end, 'col_end', l.col_end, 'json_pointer', l.json_pointer), 'identifiers', (SELECT json_group_array(json_object('kind', i.kind, 'value', i.value)) FROM identifiers i WHERE i.unit_id = u.id), 'text', u.text) FROM evidence_units u JOIN locators l ON l.unit_id = u.id JOIN extractions e ON e.id = u.extraction_id JOIN revisions r ON r.id = e.revision_id JOIN sources s ON s.id = r.source_id WHERE u.id = ?1", number)?,
                "chunk" => one(conn, "SELECT json_object('type', 'chunk', 'id', c.id, 'extraction_id', c.extraction_id, 'revision_id', e.revision_id, 'path', s.rel_path, 'sha256', r.sha256, 'owner', c.owner_key, 'units', json_array(c.first_unit_id, c.last_unit_id), 'tokens', c.token_count, 'locator', json_object('byte_start', c.byte_start, 'byte_end', c.byte_end, 'line_start', c.line_start, 'line_end', c.line_end), 'capsule', json(c.capsule_json), 'text', c.text) FROM chunks c JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id JOIN sources s ON s.id = r.source_id WHERE c.id = ?1", number)?,
                "snapshot" => one(conn, "SELECT json_object('type', 'snapshot', 'id', sn.id, 'parent_id', sn.parent_id, 'job_id', sn.job_id, 'chunks', sn.chunk_count, 'created_at', sn.created_at, 'current', json(CASE WHEN sn.id = (SELECT current_snapshot_id FROM workspaces WHERE id = 1) THEN 'true' ELSE 'false' END), 'indexes', (SELECT json_group_array(json_object('family', f.name, 'generation', b.generation, 'documents', b.doc_count, 'status', b.status)) FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id WHERE si.snapshot_id = sn.id), 'members', (SELECT json_group_array(json_object('source_id', m.source_id, 'path', s.rel_path, 'revision_id', m.revision_id, 'sha256', r.sha256)) FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN revisions r ON r.id = m.revision_id WHERE m.snapshot_id = sn.id)) FROM snapshots sn WHERE sn.id = ?1", number)?,
                "job" => one(conn, "SELECT json_object('type', 'job', 'id', j.id, 'kind', j.kind, 'status', j.status, 'request', json(j.request_json), 'receipt', json(j.receipt_json), 'error', j.error, 'created_at', j.created_at, 'finished_at', j.finished_at, 'steps', (SELECT json_group_array(json_object('name', st.name, 'status', st.status, 'started_at', st.started_at, 'finished_at', st.finished_at, 'detail', json(st.detail_json))) FROM job_steps st WHERE st.job_id = j.id)) FROM jobs j WHERE j.id = ?1", number)?,
                _ => None,
            };
            found.ok_or_else(|| Error::NotFound { what: "object", id: id.to_string() })
        })
    }
}

fn one(conn: &Connection, sql: &str, id: i64) -> Result<Option<Value>> {
    let text: Option<String> = conn.query_row(sql, params![id], |r| r.get(0)).optional()?;
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
}

fn parse_id(id: &str) -> Result<(&'static str, i64)> {
    let bad = || {
        Error::InvalidArgument(format!(
            "cannot read id {id:?}: use source:N, revision:N, unit:N, chunk:N, snapshot:N, job:N or a segment id seg_S_C"
        ))
    };
    if let Some(rest) = id.strip_prefix("seg_") {
        let chunk = rest.split('_').nth(1).ok_or_else(bad)?;
        return Ok(("chunk", chunk.parse().map_err(|_| bad())?));
    }
    let (kind, number) = id.split_once(':').ok_or_else(bad)?;
    let kind = match kind {
        "source" | "src" => "source",
        "revision" | "rev" => "revision",
        "unit" => "unit",
        "chunk" => "chunk",
        "snapshot" | "snap" => "snapshot",
        "job" => "job",
        _ => return Err(bad()),
    };
    Ok((kind, number.parse().map_err(|_| bad())?))
}
