import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError } from './api.js'

/** A value loaded once per `deps`, with its error as text (never as HTML). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { value: T | undefined; error: string | undefined; reload: () => void } {
  const [value, setValue] = useState<T>()
  const [error, setError] = useState<string>()
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    setError(undefined)
    load().then(
      (v) => live && setValue(v),
      (e: unknown) => live && setError(describe(e)),
    )
    return () => {
      live = false
    }
  }, [...deps, tick])
  return { value, error, reload: () => setTick((t) => t + 1) }
}

export function describe(e: unknown): string {
  return e instanceof ApiError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e)
}

export function Failure({ error }: { error: string | undefined }) {
  return error ? (
    <p role="alert" class="error">
      {error}
    </p>
  ) : null
}

/** Bidirectional and invisible format controls: in a name they can make `gpj.exe` read as `exe.jpg`. */
const CONTROLS = /([\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF])/

/**
 * A file path or other name from a stranger: shown as text (never markup), isolated for bidi, and
 * with every bidi or invisible control shown as its code point, so a name reads as it is stored.
 */
export function Name({ children }: { children: string }) {
  const parts = children.split(CONTROLS)
  return (
    <bdi class="name" dir="ltr">
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <abbr key={i} class="control" title="an invisible formatting character in the name">
            {`U+${(part.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`}
          </abbr>
        ) : (
          part
        ),
      )}
    </bdi>
  )
}

export const when = (ms: number) => new Date(ms).toLocaleString()

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  )
}
