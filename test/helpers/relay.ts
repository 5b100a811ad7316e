/** Sequencing every recorded event now, for tests that read events right after a change. */
import { RELAY_BATCH, relayOnce } from '../../shared/webhooks/relay'

/** Relays outbox batches until nothing is left; returns how many events it relayed. */
export async function relayAll(deps: Parameters<typeof relayOnce>[0]): Promise<number> {
  let total = 0
  for (let n = RELAY_BATCH; n >= RELAY_BATCH; total += n) n = (await relayOnce(deps)).events
  return total
}
