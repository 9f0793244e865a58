/**
 * A real S3 server for the tests (scripts/seaweed.mjs, shared with the benchmarks), and whether
 * this machine has one: a missing `weed` skips the suites that need it, or fails them where
 * `TYCHORA_REQUIRE` names `servers` (as `.ci/run` does).
 */
import { existsSync } from 'node:fs'
import { WEED } from '../../scripts/seaweed.mjs'
import { unless } from './requirements.js'

export { type Seaweed, startSeaweed, WEED } from '../../scripts/seaweed.mjs'

/** Why the S3 tests cannot run here (false when they can); throws where this run requires servers. */
export const weedMissing = unless('servers', existsSync(WEED) ? false : `no SeaweedFS at ${WEED} (node scripts/fetch-servers.mjs)`)
