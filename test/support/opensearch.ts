/**
 * A real OpenSearch cluster for the tests (scripts/opensearch.mjs, shared with the benchmarks),
 * and whether this machine has the test node built: a missing node skips the suites that need it,
 * or fails them where `TYCHORA_REQUIRE` names `servers` (as `.ci/run` does).
 */
import { HOME, built } from '../../scripts/opensearch.mjs'
import { unless } from './requirements.js'

export { type OpenSearch, startOpenSearch } from '../../scripts/opensearch.mjs'

/** Why the OpenSearch tests cannot run here (false when they can); throws where this run requires servers. */
export const opensearchMissing = unless('servers', built() ? false : `no OpenSearch test node at ${HOME} (node scripts/opensearch.mjs build)`)
