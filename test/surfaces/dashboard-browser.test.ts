import { existsSync, readFileSync } from 'node:fs'
import { copyFile, cp, mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Daemon, KNOWLEDGE_ALIAS } from '../../ts/daemon/daemon.js'
import { ensureTokens } from '../../ts/engine/tokens.js'
import { evalBeir } from '../../ts/eval/beir.js'
import { recordEval } from '../../ts/eval/records.js'
import { propose } from '../../ts/knowledge/lifecycle.js'
import { builtStates } from '../../ts/service/knowledge-state.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { createHttpApp } from '../../ts/http/app.js'
import { Dashboard } from '../../ts/http/dashboard/dashboard.js'
import { startHttpServer } from '../../ts/http/server.js'
import { ProjectRegistry } from '../../ts/service/registry.js'
import { FIXTURE_CODE, FIXTURE_DOCS, ROOT, dataMissing, nativeMissing, sharedData } from '../native/_setup.js'
import { approvedKnowledge } from '../support/knowledge.js'
import { unless } from '../support/requirements.js'

/** Debian's chromium (apt, installed by `.ci/run`); playwright-core drives it and downloads nothing. */
const CHROMIUM = process.env.TYCHORA_CHROMIUM ?? '/usr/bin/chromium'
const browserMissing = unless('browser', existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium)`)
const bundleMissing = unless('native', existsSync(join(ROOT, 'dist/dashboard/index.html')) ? false : 'dist/dashboard not built: run `npm run build:ui`')
const skip = nativeMissing || browserMissing || bundleMissing || dataMissing('docs/pdf/docling/2305.03393v1-pg9.pdf')

/**
 * Screenshots of every view. `TYCHORA_SCREENSHOTS=docs` writes them to docs/dashboard/ (which its
 * README shows); otherwise to a temp folder, so a test run leaves the tree as it found it.
 */
const SHOTS = process.env.TYCHORA_SCREENSHOTS === 'docs' ? join(ROOT, 'docs/dashboard') : join(tmpdir(), 'tychora-dashboard-shots')

/** Names and contents from a stranger: each must show as the literal text, never as markup. */
const HOSTILE = {
  script: '<script>alert(1)</script>',
  img: '<img src=x onerror=alert(2)>',
  /** A file name cannot hold a slash: the markup a name can carry. */
  name: '<svg onload=alert(4)><img src=x onerror=alert(5)>',
  link: 'javascript:alert(3)',
  rtl: 'invoice\u202Egpj.exe',
}

/** axe-core on the page as it is now: no serious or critical violation. */
async function axe(page: Page, view: string): Promise<void> {
  const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
  // Evaluated through the DevTools protocol, which the page's CSP does not govern: the page
  // itself keeps its policy (no inline script), and the test loads no file into it.
  await page.evaluate(source)
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: Array<{ id: string; impact: string | null; nodes: unknown[] }> }> } }).axe.run(document)
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`)
  })
  expect({ view, violations }).toEqual({ view, violations: [] })
}

