import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** A keyset value a cursor carries (a read store scalar). */
type Scalar = string | number | boolean | null;

export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
}

/**
 * Opaque, tamper-evident list cursors: the keyset values to continue after, MACed with a key
 * derived from the sealing key and bound to the list they came from (its scope: route, tenant,
 * filters). A forged, edited or foreign cursor is refused, never silently misread.
 */
export class CursorCodec {
  private readonly key: Buffer;

  constructor(sealingKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', sealingKey, Buffer.alloc(0), 'wellstream cursor v1', 32));
  }

  encode(values: readonly Scalar[], scope: string): string {
    const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
    return `${payload}.${this.mac(payload, scope)}`;
  }

  decode(cursor: string, scope: string): Scalar[] {
    const [payload, mac, extra] = cursor.split('.');
    if (!payload || !mac || extra !== undefined) throw new InvalidCursorError('malformed cursor');
    const expected = Buffer.from(this.mac(payload, scope));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new InvalidCursorError('cursor is not valid for this list');
    const values: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!Array.isArray(values)) throw new InvalidCursorError('malformed cursor');
    return values as Scalar[];
  }

  private mac(payload: string, scope: string): string {
    return createHmac('sha256', this.key).update(scope).update('\u0000').update(payload).digest('base64url').slice(0, 32);
  }
}
