// How TypeScript reads an artifact (an original, a derived text, a picture) to draw or show it.
// The workspace reads through the core's artifact store, which knows where its artifacts live
// (the workspace's folder or an S3 bucket) and verifies their bytes; a process that does not hold
// the workspace (the CLI beside a daemon) reads the folder layout itself, verifying the same way.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TychoraError } from '../errors.js'

/** An artifact's verified bytes by sha256; E_NOT_FOUND when it is not (or no longer) kept. */
export type ReadArtifact = (sha256: string) => Promise<Buffer>

const SHA256 = /^[0-9a-f]{64}$/

/** Reads `WORKSPACE/artifacts/sha256/ab/<sha256>`, checking the bytes against the name. */
export function folderArtifacts(workspaceDir: string): ReadArtifact {
  return async (sha256) => {
    if (!SHA256.test(sha256)) throw new TychoraError('E_CORRUPT', `${JSON.stringify(sha256)} names no artifact`)
    let bytes: Buffer
    try {
      bytes = await readFile(join(workspaceDir, 'artifacts/sha256', sha256.slice(0, 2), sha256))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new TychoraError('E_NOT_FOUND', `artifact ${sha256} is not kept here (erased, purged, or the workspace keeps its artifacts in a bucket)`)
      throw new TychoraError('E_IO', `artifact ${sha256}: ${(error as Error).message}`, { cause: error })
    }
    const computed = createHash('sha256').update(bytes).digest('hex')
    if (computed !== sha256) throw new TychoraError('E_CHECKSUM_MISMATCH', `artifact ${sha256}: its bytes hash to ${computed}`)
    return bytes
  }
}
