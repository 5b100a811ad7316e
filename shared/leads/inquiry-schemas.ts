/**
 * TypeBox models of `POST /leads/inquiries` (api-spec §4.12, contract §4.2). Bodies refuse
 * unknown fields (contract §3.1: a typo must not silently drop data); the lead enums and
 * ranges are those of the lead object (contract §4).
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { MAX_ID, literalUnion } from '../platform/schemas'
import { PROPERTY_TYPES } from '../listings/subtypes'
import { OPERATIONS } from '../listings/schemas'

const strict = { additionalProperties: false }

export const LEAD_TYPES = ['demandante', 'propietario'] as const
export const URGENCIES = ['baja-urgencia', 'media-urgencia', 'alta-urgencia'] as const
export const OUTREACH_OUTCOMES = ['queued', 'skipped', 'not_configured'] as const

export const InquiryContact = T.Object(
  {
    name: T.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Name of the person writing in; not only spaces.' }),
    email: T.Optional(T.Union([T.String({ format: 'email', maxLength: 254 }), T.Null()], { description: 'Matched case-insensitively against existing contacts. `null` is the same as leaving it out.' })),
    phone: T.Optional(
      T.Union([T.String({ minLength: 1, maxLength: 64 }), T.Null()], {
        description: 'Any common spelling; normalised to E.164 (numbers without a prefix are read as Spanish). An invalid number is a 422. `null` is the same as leaving it out.',
      }),
    ),
  },
  { ...strict, title: 'InquiryContact', description: 'At least one of `email` and `phone` is required (422 otherwise, `loc` `["body","contact"]`).' },
)

export const InquiryLead = T.Object(
  {
    type: T.Optional(literalUnion(LEAD_TYPES, { description: 'Default `demandante`.' })),
    operation: T.Optional(literalUnion(OPERATIONS)),
    property_types: T.Optional(T.Array(literalUnion(PROPERTY_TYPES), { uniqueItems: true, maxItems: PROPERTY_TYPES.length, description: 'Property type keys (api-spec §2.1).' })),
    rating: T.Optional(T.Integer({ minimum: 1, maximum: 5 })),
    urgency: T.Optional(literalUnion(URGENCIES)),
    budget_max: T.Optional(T.Number({ minimum: 0, description: 'Euros.' })),
    min_bedrooms: T.Optional(T.Integer({ minimum: 0, maximum: 1000 })),
    notes: T.Optional(T.String({ maxLength: 10000 })),
  },
  {
    ...strict,
    title: 'InquiryLead',
    description: 'Fields of the contact created when nobody with this phone or email exists yet ("full control over the created lead"). Ignored when the contact already exists: an existing contact is never modified.',
  },
)

export const LeadInquiryRequest = T.Object(
  {
    contact: InquiryContact,
    message: T.String({ minLength: 1, maxLength: 5000 }),
    property_id: T.Optional(T.Integer({ minimum: 1, maximum: MAX_ID, description: 'A property of this business (draft or published). Another business\'s or a missing id is a 422 on this field.' })),
    source: T.Optional(T.String({ minLength: 1, maxLength: 200, description: 'Channel label, e.g. `web-contact-form`. Becomes the source of a newly created contact.' })),
    source_page: T.Optional(T.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2000, description: 'http(s) URL of the page the form was sent from.' })),
    lead: T.Optional(InquiryLead),
    outreach: T.Optional(T.Boolean({ default: true, description: 'Deliver the inquiry to the business\'s outreach endpoint (default true). `false` answers `"skipped"` whether or not an endpoint is configured.' })),
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
        lead: { type: 'demandante', operation: 'venta', property_types: ['apartamento'], rating: 4, urgency: 'media-urgencia', budget_max: 300000, min_bedrooms: 2 },
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
      description: '`queued`: a delivery to the outreach endpoint was recorded and queued. `skipped`: the request said `outreach: false`. `not_configured`: the business has no enabled outreach endpoint.',
    }),
    authenticated_as: T.String({ description: 'Name of the business owning the key.' }),
  },
  {
    title: 'LeadInquiryResponse',
    examples: [{ status: 'ok', inquiry_id: 17, lead_id: 311, lead_created: true, outreach: 'queued', authenticated_as: 'Inmobiliaria Sol' }],
  },
)
export type LeadInquiryAnswer = Static<typeof LeadInquiryResponse>
