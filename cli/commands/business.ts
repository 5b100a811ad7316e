import { createBusiness } from '../../shared/access/accounts'
import { CliError, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  business create --name <name> [--json]`

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  if (command !== 'create') throw new CliError(`unknown command "business ${command ?? ''}"\n${usage}`)
  const name = stringFlag(f, 'name', true).trim()
  if (!name || name.length > 200) throw new CliError('--name must be 1–200 characters')
  const business = await createBusiness(ctx, name)
  ctx.out(business, `created business ${business.id} "${business.name}"`)
}
