/**
 * TypeBox models of the lead endpoints (api-spec §2.4, §4.7–4.12; contract §4, §4.1, §4.2, §8).
 * The same schemas validate requests, write the OpenAPI document and give the lead types
 * (`Static<>`). Lead bodies refuse unknown fields (a typo must not silently drop data);
 * response integers are plain `Integer`.
 */
import { Type as T, type Static, type TSchema } from '@sinclair/typebox'
import { t } from 'elysia'
import { MAX_ID, Nullable, Price, Timestamp, literalUnion } from '../platform/schemas'
import { OPERATIONS } from '../listings/schemas'
import { PROPERTY_TYPES } from '../listings/subtypes'
import { INVALID_PHONE_MESSAGE } from './phones'
import { invalidBudgetDetail } from './budget'
import { Event } from '../events/schemas'

const strict = { additionalProperties: false }

export const LEAD_TYPES = ['demandante', 'propietario'] as const
export const LEAD_URGENCIES = ['baja-urgencia', 'media-urgencia', 'alta-urgencia'] as const
export const OUTREACH_OUTCOMES = ['queued', 'skipped', 'not_configured'] as const
export type OutreachOutcome = (typeof OUTREACH_OUTCOMES)[number]

const LeadTypeSchema = literalUnion(LEAD_TYPES, { title: 'LeadType', description: '`demandante` (seeks a property) or `propietario` (owns one).' })
const LeadOperationSchema = literalUnion(OPERATIONS, { title: 'LeadOperation' })
const LeadUrgencySchema = literalUnion(LEAD_URGENCIES, { title: 'LeadUrgency' })
const PropertyTypeItem = literalUnion(PROPERTY_TYPES, { title: 'PropertyType' })

/** contract §15. */
export const MAX_LEAD_NOTES = 10_000
/**
 * contract §15: "≤ 8 KB serialised", read as 8,192 bytes of the value's compact JSON
 * (`JSON.stringify`) in UTF-8. No JSON Schema keyword measures that, so the lead rules apply it
 * (search-location.ts); the key bound below is what the schema itself can say.
 */
export const MAX_SEARCH_LOCATION_BYTES = 8192
/** Our choice: the documented shapes use one or two keys (`name`, `geometry`). */
export const MAX_SEARCH_LOCATION_KEYS = 20

const SEARCH_LOCATION_ABOUT = 'Where the lead searches: an object with `name`, or a map area with `geometry` (as the `locations` filter of GET /properties).'
/** As stored and answered: rows written before the request bound existed must still be readable. */
const SearchLocation = T.Record(T.String(), T.Unknown(), { title: 'SearchLocation', description: SEARCH_LOCATION_ABOUT, examples: [{ name: 'Valencia' }] })
const SearchLocationInput = T.Record(T.String(), T.Unknown(), {
  title: 'SearchLocationInput',
  description:
    `${SEARCH_LOCATION_ABOUT} At most ${MAX_SEARCH_LOCATION_KEYS} keys, and at most 8 KB: 8,192 ` +
    `bytes of its compact JSON in UTF-8 (contract §15); a larger one is a 422 naming this field.`,
  maxProperties: MAX_SEARCH_LOCATION_KEYS,
  examples: [{ name: 'Valencia' }],
})

const fields = {
  name: T.String({ minLength: 1, maxLength: 200 }),
  type: LeadTypeSchema,
  email: T.String({ format: 'email', maxLength: 254, description: 'Unique per business, compared case-insensitively.' }),
  phone: T.String({
    minLength: 1,
    maxLength: 64,
    description: 'Normalised to E.164; numbers without an international prefix are read as Spanish. Unique per business.',
  }),
  source: T.String({ maxLength: 200, description: 'Where the lead came from (a channel label).' }),
  operation: LeadOperationSchema,
  property_types: T.Array(PropertyTypeItem, { maxItems: PROPERTY_TYPES.length, uniqueItems: true }),
  rating: T.Integer({ minimum: 1, maximum: 5 }),
  urgency: LeadUrgencySchema,
  budget_max: Price('Maximum budget in euros (monthly rent for `alquiler`).'),
  min_bedrooms: T.Integer({ minimum: 0, maximum: 1000 }),
  search_location: SearchLocationInput,
  notes: T.String({ maxLength: MAX_LEAD_NOTES, description: 'Free text, up to 10,000 characters (contract §15).' }),
}
const optional = <S extends TSchema>(s: S) => T.Optional(s)
const clearable = <S extends TSchema>(s: S) => T.Optional(Nullable(s))

