/**
 * TypeBox models of the property endpoints (api-spec §2.1–2.3, §4.2–4.5; contract §3). The same
 * schemas validate requests and write the OpenAPI document. Bodies refuse unknown fields
 * (contract §3.1); response integers use plain TypeBox `Integer` (conventions §13).
 */
import { OptionalKind, Type as T, type Static, type TNull, type TObject, type TOptional, type TProperties, type TSchema, type TUnion } from '@sinclair/typebox'
import { t } from 'elysia'
import { MAX_ID, Nullable, Price, Timestamp, literalUnion } from '../platform/schemas'
import { Image as MediaImage, Video as MediaVideo } from '../media/schemas'
import { MAX_AREAS, MAX_POLYGON_VERTICES } from './geo'
import { PROPERTY_TYPES, SUBTYPE_KEYS } from './subtypes'

/**
 * What a property is offered for, and what a lead seeks, in the order every list and joined
 * `operation` string uses.
 */
export const OPERATIONS = ['venta', 'alquiler', 'traspaso'] as const
export const CREATE_STATUSES = ['disponible', 'reservada'] as const
export const ALL_STATUSES = ['disponible', 'reservada', 'vendida', 'alquilada', 'traspasada'] as const
export const ADDRESS_PRIVACY = ['public', 'approximate', 'hidden'] as const

const strict = { additionalProperties: false }
const m2 = (description: string) => T.Number({ minimum: 0, description })
const count = () => T.Integer({ minimum: 0 })

/**
 * Bounds of request text (contract §15: every string and array of a request has one). `title`,
 * `description` and `features` are api-spec §8's; the others, which it leaves open, are chosen
 * for what a real listing form holds, and each schema states its own.
 */
export const LIMITS = {
  title: 300,
  description: 50_000,
  /** Names: building, street. */
  name: 200,
  address: 300,
  /** House number with floor and door (`12, 3º B`). */
  number: 50,
  /** One-line characteristics (`floor`, `views`, `turistic_license`…) and activity names. */
  shortText: 100,
  activities: 50,
  featureValue: 200,
  features: 200,
} as const
const shortText = (description = 'Free text.') =>
  T.String({ maxLength: LIMITS.shortText, description: `${description} At most ${LIMITS.shortText} characters.` })

export const Operation = literalUnion(OPERATIONS, { description: 'Operation the property is offered for.' })
export const PropertyTypeSchema = literalUnion(PROPERTY_TYPES, { title: 'PropertyType', description: 'Property type key.' })
export const SubtypeKey = T.Union(
  SUBTYPE_KEYS.map((k) => T.Literal(k)),
  {
    title: 'PropertySubtypeKey',
    maxLength: 100,
    description: 'Subtype key from the fixed table per type (docs/properties.md); it must belong to `type`. Responses show its Spanish label.',
  },
)

export const PropertyPricing = T.Object(
  {
    sale: T.Optional(Price('Sale price (€); required when `venta` is listed.')),
    rent: T.Optional(Price('Monthly rent (€); required when `alquiler` is listed.')),
    transfer: T.Optional(Price('Transfer price (€); required when `traspaso` is listed.')),
  },
  { ...strict, title: 'PropertyPricing', examples: [{ sale: 250000 }] },
)

export const Coordinates = T.Object(
  { latitude: T.Number({ minimum: -90, maximum: 90 }), longitude: T.Number({ minimum: -180, maximum: 180 }) },
  {
    ...strict,
    title: 'Coordinates',
    description: 'Degrees (WGS 84). Stored as sent; the public `lat`/`lon` and the map filters take a coordinate under 1e-9° (0.1 mm) from 0 as 0.',
  },
)

