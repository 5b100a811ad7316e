import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../shared/platform/config'
import { redisConnection } from '../../shared/platform/queues'

const base = { NODE_ENV: 'test' }

describe('REDIS_SENTINELS and REDIS_SENTINEL_MASTER', () => {
  test('unset: REDIS_URL alone, and no replica acknowledgement is waited for', () => {
    const config = loadConfig(base)
    expect(config.redisSentinel).toBeUndefined()
    expect(config.redisWait).toEqual({ replicas: 0, timeoutMs: 500 })
  })

  test('set: the sentinels and master name, and one replica acknowledgement by default', () => {
    const config = loadConfig({ ...base, REDIS_SENTINELS: ' s1:26379, 10.0.0.2:26380 ,[::1]:26381', REDIS_SENTINEL_MASTER: 'plm' })
    expect(config.redisSentinel).toEqual({
      master: 'plm',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
    })
    expect(config.redisWait.replicas).toBe(1)
    expect(loadConfig({ ...base, REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'plm', REDIS_WAIT_REPLICAS: '0' }).redisWait.replicas).toBe(0)
  })

  test('one without the other, an entry without a port, and a WAIT timeout of 0 are refused naming the variable', () => {
    expect(() => loadConfig({ ...base, REDIS_SENTINELS: 's1:26379' })).toThrow(/REDIS_SENTINEL_MASTER/)
    expect(() => loadConfig({ ...base, REDIS_SENTINEL_MASTER: 'plm' })).toThrow(/REDIS_SENTINELS/)
    for (const bad of ['s1', 's1:26379/0', 'user@s1:26379', 's1:port']) {
      expect(() => loadConfig({ ...base, REDIS_SENTINELS: bad, REDIS_SENTINEL_MASTER: 'plm' }), bad).toThrow(ConfigError)
    }
    expect(() => loadConfig({ ...base, REDIS_WAIT_TIMEOUT_MS: '0' })).toThrow(/REDIS_WAIT_TIMEOUT_MS/)
  })

  test("the connection asks the sentinels for the master and takes REDIS_URL's credentials and database", () => {
    const config = loadConfig({ ...base, REDIS_URL: 'redis://app:s%40cret@ignored-host:1/3', REDIS_SENTINELS: '127.0.0.1:1', REDIS_SENTINEL_MASTER: 'plm' })
    const connection = redisConnection(config, 'producer', { lazyConnect: true })
    try {
      expect(connection.options).toMatchObject({
        sentinels: [{ host: '127.0.0.1', port: 1 }],
        name: 'plm',
        role: 'master',
        username: 'app',
        password: 's@cret',
        db: 3,
      })
    } finally {
      connection.disconnect()
    }
  })
})
