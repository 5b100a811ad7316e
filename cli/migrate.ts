/**
 * `bun run db:migrate` (and the first step of `bun run start`): creates and migrates the
 * configured database, or says in one line why it cannot (contract §7). Through
 * DATABASE_DIRECT_URL: the migrator holds a session advisory lock, which a transaction-mode
 * pooler would leave on whichever backend ran it.
 */
import { migrateDatabase } from '../db/migrate'
import { getConfig, type Config } from '../shared/platform/config'
import { assertPatchedDriver } from '../shared/platform/driver-patch'
import { exitWithStartupError } from '../shared/platform/lifecycle'
import { describeConnectionError } from '../shared/platform/service-errors'

// Start-up as every entry point: an unpatched driver or a setting out of range is one sentence.
let config: Config
try {
  assertPatchedDriver()
  config = getConfig()
} catch (error) {
  exitWithStartupError(error)
}
try {
  await migrateDatabase(config.databaseDirectUrl)
  console.log(JSON.stringify({ level: 'info', msg: 'database migrated' }))
} catch (error) {
  const code = (error as { code?: string }).code
  if (code === 'ECONNREFUSED' || code === 'CONNECT_TIMEOUT' || code === 'ENOTFOUND') {
    console.error(describeConnectionError('PostgreSQL', config.databaseDirectUrl, error))
  } else {
    console.error(`migration failed: ${(error as Error).message}`)
  }
  process.exit(1)
}
