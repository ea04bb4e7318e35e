/**
 * Retry-After is delta-seconds or an HTTP date (RFC 9110 §10.2.3): the seconds to wait from
 * `nowMs` (0 for a date already past), or null when the value is neither. Unbounded: each
 * caller caps it by its own rule (webhook deliveries by their retry schedule, provider pulls by
 * the sync engine's longest rate-limit wait).
 */
export function parseRetryAfter(value: string | string[] | null | undefined, nowMs: number): number | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
