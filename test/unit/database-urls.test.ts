/**
 * DATABASE_URL with several hosts and DATABASE_READ_URL (contract §14, docs/operations.md
 * "Failover", "Read replica"): what start-up accepts, what it refuses with one line, and the
 * URL helpers the migrator and start-up errors use.
 */
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../shared/platform/config'
import { parseConnectionUrl, redactConnectionUrl, withDatabase } from '../../db/connection-url'
import { redactUrl } from '../../shared/platform/service-errors'

const env = (vars: Record<string, string>) => ({ NODE_ENV: 'test', ...vars })
const refusal = (vars: Record<string, string>) => {
  try {
    loadConfig(env(vars))
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('accepted')
}

describe('DATABASE_URL', () => {
  test('several hosts with target_session_attrs=read-write are accepted as written', () => {
    const url = 'postgres://app:secret@db1:5432,db2:5433/property_lead?target_session_attrs=read-write'
    expect(loadConfig(env({ DATABASE_URL: url })).databaseUrl).toBe(url)
    expect(loadConfig(env({ DATABASE_URL: 'postgresql://db1,db2/x?target_session_attrs=primary' })).databaseUrl).toBe(
      'postgresql://db1,db2/x?target_session_attrs=primary',
    )
  })

  test('several hosts without target_session_attrs are refused: a write could reach a standby', () => {
    expect(refusal({ DATABASE_URL: 'postgres://db1:5432,db2:5432/x' })).toContain('add ?target_session_attrs=read-write')
  })

  test('a target that would send writes to a standby is refused', () => {
    for (const attrs of ['read-only', 'standby', 'prefer-standby', 'any']) {
      expect(refusal({ DATABASE_URL: `postgres://db1,db2/x?target_session_attrs=${attrs}` })).toContain('target_session_attrs must be read-write or primary')
    }
  })

  test('malformed URLs name the variable and the bad part', () => {
    expect(refusal({ DATABASE_URL: 'mysql://db/x' })).toStartWith('DATABASE_URL must be a postgres:// URL')
    expect(refusal({ DATABASE_URL: 'postgres://db1:5432,db2:port/x?target_session_attrs=read-write' })).toContain('host "db2:port"')
    expect(refusal({ DATABASE_URL: 'postgres://db1,/x?target_session_attrs=read-write' })).toContain('host ""')
  })

  test('the single-host default is unchanged', () => {
    expect(loadConfig(env({})).databaseUrl).toBe('postgres://postgres:postgres@127.0.0.1:5432/property_lead')
  })
})

describe('DATABASE_READ_URL and DATABASE_READ_MAX_LAG_MS', () => {
  test('optional; the lag bound defaults to 5 s', () => {
    const config = loadConfig(env({}))
    expect(config.databaseReadUrl).toBeUndefined()
    expect(config.databaseReadMaxLagMs).toBe(5000)
  })

  test('a replica URL and a bound are taken', () => {
    const config = loadConfig(env({ DATABASE_READ_URL: 'postgres://ro@replica:5432/property_lead', DATABASE_READ_MAX_LAG_MS: '1000' }))
    expect(config.databaseReadUrl).toBe('postgres://ro@replica:5432/property_lead')
    expect(config.databaseReadMaxLagMs).toBe(1000)
  })

  test('a replica URL asking for a read-write session is refused (it would never connect)', () => {
    expect(refusal({ DATABASE_READ_URL: 'postgres://replica/x?target_session_attrs=read-write' })).toContain('drop target_session_attrs')
    expect(refusal({ DATABASE_READ_URL: 'redis://replica' })).toStartWith('DATABASE_READ_URL must be a postgres:// URL')
    expect(refusal({ DATABASE_READ_MAX_LAG_MS: '10' })).toContain('DATABASE_READ_MAX_LAG_MS must be an integer between 100')
  })
})

describe('connection URL helpers', () => {
  const url = 'postgres://app:s%40cret@db1:5432,db2/property_lead?target_session_attrs=read-write'

  test('hosts, database and parameters', () => {
    const parsed = parseConnectionUrl(url)
    expect(parsed.hosts).toEqual([
      { host: 'db1', port: 5432 },
      { host: 'db2', port: undefined },
    ])
    expect(parsed.database).toBe('property_lead')
    expect(parsed.params.get('target_session_attrs')).toBe('read-write')
  })

  test('the migrator reaches `postgres` on the same hosts', () => {
    expect(withDatabase(url, 'postgres')).toBe('postgres://app:s%40cret@db1:5432,db2/postgres?target_session_attrs=read-write')
  })

  test('passwords never reach a start-up line', () => {
    expect(redactConnectionUrl(url)).toBe('postgres://app:***@db1:5432,db2/property_lead?target_session_attrs=read-write')
    expect(redactUrl(url)).not.toContain('cret')
    expect(redactUrl('redis://:pw@r:6379')).toBe('redis://:***@r:6379')
  })
})