describe.skipIf(skip)('the dashboard in a real browser', () => {
  let browser: Browser
  let page: Page
  let base: string
  let loginUrl: string
  let docs: string
  let codeProject: string
  let served: Workspace
  const dialogs: string[] = []
  const cspViolations: string[] = []
  const cleanup: Array<() => Promise<void> | void> = []

  beforeAll(async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const dir = await mkdtemp(join(tmpdir(), 'tychora-dashboard-'))
    docs = join(dir, 'docs')
    await cp(FIXTURE_DOCS, docs, { recursive: true })
    await copyFile(sharedData('docs/pdf/docling/2305.03393v1-pg9.pdf'), join(docs, 'paper.pdf'))
    await copyFile(sharedData('docs/docx/docling/word_sample.docx'), join(docs, 'word_sample.docx'))
    await mkdir(join(docs, 'hostile'))
    await writeFile(join(docs, 'hostile', `${HOSTILE.name}.md`), `# ${HOSTILE.img}\n\nRetention ${HOSTILE.link} and ${HOSTILE.script} in the body.\n`)
    await writeFile(join(docs, 'hostile', `${HOSTILE.rtl}.md`), '# Retention invoice\n\nThe retention invoice text.\n')
    const wsDir = join(dir, 'ws')
    await Workspace.init(wsDir)
    const ws = await Workspace.open(wsDir)
    cleanup.push(async () => {
      ws.close()
      await ws.idle()
    })
    served = ws
    const receipt = await ws.add({ paths: [docs] })
    expect(receipt.files.failed).toBe(0)
    // Two recorded evaluations of the same set, a day apart (the chart plots them; a run drills down).
    const beir = await evalBeir(join(ROOT, 'test/fixtures/beir-mini'), { split: 'test', perQuery: true })
    const checkout = { root: ROOT, version: '0.0.0-test' }
    await recordEval(wsDir, { kind: 'beir', report: beir, settings: { split: 'test' }, checkout, now: Date.now() - 86_400_000 })
    await recordEval(wsDir, { kind: 'beir', report: beir, settings: { split: 'test' }, checkout })
    const registry = new ProjectRegistry()
    registry.register(ws, { tokens: await ensureTokens(wsDir) })
    // Code lives in a workspace of the code profile, served beside it (the project picker switches).
    const codeDir = join(dir, 'code-ws')
    await Workspace.init(codeDir, { profile: 'code' })
    const code = await Workspace.open(codeDir)
    cleanup.push(async () => {
      code.close()
      await code.idle()
    })
    expect((await code.add({ paths: [FIXTURE_CODE] })).files.added).toBeGreaterThan(2)
    registry.register(code, { tokens: await ensureTokens(codeDir) })
    codeProject = code.name
    const dashboard = new Dashboard(registry)
    const server = await startHttpServer(createHttpApp(registry, { port: 0, dashboard }), { port: 0 })
    cleanup.push(async () => {
      dashboard.close()
      await server.close()
    })
    base = server.url
    loginUrl = dashboard.loginUrl(base)
    const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core')
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.on('dialog', async (d) => {
      dialogs.push(d.message())
      await d.dismiss()
    })
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text())
    })
    await mkdir(SHOTS, { recursive: true })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    for (const step of cleanup.reverse()) await step()
  })

  it('logs in through the one-time URL, which lands on a URL without the key and works once', async () => {
    await page.goto(loginUrl)
    await page.getByRole('navigation', { name: 'Views' }).waitFor()
    // The page took its session key from the fragment and dropped it from the address and history.
    expect(page.url()).toBe(`${base}/#/search`)
    expect(await page.evaluate(() => sessionStorage.getItem('tychora.key'))).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // The session cookie is HttpOnly: the page's script cannot read it.
    expect(await page.evaluate(() => document.cookie)).toBe('')
    await page.getByRole('navigation', { name: 'Views' }).waitFor()
    const again = await (await browser.newPage()).goto(loginUrl)
    expect(again?.status()).toBe(401)
  })

  it('search: cited evidence with its lines, the explain table and the stage timings', async () => {
    await page.goto(`${base}/#/search`)
    await page.getByLabel('Query').fill('cache freshness retention invoice')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('heading', { name: 'Explain' }).waitFor()
    expect(await page.locator('table.explain tbody tr').count()).toBeGreaterThan(0)
    expect(await page.locator('.trace li').count()).toBeGreaterThan(0)
    expect(await page.locator('.line.cited').count()).toBeGreaterThan(0)
    // A result shown in its file: the lines around it read from the file, the cited ones marked.
    const result = page.locator('article.segment', { hasText: 'http-caching.md:' }).first()
    const cited = await result.locator('.line.cited').count()
    await result.getByRole('button', { name: 'Show in file' }).click()
    await expect.poll(() => result.locator('.line:not(.cited)').count()).toBeGreaterThan(3)
    expect(await result.locator('.line.cited').count()).toBe(cited)
    await axe(page, 'search')
    await page.screenshot({ path: join(SHOTS, 'search.png'), fullPage: true })
  })

  it('ingestion: a sync started in the page appears live and finishes, with its receipt', async () => {
    await page.goto(`${base}/#/jobs`)
    await page.locator('.job').first().waitFor()
    const before = await page.locator('.job').count()
    await writeFile(join(docs, 'added-live.md'), '# Live\n\nA file added while the dashboard watched.\n')
    const changed = join(docs, 'field-notes.txt')
    await writeFile(changed, `${await readFile(changed, 'utf8')}\nA line added for the revision diff.\n`)
    await page.getByLabel('Root or file to sync').fill(docs)
    await page.getByRole('button', { name: 'Sync' }).click()
    await page.locator('output', { hasText: /queued job \d+/ }).waitFor()
    const jobId = /queued job (\d+)/.exec((await page.locator('output').textContent()) ?? '')?.[1]
    const job = page.locator('.job', { hasText: `job ${jobId} ` })
    await job.locator('.status.succeeded').waitFor({ timeout: 60_000 })
    await expect.poll(() => page.locator('.job').count()).toBe(before + 1)
    if (!(await job.evaluate((d) => (d as HTMLDetailsElement).open))) await job.locator('summary').first().click()
    await expect.poll(() => job.textContent()).toContain('1 added')
    await axe(page, 'ingestion')
    await page.screenshot({ path: join(SHOTS, 'ingestion.png'), fullPage: true })
  })

  it('ingestion: a queued job is cancelled from the page', async () => {
    // Enqueued without waking the runner, so it stays queued until the owner decides.
    const id = await served.enqueueAdd({ paths: [docs] })
    await page.goto(`${base}/#/jobs`)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.getByRole('button', { name: `Cancel job ${id}` }).click()
    const job = page.locator('.job', { hasText: `job ${id} ` })
    await job.locator('.status.cancelled').waitFor()
    expect((await served.jobStatus(id)).status).toBe('cancelled')
  })

  it('corpus: sources, then a source with its revisions; a PDF unit is drawn from its page', async () => {
    await page.goto(`${base}/#/corpus`)
    await page.locator('table.sources tbody tr').first().waitFor()
    // By keyboard: Enter on a source opens it and moves focus to the opened panel's heading.
    await page.getByRole('button', { name: 'paper.pdf' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('complementary', { name: /^Evidence source:/ }).waitFor()
    await expect.poll(() => page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent}`)).toMatch(/^H2 source:\d+$/)
    await page
      .getByRole('button', { name: /^revision:\d+$/ })
      .first()
      .click()
    await page.getByRole('complementary', { name: /^Evidence revision:/ }).waitFor()
    await page
      .getByRole('button', { name: /^extraction:\d+$/ })
      .first()
      .click()
    await page.getByRole('complementary', { name: /^Evidence extraction:/ }).waitFor()
    // The page, drawn whole, with every unit's box over it: a box opens its unit.
    const sheet = page.locator('figure.pdf-page').first()
    await sheet.locator('.box').first().waitFor()
    expect(await sheet.locator('.box').count()).toBeGreaterThan(5)
    await page.screenshot({ path: join(SHOTS, 'corpus-pdf-page.png'), fullPage: true })
    await sheet.locator('.box').nth(1).click()
    await page.getByRole('complementary', { name: /^Evidence unit:/ }).waitFor()
    const drawn = page.locator('img.page')
    await drawn.waitFor()
    await page.waitForFunction(() => (document.querySelector('img.page') as HTMLImageElement | null)?.complete === true)
    expect(await drawn.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(100)
    await axe(page, 'corpus')
    await page.screenshot({ path: join(SHOTS, 'corpus.png'), fullPage: true })
    // A changed file: its two revisions compared.
    await page.getByRole('button', { name: 'field-notes.txt' }).click()
    await page.getByRole('button', { name: 'Compare 1 → 2' }).click()
    const diff = page.getByRole('region', { name: 'Revision diff' })
    await diff.locator('.line.add').first().waitFor()
    expect(await diff.locator('.line.add').allTextContents()).toContain('+A line added for the revision diff.\n')
    await page.screenshot({ path: join(SHOTS, 'corpus-revision-diff.png'), fullPage: true })
    // A DOCX extraction lists its units by part.
    await page.getByRole('button', { name: 'word_sample.docx' }).click()
    await page.getByRole('complementary', { name: /^Evidence source:/ }).waitFor()
    await page
      .getByRole('button', { name: /^revision:\d+$/ })
      .first()
      .click()
    await page
      .getByRole('button', { name: /^extraction:\d+$/ })
      .first()
      .click()
    const parts = page.getByRole('region', { name: 'Units by part' })
    await parts.waitFor()
    expect(await parts.locator('summary').first().textContent()).toMatch(/^body \(\d+\)$/)
    // Its picture, drawn from the retained bytes the daemon serves (a raster type only).
    const picture = page.getByRole('region', { name: 'Pictures' }).locator('img.thumb').first()
    await picture.waitFor()
    await page.waitForFunction(() => (document.querySelector('img.thumb') as HTMLImageElement | null)?.complete === true)
    expect(await picture.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0)
    await axe(page, 'corpus (docx)')
  })

  it('hostile names and contents render as text: no dialog, no injected element, the literal text in the DOM', async () => {
    await page.goto(`${base}/#/corpus`)
    await page.locator('table.sources tbody tr').first().waitFor()
    const names = await page.locator('table.sources .name').allTextContents()
    expect(names).toContain(`hostile/${HOSTILE.name}.md`)
    // The override is shown as its code point, so the name reads in its stored order.
    expect(names).toContain('hostile/invoiceU+202Egpj.exe.md')
    await page.goto(`${base}/#/search`)
    await page.getByLabel('Query').fill(`${HOSTILE.script} ${HOSTILE.img} retention`)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('heading', { name: 'Evidence' }).waitFor()
    const text = (await page.locator('main').textContent()) ?? ''
    expect(text).toContain(HOSTILE.script)
    expect(text).toContain(HOSTILE.img)
    expect(await page.locator('main img[src="x"], main script, main svg').count()).toBe(0)
    expect(await page.evaluate(() => document.scripts.length)).toBe(1)
    expect(dialogs).toEqual([])
    expect(cspViolations).toEqual([])
  })

  it('retrieval history: a run with its request and trace, replayed with the diff', async () => {
    await page.goto(`${base}/#/history`)
    await page.locator('table.runs tbody tr').first().waitFor()
    await page.locator('table.runs tbody tr button.link').first().click()
    await page.getByRole('button', { name: 'Replay on its snapshot' }).click()
    await page.getByRole('region', { name: 'Replay diff' }).waitFor()
    expect(await page.getByRole('region', { name: 'Replay diff' }).textContent()).toMatch(/The same \d+ results in the same order|Results differ/)
    await axe(page, 'history')
    await page.screenshot({ path: join(SHOTS, 'history.png'), fullPage: true })
    // Escape closes the run and gives focus back to the row that opened it.
    await page.keyboard.press('Escape')
    await page.getByRole('complementary', { name: /^Run / }).waitFor({ state: 'detached' })
    expect(await page.evaluate(() => document.activeElement?.closest('table.runs') !== null)).toBe(true)
  })

  it('code symbols: a definition with its callers and callees; a callee opens its own definition', async () => {
    await page.goto(`${base}/#/symbols/${encodeURIComponent(codeProject)}`)
    await page.getByRole('textbox', { name: 'Symbol' }).fill('tokenize')
    await page.getByRole('button', { name: 'Look up' }).click()
    const definition = page.getByRole('article', { name: /^Definition .*tokenize$/ })
    await definition.waitFor()
    const callers = definition.getByRole('region', { name: 'Callers' })
    await callers.waitFor()
    expect(await callers.textContent()).toContain('Parser.parse')
    await axe(page, 'symbols')
    await page.screenshot({ path: join(SHOTS, 'symbols.png'), fullPage: true })
    await callers
      .getByRole('button', { name: /Parser\.parse$/ })
      .first()
      .click()
    await page.getByRole('article', { name: /^Definition .*Parser\.parse$/ }).waitFor()
  })

  it('evaluation: recorded runs plotted over time, and a run drilled down to its queries', async () => {
    await page.goto(`${base}/#/evaluation`)
    const chart = page.getByRole('figure', { name: 'ndcg@10 over time' })
    await chart.waitFor()
    await chart.locator('canvas').waitFor()
    expect(await page.locator('table.evals tbody tr').count()).toBe(2)
    await page.locator('table.evals tbody tr button.link').first().click()
    const run = page.getByRole('region', { name: /^Run \d{8}T/ })
    await run.waitFor()
    await run.getByLabel(/only queries whose first result/).uncheck()
    await run.locator('table.queries tbody tr').first().waitFor()
    expect(await run.locator('table.queries tbody tr').count()).toBeGreaterThan(0)
    await axe(page, 'evaluation')
    await page.screenshot({ path: join(SHOTS, 'evaluation.png'), fullPage: true })
  })

  it('operations: status with the size breakdown, doctor on request and snapshots', async () => {
    await page.goto(`${base}/#/operations`)
    await page.getByRole('heading', { name: 'corpus.sqlite3 by table' }).waitFor()
    expect(await page.getByRole('cell', { name: 'chunks', exact: true }).count()).toBe(1)
    await page.getByRole('button', { name: 'Run doctor' }).click()
    await page.locator('table.doctor tbody tr').first().waitFor()
    expect(await page.locator('table.doctor tbody tr').count()).toBeGreaterThan(0)
    await axe(page, 'operations')
    await page.screenshot({ path: join(SHOTS, 'operations.png'), fullPage: true })
  })
})

