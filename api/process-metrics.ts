/**
 * The process's own figures for `/metrics`, under the names Prometheus client libraries use
 * (`process_*`), so stock dashboards and alerts read them; plus the event loop's lag, the first
 * sign that one request or job is holding the loop.
 */
import { readdirSync, readFileSync } from 'node:fs'

const LAG_INTERVAL_MS = 500
let lagSeconds = 0
let sampler: ReturnType<typeof setInterval> | undefined

/**
 * A timer due every 500 ms: how late it fires is the lag. One per process, never keeping it
 * alive; started by the first Metrics.
 */
export function watchEventLoopLag(): void {
  if (sampler) return
  let last = performance.now()
  sampler = setInterval(() => {
    const now = performance.now()
    lagSeconds = Math.max(0, now - last - LAG_INTERVAL_MS) / 1000
    last = now
  }, LAG_INTERVAL_MS)
  sampler.unref()
}

const startTimeSeconds = Date.now() / 1000 - process.uptime()

/** Open descriptors and their limit, where /proc says (Linux); undefined elsewhere. */
function fds(): { open: number; max: number | undefined } | undefined {
  try {
    const open = readdirSync('/proc/self/fd').length
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    return { open, max: limit ? Number(limit[1]) : undefined }
  } catch {
    return undefined
  }
}

const metric = (name: string, type: 'gauge' | 'counter', help: string, value: number) => [
  `# HELP ${name} ${help}`,
  `# TYPE ${name} ${type}`,
  `${name} ${value}`,
]

export function renderProcessMetrics(): string {
  const cpu = process.cpuUsage()
  const files = fds()
  return (
    [
      ...metric('process_cpu_user_seconds_total', 'counter', 'User CPU time spent, in seconds.', cpu.user / 1e6),
      ...metric('process_cpu_system_seconds_total', 'counter', 'System CPU time spent, in seconds.', cpu.system / 1e6),
      ...metric('process_cpu_seconds_total', 'counter', 'User and system CPU time spent, in seconds.', (cpu.user + cpu.system) / 1e6),
      ...metric('process_resident_memory_bytes', 'gauge', 'Resident memory size, in bytes.', process.memoryUsage.rss()),
      ...metric(
        'process_start_time_seconds',
        'gauge',
        'Start time of the process since the Unix epoch, in seconds.',
        Math.round(startTimeSeconds * 1000) / 1000,
      ),
      ...(files ? metric('process_open_fds', 'gauge', 'Open file descriptors.', files.open) : []),
      ...(files?.max !== undefined ? metric('process_max_fds', 'gauge', 'Limit of open file descriptors.', files.max) : []),
      ...metric('event_loop_lag_seconds', 'gauge', `How late a timer due every ${LAG_INTERVAL_MS} ms last fired, in seconds.`, lagSeconds),
    ].join('\n') + '\n'
  )
}
