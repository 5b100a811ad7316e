/**
 * The PostgreSQL driver must carry our patch (patches/postgres@3.4.9.patch, applied by `bun
 * install` from package.json's patchedDependencies). Unpatched, postgres.js answers a rolled-back
 * COMMIT as a success and stalls or crashes on a restart or a failover: the service would store
 * nothing while answering 201. Every process checks the patch's mark once, at start-up.
 */
import postgres from 'postgres'

/** The mark the patch sets on the driver (`Postgres.patched`); changed with each revision of the patch. */
export const DRIVER_PATCH = 'property-lead-api/postgres@3.4.9 r3'

export class DriverPatchError extends Error {
  override name = 'DriverPatchError'
}

/** Why `driver` is not the patched postgres.js, or undefined when it is. */
export function driverPatchProblem(driver: unknown = postgres): string | undefined {
  const mark = (driver as { patched?: unknown } | undefined)?.patched
  if (mark === DRIVER_PATCH) return undefined
  const found = mark === undefined ? 'no patch mark' : `patch mark ${JSON.stringify(mark)}`
  return (
    `the PostgreSQL driver (postgres.js) is not patched: ${found}, expected "${DRIVER_PATCH}". ` +
    'Run `bun install` (it applies patches/postgres@3.4.9.patch, package.json ' +
    '"patchedDependencies"); after a driver upgrade, port the patch first (patches/README.md). ' +
    'Without it answered writes can be lost on a failover, a restart or behind PgBouncer.'
  )
}

/** Throws DriverPatchError (a one-line start-up refusal) when the driver is not patched. */
export function assertPatchedDriver(driver: unknown = postgres): void {
  const problem = driverPatchProblem(driver)
  if (problem) throw new DriverPatchError(problem)
}