const LEAD_EXAMPLE = {
  name: 'Lucía Martín',
  email: 'lucia@example.com',
  phone: '+34600111222',
  source: 'web',
  operation: 'alquiler',
  property_types: ['apartamento'],
  rating: 4,
  urgency: 'media-urgencia',
  budget_max: 1100,
  min_bedrooms: 2,
  search_location: { name: 'Valencia' },
  notes: 'Prefiere planta alta.',
}

/** contract §4: `name` and any other lead field except id and timestamps; `type` defaults to `demandante`. */
export const LeadCreateRequest = T.Object(
  {
    name: fields.name,
    type: optional(fields.type),
    email: clearable(fields.email),
    phone: clearable(fields.phone),
    source: clearable(fields.source),
    operation: clearable(fields.operation),
    property_types: optional(fields.property_types),
    rating: clearable(fields.rating),
    urgency: clearable(fields.urgency),
    budget_max: clearable(fields.budget_max),
    min_bedrooms: clearable(fields.min_bedrooms),
    search_location: clearable(fields.search_location),
    notes: optional(fields.notes),
  },
  { ...strict, title: 'LeadCreateRequest', examples: [LEAD_EXAMPLE] },
)
export type LeadCreate = Static<typeof LeadCreateRequest>

/** contract §4: any field of the create body; only supplied fields change; `null` clears a nullable one. */
export const LeadUpdateRequest = T.Object(
  { ...LeadCreateRequest.properties, name: optional(fields.name) },
  {
    ...strict,
    title: 'LeadUpdateRequest',
    examples: [
      { rating: 5, urgency: 'alta-urgencia' },
      { email: null, phone: '600111333' },
    ],
  },
)
export type LeadUpdate = Static<typeof LeadUpdateRequest>

export const Lead = T.Object(
  {
    id: T.Integer(),
    type: LeadTypeSchema,
    name: T.String(),
    email: Nullable(T.String()),
    phone: Nullable(T.String({ description: 'E.164.' })),
    source: Nullable(T.String()),
    operation: Nullable(LeadOperationSchema),
    property_types: T.Array(PropertyTypeItem),
    rating: Nullable(T.Integer({ minimum: 1, maximum: 5 })),
    urgency: Nullable(LeadUrgencySchema),
    budget_max: Nullable(T.Number({ description: 'Euros.' })),
    min_bedrooms: Nullable(T.Integer()),
    search_location: Nullable(SearchLocation),
    notes: T.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    title: 'Lead',
    examples: [{ id: 42, type: 'demandante', ...LEAD_EXAMPLE, created_at: '2026-11-01T10:00:00.000Z', updated_at: '2026-11-02T09:30:00.000Z' }],
  },
)
/** The lead object of contract §4 as answered by list and retrieve. */
export type LeadView = Static<typeof Lead>

export const LeadDetailResponse = T.Object({ status: T.Literal('ok'), data: Lead, authenticated_as: T.String() }, { title: 'LeadDetailResponse' })
export const LeadListResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Array(Lead),
    count: T.Integer({ description: 'Total matching across all pages.' }),
    limit: T.Integer(),
    offset: T.Integer(),
    authenticated_as: T.String(),
  },
  { title: 'LeadListResponse' },
)

/** Query of GET /leads (api-spec §4.7, §8; contract §4). Unknown parameters are ignored. */
export const LeadListQuery = t.Object(
  {
    limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_ID, default: 0 })),
    type: t.Optional(literalUnion(LEAD_TYPES)),
    phone: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 64,
        description: 'Normalised like stored phones before comparing (`600111222` finds `+34600111222`); a value that is not a valid number is a 422.',
      }),
    ),
    email: t.Optional(t.String({ minLength: 1, maxLength: 254, description: 'Case-insensitive exact match.' })),
    updated_since: t.Optional(
      t.String({
        maxLength: 64,
        description:
          'ISO 8601 date or date-time (`2026-11-01` or `2026-11-01T10:00:00Z`; no offset means UTC): leads updated at or after it. Anything else is a 422.',
        examples: ['2026-11-01T10:00:00Z'],
      }),
    ),
  },
  { additionalProperties: true },
)
export type LeadListParams = Static<typeof LeadListQuery>

// ---- rental ingest (api-spec §4.11) ----

