/** The feed formats portals can pull (contract §12); apart so the CLI's command table can name them without loading the feed code. */
export const FEED_FORMATS = ['kyero'] as const
export type FeedFormat = (typeof FEED_FORMATS)[number]
