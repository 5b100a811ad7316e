/** "Did you mean …?": the known name nearest to a mistyped one, if any is near enough to be meant. */

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]
}

export function closest(typed: string, known: readonly string[]): string | undefined {
  // A prefix is what people type when they half-remember a long name (--exp for --expires-at).
  const byPrefix = known.filter((k) => typed.length >= 2 && k.startsWith(typed))
  if (byPrefix.length === 1) return byPrefix[0]
  // A third of the name may be wrong: catches typos and singular/plural slips, not unrelated words.
  const limit = Math.max(2, Math.floor(typed.length / 3))
  let best: { name: string; d: number } | undefined
  for (const name of known) {
    const d = distance(typed, name)
    if (d <= limit && (!best || d < best.d)) best = { name, d }
  }
  return best?.name
}