export const PropertyLocation = T.Object(
  {
    city: T.String({ minLength: 1, maxLength: 100 }),
    province: T.Optional(T.String({ maxLength: 100 })),
    country: T.Optional(T.String({ maxLength: 100, description: 'Default `España`.' })),
    postal_code: T.Optional(T.String({ maxLength: 20 })),
    address: T.Optional(T.String({ maxLength: LIMITS.address, description: `Street and number; at most ${LIMITS.address} characters.` })),
    full_address: T.Optional(
      T.String({
        maxLength: 500,
        description: 'Full address shown when visibility is `public`: street, number, floor, building, postal code and city, so at most 500 characters.',
      }),
    ),
    street: T.Optional(
      T.String({
        maxLength: LIMITS.name,
        description:
          `Street name without house number (\`Calle de Colón\`); at most ${LIMITS.name} characters. The ` +
          `approximate address is built from it; without it, from the text of \`address\` (docs/properties.md).`,
      }),
    ),
    number: T.Optional(
      T.String({
        maxLength: LIMITS.number,
        description: `House number, floor and door (\`12, 3º B\`); at most ${LIMITS.number} characters. Never part of an approximate address.`,
      }),
    ),
    building_name: T.Optional(
      T.String({ maxLength: LIMITS.name, description: `At most ${LIMITS.name} characters. Published only when visibility is \`public\`.` }),
    ),
    coordinates: T.Optional(Coordinates),
    visibility: T.Optional(literalUnion(ADDRESS_PRIVACY, { description: 'Address privacy; default `approximate`.' })),
  },
  {
    ...strict,
    title: 'PropertyLocation',
    examples: [
      {
        city: 'Valencia',
        address: 'Calle de Colón 12',
        postal_code: '46004',
        coordinates: { latitude: 39.4699, longitude: -0.3763 },
        visibility: 'approximate',
      },
    ],
  },
)

export const PropertyArea = T.Object(
  {
    total: m2('Total size (m²) → `size_total`.'),
    usable: T.Optional(m2('→ `specs.usable_area`')),
    built: T.Optional(m2('→ `specs.size_built`')),
    plot: T.Optional(m2('→ `specs.plot_size`')),
  },
  { ...strict, title: 'PropertyArea', examples: [{ total: 95, usable: 82 }] },
)

// contract §15 §6: each `translations` text is as long as its base field.
const Lang = T.Object(
  {
    title: T.Optional(T.String({ maxLength: LIMITS.title, description: `As \`title\`: at most ${LIMITS.title} characters.` })),
    description: T.Optional(T.String({ maxLength: LIMITS.description, description: `HTML, as \`description\`: at most ${LIMITS.description} characters.` })),
  },
  strict,
)
const rating = T.String({ pattern: '^[A-Ga-g]$', maxLength: 1, description: 'Rating A–G.' })
const activityList = (description: string) =>
  T.Array(T.String({ maxLength: LIMITS.shortText }), {
    maxItems: LIMITS.activities,
    description: `${description} At most ${LIMITS.activities}, each at most ${LIMITS.shortText} characters.`,
  })

