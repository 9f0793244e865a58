// What agents send (issue 33): a word inside a run of Chinese, Japanese or Thai text with no spaces
// around it, in Markdown and in a Word document; and queries that are long, hostile or empty of
// content. Each returns the document that holds the word, or a clear empty result — never an error.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace } from '../../ts/engine/workspace.js'
import { docx, run } from './_documents.js'
import { nativeMissing, scratch } from './_setup.js'

const para = (text: string) => `<w:p>${run('', text)}</w:p>`

describe.skipIf(nativeMissing)('queries in scripts without spaces, and queries of every length', () => {
  it('finds a word inside an unspaced run in Chinese, Japanese and Thai, in Markdown and DOCX, without changing spaced text', async () => {
    const { dir, ws: wsDir } = await scratch()
    const docs = join(dir, 'corpus')
    await mkdir(docs)
    await writeFile(join(docs, 'zh.docx'), docx(para('这是一个用来测试nodejs解析Word文档的例子。') + para('第二段讲的是表格。')))
    await writeFile(join(docs, 'ja.md'), '# 決算短信\n\n株式会社極洋の連結株主資本等変動計算書を掲載しています。\n')
    await writeFile(join(docs, 'th.md'), '# ภาษา\n\nวันนี้อากาศดีมากที่กรุงเทพมหานคร\n')
    await writeFile(join(docs, 'ko.md'), '# 안내\n\n서울의 날씨는 오늘 맑습니다.\n')
    await writeFile(join(docs, 'en.md'), '# Tides\n\nSpring tides follow the new moon and the full moon.\n')
    await Workspace.init(wsDir)
    const ws = await Workspace.open(wsDir)
    try {
      const receipt = await ws.add({ paths: [docs] })
      expect(receipt.status).toBe('succeeded')
      const top = async (query: string) => (await ws.search({ query, limit: 3, channels: ['lexical'] })).segments[0]?.source.path
      expect(await top('nodejs')).toBe('zh.docx')
      expect(await top('测试')).toBe('zh.docx')
      expect(await top('表格')).toBe('zh.docx')
      expect(await top('極洋')).toBe('ja.md')
      expect(await top('連結株主資本')).toBe('ja.md')
      // A one-character word is found too.
      expect(await top('掲')).toBe('ja.md')
      expect(await top('กรุงเทพ')).toBe('th.md')
      expect(await top('날씨는')).toBe('ko.md')
      expect(await top('moon tides')).toBe('en.md')
      // The cited text is the run that holds the word, sliced exactly.
      const hit = (await ws.search({ query: '極洋', limit: 1, channels: ['lexical'] })).segments[0]!
      expect(hit.text).toContain('株式会社極洋の連結株主資本')
    } finally {
      ws.close()
    }
  })

  it('answers long, hostile and contentless queries with results or a clear empty result', async () => {
    const { dir, ws: wsDir } = await scratch()
    const docs = join(dir, 'corpus')
    await mkdir(docs)
    await writeFile(
      join(docs, 'parser.py'),
      'class ConfigError(Exception):\n    pass\n\n\ndef parse_config(text):\n    """Parse the configuration."""\n    if not text:\n        raise ConfigError("empty configuration")\n    return dict(line.split("=", 1) for line in text.splitlines())\n',
    )
    await writeFile(join(docs, 'notes.md'), '# Notes\n\nThe configuration parser raises ConfigError on empty input.\n')
    await Workspace.init(wsDir, { profile: 'code' })
    const ws = await Workspace.open(wsDir)
    try {
      await ws.add({ paths: [docs] })
      const trace = [
        'Traceback (most recent call last):',
        '  File "app/main.py", line 12, in <module>',
        '    settings = parse_config(raw)',
        '  File "docs/parser.py", line 8, in parse_config',
        '    raise ConfigError("empty configuration")',
        'parser.ConfigError: empty configuration',
      ].join('\n')
      // The frame names docs/parser.py and parse_config in it: the exact channel answers with that
      // definition first, though the trace's words are mostly elsewhere.
      const byTrace = await ws.search({ query: trace, limit: 5, explain: true })
      expect(byTrace.segments[0]?.source.path).toBe('parser.py')
      expect(byTrace.segments[0]?.text).toContain('def parse_config')
      const long = `${'The configuration parser should explain what went wrong. '.repeat(160)}ConfigError`
      expect(long.length).toBeGreaterThan(9_000)
      const byLong = await ws.search({ query: long, limit: 5 })
      expect(byLong.segments.length).toBeGreaterThan(0)
      for (const query of ['the of and a to in', '?!… —— ()[]{} ::', '🙂🚀🔥', 'Привет мир', '설정 파서', 'ConfigError 配置 解析器']) {
        const result = await ws.search({ query, limit: 5 })
        expect(Array.isArray(result.segments)).toBe(true)
      }
      expect((await ws.search({ query: '?!… —— ()[]{} ::', limit: 5 })).segments).toEqual([])
      expect((await ws.search({ query: 'ConfigError 配置 解析器', limit: 5 })).segments.length).toBeGreaterThan(0)
    } finally {
      ws.close()
    }
  })
})
