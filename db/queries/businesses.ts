import { eq } from 'drizzle-orm'
import type { Db } from '../client'
import { businesses } from '../schema'

export async function createBusiness(db: Db, name: string) {
  const [row] = await db.insert(businesses).values({ name }).returning({ id: businesses.id, name: businesses.name })
  return row
}

export async function findBusiness(db: Db, id: number) {
  const [row] = await db.select().from(businesses).where(eq(businesses.id, id))
  return row ?? null
}
