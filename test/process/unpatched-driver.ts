/**
 * Preloaded into a real entry point by test/process/driver-patch-startup.test.ts (`bun --preload`):
 * `postgres` resolves to the package's CommonJS build, which the patch leaves as released (it
 * patches only `src/`, the build Bun loads): the process sees an unpatched postgres.js 3.4.9, as
 * after an install that skipped patches or a version bump. Nothing of this exists in the shipped
 * entry points.
 */
import { plugin } from 'bun'
import { join } from 'node:path'

const UNPATCHED = join(import.meta.dir, '../../node_modules/postgres/cjs/src/index.js')

plugin({
  name: 'unpatched postgres.js',
  setup(build) {
    // The patched build's entry becomes a re-export of the unpatched one.
    build.onLoad({ filter: /node_modules\/postgres\/src\/index\.js$/ }, () => ({
      contents: `export { default } from ${JSON.stringify(UNPATCHED)}`,
      loader: 'js',
    }))
  },
})
