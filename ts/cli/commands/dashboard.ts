import { defineCommand } from 'citty'
import { runningDaemon } from '../../daemon/discovery.js'
import { ErrorCodeSchema, TychoraError } from '../../errors.js'
import { resolveWorkspace, workspaceArg, writeOut } from '../context.js'
import { ownerToken } from '../route.js'

/**
 * `tychora dashboard`: a fresh one-time login link for the dashboard of the daemon that serves the
 * workspace (the one `serve` printed is spent once opened). The daemon issues it to the holder of
 * the workspace's owner token (`runtime/token`, 0600), which this command reads.
 */
export default defineCommand({
  meta: { name: 'dashboard', description: "Print a fresh one-time login link to the dashboard of the daemon serving the workspace (the owner's)" },
  args: { ...workspaceArg },
  async run({ args }) {
    const dir = await resolveWorkspace(args.workspace)
    const daemon = await runningDaemon(dir)
    if (!daemon) throw new TychoraError('E_NOT_FOUND', `no daemon serves ${dir}: start one with \`tychora serve\` (it prints a login link)`)
    const response = await fetch(`${daemon.url}/ui/login-link`, { method: 'POST', headers: { authorization: `Bearer ${ownerToken(dir)}` } })
    const body = (await response.json().catch(() => ({}))) as { url?: string; code?: string; message?: string }
    if (!response.ok || typeof body.url !== 'string') {
      const parsed = ErrorCodeSchema.safeParse(body.code)
      const code = parsed.success ? parsed.data : 'E_INTERNAL'
      throw new TychoraError(code, `the daemon at ${daemon.url} gave no login link: ${body.message ?? `HTTP ${response.status}`}`)
    }
    writeOut(body.url)
  },
})
