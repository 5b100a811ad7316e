import { parseConnectionUrl, redactConnectionUrl } from '../../db/connection-url'
import type { RedisSentinel } from './config'

/**
 * Start-up failures worth one clear line (contract §7): which dependency is missing and how to
 * start it, instead of a stack trace. With Sentinel, the master is named with the sentinels asked.
 */
export function describeConnectionError(service: 'PostgreSQL' | 'Redis', url: string, error: unknown, sentinel?: RedisSentinel): string {
  const safeUrl = sentinel ? `master "${sentinel.master}" of the sentinels ${sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}` : redactUrl(url)
  const reason = (error as { code?: string; message?: string })?.code ?? (error as Error)?.message ?? String(error)
  // 3D000: the server answers but the database was never created.
  if (service === 'PostgreSQL' && reason === '3D000') {
    return (
      `PostgreSQL database ${parseConnectionUrl(url).database} does not exist at ${safeUrl}: ` +
      `run \`bun run db:migrate\` (creates and migrates it) or set DATABASE_URL.`
    )
  }
  const hint =
    service === 'PostgreSQL'
      ? 'start it (e.g. `pg_ctlcluster 15 main start`, or `docker compose up -d postgres`) or set DATABASE_URL'
      : sentinel
        ? 'check the sentinels answer and know that master, or set REDIS_SENTINELS and REDIS_SENTINEL_MASTER'
        : 'start it (e.g. `redis-server --daemonize yes`, or `docker compose up -d redis`) or set REDIS_URL'
  return `${service} is not reachable at ${safeUrl} (${reason}): ${hint}.`
}

/** Drops the password from a connection URL before it reaches a log line. */
export function redactUrl(raw: string): string {
  try {
    if (/^postgres(ql)?:/.test(raw)) return redactConnectionUrl(raw)
    const u = new URL(raw)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return '<invalid url>'
  }
}
