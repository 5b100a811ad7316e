/**
 * No line of code over 160 characters (biome.json's lineWidth): the formatter wraps what it can,
 * and a string it cannot wrap is split where it reads well. Exempt: a line that holds a URL
 * (a link is kept whole to stay searchable) and data files (generated or recorded, not laid out
 * by anyone). Markdown is not checked: a table row cannot be wrapped.
 */
import { expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '../..')
const MAX = 160
const CODE = /\.(?:[cm]?[jt]s|json)$/
const DATA = [
  /^clients\/typescript\/schema\.ts$/, // generated from the OpenAPI document
  /^db\/migrations\/meta\//, // written by drizzle-kit
  /^monitoring\/grafana\/dashboards\//, // exported from Grafana
]
const URL = /\bhttps?:\/\/\S/

/** The repository's files: those git tracks, or (outside a git checkout) those on disk. */
function trackedFiles(): string[] {
  const git = Bun.spawnSync(['git', 'ls-files', '-z'], { cwd: ROOT, stderr: 'ignore' })
  if (git.exitCode === 0)
    return git.stdout
      .toString()
      .split('\0')
      .filter((f) => f && existsSync(join(ROOT, f)))
  return [...new Bun.Glob('**/*').scanSync({ cwd: ROOT })].filter((f) => !f.startsWith('node_modules/'))
}

test('no line of code is over 160 characters, except lines holding a URL and data files', () => {
  const over: string[] = []
  for (const file of trackedFiles()) {
    if (!CODE.test(file) || DATA.some((re) => re.test(file))) continue
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
    for (const [i, line] of lines.entries()) {
      const length = [...line].length
      if (length > MAX && !URL.test(line)) over.push(`${file}:${i + 1} (${length} characters)`)
    }
  }
  expect(over).toEqual([])
})
