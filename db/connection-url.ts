/**
 * PostgreSQL connection URLs as libpq and postgres.js read them, several hosts included
 * (`postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`). WHATWG `URL` refuses a
 * host list, so the authority is split here and each host checked on its own.
 */

export interface ConnectionUrl {
  protocol: 'postgres:' | 'postgresql:'
  /** `user` or `user:password`, still percent-encoded; empty when absent. */
  userinfo: string
  hosts: { host: string; port: number | undefined }[]
  database: string
  params: URLSearchParams
}

const SHAPE = /^(postgres(?:ql)?:)\/\/(?:([^@/?#]*)@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/

/** Throws an Error saying what is wrong (the caller names the variable). */
export function parseConnectionUrl(raw: string): ConnectionUrl {
  const m = SHAPE.exec(raw)
  if (!m) throw new Error('not a postgres:// URL')
  const hosts = m[3].split(',').map((entry) => {
    let parsed: URL
    try {
      parsed = new URL(`postgres://${entry}`)
    } catch {
      throw new Error(`host "${entry}" is not host or host:port`)
    }
    if (!parsed.hostname || parsed.pathname || parsed.username) throw new Error(`host "${entry}" is not host or host:port`)
    return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : undefined }
  })
  return {
    protocol: m[1] as ConnectionUrl['protocol'],
    userinfo: m[2] ?? '',
    hosts,
    database: decodeURIComponent(m[4] ?? ''),
    params: new URLSearchParams(m[5] ?? ''),
  }
}

export function formatConnectionUrl(u: ConnectionUrl): string {
  const hosts = u.hosts.map((h) => (h.port === undefined ? h.host : `${h.host}:${h.port}`)).join(',')
  const query = u.params.toString()
  return `${u.protocol}//${u.userinfo ? `${u.userinfo}@` : ''}${hosts}/${encodeURIComponent(u.database)}${query ? `?${query}` : ''}`
}

/** The same servers and credentials, another database (the migrator creates ours from `postgres`). */
export function withDatabase(raw: string, database: string): string {
  return formatConnectionUrl({ ...parseConnectionUrl(raw), database })
}

/** The URL with its password replaced, for log lines and start-up errors. */
export function redactConnectionUrl(raw: string): string {
  const u = parseConnectionUrl(raw)
  const colon = u.userinfo.indexOf(':')
  return formatConnectionUrl(colon === -1 ? u : { ...u, userinfo: `${u.userinfo.slice(0, colon)}:***` })
}
