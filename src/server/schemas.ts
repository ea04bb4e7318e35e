import { z } from 'zod';
import { TIME_PARAM_SYNTAX } from '../shared/timeWindow.js';

/** Shared request and response pieces; route files keep their own schemas beside them. */
export const Limit = z.coerce.number().int().min(1).max(1000).default(100).describe('Page size, 1 to 1000 (default 100)');
export const Cursor = z.string().min(1).max(2048).describe('Opaque cursor from a previous page (next_cursor)');
export const PageQuery = z.object({ cursor: Cursor.optional(), limit: Limit });

export const pageOf = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable().describe('Pass back as `cursor` until null') });

export const Problem = z
  .object({
    type: z.literal('about:blank'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    request_id: z.string(),
  })
  .describe('RFC 9457 problem details');

export const DateTime = z.string().describe('RFC 3339 date-time, UTC');
export const Uuid = z.string().describe('UUID');
/** `start`/`end` of a window (spec "Conventions" 2): its syntax checked here, its calendar by parseTimeParam; `description` says which end. */
export const TimeParam = (description: string) => z.string().regex(TIME_PARAM_SYNTAX, 'must be an RFC 3339 time or a YYYY-MM-DD date').describe(description);
export const IdempotencyKeyHeader = z.object({
  'idempotency-key': z.string().min(1).max(255).optional().describe('1 to 255 characters; replays the first answer for 24 hours'),
});

/** Fills in the error answers every authenticated route can give, so the OpenAPI document lists them. */
export function withProblems<R extends Record<number, z.ZodTypeAny>>(responses: R, statuses: number[] = [400, 401, 403, 404]) {
  const out: Record<number, z.ZodTypeAny> = { ...responses };
  for (const s of statuses) out[s] ??= Problem;
  return out as R;
}
