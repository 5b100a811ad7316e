/**
 * Run by fetch-tls.test.ts in a process of its own, because Bun reads NODE_EXTRA_CA_CERTS (the
 * test CA) only at start-up. Fetches FETCH_TLS_URL with every name resolving to 127.0.0.1 and
 * prints the outcome as one JSON line.
 */
import { FetchError, safeFetch } from '../../shared/platform/fetch'

const url = process.env.FETCH_TLS_URL!
try {
  const res = await safeFetch(url, {
    allowHosts: [new URL(url).hostname],
    resolve: async () => ['127.0.0.1'],
    timeoutMs: 5_000,
    maxBytes: 1024,
    maxRedirects: 0,
  })
  console.log(JSON.stringify({ status: res.status, body: new TextDecoder().decode(res.body) }))
} catch (e) {
  if (!(e instanceof FetchError)) throw e
  console.log(JSON.stringify({ code: e.code, cause: (e.cause as { code?: string } | undefined)?.code }))
}
