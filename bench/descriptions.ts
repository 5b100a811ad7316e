/**
 * `bun run bench descriptions [--rounds N]`: what sanitising descriptions (contract §15 §3,
 * shared/listings/description-html.ts) adds to building a public document, the work every
 * catalogue write and rebuild does once (reads serve the stored document and sanitise nothing).
 * CPU time of this process (user + system), so the figures hold on a busy machine.
 */
import { sanitizeDescription } from '../shared/listings/description-html'
import { toPublicProperty, type PrivatePropertyRow } from '../shared/listings/property-view'
import { parseFlags } from './flags'

const { flags } = parseFlags(process.argv.slice(2))
const rounds = Number(flags.rounds ?? 1)

const TYPICAL =
  '<p>Ático de <strong>120 m²</strong> con terraza de 40 m² y vistas al mar.</p><ul><li>3 dormitorios</li><li>2 baños</li><li>Garaje y trastero</li></ul>' +
  '<p>Zona tranquila, cerca del <a href="https://agencia.example/zona">centro</a>.</p>'
const PLAIN = 'Ático de 120 m2 con terraza de 40 m2 y vistas al mar. 3 dormitorios, 2 baños, garaje y trastero. Zona tranquila, cerca del centro. '
const BIG = '<div class="x" style="y"><p>Texto <b>largo</b> con <a href="https://agencia.example/">enlace</a> y <span>más</span></p></div>'
  .repeat(455)
  .slice(0, 50_000)
const NESTED = '<b>'.repeat(16_000)

const row = (description: string, translations = 0): PrivatePropertyRow => ({
  id: 1,
  operations: ['venta'],
  type: 'apartamento',
  subtype: 'atico',
  title: 'Ático',
  description,
  priceSale: 250000,
  priceRent: null,
  priceTransfer: null,
  location: { city: 'Valencia', address: 'Calle de Colón 12' },
  area: { total: 120 },
  bedrooms: 3,
  bathrooms: 2,
  characteristics: translations
    ? { translations: Object.fromEntries(['ca', 'en', 'fr', 'de', 'pt', 'it'].slice(0, translations).map((l) => [l, { title: 'T', description }])) }
    : {},
  features: [],
  isFeatured: false,
  status: 'disponible',
  createdAt: new Date(),
  updatedAt: new Date(),
})

function cpuMicros(f: () => void, n: number): number {
  for (let i = 0; i < Math.min(n, 50); i++) f()
  const start = process.cpuUsage()
  for (let i = 0; i < n; i++) f()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}

const cases: [string, () => void, number][] = [
  ['document, plain-text description (no markup: not parsed)', () => toPublicProperty(row(PLAIN), []), 5000],
  ['document, 1 KB HTML description', () => toPublicProperty(row(TYPICAL.repeat(4)), []), 1000],
  ['document, 1 KB HTML description and 6 translations of it', () => toPublicProperty(row(TYPICAL.repeat(4), 6), []), 200],
  ['document, 50,000-character HTML description (the limit)', () => toPublicProperty(row(BIG), []), 30],
  ['document, 50,000-character HTML description and 6 translations (the worst case)', () => toPublicProperty(row(BIG, 6), []), 5],
  ['sanitise 16,000 nested unclosed <b> (48,000 characters)', () => sanitizeDescription(NESTED), 5],
]
for (let r = 1; r <= rounds; r++) {
  for (const [name, f, n] of cases) console.log(`${rounds > 1 ? `round ${r}: ` : ''}${name}: ${cpuMicros(f, n).toFixed(0)} µs CPU per build (${n} builds)`)
}
