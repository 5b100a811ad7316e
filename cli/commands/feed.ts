/**
 * `bun run cli feed …`: the portal feed URLs of a business (contract §12). Each `create` makes a
 * new URL (one per portal, revocable on its own); the token in it is the portal's credential.
 */
import { createFeed, FEED_FORMATS, listFeeds, revokeFeedById, type FeedFormat } from '../../shared/feeds/operations'
import { CliError, intFlag, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  feed create --business <id> --format kyero [--json]      (prints the feed URL; give it to the portal)
  feed list --business <id> [--json]                        (live feeds with their URLs)
  feed revoke <feed_id> [--json]                            (the URL answers 404 from then on)`

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command, arg] = f.positional
  switch (command) {
    case 'create': {
      const businessId = intFlag(f, 'business', true)
      const format = stringFlag(f, 'format', true)
      if (!(FEED_FORMATS as readonly string[]).includes(format)) throw new CliError(`--format must be one of ${FEED_FORMATS.join(', ')}, got "${format}"`)
      const feed = await createFeed(ctx, businessId, format as FeedFormat)
      ctx.out({ id: feed.id, url: feed.url }, `created feed ${feed.id} for business ${businessId}\n\n  ${feed.url}\n\nGive this URL to the portal; \`feed revoke ${feed.id}\` turns it off.`)
      return
    }
    case 'list': {
      const businessId = intFlag(f, 'business', true)
      const feeds = await listFeeds(ctx, businessId)
      ctx.out({ feeds }, feeds.map((feed) => `${feed.id}  ${feed.format}  ${feed.created_at}  ${feed.url}`).join('\n') || 'no feeds')
      return
    }
    case 'revoke': {
      const id = Number(arg)
      if (!arg || !/^[1-9]\d{0,9}$/.test(arg)) throw new CliError(`feed revoke needs a feed id\n${usage}`)
      await revokeFeedById(ctx, id)
      ctx.out({ id, revoked: true }, `revoked feed ${id}`)
      return
    }
    default:
      throw new CliError(`unknown command "feed ${command ?? ''}"\n${usage}`)
  }
}
