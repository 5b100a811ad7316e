/**
 * Subtype keys per property type with their Spanish display labels (contract §3.1). Filters and
 * input use the key; responses use the label; no subtype → `Sin Especificar`. The table is the
 * OpenAPI `PropertySubtypeKey` enum with its labels (api/openapi.ts) and is listed in docs/properties.md
 * and docs/properties.md (a test compares both with this one).
 */
export const PROPERTY_TYPES = ['apartamento', 'casa', 'local', 'nave', 'almacenaje', 'oficina', 'terreno', 'aparcamiento', 'edificio'] as const
export type PropertyType = (typeof PROPERTY_TYPES)[number]

export const SUBTYPES: Record<PropertyType, Record<string, string>> = {
  apartamento: {
    piso: 'Piso',
    atico: 'Ático',
    duplex: 'Dúplex',
    estudio: 'Estudio',
    loft: 'Loft',
    planta_baja: 'Planta baja',
    apartamento: 'Apartamento',
  },
  casa: {
    chalet: 'Chalet',
    casa_adosada: 'Casa adosada',
    casa_pareada: 'Casa pareada',
    villa: 'Villa',
    casa_rustica: 'Casa rústica',
    casa_de_pueblo: 'Casa de pueblo',
    masia: 'Masía',
    bungalow: 'Bungalow',
  },
  local: {
    local_comercial: 'Local comercial',
    bar_restaurante: 'Bar / restaurante',
    tienda: 'Tienda',
  },
  nave: {
    nave_industrial: 'Nave industrial',
    nave_logistica: 'Nave logística',
  },
  almacenaje: {
    trastero: 'Trastero',
    almacen: 'Almacén',
  },
  oficina: {
    oficina: 'Oficina',
    despacho: 'Despacho',
    coworking: 'Coworking',
  },
  terreno: {
    urbano: 'Terreno urbano',
    urbanizable: 'Terreno urbanizable',
    rustico: 'Terreno rústico',
  },
  aparcamiento: {
    plaza_coche: 'Plaza de coche',
    plaza_moto: 'Plaza de moto',
    garaje_cerrado: 'Garaje cerrado',
  },
  edificio: {
    edificio_residencial: 'Edificio residencial',
    edificio_oficinas: 'Edificio de oficinas',
    hotel: 'Hotel',
  },
}

export const NO_SUBTYPE_LABEL = 'Sin Especificar'

/** Every subtype key of every type (the OpenAPI enum; a key may be valid for one type only). */
export const SUBTYPE_KEYS: string[] = [...new Set(Object.values(SUBTYPES).flatMap((t) => Object.keys(t)))].sort()

/** Label of each key. A key belongs to one type only, so one label per key is the whole table. */
export const SUBTYPE_LABELS: Record<string, string> = Object.fromEntries(Object.values(SUBTYPES).flatMap((t) => Object.entries(t)))

/** The table as markdown, as docs/properties.md and the OpenAPI description show it. */
export function subtypeTableMarkdown(): string {
  const rows = PROPERTY_TYPES.map(
    (type) =>
      `| \`${type}\` | ${Object.entries(SUBTYPES[type])
        .map(([key, label]) => `\`${key}\` → ${label}`)
        .join(', ')} |`,
  )
  return ['| type | key → label |', '|---|---|', ...rows].join('\n')
}

export function isSubtypeOf(type: PropertyType, key: string): boolean {
  return Object.hasOwn(SUBTYPES[type], key)
}

export function subtypeLabel(type: string, key: string | null | undefined): string {
  if (!key) return NO_SUBTYPE_LABEL
  return SUBTYPES[type as PropertyType]?.[key] ?? NO_SUBTYPE_LABEL
}
