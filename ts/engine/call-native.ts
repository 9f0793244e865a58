import { availableParallelism } from 'node:os'
import { toTychoraError } from '../errors.js'

/**
 * Caps in-flight native calls at the machine's parallelism with a FIFO queue, so a burst of
 * requests cannot flood the libuv pool that Node's fs and zlib share.
 */
class Limiter {
  #free: number
  readonly #queue: Array<() => void> = []

  constructor(slots: number) {
    this.#free = slots
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--
    else await new Promise<void>((resolve) => this.#queue.push(resolve))
    try {
      return await fn()
    } finally {
      const next = this.#queue.shift()
      if (next) next()
      else this.#free++
    }
  }
}

const limiter = new Limiter(Math.max(2, availableParallelism()))

export async function callNative<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await limiter.run(fn)
  } catch (error) {
    throw toTychoraError(error)
  }
}

/** Synchronous native calls (cheap getters, close) go through the same error mapping. */
export function callNativeSync<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    throw toTychoraError(error)
  }
}
