import { getTableColumns, type Table } from 'drizzle-orm'

/**
 * A row read by a raw statement (`db.execute`: column names, driver values) as drizzle's typed
 * row of `table` (field names, values mapped as a typed select maps them).
 */
export function rowOf<T extends Table>(table: T, raw: Record<string, unknown>): T['$inferSelect'] {
  const row: Record<string, unknown> = {}
  for (const [field, column] of Object.entries(getTableColumns(table))) {
    const value = raw[column.name]
    row[field] = value === null || value === undefined ? null : column.mapFromDriverValue(value)
  }
  return row as T['$inferSelect']
}
