import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { allInTop, reciprocalRank, recallInTop } from '../../bench/eval/localization.js'
// The harness imports the package by name ('tychora' → dist/), as a consumer would: build ts/ first.
import { evalSwebench } from '../../bench/eval/swebench.js'
import { nativeMissing } from '../native/_setup.js'

describe('localization metrics', () => {
  const ranked = ['a.py', 'b.py', 'c.py', 'd.py', 'e.py', 'f.py']
  it('needs every gold location in the top k for Acc@k', () => {
    expect(allInTop(ranked, ['a.py', 'f.py'], 5)).toBe(0)
    expect(allInTop(ranked, ['a.py', 'f.py'], 10)).toBe(1)
    expect(recallInTop(ranked, ['a.py', 'f.py'], 5)).toBe(0.5)
    expect(reciprocalRank(ranked, ['c.py', 'f.py'])).toBeCloseTo(1 / 3)
    expect(reciprocalRank(ranked, ['z.py'])).toBe(0)
    expect(allInTop(ranked, [], 5)).toBeNull()
  })
})

// A three-file Python repository committed into a bare git dir, and one instance whose gold fix
// touches two files: the one the issue describes (ranks first) and one it mentions only in
// passing (ranks second), so Acc@1 is 0 while Acc@5, Recall@5 and MRR are 1.
const FILES: Record<string, string> = {
  'widgets/gearbox.py': [
    'class Gearbox:',
    '    def shift_gear(self, target):',
    '        """Shift the gearbox into the target gear; the clutch slips when torque overflows."""',
    '        if target > self.max_gear:',
    '            raise ValueError("gear out of range")',
    '        return target',
    '',
    '    def neutral(self):',
    '        return 0',
    '',
  ].join('\n'),
  'widgets/clutch.py': ['def engage_clutch(pressure):', '    """Engage the plate with the given pressure; the clutch may slip."""', '    return pressure * 2', ''].join('\n'),
  'widgets/paint.py': ['def paint_widget(colour):', '    """Paint in a colour."""', '    return colour', ''].join('\n'),
}

describe.skipIf(nativeMissing)('SWE-bench localization through the production query path', () => {
  const dirs: string[] = []
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  it('scores a known ranking on a synthetic repository, baseline and code profile', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tychora-swe-test-'))
    dirs.push(root)
    const work = join(root, 'work')
    for (const [path, text] of Object.entries(FILES)) {
      await mkdir(join(work, path, '..'), { recursive: true })
      await writeFile(join(work, path), text)
    }
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args], {
        cwd,
        encoding: 'utf8',
      }).trim()
    git(work, 'init', '-q')
    git(work, 'add', '.')
    git(work, 'commit', '-q', '-m', 'fixture')
    const commit = git(work, 'rev-parse', 'HEAD')
    const repos = join(root, 'repos')
    await mkdir(join(repos, 'acme+widgets'), { recursive: true })
    git(root, 'clone', '-q', '--bare', work, join(repos, 'acme+widgets', 'repo'))

    const data = join(root, 'data')
    await mkdir(data)
    const instance = {
      instance_id: 'acme__widgets-1',
      repo: 'acme/widgets',
      base_commit: commit,
      problem_statement: 'Gearbox shift_gear raises ValueError when torque overflows and the clutch slips',
      patch: 'not shown to the system',
    }
    const gold = {
      instance_id: 'acme__widgets-1',
      gold_files: ['widgets/gearbox.py', 'widgets/clutch.py'],
      gold_functions: ['widgets/gearbox.py:Gearbox.shift_gear'],
    }
    await writeFile(join(data, 'instances.jsonl'), `${JSON.stringify(instance)}\n`)
    await writeFile(join(data, 'gold.jsonl'), `${JSON.stringify(gold)}\n`)

    const report = await evalSwebench({ data, repos, cache: join(root, 'cache'), limit: 20 })
    expect(report.instances).toBe(1)
    expect(report.truncated_queries).toEqual([])
    for (const profile of ['baseline', 'code'] as const) {
      const run = report.runs.find((r) => r.profile === profile)
      expect(run?.files.slice(0, 2)).toEqual(['widgets/gearbox.py', 'widgets/clutch.py'])
      expect(run?.functions).toContain('widgets/gearbox.py:Gearbox.shift_gear')
      const s = report.profiles[profile]
      expect(s).toMatchObject({
        instances: 1,
        file_acc_at_1: 0,
        file_acc_at_5: 1,
        file_acc_at_10: 1,
        file_recall_at_5: 1,
        file_mrr: 1,
        function_acc_at_10: 1,
        function_instances: 1,
      })
      expect(s?.per_repo['acme/widgets']).toMatchObject({ instances: 1, file_acc_at_5: 1 })
    }
    expect(report.profiles.baseline?.channels).toEqual(['lexical'])
    // The code run takes the profile's defaults, whatever they are.
    expect(report.profiles.code?.channels).toContain('lexical')
  })
})
