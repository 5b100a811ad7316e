/**
 * webhook-delivery (contract §10.2): one run of an endpoint's runner (shared/webhooks/delivery.ts).
 * Failed attempts are not job failures: they are recorded on their deliveries, which fall due
 * again later. The job fails only when the run could not work (PostgreSQL unreachable: it waits,
 * queue-config.ts), and BullMQ runs it again.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { WebhookDeliveryPayload } from '../../shared/platform/jobs'
import { runEndpoint, type RunResult } from '../../shared/webhooks/delivery'
import type { WorkerDeps } from '../deps'

// A run lasts at most RUN_BUDGET_MS (5 s) plus one request timeout, well within the shutdown bound.
export async function processWebhookDelivery(deps: Pick<WorkerDeps, 'config' | 'database' | 'queues' | 'logger'>, job: Job): Promise<RunResult> {
  if (!Value.Check(WebhookDeliveryPayload, job.data)) throw new UnrecoverableError(`invalid webhook-delivery payload: ${JSON.stringify(job.data)}`)
  return runEndpoint(deps, job.data.endpointId)
}
