/**
 * `search.budget` of the rental ingest (api-spec §4.11 rule 5, contract §8): a whole number
 * (`900`) or a range of whole numbers (`700-900`); the upper bound is the maximum monthly rent.
 *
 * Readings decided here (docs/leads.md):
 * - Surrounding whitespace and spaces around the `-` are allowed (`700 - 900`): forms type them.
 * - An empty or blank budget is the same as no budget (null): forms send "" for a blank field.
 * - A range written high-low (`900-700`) is still a range of whole numbers; its upper bound is
 *   the larger number.
 * - More than 15 digits cannot be stored exactly as a number and is malformed.
 * - An upper bound over 10,000,000,000 (contract §15 §3 prices: the bound of every `budget_max`)
 *   is malformed too: the one answer api-spec §4.11 rule 5 gives a budget that cannot become
 *   `budget_max`, rather than a 422 the form integrations it serves do not expect, or a lead
 *   stored without the budget it was sent with.
 * - Anything else (decimal separators `1.200`/`1200,50`, currency `€900`, words, signs, two
 *   dashes) is malformed and answers the documented 500.
 */
import { AppError } from '../platform/errors'
import { MAX_PRICE } from '../platform/schemas'

const BUDGET_RE = /^\s*(\d{1,15})(?:\s*-\s*(\d{1,15}))?\s*$/

export class InvalidBudgetError extends AppError {
  constructor(readonly raw: string) {
    super('invalid_budget', invalidBudgetDetail(raw))
    this.name = 'InvalidBudgetError'
  }
}

/** The problem detail of a malformed budget; the raw text is cut so a huge value stays readable. */
export function invalidBudgetDetail(raw: string): string {
  const shown = raw.length > 60 ? `${raw.slice(0, 60)}…` : raw
  return `Invalid budget ${JSON.stringify(shown)}: use a whole number or a range of whole numbers, e.g. "900" or "700-900"`
}

/** The maximum monthly rent (€) the budget allows, null when there is none; throws InvalidBudgetError when malformed. */
export function parseBudgetMax(raw: string | null | undefined): number | null {
  if (raw === null || raw === undefined || raw.trim() === '') return null
  const m = BUDGET_RE.exec(raw)
  if (!m) throw new InvalidBudgetError(raw)
  const low = Number(m[1])
  const max = m[2] === undefined ? low : Math.max(low, Number(m[2]))
  if (max > MAX_PRICE) throw new InvalidBudgetError(raw)
  return max
}
