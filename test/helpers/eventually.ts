/**
 * The one way a test waits: poll a condition until it holds, within a bound. A test never sleeps
 * for a fixed time (test/unit/no-fixed-sleeps.test.ts); the pause between checks lives here only.
 */

/** Polls until `check` returns a truthy value (asynchronous effects are awaited, never slept on). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string; readonly detail?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000)
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value) return value
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${options.what ?? 'condition'}${last ? `: ${String(last)}` : ''}${options.detail ? ` (last seen: ${options.detail})` : ''}`,
      )
    await Bun.sleep(options.intervalMs ?? 25)
  }
}
