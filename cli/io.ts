/** What a running command gets: configuration, an open database, and its two outputs. */
import { createDatabase, type Database } from '../db/client'
import { getConfig, type Config } from '../shared/platform/config'
import { plainJson, plainJsonText } from '../shared/platform/plain-json'
import { describeConnectionError } from '../shared/platform/service-errors'
import { CliError } from './errors'

export interface CliContext {
  config: Config
  database: Database
  json: boolean
  /** Result: printed as one JSON object with --json, else as readable text. */
  out(result: unknown, text?: string): void
  /** A note for the operator (never part of the result): stderr. */
  note(line: string): void
  /**
   * Progress of long work, one line redrawn in place, only when stderr is a terminal: piped or
   * captured output (CI, scripts, `2>log`) gets the summary alone, not hundreds of lines.
   */
  progress(line: string): void
}

async function openDatabase(config: Config): Promise<Database> {
  const database = createDatabase(config.databaseUrl, { max: 4, directUrl: config.databaseDirectUrl })
  try {
    await database.sql`select 1`
  } catch (error) {
    await database.close(1).catch(() => {})
    throw new CliError(describeConnectionError('PostgreSQL', config.databaseUrl, error))
  }
  return database
}

export interface OpenContext extends CliContext {
  close(): Promise<void>
}

export async function makeContext(json: boolean): Promise<OpenContext> {
  const config = getConfig()
  const database = await openDatabase(config)
  const terminal = process.stderr.isTTY === true
  let progressShown = false
  const endProgress = () => {
    if (progressShown) process.stderr.write('\n')
    progressShown = false
  }
  return {
    config,
    database,
    json,
    out(result, text) {
      endProgress()
      process.stdout.write(json ? plainJson(result) + '\n' : (text ?? plainJsonText(JSON.stringify(result, null, 2))) + '\n')
    },
    note(line) {
      endProgress()
      process.stderr.write(line + '\n')
    },
    progress(line) {
      if (!terminal) return
      // \r and "erase line": the next figure replaces the last instead of scrolling.
      process.stderr.write(`\r\x1b[2K${line}`)
      progressShown = true
    },
    async close() {
      endProgress()
      await database.close(2)
    },
  }
}