describe.skipIf(skip)('knowledge review in a real browser', () => {
  it('shows a pending proposal with its diff, evidence and checks; accepting it writes the migration', async () => {
    const { rm } = await import('node:fs/promises')
    const { repo, paths } = await approvedKnowledge('tychora-dashboard-knowledge-')
    const daemon = await Daemon.start({ workspaces: builtStates(paths), port: 0, knowledge: { root: paths.root } })
    const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core')
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    try {
      const hit = (await daemon.registry.project(KNOWLEDGE_ALIAS, 'owner').search({ query: 'releases December', limit: 1 })).segments[0]
      expect(hit).toBeDefined()
      const edit = await propose(
        paths,
        {
          change: { op: 'edit', item: 'release-freeze', body: 'No releases from 15 December.\nAsk the release lead.\n' },
          rationale: 'The freeze starts mid-month.',
          agent: `agent ${HOSTILE.script}`,
          evidence: [hit?.id as string],
        },
        async (id) => daemon.registry.workspace(daemon.registry.names().find((n) => n !== KNOWLEDGE_ALIAS) as string).cite(id),
      )
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const dialogs: string[] = []
      page.on('dialog', async (d) => {
        dialogs.push(d.message())
        await d.dismiss()
      })
      await page.goto(daemon.loginUrl())
      // The page has taken its key from the fragment (`/#key=…` became `/#/search`) before the
      // fragment changes: changed first (a slow script on a loaded machine), the key is lost.
      await page.waitForURL(`${daemon.url}/#/search`)
      await page.goto(`${daemon.url}/#/review`)
      const card = page.getByRole('article', { name: `Proposal ${edit.id}` })
      // Missing, the page says why (an error, no proposal, another view): the timeout alone would not.
      await card.waitFor().catch(async (error: unknown) => {
        throw new Error(`${String(error)}\nthe page at ${page.url()} reads: ${await page.locator('main, body').first().textContent()}`)
      })
      expect(await card.locator('.line.del').allTextContents()).toEqual(['-No releases in December.\n'])
      expect(await card.locator('.line.add').allTextContents()).toEqual(['+No releases from 15 December.\n'])
      expect(await card.textContent()).toContain(`agent ${HOSTILE.script}`)
      expect(await card.locator('.checks .status.ok').count()).toBe(3)
      await axe(page, 'review')
      await page.screenshot({ path: join(SHOTS, 'review.png'), fullPage: true })
      await card.getByRole('button', { name: 'Accept' }).click()
      await page.getByRole('status').waitFor()
      const decided = (await page.getByRole('status').textContent()) ?? ''
      const id = /migrations\/(\S+)\.json/.exec(decided)?.[1] as string
      expect(decided).toMatch(/^accepted: migrations\//)
      expect(existsSync(join(paths.migrations, `${id}.json`))).toBe(true)
      await page.getByText('No proposal waits for review.').waitFor()
      expect(dialogs).toEqual([])
    } finally {
      await browser.close()
      await daemon.stop()
      await rm(repo, { recursive: true, force: true })
    }
  }, 120_000)
})
