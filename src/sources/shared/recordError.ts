/** A record as it arrived: a JSON object. */
export type Json = Record<string, unknown>;

/**
 * A record (or a part of one) that cannot be stored: its message becomes the rejected item's
 * reason. Any other exception is a bug and fails the job instead of rejecting the data.
 */
export class RecordError extends Error {}

/** An offending input as text, for a rejected item's excerpt: a string as is, anything else as JSON when it can be. */
export function textOf(v: unknown): string {
  try {
    return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  } catch {
    return String(v);
  }
}

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
