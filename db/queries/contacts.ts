/**
 * Data access for `contacts` (leads, contract §4). Duplicates are decided by the unique indexes
 * `contacts_business_phone_uq` (business_id, phone) and `contacts_business_email_uq`
 * (business_id, lower(email)), never by a look-up before writing, so the rule holds across any
 * number of API and worker replicas.
 */
import { and, count, eq, getTableColumns, gte, isNotNull, sql as dsql, type SQL } from 'drizzle-orm'
import { isUniqueViolation, type Db } from '../client'
import { contacts, type ContactRow } from '../schema'

export const PHONE_UNIQUE = 'contacts_business_phone_uq'
export const EMAIL_UNIQUE = 'contacts_business_email_uq'

type ContactInsert = typeof contacts.$inferInsert

/** The columns a create or update may set; the business, id and timestamps are this file's. */
export type ContactColumns = Partial<Omit<ContactInsert, 'id' | 'businessId' | 'createdAt' | 'updatedAt'>>

/**
 * The columns an ingested lead sets, in the order the insert lists them: the row type and every
 * column list of `insertIngestContacts` are derived from this and the table.
 */
const INGEST_COLUMNS = [
  'businessId',
  'type',
  'name',
  'phone',
  'source',
  'operation',
  'propertyTypes',
  'rating',
  'urgency',
  'budgetMax',
  'minBedrooms',
  'searchLocation',
  'notes',
] as const

/**
 * One row of `insertIngestContacts`, every column explicit (the JSON keys the statement reads).
 * `receivedAt` (ISO 8601) becomes created_at and updated_at.
 */
export type IngestContactRow = Required<Pick<ContactInsert, (typeof INGEST_COLUMNS)[number]>> & { phone: string; receivedAt: string }

/**
 * The statement's three lists, from the table's own column names and types: the columns written,
 * the record's fields read, and the record's definition (`"budgetMax" double precision, …`).
 */
const ingestSql = (() => {
  const table = getTableColumns(contacts)
  const quoted = (key: string) => `"${key}"`
  return {
    columns: dsql.raw([...INGEST_COLUMNS.map((key) => table[key].name), 'created_at', 'updated_at'].join(', ')),
    values: dsql.raw([...INGEST_COLUMNS.map((key) => `r.${quoted(key)}`), 'r."receivedAt"', 'r."receivedAt"'].join(', ')),
    record: dsql.raw([...INGEST_COLUMNS.map((key) => `${quoted(key)} ${table[key].getSQLType()}`), '"receivedAt" timestamptz'].join(', ')),
  }
})()

export type WriteResult = { id: number } | { duplicateOf: number } | null

/**
 * Runs one write in a savepoint so a unique violation does not abort the caller's transaction
 * (PATCH /leads runs inside one), then reads the id of the contact that holds the
 * phone or email. The violated constraint says which; the existing row is committed (PostgreSQL
 * waits for a concurrent inserter before reporting the violation), so it is visible here.
 */
async function writeOrDuplicate(db: Db, businessId: number, columns: ContactColumns, write: (sp: Db) => Promise<number | null>): Promise<WriteResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      const id = await db.transaction((sp) => write(sp))
      return id === null ? null : { id }
    } catch (error) {
      const onPhone = isUniqueViolation(error, PHONE_UNIQUE)
      if (!onPhone && !isUniqueViolation(error, EMAIL_UNIQUE)) throw error
      const held = heldBy(columns, onPhone)
      if (!held) throw error
      const existing = await findDuplicateId(db, businessId, held)
      if (existing !== null) return { duplicateOf: existing }
      // The holder changed its phone/email (or was deleted) in between: the write may now succeed.
      if (attempt >= 2) throw error
    }
  }
}

/** The value behind the violated constraint (the write set it, so it is there). */
function heldBy(columns: ContactColumns, onPhone: boolean): { phone: string } | { email: string } | null {
  if (onPhone) return typeof columns.phone === 'string' ? { phone: columns.phone } : null
  return typeof columns.email === 'string' ? { email: columns.email } : null
}

async function findDuplicateId(db: Db, businessId: number, by: { phone: string } | { email: string }): Promise<number | null> {
  const where =
    'phone' in by
      ? and(eq(contacts.businessId, businessId), eq(contacts.phone, by.phone)) // contacts_business_phone_uq
      : and(eq(contacts.businessId, businessId), isNotNull(contacts.email), dsql`lower(${contacts.email}) = lower(${by.email})`) // contacts_business_email_uq
  const [row] = await db.select({ id: contacts.id }).from(contacts).where(where).limit(1)
  return row?.id ?? null
}

/**
 * Inserts a contact and returns its row, or the id of the contact already holding the phone or
 * email. One statement and no savepoint: `on conflict do nothing` covers both unique indexes
 * (it waits for a concurrent inserter of the same phone or email to finish, as a unique
 * violation would), so a duplicate ends the statement without aborting the caller's transaction.
 * The row's lead.created goes to the outbox from the table's trigger (migration 0028), as for every insert.
 */