/**
 * The form's fields are free text (api-spec §4.11), so their bounds are ours, set well above what
 * a landing form sends: an over-long field is a 422 naming it, and the lead is lost, so a bound
 * that a real form could reach would cost leads. Two constraints shape them: every phone field
 * gets the same room (a junk `phoneRaw` must not refuse a lead whose `phone` is good), and the
 * notes composed from `sourcePage` and the `search` texts stay within the lead notes bound
 * (MAX_LEAD_NOTES): 2,000 + 3 × 200 + 3 × 500 + 200 + 5,000 characters of values, plus labels.
 */
const formText = (description: string, maxLength: number) => T.Optional(Nullable(T.String({ maxLength, description })))
const PHONE_TEXT = 200

export const RentalIngestRequest = T.Object(
  {
    id: T.String({ maxLength: 200, description: "Caller's submission id; required, not stored." }),
    createdAt: T.String({ maxLength: 64, description: 'Submission time (ISO 8601); required, not stored (and so not checked beyond being a string).' }),
    source: T.String({ maxLength: 200, description: 'Stored as the lead source (e.g. a channel label).' }),
    sourcePage: T.String({ maxLength: 2000, description: 'URL of the form; written to the notes.' }),
    contact: T.Object(
      {
        name: T.String({ minLength: 1, maxLength: 200, description: 'Stored as the lead name.' }),
        phone: T.String({ maxLength: PHONE_TEXT, description: 'Include the international prefix; numbers without one are read as Spanish.' }),
        phoneRaw: formText('Phone as typed; used only when no other phone field is a valid number.', PHONE_TEXT),
        areaCode: formText('International prefix such as `+34`; with `phoneNumber`, tried first.', PHONE_TEXT),
        phoneNumber: formText('National number without prefix.', PHONE_TEXT),
        phoneE164: formText('E.164 phone; tried after `areaCode` + `phoneNumber`.', PHONE_TEXT),
      },
      { ...strict, title: 'RentalIngestContact' },
    ),
    search: T.Object(
      {
        budget: formText(
          '`<n>` or `<min>-<max>` whole euros (spaces around `-` allowed); the upper ' +
            'bound becomes `budget_max`. Blank or missing: no budget. Anything else: 500.',
          200,
        ),
        entryDate: formText('Free text (`YYYY-MM-DD` recommended); notes.', 200),
        exitDate: formText('Free text; notes.', 200),
        people: formText('Number of occupants; notes.', 200),
        area: formText('Preferred area, free text; notes.', 500),
        habs: formText('Minimum bedrooms: a whole number becomes `min_bedrooms`; the raw text goes to the notes either way.', 200),
        pets: formText('Notes.', 500),
        workSituation: formText('Notes.', 500),
        location: T.Optional(Nullable(SearchLocationInput)),
        freeText: formText('Notes (line breaks kept).', 5000),
      },
      { ...strict, title: 'RentalIngestSearch', description: 'Every field optional; `null` is the same as missing.' },
    ),
  },
  {
    ...strict,
    title: 'RentalIngestRequest',
    examples: [
      {
        id: 'sub_8f2c1a',
        createdAt: '2026-11-01T10:00:00Z',
        source: 'landing-alquiler',
        sourcePage: 'https://example.com/alquiler-valencia',
        contact: { name: 'Lucía Martín', phone: '600111222', phoneRaw: '600 111 222', areaCode: '+34', phoneNumber: '600111222', phoneE164: '+34600111222' },
        search: {
          budget: '800-1100',
          entryDate: '2026-12-01',
          people: '2',
          area: 'Ruzafa',
          habs: '2',
          pets: 'un gato',
          workSituation: 'Indefinido',
          location: { name: 'Valencia' },
          freeText: 'Busco piso luminoso.',
        },
      },
    ],
  },
)
export type RentalIngest = Static<typeof RentalIngestRequest>

export const RentalIngestResponse = T.Object(
  { status: T.Literal('ok'), authenticated_as: T.String({ description: 'Name of the business owning the key.' }) },
  {
    title: 'RentalIngestResponse',
    description: 'No lead id: the lead is persisted (and de-duplicated on the primary phone) after the answer.',
    examples: [{ status: 'ok', authenticated_as: 'Inmobiliaria Sol' }],
  },
)

/** Examples of the two documented ingest refusals, for the OpenAPI document. */
export const INGEST_PHONE_PROBLEM_EXAMPLE = {
  type: 'urn:problem-type:validation',
  title: 'Unprocessable Content',
  status: 422,
  detail: INVALID_PHONE_MESSAGE,
  code: 'validation',
  request_id: '6b0e3c1e-2f4a-4d8e-9a51-0c7d3f9b2e10',
  errors: [{ loc: ['body', 'contact', 'phone'], msg: INVALID_PHONE_MESSAGE, type: 'phone_invalid' }],
}
export const INGEST_BUDGET_PROBLEM_EXAMPLE = {
  type: 'urn:problem-type:invalid-budget',
  title: 'Internal Server Error',
  status: 500,
  detail: invalidBudgetDetail('1.200 €'),
  code: 'invalid_budget',
  request_id: '6b0e3c1e-2f4a-4d8e-9a51-0c7d3f9b2e10',
}

