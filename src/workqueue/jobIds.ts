import { randomBytes } from 'node:crypto';

let lastMs = -1;
let counter = 0;

/**
 * Job ids: UUIDv7 whose 12 bits after the version count up within a millisecond (RFC 9562,
 * method 1), so the ids one process hands out sort in the order it enqueued: "then by id" is
 * first come, first served among jobs due at the same moment with the same priority.
 */
export function nextJobId(now: number): string {
  let ms = Math.max(now, lastMs);
  if (ms === lastMs) counter += 1;
  else counter = randomBytes(2).readUInt16BE(0) & 0x3ff;
  if (counter > 0xfff) {
    ms += 1;
    counter = 0;
  }
  lastMs = ms;
  const b = randomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (counter >> 8);
  b[7] = counter & 0xff;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
