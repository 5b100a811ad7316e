import { command, UsageError, type Group } from '../spec'

export const business: Group = {
  name: 'business',
  summary: 'workspaces (businesses), each with its own keys, listings and leads',
  commands: {
    create: command({
      summary: 'create a business; prints its id',
      options: {
        name: {
          value: '<name>',
          required: true,
          help: 'shown to its API keys by GET /me (1–200 characters)',
          parse: (raw, flag) => {
            const name = raw.trim()
            if (!name || name.length > 200) throw new UsageError(`${flag} must be 1–200 characters`)
            return name
          },
        },
      },
      async run(args, ctx) {
        const { createBusiness } = await import('../../shared/access/accounts')
        const created = await createBusiness(ctx, args.name)
        ctx.out(created, `created business ${created.id} "${created.name}"`)
      },
    }),
  },
}
