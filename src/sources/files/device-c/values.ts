import { EXCERPT_BYTES } from './limits.js';

/** Reading a row's values, and cutting excerpts. */

export function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

export function intOrNull(v: unknown): number | null {
  return isInt(v) ? v : null;
}

export function strOrNull(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

export function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

export function isoOf(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}

export function isoOrRaw(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  return Number.isNaN(d.getTime()) ? String(epochSeconds) : d.toISOString();
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function printableExcerpt(payload: Buffer): string {
  return truncateBytes(payload.subarray(0, 256).toString('latin1').replace(/[^\x20-\x7e]/g, '.'));
}

export function truncateBytes(s: string, max = EXCERPT_BYTES): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= max) return s;
  // Cut on a character boundary.
  let end = max;
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString('utf8');
}
