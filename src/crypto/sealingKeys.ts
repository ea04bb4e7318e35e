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

/**
 * What a keyring seals: the HKDF info its keys are derived with (one key per purpose, so a sealed
 * item of one kind never opens as another) and what its errors call a sealed item.
 */
export type SealingPurpose = { info: string; name: string };

export const DATA_KEY_SEALING: SealingPurpose = { info: 'wellstream data-key wrap v1', name: 'data key' };

type WrapKey = { kid: string; key: Buffer };

function wrapKeyOf(sealingKey: Uint8Array, info: string): WrapKey {
  if (sealingKey.length !== 32) throw new SealingKeyError('a sealing key is 32 bytes');
  // A derived key, never SEALING_KEY itself: the same secret also keys cursor MACs (src/shared/cursor.ts).
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(sealingKey), Buffer.alloc(0), info, 32));
  const kid = createHmac('sha256', key).update('kid').digest('hex').slice(0, 16);
  return { kid, key };
}

/**
 * SEALING_KEY and, during a rotation, the keys it replaced (SEALING_KEY_PREVIOUS). New items (data
 * keys, webhook signing secrets) are sealed with the current key only; any of them opens what it
 * sealed. The additional data binds a sealed item to its id, so a sealed key copied onto another
 * user's key stream, or a secret onto another endpoint, does not open there.
 */
export class SealingKeyring {
  private readonly current: WrapKey;
  private readonly byKid = new Map<string, WrapKey>();

  constructor(
    current: Uint8Array,
    previous: readonly Uint8Array[] = [],
    private readonly purpose: SealingPurpose = DATA_KEY_SEALING,
  ) {
    this.current = wrapKeyOf(current, purpose.info);
    for (const k of [this.current, ...previous.map((p) => wrapKeyOf(p, purpose.info))]) if (!this.byKid.has(k.kid)) this.byKid.set(k.kid, k);
  }

  /** Identifies the current sealing key (never the key): what a reseal compares against. */
  get currentKid(): string {
    return this.current.kid;
  }

  seal(plain: Buffer, keyId: string): SealedKey {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(keyId));
    const ct = Buffer.concat([cipher.update(plain), cipher.final()]);
    return { kid: this.current.kid, iv: iv.toString('base64'), ct: ct.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
  }

  open(sealed: SealedKey, keyId: string): Buffer {
    const wrap = this.byKid.get(sealed.kid);
    if (!wrap) throw new SealingKeyError(`${this.purpose.name} ${keyId} is sealed with a sealing key this instance does not hold (${sealed.kid}); during a rotation the old key belongs in SEALING_KEY_PREVIOUS`);
    const opened = openWith(wrap.key, sealed, keyId);
    if (!opened) throw new SealingKeyError(`${this.purpose.name} ${keyId} does not open with sealing key ${sealed.kid}`);
    return opened;
  }

  /**
   * An item sealed before sealed items named their key: every held key is tried, the current one
   * first. Base64 fields may be in either alphabet.
   */
  openUnnamed(sealed: Omit<SealedKey, 'kid'>, keyId: string): Buffer {
    for (const wrap of this.byKid.values()) {
      const opened = openWith(wrap.key, sealed, keyId);
      if (opened) return opened;
    }
    throw new SealingKeyError(`${this.purpose.name} ${keyId} opens with none of the sealing keys this instance holds; during a rotation the old key belongs in SEALING_KEY_PREVIOUS`);
  }
}

/** Null when the key, the id or the bytes do not match (GCM authentication refuses them). */
function openWith(key: Buffer, sealed: Omit<SealedKey, 'kid'>, keyId: string): Buffer | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(keyId));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]);
  } catch {
    return null;
  }
}
