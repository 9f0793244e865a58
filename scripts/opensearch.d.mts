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
}
export const HOME: string
export function built(): boolean
export function build(): void
export function startOpenSearch(options?: { nodes?: number; timeoutMs?: number }): Promise<OpenSearch>
