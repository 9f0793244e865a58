import { resolve } from 'node:path'
import { defineCommand } from 'citty'
import type { Finding } from '../../contracts/operations.js'
import { reannouncedDaemon, runningDaemon, unreachableHolder } from '../../daemon/discovery.js'
import { lockOwner, Workspace } from '../../engine/workspace.js'
import { TychoraError } from '../../errors.js'
import { oneLine, visible, visibleLines } from '../../format/terminal.js'
import { exitState, resolveWorkspace, workspaceArg, writeOut } from '../context.js'
import { withAdmin, withLocalWorkspace } from '../route.js'

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`
}

const status = defineCommand({
  meta: { name: 'status', description: 'Counts, sizes and the current snapshot (through the daemon when one serves the workspace)' },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withAdmin(args.workspace, async (ws) => {
      const s = await ws.status()
      if (args.format === 'json') return writeOut(JSON.stringify(s, null, 2))
      const snap = s.current_snapshot
      writeOut(
        visibleLines([
          `workspace ${s.dir} (schema ${s.schema_version}, engine ${s.engine_version}, profile ${s.profile})`,
          snap ? `current snapshot ${snap.id}: ${snap.sources} sources, ${snap.chunks} chunks` : 'no published snapshot yet',
          `collections: ${s.collections.map((c) => `${c.name} (${c.active_sources})`).join(', ')}`,
          `kinds: ${s.kinds.length === 0 ? 'none assigned' : s.kinds.map((k) => `${k.name} v${k.version} (${k.sources})`).join(', ')}`,
          `counts: ${Object.entries(s.counts)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
          ...(s.counts.erased_revisions > 0
            ? [
                `erasures on request: ${s.counts.erased_revisions} revision(s), text out of every snapshot${s.counts.erasures_pending > 0 ? `; ${s.counts.erasures_pending} NOT finished (interrupted): run \`tychora manage purge\`` : ''}`,
              ]
            : []),
          `bytes: corpus ${mb(s.bytes.corpus)}, artifacts (originals) ${mb(s.bytes.artifacts)}, indexes ${mb(s.bytes.indexes)} (lexical ${mb(s.bytes.lexical)}, vectors ${mb(s.bytes.vectors)})`,
          `corpus by table: ${(s.bytes.tables ?? [])
            .slice(0, 8)
            .map((t) => `${t.table} ${mb(t.bytes)}`)
            .join(', ')}`,
        ]),
      )
    })
  },
})

const verify = defineCommand({
  meta: {
    name: 'verify',
    description: 'Re-hash every artifact and check snapshots against their indexes (through the daemon when one serves the workspace)',
  },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withAdmin(args.workspace, async (ws) => {
      const report = await ws.verify()
      if (args.format === 'json') writeOut(JSON.stringify(report, null, 2))
      else {
        writeOut(
          `${report.ok ? 'ok' : 'PROBLEMS'}: ${report.artifacts_checked} artifacts re-hashed, ${report.references_checked} references and ${report.snapshots_checked} snapshots checked` +
            (report.erasures_checked > 0 ? `, ${report.erasures_checked} erasure(s) on request out of every snapshot and index` : ''),
        )
        for (const p of report.problems) writeOut(oneLine(`  ${p.code} ${p.object}: ${p.message}`))
      }
      if (!report.ok) exitState.code = 8
    })
  },
})

const rebuild = defineCommand({
  meta: {
    name: 'rebuild',
    description: 'Rewrite damaged vector files from the vector records; republish the current snapshot when its indexes are stale (embeddings turned on or changed)',
  },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const r = await ws.rebuild()
      if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
      const lines = [
        `job ${r.job_id}: ${r.repaired.length} vector file(s) rewritten from the records${r.repaired.map((g) => `\n  snapshot ${g.snapshot_id}: ${g.generation}`).join('')}`,
        r.republished ? `republished as snapshot ${r.snapshot_id}: ${r.reason}` : `current snapshot ${r.snapshot_id} kept: ${r.reason}`,
      ]
      if (r.embedding) lines.push(`embedded ${r.embedding.embedded} of ${r.embedding.inputs} inputs (${r.embedding.tokens_embedded} tokens)`)
      writeOut(visible(lines.join('\n')))
    })
  },
})

const compact = defineCommand({
  meta: {
    name: 'compact',
    description: "Merge the current snapshot's lexical index segments when the merge policy finds some to merge (the daemon does this when its job queue empties)",
  },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const r = await ws.compact()
      if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
      if (r.snapshot_id === null) return writeOut('no published snapshot yet')
      writeOut(
        visible(
          r.to_generation
            ? `snapshot ${r.snapshot_id}: ${r.from_generation} (${r.segments_before} segments, ${r.deleted_before} deleted documents) merged into ${r.to_generation} (${r.segments_after} segments) in ${r.duration_ms.toFixed(0)} ms`
            : `snapshot ${r.snapshot_id}: ${r.from_generation} has ${r.segments_before} segments and ${r.deleted_before} deleted documents; nothing to merge`,
        ),
      )
      if (r.text_folded_to) writeOut(visible(`vector layer folded into the full generation ${r.text_folded_to}`))
    })
  },
})

const purge = defineCommand({
  meta: {
    name: 'purge',
    description: 'Apply the retention policy ([snapshots], [history] in workspace.toml): old snapshots and what only they used, expired query runs, originals outside the policy (with tombstones)',
  },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const r = await ws.purge()
      if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
      writeOut(
        `purged ${r.snapshots} snapshots, ${r.extractions} extractions (${r.evidence_units} units, ${r.chunks} chunks), ${r.relation_sets} relation sets, ${r.query_runs} query runs; ` +
          `${r.revisions_expired} revisions' originals expired (${r.artifacts_removed} files, ${mb(r.artifact_bytes)}); ${r.jobs} finished jobs; ${r.generations_removed} index generations removed in ${r.duration_ms.toFixed(0)} ms` +
          (r.erased_revisions > 0 ? `; finished ${r.erased_revisions} interrupted erasure(s) (out of ${r.erased_from_snapshots} snapshots)` : ''),
      )
    })
  },
})

