import { createHash } from 'node:crypto';

/** A UUID (version 4 layout) named by its parts: the same generated object always has the same id. */
export function stableUuid(...parts: (string | number)[]): string {
  const h = createHash('sha256').update(parts.join('|')).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
