import { afterEach, describe, expect, it } from 'vitest'
import { required, unless } from '../support/requirements.js'

describe('one rule for what a suite needs', () => {
  const saved = { require: process.env.TYCHORA_REQUIRE, pkg: process.env.TYCHORA_PACKAGE_TEST }
  afterEach(() => {
    for (const [key, value] of [
      ['TYCHORA_REQUIRE', saved.require],
      ['TYCHORA_PACKAGE_TEST', saved.pkg],
    ] as const) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  })

  it('skips with the reason when the run does not require the need', () => {
    delete process.env.TYCHORA_REQUIRE
    delete process.env.TYCHORA_PACKAGE_TEST
    expect(unless('data', 'shared/data/scifact not present')).toBe('shared/data/scifact not present')
    expect(unless('data', false)).toBe(false)
    process.env.TYCHORA_REQUIRE = 'native'
    expect(unless('data', 'shared/data/scifact not present')).toBe('shared/data/scifact not present')
  })

  it('fails with the reason when the run requires it (a list, or all)', () => {
    process.env.TYCHORA_REQUIRE = 'native, data'
    expect(() => unless('data', 'shared/data/scifact not present')).toThrow(/shared\/data\/scifact not present.*requires data/)
    expect(unless('data', false)).toBe(false)
    process.env.TYCHORA_REQUIRE = 'all'
    expect(() => unless('native', 'native addon not built')).toThrow(/requires native/)
  })

  it("keeps the release workflow's package switch", () => {
    delete process.env.TYCHORA_REQUIRE
    process.env.TYCHORA_PACKAGE_TEST = 'required'
    expect(required('package')).toBe(true)
    expect(required('data')).toBe(false)
  })
})