// ---- contact-form inquiries (api-spec §4.12, contract §4.2) ----
// The lead enums and ranges are those of the lead object (contract §4).

export const InquiryContact = T.Object(
  {
    name: T.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Name of the person writing in; not only spaces.' }),
    email: T.Optional(
      T.Union([T.String({ format: 'email', maxLength: 254 }), T.Null()], {
        description: 'Matched case-insensitively against existing contacts. `null` is the same as leaving it out.',
      }),
    ),
    phone: T.Optional(
      T.Union([T.String({ minLength: 1, maxLength: 64 }), T.Null()], {
        description:
          'Any common spelling; normalised to E.164 (numbers without a prefix are read ' +
          'as Spanish). An invalid number is a 422. `null` is the same as leaving it out.',
      }),
    ),
  },
  { ...strict, title: 'InquiryContact', description: 'At least one of `email` and `phone` is required (422 otherwise, `loc` `["body","contact"]`).' },
)

export const InquiryLead = T.Object(
  {
    type: T.Optional(literalUnion(LEAD_TYPES, { description: 'Default `demandante`.' })),
    operation: T.Optional(literalUnion(OPERATIONS)),
    property_types: T.Optional(
      T.Array(literalUnion(PROPERTY_TYPES), { uniqueItems: true, maxItems: PROPERTY_TYPES.length, description: 'Property type keys (api-spec §2.1).' }),
    ),
    rating: T.Optional(T.Integer({ minimum: 1, maximum: 5 })),
    urgency: T.Optional(literalUnion(LEAD_URGENCIES)),
    budget_max: T.Optional(Price('Euros.')),
    min_bedrooms: T.Optional(T.Integer({ minimum: 0, maximum: 1000 })),
    notes: T.Optional(T.String({ maxLength: MAX_LEAD_NOTES, description: 'Free text, up to 10,000 characters (contract §15).' })),
  },
  {
    ...strict,
    title: 'InquiryLead',
    description:
      'Fields of the contact created when nobody with this phone or email exists yet ("full control over ' +
      'the created lead"). Ignored when the contact already exists: an existing contact is never modified.',
  },
)

export const LeadInquiryRequest = T.Object(
  {
    contact: InquiryContact,
    message: T.String({ minLength: 1, maxLength: 5000 }),
    property_id: T.Optional(
      T.Integer({
        minimum: 1,
        maximum: MAX_ID,
        description: "A property of this business (draft or published). Another business's or a missing id is a 422 on this field.",
      }),
    ),
    source: T.Optional(
      T.String({ minLength: 1, maxLength: 200, description: 'Channel label, e.g. `web-contact-form`. Becomes the source of a newly created contact.' }),
    ),
    source_page: T.Optional(
      T.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2000, description: 'http(s) URL of the page the form was sent from.' }),
    ),
    lead: T.Optional(InquiryLead),
    outreach: T.Optional(
      T.Boolean({
        default: true,
        description:
          'Deliver the inquiry to the business\'s outreach endpoint (default true). `false` answers `"skipped"` whether or not an endpoint is configured.',
      }),
    ),
  },
  {
    ...strict,
    title: 'LeadInquiryRequest',
    examples: [
      {
        contact: { name: 'Ana García', email: 'ana@example.com', phone: '+34 600 111 222' },
        message: '¿Sigue disponible el ático? Me gustaría visitarlo esta semana.',
        property_id: 42,
        source: 'web-contact-form',
        source_page: 'https://inmobiliaria.example/propiedades/42',
        lead: {
          type: 'demandante',
          operation: 'venta',
          property_types: ['apartamento'],
          rating: 4,
          urgency: 'media-urgencia',
          budget_max: 300000,
          min_bedrooms: 2,
        },
      },
    ],
  },
)
export type LeadInquiryInput = Static<typeof LeadInquiryRequest>

