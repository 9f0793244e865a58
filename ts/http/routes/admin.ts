import { isAbsolute } from 'node:path'
import { BackupReportSchema, BackupRequestSchema } from '../../contracts/operations.js'
import { StatusSchema, VerifyReportSchema } from '../../contracts/workspace.js'
import { TychoraError } from '../../errors.js'
import { projectRoute } from '../route.js'

/*
 * The administration that runs while the workspace serves (`manage status|verify|backup` route
 * here when a daemon owns the workspace). Owner's token only: an agent learns nothing about the
 * workspace's layout on disk and cannot make the daemon write anywhere.
 */

/** `GET /v1/projects/:project/status`: counts, sizes and the current snapshot. */
export const workspaceStatus = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/status',
  operationId: 'workspaceStatus',
  summary: 'Counts, sizes on disk and the current snapshot of a project (what `tychora manage status` prints)',
  ownerOnly: true,
  response: StatusSchema,
  handle: ({ registry, project }) => registry.admin(project).status(),
})

/** `POST /v1/projects/:project/verify`: re-hash every artifact, check snapshots against their indexes. */
export const verifyWorkspace = projectRoute({
  method: 'POST',
  path: '/v1/projects/:project/verify',
  operationId: 'verifyWorkspace',
  summary: 'Re-hash every original and check every snapshot against its indexes (what `tychora manage verify` does); problems found are data in the report',
  description: 'Runs between jobs: a job queued meanwhile waits for it, and searches go on. The response comes when the check ends.',
  ownerOnly: true,
  response: VerifyReportSchema,
  handle: ({ registry, project }) => registry.admin(project).verify(),
})

/** `POST /v1/projects/:project/backup`: a verified copy written by the daemon while it serves. */
export const backupWorkspace = projectRoute({
  method: 'POST',
  path: '/v1/projects/:project/backup',
  operationId: 'backupWorkspace',
  summary: 'Write a verified copy of a project to a folder on the daemon’s machine while it serves (what `tychora manage backup` does)',
  description: [
    'The copy: the SQLite online backup, the originals and index generations its rows reference, and `manifest.json` with the sha256 of every file, staged beside `dest` and renamed into place; searches go on, jobs wait.',
    '`dest` must be absolute (400 E_INVALID_ARGUMENT otherwise): it is a path on the machine running the daemon. A `dest` that exists and is not empty is 409 E_CONFLICT.',
  ].join(' '),
  ownerOnly: true,
  errors: ['E_CONFLICT'],
  body: BackupRequestSchema,
  response: BackupReportSchema,
  handle: ({ registry, project, body }) => {
    if (!isAbsolute(body.dest)) throw new TychoraError('E_INVALID_ARGUMENT', `dest must be an absolute path: ${body.dest}`)
    return registry.admin(project).backup(body.dest)
  },
})
