/** Spawning the project's own entry points as real processes, and finding free ports. */
import { createServer } from 'node:net'

export const ROOT = new URL('../..', import.meta.url).pathname

export async function run(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  // Killed past timeoutMs, so a process that hangs fails its test instead of holding the run.
  const proc = Bun.spawn(['bun', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}