const backup = defineCommand({
  meta: {
    name: 'backup',
    description: 'Write a verified copy (SQLite backup API, referenced originals and index generations, manifest of sha256 sums) to DEST, through the daemon while the workspace serves',
  },
  args: {
    dest: { type: 'positional', required: true, description: 'Backup folder (must not exist, or be empty)' },
    ...workspaceArg,
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args }) {
    // Resolved here: through a daemon, DEST is still a path on this machine, not the daemon's working directory.
    await withAdmin(args.workspace, async (ws) => {
      const r = await ws.backup(resolve(String(args.dest)))
      if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
      writeOut(
        visible(
          `backup ${r.dir}: ${r.files} files (${mb(r.bytes)}), ${r.artifacts} originals, ${r.generations} index generations, snapshot ${r.current_snapshot_id ?? 'none'}, in ${r.duration_ms.toFixed(0)} ms`,
        ),
      )
    })
  },
})

const cancel = defineCommand({
  meta: {
    name: 'cancel',
    description: 'Cancel a queued job before it runs (through the daemon while the workspace serves); a running job stops only at its safe points and is refused',
  },
  args: {
    job: { type: 'positional', required: true, description: 'The job id: N or job:N (as add, status and the dashboard show it)' },
    reason: { type: 'string', description: "Why (recorded in the job's error; at most 500 characters)" },
    ...workspaceArg,
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args }) {
    const raw = String(args.job)
    const id = /^(job:)?[0-9]+$/.test(raw) ? Number(raw.replace(/^job:/, '')) : Number.NaN
    if (!Number.isSafeInteger(id) || id <= 0) throw new TychoraError('E_INVALID_ARGUMENT', `not a job id: ${JSON.stringify(raw)} (N or job:N)`)
    await withAdmin(args.workspace, async (ws) => {
      const job = await ws.cancelJob(id, args.reason === undefined ? undefined : String(args.reason))
      if (args.format === 'json') return writeOut(JSON.stringify(job, null, 2))
      writeOut(oneLine(`job ${job.id} (${job.kind}) ${job.status}: ${job.error ?? ''}`))
    })
  },
})

