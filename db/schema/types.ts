import { customType } from 'drizzle-orm/pg-core'

/** PostGIS `geography(Point,4326)`; written and read through SQL (ST_MakePoint), never parsed here. */
export const geographyPoint = customType<{ data: string; driverData: string }>({
  dataType() {
    return 'geography(Point,4326)'
  },
})
