/**
 * Contract §15, §7: APP_SECRET is required, at least 32 characters, unless
 * NODE_ENV is development or test; missing, short or a published default is a start-up error
 * naming it. compose.yaml ships no usable default.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { ConfigError, loadConfig } from '../../shared/platform/config'
import { ROOT } from '../helpers/processes'

const GOOD = 'k'.repeat(31) + 'Z'
const PUBLISHED_DEFAULTS = ['dev-only-secret-change-me-in-production-0000000000', 'change-me-to-a-long-random-secret-of-32-chars-or-more']

function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
}

describe('APP_SECRET', () => {
  test('missing outside development and test is a start-up error naming it', () => {
    for (const NODE_ENV of [undefined, '', 'production', 'staging', 'Development ', 'prod']) {
      const e = configError({ NODE_ENV })
      expect(e.message).toStartWith('APP_SECRET is required')
      expect(e.message).toContain('32 characters')
    }
  })

  test('a published default is refused outside development and test', () => {
    for (const secret of PUBLISHED_DEFAULTS) expect(configError({ NODE_ENV: 'production', APP_SECRET: secret }).message).toStartWith('APP_SECRET ')
  })

  test('development and test may run without it, on a development value that says so', () => {
    for (const NODE_ENV of ['development', 'test']) {
      const config = loadConfig({ NODE_ENV })
      expect(config.appSecretIsDefault).toBe(true)
      expect(config.appSecret.length).toBeGreaterThanOrEqual(32)
    }
  })

  test('any NODE_ENV, any secret (property-based): accepted exactly when long enough and not a default, or in development/test', () => {
    const nodeEnv = fc.oneof(fc.constantFrom(undefined, 'development', 'test', 'production'), fc.string({ maxLength: 12 }))
    const secret = fc.oneof(
      fc.constantFrom(undefined, '', ...PUBLISHED_DEFAULTS, GOOD),
      fc.string({ minLength: 0, maxLength: 40 }),
      fc.string({ minLength: 32, maxLength: 64 }),
    )
    fc.assert(
      fc.property(nodeEnv, secret, (NODE_ENV, APP_SECRET) => {
        const relaxed = NODE_ENV === 'development' || NODE_ENV === 'test'
        const given = APP_SECRET !== undefined && APP_SECRET !== ''
        const ok = given ? APP_SECRET.length >= 32 && (relaxed || !PUBLISHED_DEFAULTS.includes(APP_SECRET)) : relaxed
        if (ok) {
          const config = loadConfig({ NODE_ENV, APP_SECRET })
          expect(config.appSecret).toBe(given ? APP_SECRET : config.appSecret)
          expect(config.appSecretIsDefault).toBe(!given || PUBLISHED_DEFAULTS.includes(APP_SECRET))
        } else expect(configError({ NODE_ENV, APP_SECRET }).message).toStartWith('APP_SECRET ')
      }),
      { numRuns: 500 },
    )
  })

  test('compose.yaml requires APP_SECRET (no usable default) and runs in production', async () => {
    const compose = Bun.YAML.parse(await Bun.file(`${ROOT}/compose.yaml`).text()) as {
      services: Record<string, { environment?: Record<string, string>; command?: string[] }>
    }
    const app = Object.entries(compose.services).filter(([, s]) => s.command?.[0] === 'bun')
    expect(app.map(([name]) => name).sort()).toEqual(['api', 'api-ha', 'migrate', 'migrate-ha', 'worker', 'worker-ha', 'worker-ingest', 'worker-video'])
    for (const [name, service] of app) {
      const secret = service.environment?.APP_SECRET ?? ''
      // Taken from the environment (or .env) with no default: unset, compose refuses to start naming it.
      expect(secret, name).toMatch(/^\$\{APP_SECRET:\?[^}]+\}$/)
      expect(service.environment?.NODE_ENV, name).toBe('production')
    }
  })

  test(
    'package.json: start, dev, cli and db:migrate default NODE_ENV to development ' +
      '(zero configuration on a developer machine); start:api and start:worker do not',
    async () => {
      const { scripts } = (await Bun.file(`${ROOT}/package.json`).json()) as { scripts: Record<string, string> }
      for (const name of ['start', 'dev', 'cli', 'db:migrate', 'start:stack']) {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell default expansion, as package.json spells it
        for (const command of scripts[name].split('&&')) expect(command.trim(), name).toStartWith('NODE_ENV=${NODE_ENV:-development} ')
      }
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell default expansion, as package.json spells it
      expect(scripts['test:faults']).toStartWith('NODE_ENV=${NODE_ENV:-test} ')
      for (const name of ['start:api', 'start:worker']) expect(scripts[name], name).not.toContain('NODE_ENV')
    },
  )
})
