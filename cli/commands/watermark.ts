/**
 * A business's watermark for new photos (PNG/WebP with transparency recommended, at most
 * 2000×2000). Stored re-encoded as PNG in private storage under a new key, so workers pick it up
 * at once (they cache by key). `clear` goes back to the text mark with the business name; `show`
 * tells which one is in use. Images already public keep the mark they were made with.
 */
import type { LogoRejection } from '../../shared/media/logo'
import type { CliContext } from '../io'
import { businessFlag, CliError, command, type Group } from '../spec'

function rejectionMessage(r: LogoRejection): string {
  switch (r.kind) {
    case 'format':
      return '--file must be a PNG, WebP or JPEG image'
    case 'size':
      return `--file must be at most ${r.maxEdge}×${r.maxEdge} pixels, got ${r.width}×${r.height}`
    case 'unreadable':
      return `--file is not a readable image: ${r.detail}`
  }
}

const media = () => import('../../shared/media/operations')

async function existingBusiness(ctx: CliContext, businessId: number) {
  const { findBusinessWatermark } = await media()
  const business = await findBusinessWatermark(ctx, businessId)
  if (!business) throw new CliError(`business ${businessId} does not exist`)
  return business
}

async function storageDeps(ctx: CliContext) {
  const { createStorage } = await import('../../shared/platform/storage')
  const storage = await createStorage(ctx.config)
  await storage.ensureReady()
  return { database: ctx.database, storage }
}

export const watermark: Group = {
  name: 'watermark',
  summary: "a business's watermark for new photos",
  commands: {
    set: command({
      summary: 'use a logo as the watermark of new photos',
      options: {
        business: businessFlag,
        file: { value: '<logo.png|webp>', required: true, file: true, help: 'PNG, WebP or JPEG, at most 2000×2000; transparency recommended' },
      },
      async run(args, ctx) {
        const business = await existingBusiness(ctx, args.business)
        const file = Bun.file(args.file)
        if (!(await file.exists())) throw new CliError(`--file ${args.file} does not exist`)
        const [{ setBusinessWatermark }, { LogoRejectedError }] = await Promise.all([media(), import('../../shared/media/logo')])
        let size: { width: number; height: number }
        try {
          size = await setBusinessWatermark(await storageDeps(ctx), business, new Uint8Array(await file.arrayBuffer()))
        } catch (error) {
          if (error instanceof LogoRejectedError) throw new CliError(rejectionMessage(error.rejection))
          throw error
        }
        const { width, height } = size
        ctx.out(
          { business_id: args.business, watermark: 'image', width, height },
          `watermark set for business ${args.business} (${width}×${height}); new photos carry it`,
        )
      },
    }),
    clear: command({
      summary: 'go back to the text mark with the business name',
      options: { business: businessFlag },
      async run(args, ctx) {
        const business = await existingBusiness(ctx, args.business)
        const { clearBusinessWatermark } = await media()
        await clearBusinessWatermark(await storageDeps(ctx), business)
        ctx.out(
          { business_id: args.business, watermark: 'text', text: business.name },
          `watermark cleared for business ${args.business}; new photos carry the text "${business.name}"`,
        )
      },
    }),
    show: command({
      summary: 'which watermark new photos carry',
      options: { business: businessFlag },
      async run(args, ctx) {
        const business = await existingBusiness(ctx, args.business)
        const kind = business.watermarkKey ? 'image' : 'text'
        ctx.out(
          { business_id: args.business, watermark: kind, text: kind === 'text' ? business.name : null },
          kind === 'image' ? 'watermark: custom image' : `watermark: text "${business.name}"`,
        )
      },
    }),
  },
}
