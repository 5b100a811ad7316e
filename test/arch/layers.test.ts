/**
 * The direction of imports (docs/development.md, "Layers and capabilities"): entry points (api/, worker/, cli/, main.ts)
 * → shared/ (capabilities and platform) → db/. db/ imports nothing of ours above it; entry
 * points reach the database only through shared/ (they may open the pool: db/client, db/migrate);
 * api/ and worker/ never import each other; and no module import cycle exists anywhere.
 * Type-only imports count: a type is a dependency too.
 */
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { dirname, join, normalize, relative } from 'node:path'
import { existsSync } from 'node:fs'

const ROOT = normalize(join(import.meta.dir, '../..'))
const SOURCES = ['api', 'worker', 'cli', 'shared', 'db']
  .flatMap((dir) => [...new Glob(`${dir}/**/*.ts`).scanSync({ cwd: ROOT })].filter((f) => !f.startsWith('db/migrations/')))
  .concat('main.ts')

const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

function resolve(from: string, spec: string): string | undefined {
  const base = normalize(join(dirname(from), spec))
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(join(ROOT, candidate))) return candidate
  }
  return undefined
}

const graph = new Map<string, string[]>()
for (const file of SOURCES) {
  const text = await Bun.file(join(ROOT, file)).text()
  const targets: string[] = []
  for (const m of text.matchAll(IMPORT_RE)) {
    const target = resolve(file, m[1] ?? m[2])
    if (target) targets.push(target)
  }
  graph.set(file, targets)
}

type Layer = 'entry' | 'shared' | 'db'
const layerOf = (file: string): Layer => (file.startsWith('db/') ? 'db' : file.startsWith('shared/') ? 'shared' : 'entry')
const RANK: Record<Layer, number> = { entry: 2, shared: 1, db: 0 }
/** What an entry point may take from db/ directly: opening the pool and migrating at start-up. */
const ENTRY_DB_ALLOWED = new Set(['db/client.ts', 'db/migrate.ts'])

describe('layers', () => {
  test('the scan sees the whole tree', () => {
    expect(graph.size).toBeGreaterThan(80)
    expect([...graph.values()].flat().length).toBeGreaterThan(200)
  })

  test('imports point down only: entry → shared → db, and db imports nothing above it', () => {
    const upward: string[] = []
    for (const [file, targets] of graph) {
      for (const target of targets) if (RANK[layerOf(target)] > RANK[layerOf(file)]) upward.push(`${file} → ${target}`)
    }
    expect(upward).toEqual([])
  })

  test('entry points reach the database through shared/ (only the pool and the migrator directly)', () => {
    const direct = [...graph].flatMap(([file, targets]) =>
      layerOf(file) === 'entry' ? targets.filter((t) => layerOf(t) === 'db' && !ENTRY_DB_ALLOWED.has(t)).map((t) => `${file} → ${t}`) : [],
    )
    expect(direct).toEqual([])
  })

  test('api/ and worker/ never import each other, and the CLI imports neither (main.ts stands above both)', () => {
    const crossing = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((t) => {
          const a = file.split('/')[0],
            b = t.split('/')[0]
          return (a === 'api' && b === 'worker') || (a === 'worker' && b === 'api') || (a === 'cli' && (b === 'api' || b === 'worker'))
        })
        .map((t) => `${file} → ${t}`),
    )
    expect(crossing).toEqual([])
  })

  test('no import cycle between modules', () => {
    const cycles: string[] = []
    const state = new Map<string, 'visiting' | 'done'>()
    const stack: string[] = []
    const visit = (file: string) => {
      state.set(file, 'visiting')
      stack.push(file)
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'visiting') cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative('.', f)).join(' → '))
        else if (!state.has(next)) visit(next)
      }
      stack.pop()
      state.set(file, 'done')
    }
    for (const file of graph.keys()) if (!state.has(file)) visit(file)
    expect(cycles).toEqual([])
  })
})
