import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Endpoint signing secrets are kept sealed (AES-256-GCM under a key derived from SEALING_KEY):
 * the sender needs the secret itself to sign, so a hash would not do, and the event log and
 * read models never hold it in plain.
 */
const INFO = 'wellstream webhook secret v1';
const VERSION = 'v1';

function keyOf(sealingKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', sealingKey, Buffer.alloc(0), INFO, 32));
}

export function sealSecret(sealingKey: Buffer, secret: string, endpointId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sealingKey), iv);
  // The endpoint id is bound as associated data: a sealed secret copied onto another endpoint does not open.
  cipher.setAAD(Buffer.from(endpointId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export function openSecret(sealingKey: Buffer, sealed: string, endpointId: string): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== VERSION || !iv || !body || !tag) throw new Error('sealed webhook secret has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(sealingKey), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/** `whsec_` and the base64 of 32 random bytes: the form Standard Webhooks libraries take as is. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
