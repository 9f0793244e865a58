#!/usr/bin/env node
// Builds the long-text and CJK/Thai DEV sets of issue 33 (item 1) in BEIR format, from public
// data held in git snapshots, and (with --eval) measures the lexical baseline and SQLite FTS5 on them.
// Nothing is written into the repository: each set goes to ~/.cache/tychora/dev-sets/<name>/
// (corpus.jsonl, queries.jsonl, qrels/{dev,test[,train]}.tsv, README.md).
//
//   node bench/lexical/long-sets.mjs [--mirrors /work/.mirror] [--out ~/.cache/tychora/dev-sets]
//                                    [--only nfcorpus-page,cisi,...] [--eval [--split dev]]
//
// Sets (sources, licences, sizes and construction are in each set's README.md):
//   nfcorpus-page   NFCorpus (Boteva et al., ECIR 2016), original release: NutritionFacts.org pages → PubMed
//                   abstracts. Query = the page's title and opening paragraphs (≈140 words); release dev/test.
//   cisi            CISI (classic IR test collection, information-science abstracts): natural-language
//                   information needs of ≈60 words; no split in the source, so a seeded 50/50 dev/test split.
//   jsquad-ja       JSQuAD v1.3 (JGLUE): Japanese questions → the Wikipedia paragraph that answers them.
//   cmrc2018-zh     CMRC 2018 (simplified Chinese): questions → the Wikipedia passage that answers them.
//   iapp-wiki-qa-th iApp Thai Wikipedia QA: Thai questions → the Wikipedia article that answers them.
// ArguAna is held out and is neither read nor used here.
//
// Sources are read by git blob id (content-addressed) from bare snapshots laid out as
// <mirrors>/<owner>+<name>/repo, as the search tool's `fetch github:<owner>/<name>` leaves them; a
// missing snapshot is reported with the fetch to run. Every choice (query cut, split) is deterministic.
//
// --eval runs, on --split (dev unless told), the lexical baseline through the production query path
// (`node dist/bin/tychora.cjs eval beir DIR --split S`, documents profile: build with `npm run build:ts`
// first) and SQLite FTS5 the way bench/lexical/term-weighting.mjs does (title + text per document, the
// query's distinct terms OR-ed, bm25, 100 results): porter unicode61 for the English sets, trigram
// (and plain unicode61, for reference) for the CJK/Thai sets, where a query run is OR-ed as its
// character trigrams. Results go to <out>/baselines-<split>.{json,md}.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inflateRawSync } from 'node:zlib'
import { fts5 } from './fts5.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(name) && args[args.indexOf(name) + 1] !== undefined ? args[args.indexOf(name) + 1] : fallback)
const MIRRORS = resolve(opt('--mirrors', '/work/.mirror'))
const OUT = resolve(opt('--out', join(homedir(), '.cache', 'tychora', 'dev-sets')))
const ONLY = opt('--only', '').split(',').filter(Boolean)
const EVAL = args.includes('--eval')
const SPLIT = opt('--split', 'dev')
const SEED = 'tychora-long-sets-v1'

// ---------------------------------------------------------------------------------------------
// Reading the snapshots

function gitDir(repo) {
  const base = join(MIRRORS, repo.replace('/', '+'), 'repo')
  return existsSync(join(base, '.git')) ? join(base, '.git') : base
}

/** The bytes of one pinned source file, by its git blob id. */
function blob(source, path) {
  const id = source.blobs[path]
  const dir = gitDir(source.repo)
  try {
    return execFileSync('git', ['--git-dir', dir, 'cat-file', 'blob', id], { maxBuffer: 1024 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] })
  } catch {
    throw new Error(`${source.repo}:${path} (blob ${id}) is not in ${dir}: fetch github:${source.repo} (commit ${source.commit}) into ${MIRRORS} first`)
  }
}

