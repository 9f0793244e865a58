/** A running OpenSearch test cluster (scripts/opensearch.mjs). */
export interface OpenSearch {
  /** The first node's HTTP endpoint. */
  url: string
  /** Every node's HTTP endpoint. */
  urls: string[]
  /** Each node's JVM process id (a fault test kills one). */
  pids: number[]
  /** How long the cluster took to form. */
  startedMs: number
  stop(): Promise<void>
  /** SIGKILLs node `i` (its data stays). */
  kill(i: number): Promise<void>
  /** Starts node `i` again on its ports and data; resolves once the cluster is `status` (default green). */
  revive(i: number, status?: 'green' | 'yellow'): Promise<void>
}
export const HOME: string
export function built(): boolean
export function build(): void
export function startOpenSearch(options?: { nodes?: number; timeoutMs?: number }): Promise<OpenSearch>
