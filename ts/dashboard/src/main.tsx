import { type FunctionComponent, render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError, adoptLoginKey, currentSession } from './api.js'
import { Corpus } from './views/corpus.js'
import { History } from './views/history.js'
import { Jobs } from './views/jobs.js'
import { Operations } from './views/operations.js'
import { Review } from './views/review.js'
import { Search } from './views/search.js'
import { Symbols } from './views/symbols.js'
import './style.css'

/**
 * The evaluation view carries the chart library (uPlot): loaded when first opened, so the first
 * view's bytes stay small.
 */
function Evaluation(props: { project: string }) {
  const [View, setView] = useState<FunctionComponent<{ project: string }>>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    import('./views/evaluation.js').then(
      (m) => setView(() => m.Evaluation),
      (e: unknown) => setError(String(e)),
    )
  }, [])
  if (error)
    return (
      <p role="alert" class="error">
        The evaluation view did not load: {error}
      </p>
    )
  return View ? <View {...props} /> : <p>Loading…</p>
}

const VIEWS = [
  { id: 'search', label: 'Search', View: Search },
  { id: 'jobs', label: 'Ingestion', View: Jobs },
  { id: 'corpus', label: 'Corpus', View: Corpus },
  { id: 'symbols', label: 'Code symbols', View: Symbols },
  { id: 'history', label: 'Retrieval history', View: History },
  { id: 'evaluation', label: 'Evaluation', View: Evaluation },
  { id: 'review', label: 'Knowledge review', View: Review },
  { id: 'operations', label: 'Operations', View: Operations },
] as const

/** `#/<view>/<project>`: the view and project live in the URL, so a reload or a link keeps them. */
function readHash(): { view: string; project: string | undefined } {
  const [, view = 'search', project] = location.hash.split('/')
  try {
    return { view, project: project === undefined ? undefined : decodeURIComponent(project) }
  } catch {
    return { view, project: undefined } // a hand-typed `%ZZ`: the first project instead
  }
}

function App() {
  const [where, setWhere] = useState(readHash)
  const [projects, setProjects] = useState<string[]>([])
  const [error, setError] = useState<string>()
  useEffect(() => {
    const onHash = () => setWhere(readHash())
    addEventListener('hashchange', onHash)
    // Effects run after the first paint: a hash changed before then (a link followed at once, a
    // slow page on a loaded machine) fired no event this listener heard, so read it again now.
    onHash()
    currentSession().then(
      (s) => setProjects(s.projects),
      (e: unknown) => setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e)),
    )
    return () => removeEventListener('hashchange', onHash)
  }, [])
  const project = where.project ?? projects[0]
  const go = (view: string, to = project) => {
    location.hash = `#/${view}/${encodeURIComponent(to ?? '')}`
  }
  const current = VIEWS.find((v) => v.id === where.view) ?? VIEWS[0]
  return (
    <>
      <header class="top">
        <span class="brand">Tychora</span>
        <nav aria-label="Views">
          {VIEWS.map((v) => (
            <a key={v.id} href={`#/${v.id}/${encodeURIComponent(project ?? '')}`} aria-current={v.id === current.id ? 'page' : undefined}>
              {v.label}
            </a>
          ))}
        </nav>
        <label class="project">
          Project{' '}
          <select value={project} onChange={(e) => go(current.id, (e.target as HTMLSelectElement).value)}>
            {projects.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
      </header>
      <main>
        {error ? (
          <p role="alert" class="error">
            {error}
          </p>
        ) : project ? (
          <current.View key={`${current.id}:${project}`} project={project} />
        ) : (
          <p>Loading…</p>
        )}
      </main>
    </>
  )
}

adoptLoginKey()
const root = document.getElementById('app')
if (root) render(<App />, root)