/** Entries of a zip archive (stored or deflated), by name, from its central directory. */
function unzip(buf) {
  let eocd = buf.length - 22
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--
  if (eocd < 0) throw new Error('not a zip archive')
  const entries = new Map()
  let p = buf.readUInt32LE(eocd + 16)
  for (let n = buf.readUInt16LE(eocd + 10); n > 0; n--) {
    const method = buf.readUInt16LE(p + 10)
    const size = buf.readUInt32LE(p + 20)
    const nameLen = buf.readUInt16LE(p + 28)
    const extraLen = buf.readUInt16LE(p + 30)
    const commentLen = buf.readUInt16LE(p + 32)
    const local = buf.readUInt32LE(p + 42)
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen)
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28)
    const data = buf.subarray(start, start + size)
    entries.set(name, method === 0 ? data : inflateRawSync(data))
    p += 46 + nameLen + extraLen + commentLen
  }
  return entries
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Deterministic order key: sha256 of the seed and a key. */
const rank = (key) => createHash('sha256').update(`${SEED}:${key}`).digest('hex')
const words = (t) => t.split(/\s+/).filter(Boolean).length
const chars = (t) => [...t.replace(/\s+/g, '')].length
const mean = (xs) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length)
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 0 : s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
/** Seeded 50/50 split of query ids (first half by rank → dev). */
function halves(name, ids) {
  const sorted = [...ids].sort((a, b) => rank(`${name}:${a}`).localeCompare(rank(`${name}:${b}`)))
  const cut = Math.ceil(sorted.length / 2)
  return { dev: new Set(sorted.slice(0, cut)), test: new Set(sorted.slice(cut)) }
}
/** SQuAD-style JSON → [{ title, context, pid, qas: [{ id, question }] }]. */
function squadParagraphs(json) {
  const out = []
  for (const article of json.data) {
    for (const [i, p] of article.paragraphs.entries()) {
      out.push({
        title: article.title ?? '',
        context: p.context,
        pid: p.id,
        index: i,
        qas: (p.qas ?? []).filter((q) => !q.is_impossible).map((q) => ({ id: String(q.id), question: q.question })),
      })
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// The sets

const NFCORPUS = {
  repo: 'hakimamarullah/medisearch-api',
  commit: '0ae71a4bb2416506dbdd9a5f8894e7830b99f19f',
  dir: 'data/nfcorpus',
  blobs: {
    'data/nfcorpus/dev.docs': '6382a7c6960e618e3cb8d63167a016a71fa1a269',
    'data/nfcorpus/test.docs': '82fcbd78694c6a5b70e360840040e2c1a648f884',
    'data/nfcorpus/dev.all.queries': '2a20b084a5b509cd93629c0573051fea1f084bdb',
    'data/nfcorpus/test.all.queries': '352dbd4c675044f675a64ed654bba8c7e3709b96',
    'data/nfcorpus/dev.2-1-0.qrel': '02ae073237d1d39970db026a16135815077df2a0',
    'data/nfcorpus/test.2-1-0.qrel': '5046dbf46d22bd27341636192cb73075007b5454',
  },
}
const NF_MIN_WORDS = 120 // whole sentences are taken until the query has at least this many words,
const NF_MAX_WORDS = 250 // never more than this many (cut at a word),
const NF_KEEP_WORDS = 80 // and a page whose text gives fewer words is not a query (topic pages: a title and tags).

/** The release's tokenised text ("it ’ s", "cancer , whereas") read as prose again. */
function detokenise(t) {
  return t
    .replace(/\s+([,.;:!?%)\]’”])/g, '$1')
    .replace(/([([“])\s+/g, '$1')
    .replace(/(\w)\s+'(s|t|re|ve|ll|d|m)\b/gi, "$1'$2")
    .replace(/’\s+(s|t|re|ve|ll|d|m)\b/gi, '’$1')
    .replace(/\s+/g, ' ')
    .trim()
}

function buildNfcorpus() {
  const text = (p) => blob(NFCORPUS, `data/nfcorpus/${p}`).toString('utf8')
  const docs = new Map()
  for (const split of ['dev', 'test']) {
    for (const line of text(`${split}.docs`).split('\n')) {
      const tab = line.indexOf('\t')
      if (tab > 0 && !docs.has(line.slice(0, tab))) docs.set(line.slice(0, tab), line.slice(tab + 1).trim())
    }
  }
  const queries = []
  const qrels = { dev: [], test: [] }
  const dropped = { short: 0, unjudged: 0 }
  for (const split of ['dev', 'test']) {
    const judged = new Map()
    for (const line of text(`${split}.2-1-0.qrel`).split('\n')) {
      const [q, , d, r] = line.split('\t')
      if (q && docs.has(d) && Number(r) > 0) judged.set(q, [...(judged.get(q) ?? []), [d, Number(r)]])
    }
    for (const line of text(`${split}.all.queries`).split('\n')) {
      const tab = line.indexOf('\t')
      if (tab <= 0) continue
      const id = line.slice(0, tab)
      const sentences = line.slice(tab + 1).split(/(?<= [.!?]) /)
      const taken = []
      let n = 0
      for (const s of sentences) {
        if (n >= NF_MIN_WORDS) break
        taken.push(s)
        n += words(s)
      }
      const cut = taken.join(' ').split(/\s+/).filter(Boolean).slice(0, NF_MAX_WORDS)
      if (cut.length < NF_KEEP_WORDS) {
        dropped.short++
        continue
      }
      if (!judged.has(id)) {
        dropped.unjudged++
        continue
      }
      queries.push({ _id: id, text: detokenise(cut.join(' ')), split })
      for (const [d, r] of judged.get(id)) qrels[split].push([id, d, r])
    }
  }
  return {
    name: 'nfcorpus-page',
    title: 'NFCorpus, page-length queries (English, medical)',
    language: 'en',
    docs: [...docs].map(([_id, t]) => ({ _id, title: '', text: t })),
    queries,
    qrels,
    source: NFCORPUS,
    licence:
      'NFCorpus release terms (its README.txt): "The data is free for use for academic purposes. For any other uses of the NutritionFacts data please refer to the NutritionFacts.org terms of use and contact Dr. Michael Greger directly." Cite Boteva, Gholipour, Sokolov, Riezler: A Full-Text Learning to Rank Dataset for Medical Information Retrieval, ECIR 2016. The snapshot is a third-party copy of the unmodified release files (nfcorpus.tar.gz, Heidelberg University); BEIR\'s NFCorpus is built from the same release.',
    construction: [
      "Corpus: every document of the release's `dev.docs` and `test.docs` (PubMed titles + abstracts). These are the release's *preprocessed* texts — lowercased, stop words removed, numbers replaced by `num`, punctuation mostly gone — because the raw dump (`raw/doc_dump.txt`) and `train.docs` are over the snapshot's 4 MiB file limit and absent. Stop words therefore never match in a document, for either engine.",
      `Queries: the release's \`all\` query type (the whole NutritionFacts.org page: title, text/transcript, topics, comments; tokenised, lowercased). Each is cut at sentence ends once it holds at least ${NF_MIN_WORDS} words (at most ${NF_MAX_WORDS} words), which keeps the page title and its opening paragraph(s), then lightly detokenised (no space before punctuation, "it’s"). Pages that give fewer than ${NF_KEEP_WORDS} words (topic pages: a title and a list of tags; ${dropped.short} of them) and pages with no judged document in the corpus (${dropped.unjudged}) are not queries.`,
      "Splits: the release's own query splits — its `dev` queries are `dev`, its `test` queries are `test` (no query is in both).",
      "Qrels: the release's `2-1-0` judgements (2 = the page cites the document directly, 1 = it links to a page that cites it; 0 is not in the files), kept only where the document is in the corpus.",
      'No sampling: the whole corpus is used.',
    ],
  }
}

const CISI = {
  repo: 'Gweylorth/Luyten',
  commit: '1e8bea7371b37bd7eef30a69cb4f4b8b01f7f168',
  dir: 'cisi',
  blobs: {
    'cisi/CISI.ALL': '7f9020e5a81371bf6a01eaddafd593fe64baecbf',
    'cisi/CISI.QRY': '5ad5b8d29c03dd39e530667796f82d93db10b221',
    'cisi/CISI.REL': '9c48d4c60bd3467e70a8397c1153f45ce15d6330',
  },
}

/** SMART-style records (`.I n`, then `.T`/`.A`/`.W`/`.X`/`.B` fields) → [{ id, fields }]. */
function smart(raw) {
  const out = []
  for (const block of raw.replace(/\r/g, '').split(/^\.I /m).slice(1)) {
    const lines = block.split('\n')
    const fields = {}
    let cur = null
    for (const line of lines.slice(1)) {
      const m = /^\.([A-Z])\s*$/.exec(line)
      if (m) {
        cur = m[1]
        fields[cur] ??= []
      } else if (cur) fields[cur].push(line)
    }
    out.push({
      id: lines[0].trim(),
      fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.join(' ').replace(/\s+/g, ' ').trim()])),
    })
  }
  return out
}

function buildCisi() {
  const latin1 = (p) => blob(CISI, `cisi/${p}`).toString('latin1')
  const docs = smart(latin1('CISI.ALL')).map((d) => ({ _id: d.id, title: d.fields.T ?? '', text: d.fields.W ?? '' }))
  const ids = new Set(docs.map((d) => d._id))
  const judged = new Map()
  for (const line of latin1('CISI.REL').split('\n')) {
    const [q, d] = line.trim().split(/\s+/)
    if (q && d && ids.has(d)) judged.set(q, new Set([...(judged.get(q) ?? []), d]))
  }
  const all = smart(latin1('CISI.QRY'))
    .filter((q) => judged.has(q.id))
    .map((q) => ({ _id: q.id, text: [q.fields.T, q.fields.W].filter(Boolean).join('\n') }))
  const { dev } = halves(
    'cisi',
    all.map((q) => q._id),
  )
  const queries = all.map((q) => ({ ...q, split: dev.has(q._id) ? 'dev' : 'test' }))
  const qrels = { dev: [], test: [] }
  for (const q of queries) for (const d of [...judged.get(q._id)].sort((a, b) => Number(a) - Number(b))) qrels[q.split].push([q._id, d, 1])
  return {
    name: 'cisi',
    title: 'CISI (English, information science)',
    language: 'en',
    docs,
    queries,
    qrels,
    source: CISI,
    licence:
      'No licence is stated in the files. CISI is one of the classic test collections (Institute of Scientific Information, 1,460 abstracts; queries and judgements from the SMART project) that the University of Glasgow IR group distributes freely for research; the snapshot holds an unmodified copy (same bytes as the common distribution). Use for research evaluation only.',
    construction: [
      'Corpus: all 1,460 documents of `CISI.ALL`; `title` = `.T`, `text` = `.W` (the abstract). Authors (`.A`) and cross-references (`.X`) are dropped. Read as Latin-1.',
      'Queries: the 76 queries of `CISI.QRY` that have judgements in `CISI.REL` (`.T` + `.W`; the bibliographic `.B` and author `.A` fields are dropped). Many are several sentences long: natural-language statements of an information need.',
      `Splits: the source has none, so a seeded 50/50 split: queries ordered by sha256("${SEED}:cisi:<id>"), the first half is \`dev\`, the rest \`test\`.`,
      'Qrels: every pair in `CISI.REL` (all binary relevant), score 1.',
      'No sampling: the whole corpus is used. 38 queries per split is few: differences under ≈0.03 nDCG@10 are noise here.',
    ],
  }
}

const JSQUAD = {
  repo: 'yahoojapan/JGLUE',
  commit: '6f071c09316baae89c3d083a90985b4b1cb9968c',
  dir: 'datasets/jsquad-v1.3',
  blobs: {
    'datasets/jsquad-v1.3/valid-v1.3.json': 'bcde414e0b7131607bb1fa2c4542dd888f68771a',
    'datasets/jsquad-v1.3/test-v1.3.json': 'd767ef7eb4785f733eb46614980905b0bcbd3111',
  },
}

function buildJsquad() {
  const docs = []
  const queries = []
  const qrels = { dev: [], test: [] }
  for (const [file, split] of [
    ['valid-v1.3.json', 'dev'],
    ['test-v1.3.json', 'test'],
  ]) {
    for (const p of squadParagraphs(JSON.parse(blob(JSQUAD, `datasets/jsquad-v1.3/${file}`).toString('utf8')))) {
      // Paragraph ids come from the question ids ("a10336p0q1" → "a10336p0"); contexts read "<title> [SEP] <text>".
      const pid = p.qas[0]?.id.replace(/q\d+$/, '') ?? `${split}-${docs.length}`
      const sep = p.context.indexOf(' [SEP] ')
      docs.push({ _id: pid, title: sep >= 0 ? p.context.slice(0, sep) : p.title, text: sep >= 0 ? p.context.slice(sep + 7) : p.context })
      for (const q of p.qas) {
        queries.push({ _id: q.id, text: q.question, split })
        qrels[split].push([q.id, pid, 1])
      }
    }
  }
  return {
    name: 'jsquad-ja',
    title: 'JSQuAD v1.3 as passage retrieval (Japanese)',
    language: 'ja',
    docs,
    queries,
    qrels,
    source: JSQUAD,
    licence: 'CC BY-SA 4.0 (JGLUE, Yahoo Japan; paragraphs from Japanese Wikipedia). Cite Kurihara, Kawahara, Shibata: JGLUE: Japanese General Language Understanding Evaluation, LREC 2022.',
    construction: [
      "A reading-comprehension set used as retrieval (as MTEB/JMTEB do with SQuAD-style sets): a question's only relevant document is the paragraph it was written on. Other paragraphs of the same Wikipedia article are in the corpus, so the set separates neighbours that share the title and vocabulary.",
      "Corpus: every paragraph of the public `valid-v1.3.json` and `test-v1.3.json` (the train file is over the snapshot's 4 MiB limit and absent). A context reads `<title> [SEP] <text>`: the part before ` [SEP] ` is the `title`, the rest the `text`. Document id = the paragraph part of its question ids (`a10336p0q1` → `a10336p0`).",
      "Queries: every answerable question of both files. Splits: `valid` → `dev`, `test` → `test` (the source's own; no paragraph or article is in both).",
      'Qrels: question → its paragraph, score 1.',
      'No sampling. Japanese has no spaces: the query length is given in characters.',
    ],
  }
}

const CMRC = {
  repo: 'ymcui/cmrc2018',
  commit: 'c0eb1b6ba219847457e6af3180da722bbeb656af',
  dir: 'squad-style-data',
  blobs: {
    'squad-style-data/cmrc2018_dev.json': '94c1f2df14a669b0b7b836665d6339a34df8aa97',
    'squad-style-data/cmrc2018_trial.json': '020e3559e914d23404ffc5bf9411ee52a9c38451',
  },
}

function buildCmrc() {
  const docs = []
  const queries = []
  const qrels = { dev: [], test: [] }
  for (const [file, split] of [
    ['cmrc2018_dev.json', 'dev'],
    ['cmrc2018_trial.json', 'test'],
  ]) {
    for (const p of squadParagraphs(JSON.parse(blob(CMRC, `squad-style-data/${file}`).toString('utf8')))) {
      docs.push({ _id: p.pid, title: p.title, text: p.context })
      for (const q of p.qas) {
        queries.push({ _id: q.id, text: q.question, split })
        qrels[split].push([q.id, p.pid, 1])
      }
    }
  }
  return {
    name: 'cmrc2018-zh',
    title: 'CMRC 2018 as passage retrieval (simplified Chinese)',
    language: 'zh',
    docs,
    queries,
    qrels,
    source: CMRC,
    licence: "CC BY-SA 4.0 (the repository's LICENCE; passages from Chinese Wikipedia). Cite Cui et al.: A Span-Extraction Dataset for Chinese Machine Reading Comprehension, EMNLP 2019.",
    construction: [
      "A reading-comprehension set used as retrieval: a question's only relevant document is the passage it was written on (C-MTEB builds its Chinese retrieval sets the same way from DuReader/T2Ranking; those are not reachable here).",
      "Corpus: every passage of the public `cmrc2018_dev.json` and `cmrc2018_trial.json` (SQuAD-style copies; the train file is over the snapshot's 4 MiB limit, the test set was never released). `title` = the Wikipedia article title, `text` = the passage; id = the passage id (`DEV_0`, `TRIAL_800`, …).",
      "Queries: every question. Splits: `dev` → `dev`, `trial` → `test` (the source's own files; no passage is in both).",
      'Qrels: question → its passage, score 1.',
      'No sampling. Chinese has no spaces: the query length is given in characters.',
    ],
  }
}

const IAPP = {
  repo: 'iapp-technology/iapp-wiki-qa-dataset',
  commit: '644a29c59bac62d5b15b9e9b06c55bba00708eca',
  dir: 'squad_format',
  blobs: { 'squad_format/data.zip': '5079c9056588822a1437c29c69876865b18fdf7d' },
}

function buildIapp() {
  const zip = unzip(blob(IAPP, 'squad_format/data.zip'))
  const rows = {}
  for (const split of ['train', 'valid', 'test']) {
    rows[split] = zip
      .get(`data/${split}.jsonl`)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
  }
  // Seven contexts appear under two article ids: one document per distinct context, with the smallest id.
  const byContext = new Map()
  for (const r of Object.values(rows).flat()) {
    const seen = byContext.get(r.context)
    if (!seen || r.article_id < seen._id) byContext.set(r.context, { _id: r.article_id, title: r.title ?? '', text: r.context })
  }
  const queries = []
  const qrels = { train: [], dev: [], test: [] }
  for (const [from, split] of [
    ['train', 'train'],
    ['valid', 'dev'],
    ['test', 'test'],
  ]) {
    for (const r of rows[from]) {
      queries.push({ _id: r.question_id, text: r.question, split })
      qrels[split].push([r.question_id, byContext.get(r.context)._id, 1])
    }
  }
  return {
    name: 'iapp-wiki-qa-th',
    title: 'iApp Wiki QA as article retrieval (Thai)',
    language: 'th',
    docs: [...byContext.values()].sort((a, b) => a._id.localeCompare(b._id)),
    queries,
    qrels,
    source: IAPP,
    licence: "MIT (iApp Technology; the repository's LICENSE). The articles are Thai Wikipedia text (CC BY-SA).",
    construction: [
      "A reading-comprehension set used as retrieval: a question's only relevant document is the Wikipedia article (lead text) it was written on.",
      'Corpus: every distinct context of the SQuAD-format `train`, `valid` and `test` files in `squad_format/data.zip` (seven contexts appear under two article ids: one document each, with the smaller id). `title` = the article title, `text` = the context.',
      "Queries: every question. Splits: `valid` → `dev`, `test` → `test` (the source's own); `train` questions are kept as a `train` split (qrels/train.tsv) and their articles serve as distractors.",
      'Qrels: question → its article, score 1.',
      'No sampling. Thai puts no spaces between words (only between phrases): the query length is given in characters as well as whitespace-separated chunks.',
    ],
  }
}

const SETS = [
  { name: 'nfcorpus-page', build: buildNfcorpus, cjk: false },
  { name: 'cisi', build: buildCisi, cjk: false },
  { name: 'jsquad-ja', build: buildJsquad, cjk: true },
  { name: 'cmrc2018-zh', build: buildCmrc, cjk: true },
  { name: 'iapp-wiki-qa-th', build: buildIapp, cjk: true },
]

// ---------------------------------------------------------------------------------------------
// Writing a set

function stats(set) {
  const docText = set.docs.map((d) => `${d.title} ${d.text}`.trim())
  const splits = {}
  for (const [split, rows] of Object.entries(set.qrels)) {
    const qs = set.queries.filter((q) => q.split === split)
    splits[split] = {
      queries: qs.length,
      qrels: rows.length,
      relevant_per_query: qs.length ? rows.length / qs.length : 0,
      query_words_mean: mean(qs.map((q) => words(q.text))),
      query_words_median: median(qs.map((q) => words(q.text))),
      query_chars_mean: mean(qs.map((q) => chars(q.text))),
    }
  }
  return { documents: set.docs.length, doc_words_mean: mean(docText.map(words)), doc_chars_mean: mean(docText.map(chars)), splits }
}

function readme(set, s) {
  const f1 = (x) => x.toFixed(1)
  const src = set.source
  return [
    `# ${set.name} — ${set.title}`,
    '',
    `Built by \`bench/lexical/long-sets.mjs\` (tychora, issue 33) for DEV use: choose analyzer, query-term and fusion settings on \`dev\`; report \`test\` once. Never commit this directory.`,
    '',
    '## Source',
    '',
    `- repository: https://github.com/${src.repo} (snapshot commit \`${src.commit}\`), folder \`${src.dir}\``,
    ...Object.entries(src.blobs).map(([p, id]) => `- \`${p}\` — git blob \`${id}\``),
    `- licence: ${set.licence}`,
    '',
    '## How it was built',
    '',
    ...set.construction.map((c) => `- ${c}`),
    '',
    '## Sizes',
    '',
    `Documents: ${s.documents.toLocaleString('en')} (mean ${f1(s.doc_words_mean)} whitespace words, ${f1(s.doc_chars_mean)} non-space characters, title + text).`,
    '',
    '| split | queries | qrels | relevant / query | query words (mean / median) | query characters (mean, non-space) |',
    '|---|---:|---:|---:|---:|---:|',
    ...Object.entries(s.splits).map(
      ([k, v]) =>
        `| ${k} | ${v.queries.toLocaleString('en')} | ${v.qrels.toLocaleString('en')} | ${f1(v.relevant_per_query)} | ${f1(v.query_words_mean)} / ${v.query_words_median} | ${f1(v.query_chars_mean)} |`,
    ),
    '',
    ...(set.language === 'en'
      ? []
      : [`Words are whitespace-separated chunks; for ${set.language === 'th' ? 'Thai they are phrases' : 'Chinese and Japanese they are whole runs of text'}, so read the character count.`, '']),
    '## Use',
    '',
    '```',
    `node dist/bin/tychora.cjs eval beir ${join(OUT, set.name)} --split dev --out /tmp/${set.name}-dev.json`,
    '```',
    '',
  ].join('\n')
}

function write(set) {
  const dir = join(OUT, set.name)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(join(dir, 'qrels'), { recursive: true })
  writeFileSync(join(dir, 'corpus.jsonl'), `${set.docs.map((d) => JSON.stringify({ _id: d._id, title: d.title, text: d.text })).join('\n')}\n`)
  writeFileSync(join(dir, 'queries.jsonl'), `${set.queries.map((q) => JSON.stringify({ _id: q._id, text: q.text })).join('\n')}\n`)
  for (const [split, rows] of Object.entries(set.qrels)) writeFileSync(join(dir, 'qrels', `${split}.tsv`), `query-id\tcorpus-id\tscore\n${rows.map((r) => r.join('\t')).join('\n')}\n`)
  const s = stats(set)
  writeFileSync(join(dir, 'README.md'), readme(set, s))
  return { dir, ...s }
}

// ---------------------------------------------------------------------------------------------
// Baselines

/** The lexical baseline through the production query path (the built CLI, documents profile). */
function tychora(dir, split) {
  const out = join(tmpdir(), `tychora-long-sets-${process.pid}.json`)
  try {
    execFileSync(process.execPath, [join(root, 'dist/bin/tychora.cjs'), 'eval', 'beir', dir, '--split', split, '--out', out], {
      stdio: ['ignore', 'ignore', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    })
  } catch (e) {
    // A failed evaluation is a finding, not the end of the run: its message goes into the table.
    const lines = String(e.stderr ?? e.message).split('\n')
    const error = lines.find((l) => /panicked|error\[/.test(l)) ?? lines.find(Boolean) ?? 'failed'
    console.error(`${dir}: tychora eval failed: ${String(e.stderr ?? e.message).slice(0, 800)}`)
    return { error: `${error} ${lines.find((l) => /not a char boundary|E_[A-Z_]+/.test(l) && l !== error) ?? ''}`.trim() }
  }
  const r = JSON.parse(readFileSync(out, 'utf8'))
  rmSync(out, { force: true })
  return {
    ndcg_at_10: r.ndcg_at_10,
    recall_at_100: r.recall_at_100,
    mrr_at_10: r.mrr_at_10,
    p50_ms: r.query_latency_ms.p50,
    p99_ms: r.query_latency_ms.p99,
    ingest_seconds: r.ingest_seconds,
  }
}

// ---------------------------------------------------------------------------------------------

const chosen = SETS.filter((s) => ONLY.length === 0 || ONLY.includes(s.name))
const built = []
for (const spec of chosen) {
  const set = spec.build()
  const w = write(set)
  built.push({ spec, set, ...w })
  const d = w.splits.dev
  console.error(
    `${set.name}: ${w.documents} documents; dev ${d.queries} queries (${d.query_words_mean.toFixed(1)} words, ${d.query_chars_mean.toFixed(1)} chars), test ${w.splits.test.queries} → ${w.dir}`,
  )
}
writeFileSync(
  join(OUT, 'README.md'),
  [
    '# Long-text and CJK/Thai dev sets (tychora issue 33)',
    '',
    'Built by `bench/lexical/long-sets.mjs`; each folder is a BEIR-format set with its own README.md (source, licence, sizes, construction).',
    '',
    ...SETS.map((s) => `- \`${s.name}/\``),
    '',
  ].join('\n'),
)

if (EVAL) {
  const rows = []
  for (const b of built) {
    if (!existsSync(join(b.dir, 'qrels', `${SPLIT}.tsv`))) continue
    const row = {
      set: b.set.name,
      split: SPLIT,
      documents: b.documents,
      queries: b.splits[SPLIT].queries,
      query_words_mean: b.splits[SPLIT].query_words_mean,
      query_chars_mean: b.splits[SPLIT].query_chars_mean,
    }
    row.tychora_lexical = tychora(b.dir, SPLIT)
    if (b.spec.cjk) {
      row.fts5_trigram = await fts5(b.dir, SPLIT, 'trigram')
      row.fts5_unicode61 = await fts5(b.dir, SPLIT, 'unicode61')
    } else row.fts5_porter = await fts5(b.dir, SPLIT, 'porter unicode61')
    rows.push(row)
    console.error(JSON.stringify(row))
  }
  const f = (x) => (typeof x === 'number' ? x.toFixed(4) : '–')
  const ms = (x) => (typeof x === 'number' ? x.toFixed(1) : '–')
  const md = [
    `# Lexical baselines on the long-text and CJK/Thai dev sets (${SPLIT} split)`,
    '',
    `${new Date().toISOString().slice(0, 10)}; \`node bench/lexical/long-sets.mjs --eval --split ${SPLIT}\`. tychora: \`eval beir\` (documents profile, lexical channel as shipped). FTS5: title + text per document, the query's distinct terms OR-ed, bm25 (porter unicode61 for English; for CJK/Thai trigram, each run OR-ed as its character trigrams, and plain unicode61 for reference).`,
    '',
    '| set | docs | queries | query words / chars | tychora nDCG@10 | R@100 | p50 / p99 ms | FTS5 porter | FTS5 trigram | FTS5 unicode61 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.set} | ${r.documents} | ${r.queries} | ${r.query_words_mean.toFixed(1)} / ${r.query_chars_mean.toFixed(1)} | ${r.tychora_lexical.error ? 'fails (see JSON)' : f(r.tychora_lexical.ndcg_at_10)} | ${f(r.tychora_lexical.recall_at_100)} | ${ms(r.tychora_lexical.p50_ms)} / ${ms(r.tychora_lexical.p99_ms)} | ${f(r.fts5_porter?.ndcg_at_10)} | ${f(r.fts5_trigram?.ndcg_at_10)} | ${f(r.fts5_unicode61?.ndcg_at_10)} |`,
    ),
    '',
  ].join('\n')
  writeFileSync(join(OUT, `baselines-${SPLIT}.json`), `${JSON.stringify(rows, null, 2)}\n`)
  writeFileSync(join(OUT, `baselines-${SPLIT}.md`), md)
  console.log(md)
}
