/** The two ways a command fails, told apart by their exit codes (docs/cli.md). */

/** The command line itself is wrong: nothing was done and no service was contacted (exit 2). */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** A well-formed command that could not be carried out: not found, refused, in the wrong state (exit 1). */
export class CliError extends Error {
  override name = 'CliError'
}
