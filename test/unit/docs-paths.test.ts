/**
 * README.md and docs/*.md name files of this repository and link to each other; a file moved or
 * renamed, or a heading reworded, leaves a reader at a dead end. Every repository path they name
 * (in backticks, in a link, or in plain text under one of the top-level folders) must exist — a
 * glob must match something — and every link to a markdown file must reach it, and its heading
 * when it names one (GitHub's anchors). Comments in the source name paths too (`shared/…` builds
 * it, `test/…` proves it): those must exist as well.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'

const ROOT = join(import.meta.dir, '../..')
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
]
const FOLDERS = ['api', 'shared', 'db', 'worker', 'cli', 'test', 'bench', 'clients', 'patches', 'deploy', 'monitoring', 'docs', 'examples', 'scripts', '.ci']
/** Files at the root that the docs name bare; any other bare name (`video.mp4`, `media-s3.test.ts` beside its folder) is not a path. */
const ROOT_FILE = /^(?:[\w.-]+\.(?:ya?ml|json|toml|lock)|Dockerfile|run|main\.ts)$/
const UNDER_FOLDER = new RegExp(`^(?:${FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})/`)
const BARE_PATH = new RegExp(`(?<![\\w/.:@\`-])((?:${FOLDERS.join('|')})/[\\w./@*-]*[\\w*/])`, 'g')

/** The text outside fenced code blocks: commands and sample output there are not references. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '')

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n ? `${base}-${n}` : base)
  }
  return anchors
}

const exists = (path: string) =>
  /[*?[]/.test(path) ? new Bun.Glob(path).scanSync({ cwd: ROOT, onlyFiles: false, dot: true }).next().done === false : existsSync(join(ROOT, path))

/** Repository paths a document names, as written (a `#heading` or `:line` after a path is dropped). */
function pathsNamedIn(markdown: string): string[] {
  const text = prose(markdown)
  const candidates = new Set<string>()
  for (const [, code] of text.matchAll(/`([^`\n]+)`/g)) candidates.add(code)
  for (const [, bare] of text.matchAll(BARE_PATH)) candidates.add(bare)
  return [...candidates].map((c) => c.replace(/[#:].*$/, '')).filter((c) => (UNDER_FOLDER.test(c) || ROOT_FILE.test(c)) && !/[\s<>{}…]|\.\.\./.test(c))
}

/** Source files whose comments are checked: the code, its tests and benches, the deploy files. */
const SOURCES = [
  ...new Bun.Glob('{api,shared,db,worker,cli,bench,clients,deploy,monitoring,test}/**/*.{ts,sql,sh,yaml,yml}').scanSync({ cwd: ROOT }),
  'main.ts',
  'compose.yaml',
  'run',
].filter((f) => !f.includes('node_modules/') && !f.startsWith('db/migrations/') && existsSync(join(ROOT, f)))

/** The comment text of a line of source: a whole comment line, or what follows ` // ` or ` # `. */
function commentOf(line: string): string {
  const t = line.trim()
  if (/^(\*|\/\*|\/\/|#|--)/.test(t)) return t
  const at = line.search(/(?<!:)\/\/ | # /)
  return at < 0 ? '' : line.slice(at)
}

/** Repository paths the comments of a source file name (a module path may leave out `.ts`). */
function commentPathsIn(source: string): string[] {
  return source
    .split('\n')
    .flatMap((line) => [...commentOf(line).matchAll(BARE_PATH)].map((m) => m[1].replace(/[#:].*$/, '').replace(/\.$/, '')))
    .filter((p) => !/[<>{}…*]/.test(p))
}

const existsAsModule = (path: string) => [path, `${path}.ts`, `${path}.test.ts`].some((p) => existsSync(join(ROOT, p)))

function linksIn(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z][a-z+.-]*:/i.test(l))
}

describe('paths and links named by README.md, docs/ and source comments', () => {
  test('every repository path they name exists', () => {
    const dead = DOCS.flatMap((doc) =>
      pathsNamedIn(readFileSync(join(ROOT, doc), 'utf8'))
        .filter((p) => !exists(p))
        .map((p) => `${doc}: ${p}`),
    )
    expect(dead).toEqual([])
  })

  test('every link between them reaches its file, and its heading when it names one', () => {
    const dead: string[] = []
    for (const doc of DOCS) {
      for (const link of linksIn(readFileSync(join(ROOT, doc), 'utf8'))) {
        const [file, anchor] = link.split('#', 2)
        const target = file ? normalize(join(dirname(doc), decodeURIComponent(file))) : doc
        if (target.startsWith('..') || !exists(target)) {
          dead.push(`${doc}: ${link}`)
          continue
        }
        if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(readFileSync(join(ROOT, target), 'utf8')).has(decodeURIComponent(anchor)))
          dead.push(`${doc}: ${link} (no such heading)`)
      }
    }
    expect(dead).toEqual([])
  })

  test('every repository path a source comment names exists', () => {
    const dead = SOURCES.flatMap((file) =>
      commentPathsIn(readFileSync(join(ROOT, file), 'utf8'))
        .filter((p) => !existsAsModule(p))
        .map((p) => `${file}: ${p}`),
    )
    expect(SOURCES.length).toBeGreaterThan(300)
    expect(dead).toEqual([])
  })

  test('the checks see the paths, links and headings they are meant to', () => {
    expect(pathsNamedIn('see `shared/leads/ingest.ts` `queues` and test/db/x.test.ts, `compose.yaml`, not `video.mp4` or /docs/assets/x.js')).toEqual([
      'shared/leads/ingest.ts',
      'compose.yaml',
      'test/db/x.test.ts',
    ])
    expect(pathsNamedIn('```sh\nbun run shared/nothing.ts\n```\n`db/schema/<table>.ts`')).toEqual([])
    expect(linksIn('[a](docs/leads.md#x) [b](https://example.com) [c](#top)')).toEqual(['docs/leads.md#x', '#top'])
    expect([...anchorsOf('# Search (`q`, contract §11, §15)\n## Data-subject rights (§13)\n## Figures\n### Figures\n```\n# not a heading\n```')]).toEqual([
      'search-q-contract-11-15',
      'data-subject-rights-13',
      'figures',
      'figures-1',
    ])
    expect(commentPathsIn("const a = 'shared/x.ts' // built by shared/leads/ingest.ts\n * see db/client, https://x.org/api/v1\n")).toEqual([
      'shared/leads/ingest.ts',
      'db/client',
    ])
    expect(existsAsModule('db/client')).toBe(true)
    expect(exists('test/worker/exhausted-*.test.ts')).toBe(true)
    expect(exists('shared/nothing-*.ts')).toBe(false)
  })
})
