/**
 * `bun run gen:client`: regenerates `schema.ts`, the types of the typed client, from the OpenAPI
 * document the app serves at `/openapi.json`. The document is taken from the app in-process
 * (no listener), so it is exactly what the code in this checkout serves; building the app opens
 * its PostgreSQL and Redis connections, so both must answer (as for `bun run start`).
 * test/api/typescript-client.test.ts fails when the committed file differs from a fresh run.
 */
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript'
import { join } from 'node:path'
import { createApp } from '../../api/app'
import { closeApiDeps, createApiDeps } from '../../api/runtime'
import { loadConfig } from '../../shared/platform/config'
import { createLogger } from '../../shared/platform/logger'

export const SCHEMA_FILE = join(import.meta.dir, 'schema.ts')

const HEADER = `${COMMENT_HEADER.trimEnd()}\n// Regenerate with \`bun run gen:client\` (clients/typescript/generate.ts) from the app's /openapi.json.\n\n`

/** The source of `schema.ts` for an OpenAPI document. */
export async function schemaSource(document: OpenAPI3): Promise<string> {
  const ast = await openapiTS(document, { silent: true, defaultNonNullable: false })
  return HEADER + astToString(ast)
}

/** The document as the app serves it, read through its own handler. */
export async function servedDocument(app: { handle(request: Request): Promise<Response> | Response }): Promise<OpenAPI3> {
  const res = await app.handle(new Request('http://localhost/openapi.json'))
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as OpenAPI3
}

if (import.meta.main) {
  const config = loadConfig(process.env)
  const deps = await createApiDeps(config, createLogger('warn'))
  try {
    const source = await schemaSource(await servedDocument(createApp(deps)))
    await Bun.write(SCHEMA_FILE, source)
    console.log(`wrote ${SCHEMA_FILE} (${source.length} bytes)`)
  } finally {
    await closeApiDeps(deps)
  }
}
