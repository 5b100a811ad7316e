/** What `bun run start` runs (API_PROCESSES, WORKER_PROCESSES, METRICS_PORT, WORKER_NICE): defaults and refusals. */
import { describe, expect, test } from 'bun:test'
import { availableParallelism } from 'node:os'
import { ConfigError, loadConfig } from '../../shared/platform/config'

const base = { NODE_ENV: 'test' }

describe("the supervisor's processes", () => {
  test('defaults: an API process per core, one worker process, no metrics port, workers not niced', () => {
    const config = loadConfig(base)
    expect(config.apiProcesses).toBe(availableParallelism())
    expect(config.workerProcesses).toBe(1)
    expect(config.metricsPort).toBeUndefined()
    expect(config.workerNice).toBe(0)
  })

  test('an API alone, workers alone, a metrics port range clear of PORT', () => {
    expect(loadConfig({ ...base, API_PROCESSES: '1', WORKER_PROCESSES: '0' })).toMatchObject({ apiProcesses: 1, workerProcesses: 0 })
    expect(loadConfig({ ...base, API_PROCESSES: '0', WORKER_PROCESSES: '2' })).toMatchObject({ apiProcesses: 0, workerProcesses: 2 })
    expect(loadConfig({ ...base, PORT: '3000', API_PROCESSES: '4', METRICS_PORT: '9100' }).metricsPort).toBe(9100)
  })

  test('refused with one line naming the variable', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env })
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as Error).message
      }
      throw new Error(`accepted ${JSON.stringify(env)}`)
    }
    expect(refusal({ API_PROCESSES: '0', WORKER_PROCESSES: '0' })).toBe('API_PROCESSES and WORKER_PROCESSES are both 0: nothing to run')
    expect(refusal({ API_PROCESSES: 'two' })).toBe('API_PROCESSES must be an integer between 0 and 256, got "two"')
    expect(refusal({ WORKER_PROCESSES: '-1' })).toBe('WORKER_PROCESSES must be an integer between 0 and 64, got "-1"')
    expect(refusal({ PORT: '3001', API_PROCESSES: '2', METRICS_PORT: '3000' })).toBe(
      'METRICS_PORT 3000 to 3001 (one per API process) would include PORT 3001: choose another METRICS_PORT',
    )
    expect(refusal({ WORKER_NICE: '20' })).toBe('WORKER_NICE must be an integer between 0 and 19, got "20"')
  })
})
