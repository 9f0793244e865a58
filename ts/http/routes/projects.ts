import { ProjectListSchema } from '../../contracts/service.js'
import { projectsForToken } from '../guards.js'
import { route } from '../route.js'

/** `GET /v1/projects`: only the projects the caller's token opens. */
export const listProjects = route({
  method: 'GET',
  path: '/v1/projects',
  operationId: 'listProjects',
  summary: "List the projects this token opens (never the daemon's other projects)",
  auth: 'token',
  response: ProjectListSchema,
  async handle({ registry, token }) {
    const mine = new Set(projectsForToken(registry, token))
    const all = await registry.projects()
    return { projects: all.filter((p) => mine.has(p.name)) }
  },
})
