// The dev sets fusion rules are chosen on (bench/lexical/fusion-lists.mjs, fusion-rules.mjs): short
// and paragraph-length English, natural-language questions over code (code profile), Chinese,
// Japanese and Thai, each a BEIR-format directory.
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const shared = resolve(root, '../shared/data')
const cache = join(homedir(), '.cache', 'tychora')

export const FUSION_SETS = [
  { name: 'scifact-train', dir: join(shared, 'scifact'), split: 'train', metric: 'ndcg_at_10' },
  { name: 'paragraph-dev', dir: join(cache, 'paragraph-dev'), split: 'dev', metric: 'ndcg_at_10' },
  { name: 'nfcorpus-page', dir: join(cache, 'dev-sets', 'nfcorpus-page'), split: 'dev', metric: 'ndcg_at_10' },
  { name: 'cisi', dir: join(cache, 'dev-sets', 'cisi'), split: 'dev', metric: 'ndcg_at_10' },
  { name: 'cmrc2018-zh', dir: join(cache, 'dev-sets', 'cmrc2018-zh'), split: 'dev', metric: 'ndcg_at_10' },
  { name: 'iapp-wiki-qa-th', dir: join(cache, 'dev-sets', 'iapp-wiki-qa-th'), split: 'dev', metric: 'ndcg_at_10' },
  { name: 'cosqa-dev', dir: join(shared, 'cosqa'), split: 'dev', metric: 'mrr_at_10', profile: 'code' },
  { name: 'jsquad-ja', dir: join(cache, 'dev-sets', 'jsquad-ja'), split: 'dev', metric: 'ndcg_at_10' },
]
