/**
 * A block's `external_id` column when every sample's is a UUID written in one case (Packed `x`,
 * sampleBlock.ts): the UUIDs' 16 bytes one after the other in one base64url string, and back to
 * the exact text. HealthKit's ids are upper-case UUIDs, half of a block's `data` as quoted text
 * (issue 38).
 */
const UPPER_UUID = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Characters of a UUID's text. */
export const UUID_TEXT = 36;

/** `values` packed as Packed `x` (and whether upper case) when every one is a UUID and all are in one case, else null. */
export function packUuids(values: readonly unknown[]): { x: string; upper: boolean } | null {
  const first = values[0];
  if (typeof first !== 'string') return null;
  const form = UPPER_UUID.test(first) ? UPPER_UUID : LOWER_UUID.test(first) ? LOWER_UUID : null;
  if (!form) return null;
  for (const v of values) if (typeof v !== 'string' || !form.test(v)) return null;
  return { x: Buffer.from((values as string[]).join('').replaceAll('-', ''), 'hex').toString('base64url'), upper: form === UPPER_UUID };
}

/**
 * Packed `x` back to the block's UUIDs, as one string of 36 characters a sample (a sample's is a
 * slice of it: no string of its own is built): made once for the block, the first time one is read.
 */
export function uuidText(x: string, upper: boolean): string {
  const bytes = Buffer.from(x, 'base64url');
  const n = bytes.length >> 4;
  const text = Buffer.allocUnsafe(n * UUID_TEXT);
  const digits = upper ? UPPER_HEX : LOWER_HEX;
  // Byte by byte into one ASCII buffer, made a string once: a regular expression's replace of the
  // block's hex (a string per group) cost a page more than the quoted ids' JSON.parse had.
  for (let j = 0, at = 0, b = 0; j < n; j++) {
    for (let i = 0; i < 16; i++, b++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = DASH;
      const v = bytes[b]!;
      text[at++] = digits[v >> 4]!;
      text[at++] = digits[v & 15]!;
    }
  }
  return text.toString('latin1');
}
const UPPER_HEX = Buffer.from('0123456789ABCDEF');
const LOWER_HEX = Buffer.from('0123456789abcdef');
const DASH = 0x2d;
