/**
 * `bun run cli watermark set --business N --file logo.png`: the business's watermark for new
 * photos (PNG/WebP with transparency recommended, at most 2000×2000). Stored re-encoded as PNG
 * in private storage under a new key, so workers pick it up at once (they cache by key).
 * `watermark clear` goes back to the text mark with the business name; `watermark show` tells
 * which one is in use. Images already public keep the mark they were made with.
 */
import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import { findBusiness } from '../../db/queries/businesses'
import { businesses } from '../../db/schema'
import { createStorage } from '../../shared/platform/storage'
import { CliError, intFlag, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  watermark set --business <id> --file <logo.png|webp> [--json]
  watermark clear --business <id> [--json]
  watermark show --business <id> [--json]`

const MAX_EDGE = 2000

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  if (!['set', 'clear', 'show'].includes(command ?? '')) throw new CliError(`unknown command "watermark ${command ?? ''}"\n${usage}`)
  const businessId = intFlag(f, 'business', true)
  const { db } = ctx.database
  const business = await findBusiness(db, businessId)
  if (!business) throw new CliError(`business ${businessId} does not exist`)

  if (command === 'show') {
    const kind = business.watermarkKey ? 'image' : 'text'
    ctx.out({ business_id: businessId, watermark: kind, text: kind === 'text' ? business.name : null }, kind === 'image' ? 'watermark: custom image' : `watermark: text "${business.name}"`)
    return
  }

  const storage = await createStorage(ctx.config)
  await storage.ensureReady()
  let newKey: string | null = null
  if (command === 'set') {
    const path = stringFlag(f, 'file', true)
    const file = Bun.file(path)
    if (!(await file.exists())) throw new CliError(`--file ${path} does not exist`)
    const input = new Uint8Array(await file.arrayBuffer())
    let png: Buffer
    let width: number
    let height: number
    try {
      const meta = await sharp(input).metadata()
      if (!['png', 'webp', 'jpeg'].includes(meta.format ?? '')) throw new CliError('--file must be a PNG, WebP or JPEG image')
      if (!meta.width || !meta.height || meta.width > MAX_EDGE || meta.height > MAX_EDGE) throw new CliError(`--file must be at most ${MAX_EDGE}×${MAX_EDGE} pixels, got ${meta.width}×${meta.height}`)
      ;({ width, height } = meta)
      png = await sharp(input).ensureAlpha().png().toBuffer()
    } catch (error) {
      if (error instanceof CliError) throw error
      throw new CliError(`--file is not a readable image: ${(error as Error).message}`)
    }
    newKey = `watermarks/${randomBytes(16).toString('hex')}.png`
    await storage.put('private', newKey, new Uint8Array(png), 'image/png')
    await db.update(businesses).set({ watermarkKey: newKey }).where(eq(businesses.id, businessId))
    if (business.watermarkKey) await storage.delete('private', business.watermarkKey).catch(() => {})
    ctx.out({ business_id: businessId, watermark: 'image', width, height }, `watermark set for business ${businessId} (${width}×${height}); new photos carry it`)
    return
  }
  await db.update(businesses).set({ watermarkKey: null }).where(eq(businesses.id, businessId))
  if (business.watermarkKey) await storage.delete('private', business.watermarkKey).catch(() => {})
  ctx.out({ business_id: businessId, watermark: 'text', text: business.name }, `watermark cleared for business ${businessId}; new photos carry the text "${business.name}"`)
}
