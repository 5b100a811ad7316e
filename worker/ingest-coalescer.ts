/**
 * Group commit for the lead-ingest queue. The API sends a batch as soon as the one before it is in
 * Redis (api/ingest-batcher.ts), so under load the jobs are many and small; one transaction per
 * job made PostgreSQL's per-transaction cost the limit on leads stored per second. Jobs running
 * at the same time in this process hand their leads over here: while a store is running the next
 * jobs gather, and then go together in one transaction; a store that would start small first
 * waits `gatherMs` for more.
 *
 * A merged store that fails is retried job by job, so one job's failure never fails another's
 * (unless PostgreSQL is unreachable: then every job fails at once, without a try each).
 * Every store is idempotent (ON CONFLICT DO NOTHING on the phone), so a retried or repeated job
 * changes nothing that is already stored.
 */
import { ingestLeadKey, type IngestLead } from '../shared/leads/ingest'
import { isUnavailableError } from '../shared/platform/unavailable'

/** Stores leads in one transaction; returns the (business, phone) of each lead it created. */
export type StoreLeads = (leads: IngestLead[]) => Promise<{ businessId: number; phone: string }[]>

interface Waiting {
  leads: IngestLead[]
  resolve(created: number): void
  reject(error: unknown): void
}

export interface IngestCoalescerOptions {
  /** Stores running at once (each one transaction, so one connection). */
  parallel: number
  /** Leads per merged store at most; more wait for the next one. */
  maxLeads: number
  /** How long a store that would start with fewer than maxLeads / 4 leads waits for more (0: never). */
  gatherMs?: number
}

export class IngestCoalescer {
  private readonly waiting: Waiting[] = []
  private running = 0

  constructor(
    private readonly storeLeads: StoreLeads,
    private readonly options: IngestCoalescerOptions,
  ) {}

  /** Resolves, once the leads are committed, with how many of them this call created. */
  store(leads: IngestLead[]): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ leads, resolve, reject })
      if (this.running < this.options.parallel) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.running++
    try {
      while (this.waiting.length) {
        if (this.options.gatherMs && this.waitingLeads() < this.options.maxLeads / 4) await Bun.sleep(this.options.gatherMs)
        await this.run(this.take())
      }
    } finally {
      this.running--
    }
  }

  private waitingLeads(): number {
    let n = 0
    for (const w of this.waiting) n += w.leads.length
    return n
  }

  /** The waiting jobs in arrival order up to `maxLeads` leads (always at least one job). */
  private take(): Waiting[] {
    let n = 0
    let count = 0
    while (n < this.waiting.length && (n === 0 || count + this.waiting[n].leads.length <= this.options.maxLeads)) count += this.waiting[n++].leads.length
    return this.waiting.splice(0, n)
  }

  private async run(group: Waiting[]): Promise<void> {
    let created: { businessId: number; phone: string }[]
    try {
      created = await this.storeLeads(group.length === 1 ? group[0].leads : group.flatMap((w) => w.leads))
    } catch (error) {
      // PostgreSQL unreachable fails every job alike (the queue's retry policy waits it out);
      // any other failure may be one job's, so each is tried alone.
      if (group.length === 1 || isUnavailableError(error)) for (const w of group) w.reject(error)
      else for (const w of group) await this.run([w])
      return
    }
    // Each created lead counts for the first job that carried it, as if the jobs had run in turn.
    const fresh = new Set(created.map((c) => ingestLeadKey(c.businessId, c.phone)))
    for (const w of group) {
      let n = 0
      for (const lead of w.leads) if (fresh.delete(ingestLeadKey(lead.businessId, lead.phone))) n++
      w.resolve(n)
    }
  }
}
