/** `bun run bench <name> [args]`: runs bench/<name>.ts, which prints its figures. */
const [name, ...args] = process.argv.slice(2)
const known = ['catalogue', 'ingest', 'images', 'body-limits', 'events', 'feed', 'media', 'descriptions', 'forms', 'statements', 'response-writes'].filter(
  (n) => Bun.file(new URL(`./${n}.ts`, import.meta.url)).size > 0,
)
if (!name || !known.includes(name)) {
  console.error(`usage: bun run bench <${known.join('|') || 'name'}> [args]`)
  process.exit(name ? 2 : 0)
}
process.argv = [process.argv[0], new URL(`./${name}.ts`, import.meta.url).pathname, ...args]
await import(`./${name}.ts`)
