import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A data key as stored: sealed (AES-256-GCM) under a key derived from SEALING_KEY. `kid` names
 * the sealing key that sealed it, so that after a rotation the keyring knows which of its keys
 * opens it (docs/erasure.md, "Rotating SEALING_KEY").
 */
export type SealedKey = { kid: string; iv: string; ct: string; tag: string };

export class SealingKeyError extends Error {
  override name = 'SealingKeyError';
}

const WRAP_INFO = 'wellstream data-key wrap v1';

type WrapKey = { kid: string; key: Buffer };

function wrapKeyOf(sealingKey: Uint8Array): WrapKey {
  if (sealingKey.length !== 32) throw new SealingKeyError('a sealing key is 32 bytes');
  // A derived key, never SEALING_KEY itself: the same secret also keys cursor MACs (src/shared/cursor.ts).
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(sealingKey), Buffer.alloc(0), WRAP_INFO, 32));
  const kid = createHmac('sha256', key).update('kid').digest('hex').slice(0, 16);
  return { kid, key };
}

/**
 * SEALING_KEY and, during a rotation, the keys it replaced (SEALING_KEY_PREVIOUS). New data keys
 * are sealed with the current key only; any of them opens what it sealed. The additional data
 * binds a sealed key to its key id, so a sealed key copied onto another user's key stream does
 * not open there.
 */
export class SealingKeyring {
  private readonly current: WrapKey;
  private readonly byKid = new Map<string, WrapKey>();

  constructor(current: Uint8Array, previous: readonly Uint8Array[] = []) {
    this.current = wrapKeyOf(current);
    for (const k of [this.current, ...previous.map(wrapKeyOf)]) if (!this.byKid.has(k.kid)) this.byKid.set(k.kid, k);
  }

  /** Identifies the current sealing key (never the key): what a reseal compares against. */
  get currentKid(): string {
    return this.current.kid;
  }

  seal(dataKey: Buffer, keyId: string): SealedKey {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(keyId));
    const ct = Buffer.concat([cipher.update(dataKey), cipher.final()]);
    return { kid: this.current.kid, iv: iv.toString('base64'), ct: ct.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
  }

  open(sealed: SealedKey, keyId: string): Buffer {
    const wrap = this.byKid.get(sealed.kid);
    if (!wrap) throw new SealingKeyError(`data key ${keyId} is sealed with a sealing key this instance does not hold (${sealed.kid})`);
    const decipher = createDecipheriv('aes-256-gcm', wrap.key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(keyId));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]);
    } catch {
      throw new SealingKeyError(`data key ${keyId} does not open with sealing key ${sealed.kid}`);
    }
  }
}
