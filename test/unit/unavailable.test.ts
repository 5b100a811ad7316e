import { describe, expect, test } from 'bun:test'
import IORedis, { ReplyError } from 'ioredis'
import { ServiceUnavailableError } from '../../shared/platform/errors'
import { Queues } from '../../shared/platform/queues'
import { asRedisFailure, isConnectionError, isUnavailableError, unavailableCause } from '../../shared/platform/unavailable'
import { freePort } from '../helpers/processes'

// Failures are classified by class and driver code, never by message text:
// each mapping is pinned here.
describe('isUnavailableError', () => {
  test('driver codes of a lost or refused PostgreSQL connection, and the rolled-back COMMIT', () => {
    for (const code of ['ECONNREFUSED', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', '57P01', '08006', 'COMMIT_ROLLED_BACK', 'TARGET_SESSION_ATTRS', '25006']) {
      expect(isUnavailableError(Object.assign(new Error('whatever'), { code })), code).toBe(true)
    }
  })
  test("a pooler's FATAL 08P01 (PgBouncer: server login has been failing, query_wait_timeout) is unavailable, with its code and severity", () => {
    const pooler = Object.assign(new Error('server login has been failing, try again later (server_login_retry)'), { code: '08P01', severity_local: 'FATAL' })
    const wrapped = new Error('Failed query: insert into contacts …', { cause: pooler })
    expect(isUnavailableError(wrapped)).toBe(true)
    expect(unavailableCause(wrapped)).toEqual({ code: '08P01', severity: 'FATAL', error: pooler.message })
  })
  test('found in the cause chain (drizzle wraps driver errors)', () => {
    expect(isUnavailableError(new Error('Failed query', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) }))).toBe(true)
  })
  test('ServiceUnavailableError is unavailable whatever its cause says', () => {
    expect(isUnavailableError(new ServiceUnavailableError('Redis', new Error('anything at all')))).toBe(true)
  })
  test('other errors, and the same messages without the class or code, are not', () => {
    expect(isUnavailableError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false)
    expect(isUnavailableError(new Error('Connection is closed.'))).toBe(false)
    expect(isUnavailableError(new TypeError('x is undefined'))).toBe(false)
  })
})

describe('asRedisFailure', () => {
  test("Redis's own answers pass through; client-side failures become ServiceUnavailableError", () => {
    const reply = new ReplyError('ERR unknown command')
    expect(asRedisFailure(reply)).toBe(reply)
    const wrapped = asRedisFailure(new Error('Connection is closed.'))
    expect(wrapped).toBeInstanceOf(ServiceUnavailableError)
    expect((wrapped as ServiceUnavailableError).service).toBe('Redis')
  })

  test('the error codes of a node in a failover (demoted master, replica cut off) are unavailable', () => {
    for (const reply of [
      "READONLY You can't write against a read only replica.",
      'MASTERDOWN Link with MASTER is down',
      'LOADING Redis is loading the dataset in memory',
      'NOREPLICAS Not enough good replicas to write.',
    ]) {
      expect(asRedisFailure(new ReplyError(reply)), reply).toBeInstanceOf(ServiceUnavailableError)
    }
    // The code is the first word only: the same words later in a reply are another error.
    const other = new ReplyError('ERR value is READONLY')
    expect(asRedisFailure(other)).toBe(other)
  })

  test('a producer whose Redis does not answer rejects with ServiceUnavailableError', async () => {
    const port = await freePort()
    const connection = new IORedis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    })
    connection.on('error', () => {})
    const queues = new Queues(connection, `unavailable-${port}`)
    try {
      const error = await queues.enqueue('catalogue-reindex', { propertyId: 1 }).then(
        () => null,
        (e) => e,
      )
      expect(error).toBeInstanceOf(ServiceUnavailableError)
      expect(isUnavailableError(error)).toBe(true)
    } finally {
      await queues.close().catch(() => {})
      connection.disconnect()
    }
  })
})

describe('isConnectionError', () => {
  const coded = (code: string) => Object.assign(new Error('whatever'), { code })
  test('a connection that could not be made or was lost, a server shutting down, no primary: PostgreSQL not reached', () => {
    for (const code of ['ECONNREFUSED', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', '57P01', '57P03', '08006', '08P01', 'TARGET_SESSION_ATTRS']) {
      expect(isConnectionError(new Error('Failed query', { cause: coded(code) })), code).toBe(true)
    }
  })
  test('a reachable server refusing one statement is unavailable but not a connection error', () => {
    for (const code of ['57014', '25006', 'COMMIT_ROLLED_BACK']) {
      expect(isUnavailableError(coded(code)), code).toBe(true)
      expect(isConnectionError(coded(code)), code).toBe(false)
    }
    expect(isConnectionError(new ServiceUnavailableError('Redis', new Error('down')))).toBe(false)
    expect(isConnectionError(coded('23505'))).toBe(false)
  })
})
