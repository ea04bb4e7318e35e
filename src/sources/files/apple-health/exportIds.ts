import { createHash } from 'node:crypto';

/**
 * export.xml gives records no identifier. Each gets one derived from what it is: its kind and
 * type, start and end as instants (not as written: the offsets are the exporting phone's, so the
 * same sample exported in another zone reads differently), value, unit and source name. The same
 * sample in a later export gets the same id, which is what lets a newer export that holds an
 * older one count as `unchanged` (contracts §13).
 */
export function contentId(prefix: string, parts: readonly (string | number | null | undefined)[]): string {
  const h = createHash('sha256');
  h.update(parts.map((p) => (p === null || p === undefined ? '' : String(p))).join('\u0000'));
  return `${prefix}:${h.digest('hex').slice(0, 32)}`;
}
