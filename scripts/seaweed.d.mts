/** A running SeaweedFS server and its bucket (scripts/seaweed.mjs). */
export interface Seaweed {
  /** `http://127.0.0.1:PORT`. */
  endpoint: string
  bucket: string
  /** `[artifacts]` for a workspace.toml, under `prefix`. */
  toml(prefix: string): string
  /** The environment a process needs to sign its requests. */
  env: Record<string, string>
  stop(): Promise<void>
}
export const WEED: string
export const ACCESS_KEY: string
export const SECRET_KEY: string
export function startSeaweed(): Promise<Seaweed>