const restore = defineCommand({
  meta: { name: 'restore', description: 'Verify the backup in SRC against its manifest and make it the workspace DIR' },
  args: {
    src: { type: 'positional', required: true, description: 'Backup folder' },
    dir: { type: 'positional', required: true, description: 'New workspace folder (must not exist, or be empty)' },
    store: { type: 'string', description: "A service store's backup: the empty PostgreSQL database it restores into (the password only from PGPASSWORD)" },
    artifacts: { type: 'string', description: "Put the artifacts into this bucket (s3://bucket/prefix) instead of the backup's own" },
    'artifacts-endpoint': { type: 'string', description: "With --artifacts: the bucket's endpoint when it is not AWS" },
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args }) {
    const target = {
      ...(args.store !== undefined ? { store: args.store } : {}),
      ...(args.artifacts !== undefined ? { artifacts: args.artifacts } : {}),
      ...(args['artifacts-endpoint'] !== undefined ? { endpoint: args['artifacts-endpoint'] } : {}),
    }
    const r = await Workspace.restore(resolve(String(args.src)), resolve(String(args.dir)), target)
    if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
    writeOut(visible(`restored ${r.dir}: ${r.files} files verified (${mb(r.bytes)}), snapshot ${r.current_snapshot_id ?? 'none'}`))
  },
})

/** How a command names a source: as `add` took its path, or by id (ingest/selector.rs). */
const SOURCE_FORMS = 'source:N, or its path as add took it: absolute, relative to here or to its capture root, or its file:// URI'

function removalCommand(name: 'withdraw' | 'delete-original', description: string) {
  return defineCommand({
    meta: { name, description },
    args: {
      target: { type: 'positional', required: true, description: `${name === 'withdraw' ? '' : 'revision:N, '}${SOURCE_FORMS}` },
      reason: { type: 'string', required: true, description: 'Why (recorded with the withdrawal or tombstone)' },
      ...workspaceArg,
      format: { type: 'string', description: 'text | json', default: 'text' },
    },
    async run({ args }) {
      await withLocalWorkspace(args.workspace, async (ws) => {
        const target = String(args.target)
        const r = name === 'withdraw' ? await ws.withdraw(target, String(args.reason)) : await ws.deleteOriginal(target, String(args.reason))
        if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
        const lines = [
          ...r.erased.map((t) => `erased ${t.sha256} (${t.size} bytes) of revision ${t.revision_id}, source ${t.source_id}`),
          ...r.withdrawn.map((w) => `withdrawn from new snapshots: ${w.path} (source ${w.source_id})`),
          r.receipt.published
            ? `published snapshot ${r.receipt.snapshot_id} (previous ${r.receipt.previous_snapshot_id ?? 'none'})${name === 'withdraw' ? '; older snapshots answer as before until retention releases them' : ''}`
            : 'no published snapshot changed',
          ...(name === 'withdraw' ? [] : [`the erased text was taken out of ${r.erased_from_snapshots} snapshot(s), pinned ones included: their units, windows, index entries and vectors are gone`]),
        ]
        writeOut(visibleLines(lines))
      })
    },
  })
}

const sensitivity = defineCommand({
  meta: {
    name: 'sensitivity',
    description: "Relabel a source's sensitivity, for every snapshot at once; above the workspace's ceiling its original bytes are erased (a tombstone says why) and it leaves new snapshots",
  },
  args: {
    target: { type: 'positional', required: true, description: SOURCE_FORMS },
    level: { type: 'positional', required: true, description: "The new level, one of the workspace's [sensitivity] levels" },
    reason: { type: 'string', required: true, description: 'Why (recorded with the tombstone when the label is above the ceiling)' },
    ...workspaceArg,
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const r = await ws.relabel(String(args.target), String(args.level), String(args.reason))
      if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
      const lines = [
        `${r.path} (source ${r.source_id}): ${r.from ?? 'unlabelled (the default)'} → ${r.to}`,
        ...(r.summary_trees_deleted > 0 ? [`deleted ${r.summary_trees_deleted} summary tree(s) that summarised it under its old label: run \`tychora index build --raptor\``] : []),
        ...(r.erased
          ? [
              ...r.erased.erased.map((t) => `above the ceiling: erased ${t.sha256} (${t.size} bytes) of revision ${t.revision_id}`),
              r.erased.receipt.published ? `published snapshot ${r.erased.receipt.snapshot_id} without it` : 'no published snapshot held it',
              `its text was taken out of ${r.erased.erased_from_snapshots} snapshot(s), pinned ones included`,
            ]
          : []),
      ]
      writeOut(visibleLines(lines))
    })
  },
})

