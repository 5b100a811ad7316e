/**
 * The human API reference at `/docs` (hidden from OpenAPI): Scalar's standalone bundle from the
 * `@scalar/api-reference` package pinned in package.json, served by the API itself, so the page
 * works offline and behind proxies that block CDNs. The bundle's path carries the package
 * version, so it is immutable and cached for a year (the second exception to
 * `Cache-Control: no-store`, beside the local `/cdn/*` copies); upgrading the package changes
 * the path. The page turns off everything in Scalar that would call another host: its web fonts,
 * telemetry, the AI agent, MCP and the hosted developer tools; requests the reader sends from the
 * page go straight to this API, never through Scalar's proxy.
 */
import { Elysia } from 'elysia'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { AppError } from '../../shared/platform/errors'

const PACKAGE = '@scalar/api-reference'
const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The installed bundle: the package's `dist/browser/standalone.js`, found from its main entry (the file is not in its exports). */
function locateBundle(): { file: string; version: string } {
  const require = createRequire(import.meta.url)
  const dist = dirname(require.resolve(PACKAGE))
  const root = dirname(dist)
  const version: string = require(join(root, 'package.json')).version
  return { file: join(dist, 'browser', 'standalone.js'), version }
}

/** Scalar's settings for a page that must not reach any host but this one. */
const SCALAR_CONFIGURATION = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  // The sidebar lists every operation, not only the first tag's.
  defaultOpenAllTags: true,
  // "Test request" goes through Scalar's hosted proxy unless told otherwise; this API is same-origin.
  proxyUrl: '',
  externalUrls: { dashboardUrl: '', registryUrl: '', proxyUrl: '', apiBaseUrl: '' },
}

/**
 * contract §15 §6: the page may load and run only what comes from its own origin. Scripts are
 * files of this origin (no inline script, no eval), and so are fetches (/openapi.json and the
 * requests a reader sends from the page), images and fonts. Scalar's components set their styles
 * at run time (style elements and attributes), so styles may be inline; nothing else is. The page
 * may be framed by this origin only.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ')

/** The script that starts the reference: a file, since the page's policy runs no inline script. */
export function docsInitScript(): string {
  // The mount point must not be `#api-reference`: the bundle mounts a second, default-configured
  // reference (web fonts included) on any element with that id.
  return `Scalar.createApiReference('#reference', ${JSON.stringify(SCALAR_CONFIGURATION)})\n`
}

export function docsPage(bundlePath: string, initPath: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Property and Lead Management API</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><div id="reference"></div>
<script src="${bundlePath}"></script>
<script src="${initPath}"></script></body></html>`
}

export const docsRoutes = () => {
  const bundle = locateBundle()
  const bundlePath = `/docs/assets/scalar-${bundle.version}/standalone.js`
  const initPath = '/docs/init.js'
  const page = docsPage(bundlePath, initPath)
  const init = docsInitScript()
  return new Elysia({ name: 'routes.docs', detail: { hide: true } })
    .get(
      '/docs',
      ({ set }) => {
        set.headers['content-type'] = 'text/html; charset=utf-8'
        set.headers['content-security-policy'] = DOCS_CSP
        return page
      },
      { detail: { hide: true } },
    )
    .get(
      initPath,
      ({ set }) => {
        set.headers['content-type'] = 'text/javascript; charset=utf-8'
        return init
      },
      { detail: { hide: true } },
    )
    .get(
      '/docs/assets/:asset/standalone.js',
      async ({ params, set }) => {
        // Only the installed version exists: an old page asking for another one gets a 404, never other bytes under a year-long cache.
        if (params.asset !== `scalar-${bundle.version}`) throw new AppError('not_found', 'Not found')
        set.headers['cache-control'] = IMMUTABLE
        return new Response(Bun.file(bundle.file), { headers: { 'content-type': 'text/javascript; charset=utf-8' } })
      },
      { detail: { hide: true } },
    )
}
