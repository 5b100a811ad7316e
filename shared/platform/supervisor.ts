/**
 * A small process supervisor, as the Node cluster module, Gunicorn or PM2 run one server process
 * per core: it starts each child, restarts one that dies (exponential backoff, logged), and on
 * SIGTERM/SIGINT stops them group by group in order (API processes first, so no new work
 * arrives, then the workers drain), each group within its bound.
 *
 * Children report readiness over IPC (lifecycle.ts `reportReady`). One that exits before its first
 * report failed to start (bad configuration, PostgreSQL unreachable): retrying would only repeat
 * its one-line error, so everything stops and the supervisor exits 1 with that line above.
 */
import { setPriority } from 'node:os'
import type { Subprocess } from 'bun'
import type { Logger } from './logger'

export interface ChildSpec {
  /** The stop group: groups stop one after another, in the order of their first child. */
  group: string
  /** Index within its group (logs; API process i has METRICS_PORT + i). */
  index: number
  command: string[]
  env: Record<string, string>
  /** Niceness set on the process right after it starts (0 leaves it). */
  nice?: number
}

export interface SupervisorOptions {
  cwd: string
  logger: Logger
  /** How long a child may drain after SIGTERM before it is killed (its own hard limit plus a margin). */
  stopTimeoutMs: number
  /** First restart delay, doubled per consecutive failure up to `restartMaxMs`. */
  restartBaseMs?: number
  restartMaxMs?: number
  /** A child that ran this long before dying starts its backoff again from `restartBaseMs`. */
  restartResetMs?: number
}

interface Child {
  spec: ChildSpec
  process?: Subprocess
  ready: boolean
  startedAt: number
  /** Consecutive deaths of children that did not run `restartResetMs`. */
  failures: number
  restarts: number
  timer?: ReturnType<typeof setTimeout>
}

/**
 * Exit 0 after draining, or ended by the SIGTERM itself: a process signalled while still starting
 * (before its handlers were set) had accepted nothing.
 */
const stoppedCleanly = (proc: Subprocess) => proc.exitCode === 0 || proc.signalCode === 'SIGTERM'

export class Supervisor {
  private readonly children: Child[]
  private stopping = false
  private readonly started = Promise.withResolvers<void>()
  private readonly stoppedAll = Promise.withResolvers<number>()
  private exitCode = 0

  constructor(
    specs: ChildSpec[],
    private readonly options: SupervisorOptions,
  ) {
    this.children = specs.map((spec) => ({ spec, ready: false, startedAt: 0, failures: 0, restarts: 0 }))
    this.started.promise.catch(() => {})
  }

  /** Starts every child; resolves when all have reported ready, rejects when one failed to start (the others then stop). */
  start(): Promise<void> {
    for (const child of this.children) this.spawn(child)
    if (this.children.length === 0) this.started.resolve()
    return this.started.promise
  }

  /** The pids of the running children, by group (tests, the bench, the soak). */
  pids(): Record<string, number[]> {
    const out: Record<string, number[]> = {}
    for (const c of this.children) {
      if (!c.process || c.process.exitCode !== null || c.process.signalCode !== null) continue
      out[c.spec.group] = [...(out[c.spec.group] ?? []), c.process.pid]
    }
    return out
  }

  /** Resolves with the exit code once every child has stopped (0 when each drained and exited 0). */
  get done(): Promise<number> {
    return this.stoppedAll.promise
  }

  private spawn(child: Child): void {
    const { spec } = child
    child.ready = false
    child.startedAt = performance.now()
    const proc = Bun.spawn(spec.command, {
      cwd: this.options.cwd,
      env: spec.env,
      stdin: 'ignore',
      stdout: 'inherit',
      stderr: 'inherit',
      // Its own session: a Ctrl-C at the terminal reaches the supervisor alone, which stops the
      // children in order (a process group's SIGINT would stop the workers beside the APIs).
      detached: true,
      ipc: (message) => {
        if ((message as { type?: string })?.type !== 'ready' || child.ready) return
        child.ready = true
        this.options.logger.info('process ready', { group: spec.group, index: spec.index, pid: proc.pid })
        if (this.children.every((c) => c.ready)) this.started.resolve()
      },
    })
    child.process = proc
    if (spec.nice) {
      try {
        setPriority(proc.pid, spec.nice)
      } catch (error) {
        this.options.logger.warn('could not lower the priority of a process', {
          group: spec.group,
          index: spec.index,
          pid: proc.pid,
          nice: spec.nice,
          error: (error as Error).message,
        })
      }
    }
    this.options.logger.info('process started', {
      group: spec.group,
      index: spec.index,
      pid: proc.pid,
      ...(child.restarts ? { restarts: child.restarts } : {}),
    })
    void proc.exited.then(() => this.exited(child, proc))
  }

  private exited(child: Child, proc: Subprocess): void {
    const { spec } = child
    const fields = { group: spec.group, index: spec.index, pid: proc.pid, code: proc.exitCode, signal: proc.signalCode }
    if (this.stopping) {
      if (!stoppedCleanly(proc)) this.exitCode = 1
      return
    }
    if (!child.ready && child.restarts === 0) {
      this.options.logger.error('process failed to start; stopping', fields)
      this.exitCode = 1
      this.started.reject(new Error(`${spec.group} process ${spec.index} exited with ${proc.exitCode ?? proc.signalCode} before it was ready`))
      void this.stop()
      return
    }
    const ranMs = performance.now() - child.startedAt
    child.failures = ranMs >= (this.options.restartResetMs ?? 30_000) ? 1 : child.failures + 1
    const delay = Math.min(this.options.restartMaxMs ?? 30_000, (this.options.restartBaseMs ?? 100) * 2 ** (child.failures - 1))
    child.restarts++
    this.options.logger.error('process exited; restarting', { ...fields, ran_s: Math.round(ranMs / 100) / 10, restart_in_ms: delay, restarts: child.restarts })
    child.timer = setTimeout(() => {
      child.timer = undefined
      if (!this.stopping) this.spawn(child)
    }, delay)
  }

  /**
   * SIGTERM to each group in turn, waiting for the group to exit (SIGKILL past `stopTimeoutMs`)
   * before the next. Resolves with the exit code.
   */
  async stop(): Promise<number> {
    if (this.stopping) return this.stoppedAll.promise
    this.stopping = true
    this.started.reject(new Error('stopped before every process was ready'))
    for (const child of this.children) clearTimeout(child.timer)
    const groups = [...new Set(this.children.map((c) => c.spec.group))]
    for (const group of groups) {
      const running = this.children
        .filter((c) => c.spec.group === group && c.process && c.process.exitCode === null && c.process.signalCode === null)
        .map((c) => c.process as Subprocess)
      if (!running.length) continue
      this.options.logger.info('stopping', { group, pids: running.map((p) => p.pid) })
      for (const proc of running) proc.kill('SIGTERM')
      let timer: ReturnType<typeof setTimeout> | undefined
      const killed = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.stopTimeoutMs)))
      const all = Promise.all(running.map((p) => p.exited))
      if ((await Promise.race([all.then(() => true), killed.then(() => false)])) === false) {
        this.options.logger.error('processes did not stop in time; killing them', { group, timeout_ms: this.options.stopTimeoutMs })
        for (const proc of running) proc.kill('SIGKILL')
        this.exitCode = 1
        await all
      }
      clearTimeout(timer)
      for (const proc of running) if (!stoppedCleanly(proc)) this.exitCode = 1
    }
    this.stoppedAll.resolve(this.exitCode)
    return this.exitCode
  }
}
