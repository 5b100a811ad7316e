/**
 * `bun run cli watermark set --business N --file logo.png`: the business's watermark for new
 * photos (PNG/WebP with transparency recommended, at most 2000×2000). Stored re-encoded as PNG
 * in private storage under a new key, so workers pick it up at once (they cache by key).
 * `watermark clear` goes back to the text mark with the business name; `watermark show` tells
 * which one is in use. Images already public keep the mark they were made with.
 */
import { LogoRejectedError, type LogoRejection } from '../../shared/media/logo'
import { clearBusinessWatermark, findBusinessWatermark, setBusinessWatermark } from '../../shared/media/operations'
import { createStorage } from '../../shared/platform/storage'
import { CliError, intFlag, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  watermark set --business <id> --file <logo.png|webp> [--json]
  watermark clear --business <id> [--json]
  watermark show --business <id> [--json]`

function rejectionMessage(r: LogoRejection): string {
  switch (r.kind) {
    case 'format': return '--file must be a PNG, WebP or JPEG image'
    case 'size': return `--file must be at most ${r.maxEdge}×${r.maxEdge} pixels, got ${r.width}×${r.height}`
    case 'unreadable': return `--file is not a readable image: ${r.detail}`
  }
}

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  if (!['set', 'clear', 'show'].includes(command ?? '')) throw new CliError(`unknown command "watermark ${command ?? ''}"\n${usage}`)
  const businessId = intFlag(f, 'business', true)
  const business = await findBusinessWatermark(ctx, businessId)
  if (!business) throw new CliError(`business ${businessId} does not exist`)

  if (command === 'show') {
    const kind = business.watermarkKey ? 'image' : 'text'
    ctx.out({ business_id: businessId, watermark: kind, text: kind === 'text' ? business.name : null }, kind === 'image' ? 'watermark: custom image' : `watermark: text "${business.name}"`)
    return
  }

  const storage = await createStorage(ctx.config)
  await storage.ensureReady()
  const deps = { database: ctx.database, storage }
  if (command === 'set') {
    const path = stringFlag(f, 'file', true)
    const file = Bun.file(path)
    if (!(await file.exists())) throw new CliError(`--file ${path} does not exist`)
    let size: { width: number; height: number }
    try {
      size = await setBusinessWatermark(deps, business, new Uint8Array(await file.arrayBuffer()))
    } catch (error) {
      if (error instanceof LogoRejectedError) throw new CliError(rejectionMessage(error.rejection))
      throw error
    }
    const { width, height } = size
    ctx.out({ business_id: businessId, watermark: 'image', width, height }, `watermark set for business ${businessId} (${width}×${height}); new photos carry it`)
    return
  }
  await clearBusinessWatermark(deps, business)
  ctx.out({ business_id: businessId, watermark: 'text', text: business.name }, `watermark cleared for business ${businessId}; new photos carry the text "${business.name}"`)
}
