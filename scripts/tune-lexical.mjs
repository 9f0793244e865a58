// Measures analyzer choices on the SciFact *train* split (never test), as the pack's defaults
// must be chosen: `node scripts/tune-lexical.mjs [BEIR_DIR]`.
import { evalBeir } from '../dist/index.js'

const dir = process.argv[2] ?? '../shared/data/scifact'
const variants = [
  { stemmer: true, stopwords: false },
  { stemmer: true, stopwords: true },
  { stemmer: false, stopwords: false },
]
for (const lexical of variants) {
  const r = await evalBeir(dir, { split: 'train', lexical })
  console.log(JSON.stringify({ lexical, ndcg_at_10: +r.ndcg_at_10.toFixed(4), recall_at_100: +r.recall_at_100.toFixed(4), mrr_at_10: +r.mrr_at_10.toFixed(4) }))
}