/** api-spec §2.2 keys a client may send; `price_calc`, `address_privacy`, `building_name` are derived (contract §3.1). */
export const PropertyCharacteristics = T.Object(
  {
    translations: T.Optional(
      T.Object({ ca: T.Optional(Lang), en: T.Optional(Lang), fr: T.Optional(Lang), de: T.Optional(Lang), pt: T.Optional(Lang), it: T.Optional(Lang) }, strict),
    ),
    usable_area: T.Optional(m2('m²')),
    plot_size: T.Optional(m2('m²')),
    size_built: T.Optional(m2('m²')),
    porch_size: T.Optional(m2('m²')),
    size_terraces: T.Optional(m2('m²')),
    attic_size: T.Optional(m2('m²')),
    storage_dimensions: T.Optional(T.Number()),
    doble_bedrooms: T.Optional(count()),
    suite_bathrooms: T.Optional(count()),
    num_terraces: T.Optional(count()),
    conservation: T.Optional(shortText('State of conservation.')),
    floor: T.Optional(shortText('Floor (`3`, `bajo`).')),
    house_floors: T.Optional(T.Integer({ minimum: 1 })),
    elevator: T.Optional(T.Boolean()),
    views: T.Optional(shortText()),
    orientation: T.Optional(shortText()),
    energy_certificate: T.Optional(rating),
    emissions: T.Optional(rating),
    energy_consumption_value: T.Optional(T.Number({ minimum: 1, maximum: 999 })),
    emissions_value: T.Optional(T.Number({ minimum: 1, maximum: 999 })),
    height: T.Optional(T.Number()),
    facade_meters: T.Optional(T.Number()),
    meters_showcase: T.Optional(T.Number()),
    entrace_type: T.Optional(shortText('Office entrance type.')),
    position: T.Optional(shortText('First/second sea line.')),
    offices: T.Optional(count()),
    meeting_rooms: T.Optional(count()),
    camino: T.Optional(shortText('Ground type.')),
    terrain_extension: T.Optional(shortText('Large/small.')),
    topography: T.Optional(shortText()),
    num_seats: T.Optional(count()),
    dimensions: T.Optional(shortText('Parking dimensions.')),
    turistic_license: T.Optional(shortText('Tourist licence number.')),
    construction_year: T.Optional(T.Integer()),
    exposure: T.Optional(shortText('Interior or exterior.')),
    style: T.Optional(shortText()),
    num_viviendas: T.Optional(T.Integer()),
    num_locales: T.Optional(T.Integer()),
    num_ascensores: T.Optional(T.Integer()),
    num_floors: T.Optional(T.Integer()),
    num_parkings: T.Optional(count()),
    luxury_property: T.Optional(T.Boolean()),
    holiday_renting: T.Optional(T.Boolean()),
    temporal_renting: T.Optional(T.Boolean()),
    purchase_option_rental: T.Optional(T.Boolean()),
    activities: T.Optional(
      T.Object(
        { predefined: T.Optional(activityList('Predefined activity keys.')), custom: T.Optional(activityList("Activities in the agency's own words.")) },
        strict,
      ),
    ),
    num_entrances: T.Optional(
      T.Object(
        {
          total: T.Optional(count()),
          peaton_entrances: T.Optional(count()),
          moto_entrances: T.Optional(count()),
          van_entrances: T.Optional(count()),
          car_entrances: T.Optional(count()),
        },
        strict,
      ),
    ),
    floor_breakdown: T.Optional(
      T.Object({ base_floor: T.Optional(T.Integer()), first_floor: T.Optional(T.Integer()), second_floor: T.Optional(T.Integer()) }, strict),
    ),
  },
  { ...strict, title: 'PropertyCharacteristics', examples: [{ elevator: true, energy_certificate: 'C', temporal_renting: false }] },
)

const FeatureValue = T.Union([T.String({ maxLength: LIMITS.featureValue, description: `At most ${LIMITS.featureValue} characters.` }), T.Boolean(), T.Number()])
export const Feature = T.Object(
  {
    key: T.String({ minLength: 1, maxLength: 100 }),
    label: T.String({ minLength: 1, maxLength: 200 }),
    value: FeatureValue,
    isextra: T.Optional(T.Boolean({ default: false })),
  },
  { ...strict, title: 'PropertyFeature', examples: [{ key: 'pool', label: 'Piscina', value: true, isextra: false }] },
)

const bodyFields = {
  operations: T.Array(Operation, { minItems: 1, maxItems: 3, uniqueItems: true, description: '1–3 distinct operations; each needs its price in `pricing`.' }),
  type: PropertyTypeSchema,
  subtype: SubtypeKey,
  title: T.String({ minLength: 1, maxLength: LIMITS.title }),
  description: T.String({
    maxLength: LIMITS.description,
    description:
      'HTML; default empty. Stored as sent (the private read returns it); public representations ' +
      'carry it reduced to an allow-list (contract §15, see `Property.description`).',
  }),
  pricing: PropertyPricing,
  location: PropertyLocation,
  area: PropertyArea,
  bedrooms: T.Integer({ minimum: 0, maximum: 1000 }),
  bathrooms: T.Integer({ minimum: 0, maximum: 1000 }),
  characteristics: PropertyCharacteristics,
  features: T.Array(Feature, { maxItems: LIMITS.features, description: `At most ${LIMITS.features}; keys unique within the property.` }),
  owner_id: T.Integer({ minimum: 1, maximum: MAX_ID, description: 'A `propietario` contact of the same business.' }),
  is_featured: T.Boolean(),
}

