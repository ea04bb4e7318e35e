import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets the service must use again (provider client secrets, OAuth tokens, PKCE verifiers)
 * kept sealed under a key derived from SEALING_KEY: AES-256-GCM, a purpose string per use (so a
 * value sealed for one use never opens as another) and the owner bound as associated data (a
 * sealed value copied onto another tenant or connection does not open).
 */
const VERSION = 's1';

function keyOf(sealingKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', sealingKey, Buffer.alloc(0), `wellstream ${purpose}`, 32));
}

export function sealValue(sealingKey: Buffer, purpose: string, owner: string, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sealingKey, purpose), iv);
  cipher.setAAD(Buffer.from(owner));
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

/** Throws when the value was sealed under another key, for another purpose or owner, or was altered. */
export function openValue(sealingKey: Buffer, purpose: string, owner: string, sealed: string): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== VERSION || !iv || body === undefined || !tag) throw new Error('sealed value has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(sealingKey, purpose), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(owner));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