const doctor = defineCommand({
  meta: {
    name: 'doctor',
    description: 'Check the workspace and explain each finding with its fix: lock owner, daemon, migrations, verify, disk space, stale generations, orphaned originals, interrupted jobs',
  },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    const dir = await resolveWorkspace(args.workspace)
    const findings: Finding[] = []
    const add = (check: string, status: 'ok' | 'warn' | 'fail', detail: string, fix = '') => findings.push({ check, status, detail, fix })
    // One finding about who owns the workspace. A daemon whose daemon.json went missing rewrites
    // it within a second, so a held lock is judged only after waiting for that.
    const owner = lockOwner(dir)
    const daemon = (await runningDaemon(dir)) ?? (owner === undefined ? undefined : await reannouncedDaemon(dir))
    if (daemon) add('lock', 'ok', `held by the daemon (pid ${daemon.pid}) at ${daemon.url}, project ${daemon.project}: commands go through it`)
    else if (owner === undefined) add('lock', 'ok', 'no process holds the workspace (no daemon: commands open it directly)')
    else {
      const { detail, fix } = unreachableHolder(dir, owner)
      add('lock', 'fail', `${detail}; until it is released, commands that need the workspace fail E_LOCKED and the in-workspace checks cannot run`, fix)
    }
    if (owner === undefined) {
      let ws: Workspace | undefined
      try {
        ws = await Workspace.open(dir)
        add('migrations', 'ok', `schema ${(await ws.status({ tables: false })).schema_version}`)
        findings.push(...(await ws.doctor()))
      } catch (error) {
        if (error instanceof TychoraError && error.code === 'E_MIGRATION_REQUIRED') add('migrations', 'fail', error.message, `tychora manage migrate ${dir}`)
        else if (error instanceof TychoraError) add('open', 'fail', `${error.code}: ${error.message}`, 'see the message; `tychora manage verify` after fixing')
        else throw error
      } finally {
        ws?.close()
      }
    } else if (daemon) {
      add(
        'checks',
        'warn',
        'the in-workspace checks (verify, disk, generations, originals, jobs) need the lock',
        '`tychora manage verify` runs through the daemon; for the rest, stop the daemon and run `tychora manage doctor` again',
      )
    }
    if (args.format === 'json') writeOut(JSON.stringify(findings, null, 2))
    else writeOut(visibleLines(findings.flatMap((f) => [`${f.status.padEnd(4)} ${f.check}: ${f.detail}`, ...(f.fix ? [`     fix: ${f.fix}`] : [])])))
    if (findings.some((f) => f.status === 'fail')) exitState.code = 8
  },
})

const migrate = defineCommand({
  meta: { name: 'migrate', description: 'Apply pending schema migrations (never done implicitly)' },
  args: { dir: { type: 'positional', required: false, description: 'Workspace directory' }, ...workspaceArg },
  async run({ args }) {
    const dir = await resolveWorkspace(args.dir ?? args.workspace)
    const applied = await Workspace.migrate(dir)
    writeOut(applied.length > 0 ? `applied migrations ${applied.join(', ')} to ${dir}` : `${dir} is up to date`)
  },
})

export default defineCommand({
  meta: {
    name: 'manage',
    description: 'Workspace administration: status, verify, doctor, rebuild, compact, purge, backup, restore, cancel, withdraw, delete-original, sensitivity, migrate',
  },
  subCommands: {
    status,
    verify,
    rebuild,
    compact,
    purge,
    doctor,
    backup,
    restore,
    cancel,
    withdraw: removalCommand('withdraw', 'Take a source out of new snapshots; its history stays and older snapshots keep answering from it'),
    'delete-original': removalCommand(
      'delete-original',
      "Erase retained original bytes (a revision's, or every revision of a source) for a legal request; leaves a tombstone; evidence derived from them leaves new snapshots",
    ),
    sensitivity,
    migrate,
  },
})