export const PropertyCreateRequest = T.Object(
  {
    operations: bodyFields.operations,
    type: bodyFields.type,
    subtype: T.Optional(bodyFields.subtype),
    title: bodyFields.title,
    description: T.Optional(bodyFields.description),
    pricing: bodyFields.pricing,
    location: bodyFields.location,
    area: bodyFields.area,
    bedrooms: T.Optional(bodyFields.bedrooms),
    bathrooms: T.Optional(bodyFields.bathrooms),
    characteristics: T.Optional(bodyFields.characteristics),
    features: T.Optional(bodyFields.features),
    owner_id: T.Optional(bodyFields.owner_id),
    is_featured: T.Optional(bodyFields.is_featured),
    status: T.Optional(literalUnion(CREATE_STATUSES, { description: 'Default `disponible`.' })),
  },
  {
    ...strict,
    title: 'PropertyCreateRequest',
    examples: [
      {
        operations: ['venta'],
        type: 'apartamento',
        subtype: 'atico',
        title: 'Ático con terraza',
        pricing: { sale: 250000 },
        location: { city: 'Valencia', address: 'Calle de Colón 12', coordinates: { latitude: 39.4699, longitude: -0.3763 } },
        area: { total: 95 },
        bedrooms: 3,
        bathrooms: 2,
      },
    ],
  },
)
export type PropertyCreate = Static<typeof PropertyCreateRequest>

/** The merged result of a PATCH is checked against this: creation rules plus the later statuses (contract §3.2). */
export const PropertyMerged = T.Composite([T.Omit(PropertyCreateRequest, ['status']), T.Object({ status: T.Optional(literalUnion(ALL_STATUSES)) })], strict)
/** A property input that passed the schema: a creation body, or the merged record of a PATCH. */
export type PropertyInput = Static<typeof PropertyMerged>

/**
 * The PATCH form of a creation schema (contract §3.2, §15): at every depth of nested objects
 * every key is optional, and a key that is optional at creation may also be `null` (clears it).
 * Arrays and scalars are replaced whole, so they keep their schema.
 */
type TPatch<S> =
  S extends TObject<infer P extends TProperties>
    ? TObject<{ [K in keyof P]: TOptional<P[K] extends { [OptionalKind]: 'Optional' } ? TUnion<[TPatch<P[K]>, TNull]> : TPatch<P[K]>> }>
    : S
function patchOf<S extends TSchema>(schema: S): TPatch<S> {
  if (schema.type !== 'object' || !schema.properties) return schema as never
  const required = new Set<string>(schema.required ?? [])
  const properties = Object.fromEntries(
    Object.entries<TSchema>(schema.properties).map(([key, prop]) => {
      const inner = patchOf(T.Optional(prop, false))
      return [key, T.Optional(required.has(key) ? inner : Nullable(inner))]
    }),
  )
  // No title: the patch form of a named schema is not that schema.
  const { title: _title, examples: _examples, properties: _p, required: _r, type: _t, ...options } = schema
  return T.Object(properties, options) as never
}

/** contract §3.2: every creation field optional; nested objects merge at every depth; `null` clears an optional field. */
export const PropertyUpdateRequest = T.Object(
  {
    ...patchOf(T.Omit(PropertyCreateRequest, ['status'])).properties,
    status: T.Optional(
      Nullable(
        literalUnion(ALL_STATUSES, { description: '`vendida`, `alquilada`, `traspasada` only by update; `null` goes back to the default `disponible`.' }),
      ),
    ),
  },
  {
    ...strict,
    title: 'PropertyUpdateRequest',
    examples: [
      { pricing: { rent: 1200 }, operations: ['venta', 'alquiler'] },
      { subtype: null, status: 'vendida' },
    ],
  },
)
export type PropertyUpdate = Static<typeof PropertyUpdateRequest>

// ---- responses ----