export const LeadInquiryResponse = T.Object(
  {
    status: T.Literal('ok'),
    inquiry_id: T.Integer({ minimum: 1 }),
    lead_id: T.Integer({ minimum: 1, description: 'The contact the inquiry is attached to (new or existing).' }),
    lead_created: T.Boolean({ description: 'True when no contact with this phone or email existed and one was created.' }),
    outreach: literalUnion(OUTREACH_OUTCOMES, {
      description:
        '`queued`: a delivery to the outreach endpoint was recorded and queued. `skipped`: the request ' +
        'said `outreach: false`. `not_configured`: the business has no enabled outreach endpoint.',
    }),
    authenticated_as: T.String({ description: 'Name of the business owning the key.' }),
  },
  {
    title: 'LeadInquiryResponse',
    examples: [{ status: 'ok', inquiry_id: 17, lead_id: 311, lead_created: true, outreach: 'queued', authenticated_as: 'Inmobiliaria Sol' }],
  },
)
export type LeadInquiryAnswer = Static<typeof LeadInquiryResponse>

// ---- data-subject rights (contract §13, §15) ----------------------------------------------------

export const EXPORT_INQUIRY_OUTREACH = ['queued', 'delivered', 'failed', 'skipped', 'not_configured'] as const

export const LeadExportInquiry = T.Object(
  {
    id: T.Integer({ minimum: 1 }),
    lead_id: T.Integer({ minimum: 1 }),
    property_id: Nullable(T.Integer()),
    message: T.String(),
    source: Nullable(T.String()),
    source_page: Nullable(T.String()),
    outreach: literalUnion(EXPORT_INQUIRY_OUTREACH, {
      description:
        "The state of the inquiry's outreach delivery (`queued` while pending); without " +
        'a delivery, `skipped` (the request said `outreach: false`) or `not_configured`.',
    }),
    created_at: Timestamp,
    contact: T.Object(
      { name: T.String(), email: Nullable(T.String()), phone: Nullable(T.String()) },
      { description: 'The person as they wrote in with this inquiry.' },
    ),
  },
  { title: 'LeadExportInquiry' },
)

export const LeadExportResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Object({
      lead: Lead,
      inquiries: T.Array(LeadExportInquiry, { description: 'Newest first.' }),
      outreach_deliveries: T.Array(
        T.Object({ id: T.String(), inquiry_id: T.Integer(), state: T.String(), attempts: T.Integer({ minimum: 0 }) }, { title: 'LeadExportOutreachDelivery' }),
      ),
      events: T.Array(Event, { description: 'The stored events about the lead and its inquiries (kept 30 days), ascending by sequence.' }),
    }),
    authenticated_as: T.String(),
  },
  { title: 'LeadExportResponse' },
)
export type LeadExport = Static<typeof LeadExportResponse>['data']

// ---- a lead's inquiries, read back (contract §9.4) ----

export const INQUIRY_OUTREACH_STATES = ['queued', 'delivered', 'failed', 'skipped', 'not_configured'] as const

export const Inquiry = T.Object(
  {
    id: T.Integer({ minimum: 1 }),
    lead_id: T.Integer({ minimum: 1 }),
    property_id: Nullable(T.Integer({ minimum: 1, description: 'Null when none was given, or the property was deleted since.' })),
    message: T.String(),
    source: Nullable(T.String()),
    source_page: Nullable(T.String()),
    outreach: literalUnion(INQUIRY_OUTREACH_STATES, {
      description:
        '`queued` (its delivery to the outreach endpoint is pending), `delivered`, `failed` (retries exhausted), `skipped` ' +
        '(`outreach: false`, or the endpoint was disabled before delivery) or `not_configured` (no enabled endpoint when it arrived).',
    }),
    created_at: Timestamp,
  },
  {
    title: 'Inquiry',
    examples: [
      {
        id: 17,
        lead_id: 311,
        property_id: 42,
        message: '¿Sigue disponible el ático?',
        source: 'web-contact-form',
        source_page: 'https://inmobiliaria.example/propiedades/42',
        outreach: 'delivered',
        created_at: '2026-11-02T09:30:00.000Z',
      },
    ],
  },
)
export type InquiryView = Static<typeof Inquiry>

export const InquiryListQuery = t.Object(
  {
    limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_ID, default: 0 })),
  },
  { additionalProperties: true },
)
export type InquiryListParams = Static<typeof InquiryListQuery>

export const InquiryListResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Array(Inquiry, { description: 'Newest first.' }),
    count: T.Integer({ description: 'Total across all pages.' }),
    limit: T.Integer(),
    offset: T.Integer(),
    authenticated_as: T.String({ description: 'Name of the business owning the key.' }),
  },
  { title: 'InquiryListResponse' },
)
