import { createRequire } from 'node:module'

/** better-sqlite3 (a dev dependency, no bundled types), to read a workspace's rows as a second process would. */
export interface Sqlite {
  prepare(sql: string): { all(...params: unknown[]): unknown[]; get(...params: unknown[]): unknown }
  close(): void
}

export const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string, options: { readonly: boolean; fileMustExist: boolean }) => Sqlite
