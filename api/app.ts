/**
 * createApp(deps) → the whole HTTP tier as one Elysia instance. api/index.ts serves it; tests
 * call `app.handle(new Request(...))` on it against the real PostgreSQL and Redis.
 */
import { Elysia, type AnyElysia } from 'elysia'
import type { AppDeps } from './deps'
import { buildOpenApiDocument, CONTRACT_VERSION } from './openapi'
import { routeFinder } from './elysia-adapter'
import { httpPlugin } from './plugins/http'
import { readYourWritesPlugin } from './plugins/read-your-writes'
import { meRoutes } from './routes/me'
import { opsRoutes } from './routes/ops'
import { leadRoutes } from './routes/leads'
import { propertyRoutes } from './routes/properties'
import { inquiryRoutes } from './routes/inquiries'
import { imageRoutes } from './routes/images'
import { videoRoutes } from './routes/videos'
import { localStorageRoutes } from './routes/local-storage'
import { eventRoutes } from './routes/events'
import { webhookRoutes } from './routes/webhooks'
import { feedRoutes } from './routes/feeds'
import { docsRoutes } from './routes/docs'

export function createApp(deps: AppDeps) {
  let openapi: string | undefined
  let self: AnyElysia | undefined
  // Requests (and the routes they look up) only arrive once createApp has returned the app.
  const built = (): AnyElysia => {
    if (!self) throw new Error('the app was used before createApp returned it')
    return self
  }
  const app = new Elysia({ normalize: false, aot: true })
    .use(httpPlugin(deps, routeFinder(built)))
    .use(readYourWritesPlugin(deps))
    .use(opsRoutes(deps))
    .use(meRoutes)
    .use(propertyRoutes(deps))
    .use(leadRoutes(deps))
    .use(inquiryRoutes(deps))
    .use(imageRoutes(deps))
    .use(videoRoutes(deps))
    .use(localStorageRoutes(deps))
    .use(eventRoutes(deps))
    .use(webhookRoutes(deps))
    .use(feedRoutes(deps))
    .get(
      '/openapi.json',
      ({ set }) => {
        set.headers['content-type'] = 'application/json'
        // Built on first request, once every route is registered.
        openapi ??= JSON.stringify(buildOpenApiDocument(built(), CONTRACT_VERSION, deps.config.publicUrl))
        return openapi
      },
      { detail: { hide: true } },
    )
    .use(docsRoutes())
  self = app
  return app
}

export type App = ReturnType<typeof createApp>
