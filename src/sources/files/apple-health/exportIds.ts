import { hash } from 'node:crypto';
import { flat } from './flatString.js';

/**
 * export.xml gives records no identifier. Each gets one derived from what it is: its kind and
 * type, start and end as instants (not as written: the offsets are the exporting phone's, so the
 * same sample exported in another zone reads differently), value, unit and source name. The same
 * sample in a later export gets the same id, which is what lets a newer export that holds an
 * older one count as `unchanged` (contracts §13).
 */
export function contentId(prefix: string, parts: readonly (string | number | null | undefined)[]): string {
  let text = '';
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    text += i === 0 ? '' : '\u0000';
    if (p !== null && p !== undefined) text += String(p);
  }
  // One-shot hashing: a third of the cost of createHash/update/digest, and this runs per record.
  // Flat: sleep samples keep their ids for the whole upload, and a slice would keep the whole digest.
  return flat(`${prefix}:${hash('sha256', text, 'hex').slice(0, 32)}`);
}
