import { afterEach, describe, expect, it, vi } from 'vitest'
import { TychoraError } from '../../ts/errors.js'
import { lineDiff, reviewDiff } from '../../ts/service/review.js'

/** A clock that jumps a second each time it is read: every timed diff runs out at its first check. */
const stalledClock = () => {
  let now = Date.now()
  vi.spyOn(Date, 'now').mockImplementation(() => {
    now += 1_000
    return now
  })
}

const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}`).join('\n')

describe('line diff', () => {
  afterEach(() => vi.restoreAllMocks())

  it('gives the shortest diff, the last newline being no change', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc\n')).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'B' },
      { op: ' ', text: 'c' },
    ])
  })

  it('diffs short texts without the clock: a paused process does not fail a two-line edit', () => {
    stalledClock()
    expect(lineDiff('No releases in December.\nAsk the release lead.\n', 'No releases from 15 December.\nAsk the release lead.\n')).toEqual([
      { op: '-', text: 'No releases in December.' },
      { op: '+', text: 'No releases from 15 December.' },
      { op: ' ', text: 'Ask the release lead.' },
    ])
  })

  it('bounds long texts by time, with E_LIMIT_EXCEEDED', () => {
    stalledClock()
    let caught: unknown
    try {
      lineDiff(numbered(1_500, 'old'), numbered(1_500, 'new'))
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(TychoraError)
    expect((caught as TychoraError).code).toBe('E_LIMIT_EXCEEDED')
  })

  it('a review shows texts too far apart as the whole body replaced, not an error', () => {
    stalledClock()
    const diff = reviewDiff(numbered(1_500, 'old'), numbered(1_500, 'new'))
    expect(diff).toHaveLength(3_000)
    expect(diff.slice(0, 1_500).every((l, i) => l.op === '-' && l.text === `old ${i}`)).toBe(true)
    expect(diff.slice(1_500).every((l, i) => l.op === '+' && l.text === `new ${i}`)).toBe(true)
  })
})
