/** The command table: every group the CLI knows, in the order help lists them. */
import { completion } from '../completion'
import type { Group } from '../spec'
import { business } from './business'
import { catalogue } from './catalogue'
import { events } from './events'
import { feed } from './feed'
import { key } from './key'
import { outreach } from './outreach'
import { queues } from './queues'
import { watermark } from './watermark'
import { webhooks } from './webhooks'

export const GROUPS: readonly Group[] = [business, key, outreach, watermark, catalogue, feed, webhooks, events, queues, completion]
