import { describe, expect, test } from 'bun:test'
import { createLogger } from '../../shared/platform/logger'

describe('logger', () => {
  test("an error is logged with its cause: the driver's code, severity and message under drizzle's wrapper", () => {
    const lines: string[] = []
    const logger = createLogger('debug', {}, (line) => lines.push(line))
    const driver = Object.assign(new Error('server login has been failing, try again later (server_login_retry)'), { code: '08P01', severity: 'FATAL' })
    logger.error('unhandled error', { error: new Error('Failed query: insert into contacts …', { cause: driver }) })
    const { error } = JSON.parse(lines[0])
    expect(error.message).toStartWith('Failed query')
    expect(error.cause).toMatchObject({ code: '08P01', severity: 'FATAL', message: driver.message })
  })
})
