/**
 * Which mark a business's new photos carry: its logo from private storage when it set one
 * (`cli watermark set`), else its name as text.
 */
import type { Services } from '../platform/services'
import type { WatermarkSpec } from './watermark'

/** Logos are tiny and change rarely (a new one gets a new key): kept per key for the process's life. */
const logos = new Map<string, Uint8Array>()
const LOGO_CACHE_LIMIT = 100

export async function watermarkOf(deps: Pick<Services, 'storage'>, business: { businessName: string; watermarkKey: string | null }): Promise<WatermarkSpec> {
  if (!business.watermarkKey) return { kind: 'text', text: business.businessName }
  let data = logos.get(business.watermarkKey)
  if (!data) {
    const stored = await deps.storage.get('private', business.watermarkKey)
    // A logo that vanished falls back to the name rather than blocking every photo.
    if (!stored) return { kind: 'text', text: business.businessName }
    if (logos.size > LOGO_CACHE_LIMIT) logos.clear()
    logos.set(business.watermarkKey, stored)
    data = stored
  }
  return { kind: 'image', cacheKey: business.watermarkKey, data: data.slice() }
}