export const ImageObject = T.Object(
  {
    id: T.String(),
    url: T.String({ description: 'Permanent public-copy URL under CDN_URL.' }),
    order: T.Integer({ default: 1 }),
    is_primary: T.Boolean({ default: false }),
    title: T.String({ default: '' }),
  },
  { title: 'PropertyImage' },
)
/** Public `videos[]` (contract §9.3): ready videos in order; fields that do not apply are omitted. */
export const VideoObject = T.Object(
  {
    id: T.String(),
    title: T.String(),
    order: T.Integer({ minimum: 1 }),
    url: T.Optional(T.String({ description: 'Link: the provider’s page. Upload: the MP4 (H.264/AAC, long edge ≤ 1280 px).' })),
    hls_url: T.Optional(T.String({ description: 'Upload: the HLS playlist.' })),
    thumbnail_url: T.Optional(T.String({ description: 'Upload: a JPEG poster; YouTube link: the provider’s thumbnail.' })),
    embed_url: T.Optional(T.String({ description: 'Link: the provider’s embed URL.' })),
  },
  { title: 'PropertyVideo' },
)
const FeatureOut = T.Object({ key: T.String(), label: T.String(), value: FeatureValue, isextra: T.Boolean() }, { title: 'PropertyFeatureOut' })

/** Published translations: each description sanitised (contract §15), so it may be longer than what was sent (`&` → `&amp;`). */
const LangOut = T.Object(
  {
    title: T.Optional(T.String()),
    description: T.Optional(T.String({ description: 'HTML reduced to the allow-list of `description`.' })),
  },
  strict,
)

export const Specs = T.Object(
  {
    ...PropertyCharacteristics.properties,
    translations: T.Optional(
      T.Object(
        {
          ca: T.Optional(LangOut),
          en: T.Optional(LangOut),
          fr: T.Optional(LangOut),
          de: T.Optional(LangOut),
          pt: T.Optional(LangOut),
          it: T.Optional(LangOut),
        },
        strict,
      ),
    ),
    address_privacy: literalUnion(ADDRESS_PRIVACY),
    building_name: T.Optional(T.String({ description: 'Only when address privacy is `public`.' })),
    price_calc: T.Object({ price_alq: T.Optional(T.Number()), price_trasp: T.Optional(T.Number()) }),
  },
  { title: 'PropertySpecs', additionalProperties: true },
)

