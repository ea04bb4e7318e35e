import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const SECRET_PREFIX = { admin: 'svc_ak_', tenantKey: 'svc_sk_', userToken: 'svc_ut_' } as const;
export type SecretKind = keyof typeof SECRET_PREFIX;

/** 43 base62 characters ≈ 256 bits; rejection sampling keeps every character uniform. */
export function randomBase62(length = 43): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(64)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export function newSecret(kind: SecretKind): string {
  return SECRET_PREFIX[kind] + randomBase62();
}

const KINDS = Object.entries(SECRET_PREFIX) as [SecretKind, string][];
const SECRET_BODY = /^[0-9A-Za-z]{43}$/;

/** Asked on every authenticated request: no prefix begins another, so the first that matches decides, and nothing is allocated but the body's slice. */
export function secretKindOf(secret: string): SecretKind | null {
  for (const [kind, prefix] of KINDS) {
    if (secret.startsWith(prefix)) return secret.length === prefix.length + 43 && SECRET_BODY.test(secret.slice(prefix.length)) ? kind : null;
  }
  return null;
}

/** One-shot `crypto.hash` (no Hash object): a third of createHash's cost, on every authenticated request. */
export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex');
}

/** Compares two hex digests in constant time. */
export function digestsEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && ba.length > 0 && timingSafeEqual(ba, bb);
}
