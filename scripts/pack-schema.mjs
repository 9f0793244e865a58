// Writes packs/pack.schema.json, the published JSON Schema of a pack file, from the zod contract
// (ts/contracts/pack.ts) as built into dist/. The core validates every pack file against it; a
// test fails when the committed file and the contract disagree. Run after `npm run build:ts`.
import { writeFileSync } from 'node:fs'
import { z } from 'zod'
import { PackSchema } from '../dist/contracts/pack.js'

const schema = {
  ...z.toJSONSchema(PackSchema, { target: 'draft-2020-12' }),
  $id: 'https://tychora.dev/schemas/pack.schema.json',
  title: 'Tychora configuration pack',
}
writeFileSync(new URL('../packs/pack.schema.json', import.meta.url), `${JSON.stringify(schema, null, 2)}\n`)