export const Property = T.Object(
  {
    id: T.Integer(),
    operation: T.String({ description: 'Operations joined by `,` in the order venta,alquiler,traspaso.', examples: ['venta,alquiler'] }),
    type: PropertyTypeSchema,
    subtype: T.String({ description: 'Spanish label, or `Sin Especificar`.' }),
    title: T.String(),
    price: Nullable(T.Number({ description: 'Sale price (€); null when there is none.' })),
    size_total: T.Number(),
    bedrooms: T.Integer(),
    bathrooms: T.Integer(),
    postal_code: T.Optional(T.String({ description: 'Omitted when hidden.' })),
    description: T.String({
      description:
        'HTML reduced to an allow-list (contract §15): `p br ul ol li strong b em i h2 h3 h4`, and `a` with an absolute ' +
        '`http`, `https` or `mailto` `href`, given `rel="nofollow noopener"`. Scripts and styles are removed with their text; ' +
        'comments, attributes and other elements are removed and their text kept (a block such as `div` leaves a line break). ' +
        'The same holds for each `specs.translations` description. `GET /properties/{id}/private` returns what was sent.',
    }),
    images: T.Array(ImageObject),
    videos: T.Array(VideoObject),
    specs: Specs,
    features: T.Array(FeatureOut),
    status: T.String(),
    address: T.Optional(T.String({ description: 'Full (public), without number or building (approximate), omitted (hidden).' })),
    city: T.String(),
    province: T.Optional(T.String()),
    country: T.String(),
    lat: T.Optional(T.Number()),
    lon: T.Optional(T.Number()),
    is_featured: T.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Property' },
)
export type PropertyView = Static<typeof Property>

export const PropertyResponse = T.Object({ status: T.Literal('ok'), data: Property, authenticated_as: T.String() }, { title: 'PropertyResponse' })

/**
 * The listing as its integrator wrote it (contract §9.4): drafts and published alike, every field
 * of the creation body as stored (exact coordinates and `visibility` included), so a PATCH
 * followed by this read returns what was sent, merged. `subtype` and `owner_id` are null when
 * unset; the media lists are those of `listImages` and `listVideos`.
 */
export const PrivateProperty = T.Object(
  {
    id: T.Integer(),
    status: literalUnion(ALL_STATUSES),
    published: T.Boolean({ description: 'Whether it is in the public catalogue.' }),
    operations: T.Array(Operation),
    type: PropertyTypeSchema,
    subtype: Nullable(T.String({ description: 'The subtype key as sent (docs/properties.md); null when unset.' })),
    title: T.String(),
    description: T.String(),
    pricing: PropertyPricing,
    location: PropertyLocation,
    area: PropertyArea,
    bedrooms: T.Integer(),
    bathrooms: T.Integer(),
    characteristics: PropertyCharacteristics,
    features: T.Array(Feature),
    owner_id: Nullable(T.Integer()),
    is_featured: T.Boolean(),
    images: T.Array(MediaImage, { description: 'Every image, as `listImages` shows them (failed ones last).' }),
    videos: T.Array(MediaVideo, { description: 'Every video, as `listVideos` shows them (failed ones last).' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    title: 'PrivateProperty',
    examples: [
      {
        id: 42,
        status: 'disponible',
        published: false,
        operations: ['venta'],
        type: 'apartamento',
        subtype: 'atico',
        title: 'Ático con terraza',
        description: '',
        pricing: { sale: 250000 },
        location: { city: 'Valencia', address: 'Calle de Colón 12', coordinates: { latitude: 39.469871, longitude: -0.376342 }, visibility: 'approximate' },
        area: { total: 95 },
        bedrooms: 3,
        bathrooms: 2,
        characteristics: { elevator: true },
        features: [],
        owner_id: null,
        is_featured: false,
        images: [
          {
            id: '9a1f7f0e-2c1b-4d0a-8f55-0e4b8f1a2c33',
            state: 'ready',
            url: 'https://cdn.example.com/images/4f0c1e8a9b2d4c6e8f0a1b2c3d4e5f60.jpg',
            order: 1,
            is_primary: true,
            title: 'Salón',
            watermarked: true,
            width: 1920,
            height: 1280,
          },
        ],
        videos: [],
        created_at: '2026-11-01T10:00:00.000Z',
        updated_at: '2026-11-02T09:30:00.000Z',
      },
    ],
  },
)
export type PrivatePropertyView = Static<typeof PrivateProperty>

export const PrivatePropertyResponse = T.Object(
  { status: T.Literal('ok'), data: PrivateProperty, authenticated_as: T.String({ description: 'Name of the business owning the key.' }) },
  { title: 'PrivatePropertyResponse' },
)

const LatLngOut = T.Object({ lat: T.Number(), lng: T.Number() })
export const AreaEcho = T.Union(
  [
    T.Object({ geometry: T.Object({ type: T.Literal('circle'), center: LatLngOut, radius: T.Number() }) }),
    T.Object({ geometry: T.Object({ type: literalUnion(['polygon', 'rectangle'] as const), coordinates: T.Array(LatLngOut) }) }),
    T.Object({ type: literalUnion(['point', 'marker'] as const), position: LatLngOut, radius: T.Number() }),
  ],
  { title: 'MapArea' },
)

export const PropertyListFilters = T.Object(
  {
    status: Nullable(T.String()),
    operation: Nullable(T.String()),
    rental_type: Nullable(literalUnion(['temporal', 'anual'] as const)),
    type: Nullable(PropertyTypeSchema),
    subtype: Nullable(T.String()),
    city: Nullable(T.String()),
    locations: Nullable(T.Array(AreaEcho)),
    min_price: Nullable(T.Number()),
    max_price: Nullable(T.Number()),
    min_bedrooms: Nullable(T.Integer()),
    is_featured: Nullable(T.Boolean()),
    sort: Nullable(literalUnion(['price_asc', 'price_desc'] as const)),
    q: Nullable(T.String({ description: 'The search text exactly as received.' })),
  },
  { title: 'PropertyListFilters', description: 'The filters applied; null for filters not sent; `locations` holds only understood areas.' },
)
export type ListFilters = Static<typeof PropertyListFilters>

export const PropertyListResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Array(Property),
    count: T.Integer({
      description: 'Matches across pages. With `q`, exact up to 1,000; past that it is 1,000 and `count_relation` is `gte`.',
    }),
    count_relation: literalUnion(['eq', 'gte'] as const, {
      description: '`eq` when `count` is exact (always without `q`); `gte` when a search has more than 1,000 matches and `count` is that lower bound.',
    }),
    limit: T.Integer(),
    offset: T.Integer(),
    filters: PropertyListFilters,
    authenticated_as: T.String(),
  },
  { title: 'PropertyListResponse' },
)

/** Enough for MAX_AREAS areas or one polygon of MAX_POLYGON_VERTICES vertices written in full. */
const LOCATIONS_MAX_LENGTH = 100_000

/** Query of GET /properties (api-spec §4.3). Typed params coerce; invalid values are a 422 (contract §3.4). */
export const PropertyListQuery = t.Object(
  {
    limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    offset: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: MAX_ID,
        default: 0,
        description: 'With `q`, `offset + limit` may not pass 1,000 (a 422 on `offset`); without `q` it is unbounded.',
      }),
    ),
    status: t.Optional(t.String({ maxLength: 50, description: 'Exact commercial status; unknown values match nothing. At most 50 characters.' })),
    operation: t.Optional(
      t.String({ maxLength: 50, description: 'Case-insensitive partial match; also selects the price of min_price/max_price/sort. At most 50 characters.' }),
    ),
    rental_type: t.Optional(
      literalUnion(['temporal', 'anual'] as const, {
        description:
          '`temporal`: rentals flagged `temporal_renting`; `anual`: rentals neither temporary nor holiday. Listings not offered for `alquiler` never match.',
      }),
    ),
    type: t.Optional(literalUnion(PROPERTY_TYPES)),
    subtype: t.Optional(t.String({ maxLength: 100, description: 'Exact subtype key; unknown keys match nothing. At most 100 characters.' })),
    city: t.Optional(t.String({ maxLength: 100, description: 'Case-insensitive exact match. At most 100 characters.' })),
    locations: t.Optional(
      t.String({
        maxLength: LOCATIONS_MAX_LENGTH,
        description:
          `URL-encoded JSON array of map areas (circle, polygon/rectangle, point/marker): at most ${MAX_AREAS} ` +
          `areas, a polygon or rectangle at most ${MAX_POLYGON_VERTICES.toLocaleString('en')} vertices, ` +
          `at most ${LOCATIONS_MAX_LENGTH.toLocaleString('en')} characters once decoded; past a bound it is a 422. ` +
          'Polygons and rectangles are the straight latitude/longitude lines a map draws; circle and point radii are metres.',
      }),
    ),
    min_price: t.Optional(t.Number({ minimum: 0 })),
    max_price: t.Optional(t.Number({ minimum: 0 })),
    min_bedrooms: t.Optional(t.Integer({ minimum: 0, maximum: MAX_ID })),
    is_featured: t.Optional(t.Boolean()),
    sort: t.Optional(literalUnion(['price_asc', 'price_desc'] as const)),
    q: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Full-text search (1–200 characters) in title, description (HTML stripped), city, province, subtype label and every `translations` text; ' +
          'Spanish stemming with accents and case ignored (`piscina` finds `Piscinas`, ' +
          '`atico` finds `Ático`), English words through the English translation. ' +
          'Web-search syntax: every word must match, `"a phrase"` matches words in sequence, `-word` excludes, `or` between words matches either. ' +
          'Combined with the other filters by AND; without `sort` the 1,000 most recently updated matches ' +
          '(all of them when fewer) are ordered by relevance (reading: PostgreSQL `ts_rank` over titles first, ' +
          'then subtype, city and province, then descriptions), ties by `updated_at` then `id`, descending; ' +
          'with `sort`, the first 1,000 matches in that order are listed. `count` is exact up to 1,000 (then 1,000 with ' +
          '`count_relation: "gte"`) and `offset + limit` may not pass 1,000. Address, building name and postal code are not searched.',
        examples: ['atico piscina', '"vistas al mar" -bajo'],
      }),
    ),
  },
  { additionalProperties: true },
)
