import type { ComponentChildren } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, imageUrl } from './api.js'

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

/**
 * Bidirectional and invisible format characters: in a name they make `gpj.exe` read as `exe.jpg`,
 * in a proposal's text they can hide what it says (Trojan Source), and tag characters can carry
 * instructions nobody sees.
 */
const CONTROLS = /([\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2069\u3164\uFEFF\uFFF9-\uFFFB]|[\u{E0000}-\u{E007F}])/u

/** Text with every such character shown as its code point (a block of prose, a quote, a diff line). */
export function Shown({ text }: { text: string }) {
  const parts = text.split(CONTROLS)
  if (parts.length === 1) return <>{text}</>
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <abbr key={i} class="control" title="an invisible formatting character">
            {`U+${(part.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`}
          </abbr>
        ) : (
          part
        ),
      )}
    </>
  )
}

/**
 * A file path or other name from a stranger: shown as text (never markup), isolated for bidi, and
 * with every bidi or invisible control shown as its code point, so a name reads as it is stored.
 */
export function Name({ children }: { children: string }) {
  return (
    <bdi class="name" dir="ltr">
      <Shown text={children} />
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

/** An image the API draws, loaded with the session key (see `imageUrl`); its `blob:` URL is revoked when it goes. */
export function ApiImage({ path, alt, class: className, onLoad }: { path: string; alt: string; class?: string; onLoad?: (img: HTMLImageElement, headers: Headers) => void }) {
  const [src, setSrc] = useState<{ url: string; headers: Headers }>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    let live = true
    let made: string | undefined
    imageUrl(path).then(
      (image) => {
        made = image.url
        if (live) setSrc(image)
        else URL.revokeObjectURL(image.url)
      },
      (e: unknown) => live && setError(describe(e)),
    )
    return () => {
      live = false
      if (made) URL.revokeObjectURL(made)
    }
  }, [path])
  if (error) return <Failure error={error} />
  return src ? <img class={className} src={src.url} alt={alt} onLoad={(e) => onLoad?.(e.currentTarget as HTMLImageElement, src.headers)} /> : <p class="muted">Drawing…</p>
}

/**
 * A panel that opens beside a list (a piece of evidence, a run). Focus moves to its heading when it
 * opens or shows something else, so a keyboard or screen-reader user lands on what they opened;
 * Escape or its Close button closes it and gives focus back to what opened it.
 */
export function Panel({ label, title, onClose, children }: { label: string; title: string; onClose: () => void; children: ComponentChildren }) {
  const panel = useRef<HTMLElement>(null)
  const heading = useRef<HTMLHeadingElement>(null)
  const opener = useRef<HTMLElement | null>(null)
  useEffect(() => {
    const active = document.activeElement
    if (active instanceof HTMLElement && !panel.current?.contains(active)) opener.current = active
    heading.current?.focus()
  }, [title])
  const close = () => {
    const back = opener.current
    onClose()
    if (back?.isConnected) back.focus()
  }
  return (
    <aside
      ref={panel}
      class="evidence"
      aria-label={label}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return
        e.stopPropagation()
        close()
      }}
    >
      <div class="panel-head">
        <h2 ref={heading} tabIndex={-1}>
          {title}
        </h2>
        <button type="button" class="close" onClick={close} aria-label={`Close ${label}`}>
          Close
        </button>
      </div>
      {children}
    </aside>
  )
}