export async function insertContact(
  db: Db,
  businessId: number,
  columns: ContactColumns & { name: string },
): Promise<{ row: ContactRow } | { duplicateOf: number }> {
  for (let attempt = 0; ; attempt++) {
    const [row] = await db
      .insert(contacts)
      .values({ ...columns, businessId })
      .onConflictDoNothing()
      .returning()
    if (row) return { row }
    const existing =
      (columns.phone ? await findDuplicateId(db, businessId, { phone: columns.phone }) : null) ??
      (columns.email ? await findDuplicateId(db, businessId, { email: columns.email }) : null)
    if (existing !== null) return { duplicateOf: existing }
    // The holder changed its phone/email (or was deleted) in between: the insert may now succeed.
    if (attempt >= 2) throw new Error('contact insert: a conflicting contact kept changing')
  }
}

/** Supplied columns only; bumps updated_at. null when the id is not a contact of this business. */
export function updateContact(db: Db, businessId: number, id: number, columns: ContactColumns): Promise<WriteResult> {
  return writeOrDuplicate(db, businessId, columns, async (sp) => {
    const [row] = await sp
      .update(contacts)
      .set({ ...columns, updatedAt: dsql`now()` })
      .where(and(eq(contacts.id, id), eq(contacts.businessId, businessId)))
      .returning({ id: contacts.id })
    return row?.id ?? null
  })
}

export async function findContact(db: Db, businessId: number, id: number): Promise<ContactRow | null> {
  const [row] = await db
    .select()
    .from(contacts)
    .where(and(eq(contacts.id, id), eq(contacts.businessId, businessId)))
  return row ?? null
}

export interface ContactListQuery {
  businessId: number
  type?: 'demandante' | 'propietario'
  /** E.164, already normalised. */
  phone?: string
  email?: string
  updatedSince?: Date
  limit: number
  offset: number
}

/**
 * Newest first, ties on id (contract §4), so offset pages never repeat or skip a row. Plans:
 * unfiltered pages walk contacts_business_created_idx (business_id, created_at desc nulls last, id desc
 * nulls last: the ORDER BY spells `nulls last` so it matches the index, though neither is ever null);
 * phone and email hit the unique indexes; updated_since uses contacts_business_updated_idx.
 */
export async function listContacts(db: Db, q: ContactListQuery): Promise<{ rows: ContactRow[]; count: number }> {
  const conditions: SQL[] = [eq(contacts.businessId, q.businessId)]
  if (q.type !== undefined) conditions.push(eq(contacts.type, q.type))
  if (q.phone !== undefined) conditions.push(eq(contacts.phone, q.phone))
  if (q.email !== undefined) conditions.push(isNotNull(contacts.email), dsql`lower(${contacts.email}) = lower(${q.email})`)
  if (q.updatedSince !== undefined) conditions.push(gte(contacts.updatedAt, q.updatedSince))
  const where = and(...conditions)
  const [rows, [{ n }]] = await Promise.all([
    db
      .select()
      .from(contacts)
      .where(where)
      .orderBy(dsql`${contacts.createdAt} desc nulls last`, dsql`${contacts.id} desc nulls last`)
      .limit(q.limit)
      .offset(q.offset),
    db.select({ n: count() }).from(contacts).where(where),
  ])
  return { rows, count: n }
}

/**
 * The one insert of accepted rental leads, used by the `lead-ingest` worker and by the API's
 * fallback when Redis cannot take the batch: one multi-row statement, `ON CONFLICT DO NOTHING`
 * on (business_id, phone), so a duplicate creates and updates nothing and running a batch twice
 * changes nothing. Ingest never sets an email, so the email index cannot conflict. Rows are
 * inserted in (business, phone) order so concurrent batches take index locks in the same order
 * and cannot deadlock. The caller keeps one row per (business, phone): among duplicates in one
 * statement, which one the sort puts first (and so inserts) is not defined.
 * Rows of a business deleted in the meantime are dropped (the join), not retried forever.
 * Returns the contacts created (id, business, phone), in (business, phone) order.
 */
export async function insertIngestContacts(db: Db, rows: readonly IngestContactRow[]): Promise<{ id: number; businessId: number; phone: string }[]> {
  if (rows.length === 0) return []
  const inserted = await db.execute<{ id: number; business_id: number; phone: string }>(dsql`
    insert into contacts (${ingestSql.columns})
    select ${ingestSql.values}
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(${ingestSql.record})
    join businesses b on b.id = r."businessId"
    order by r."businessId", r.phone
    on conflict (business_id, phone) where phone is not null do nothing
    returning id, business_id, phone`)
  return [...inserted].map((r) => ({ id: r.id, businessId: r.business_id, phone: r.phone }))
}

/** The contact of this business, locked until the transaction ends (erasure, contract §13). */
export async function findContactForUpdate(db: Db, businessId: number, id: number): Promise<ContactRow | null> {
  const [row] = await db
    .select()
    .from(contacts)
    .where(and(eq(contacts.id, id), eq(contacts.businessId, businessId)))
    .for('update')
  return row ?? null
}

/**
 * Erasure (contract §13): deletes the contact; its inquiries, their outreach deliveries and
 * attempts go with it (cascade), and properties it owned keep no owner (set null).
 */
export async function deleteContact(db: Db, businessId: number, id: number): Promise<boolean> {
  const rows = await db
    .delete(contacts)
    .where(and(eq(contacts.id, id), eq(contacts.businessId, businessId)))
    .returning({ id: contacts.id })
  return rows.length > 0
}
