import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ProjectPaths, initProject } from '../../ts/knowledge/layout.js'
import { accept, propose } from '../../ts/knowledge/lifecycle.js'
import { applyMigrations } from '../../ts/service/knowledge-state.js'

/**
 * A knowledge project in a fresh temp folder with one approved item, `release-freeze` ("No releases
 * in December." / "Ask the release lead."), and its state built: what the dashboard's review tests
 * propose changes to. The caller removes `repo`.
 */
export async function approvedKnowledge(prefix: string): Promise<{ repo: string; paths: ProjectPaths }> {
  const repo = await mkdtemp(join(tmpdir(), prefix))
  const paths = await initProject(repo)
  const first = await propose(
    paths,
    { change: { op: 'create', item: 'release-freeze', title: 'Release freeze', kind: 'decision', body: 'No releases in December.\nAsk the release lead.\n' }, rationale: 'r' },
    async () => undefined,
  )
  await accept(paths, { proposal: first.id, reviewer: 'ana' }, async () => undefined)
  await applyMigrations(paths)
  return { repo, paths }
}
