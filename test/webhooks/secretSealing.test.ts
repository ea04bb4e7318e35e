import { createCipheriv, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SealingKeyError, SealingKeyring } from '../../src/crypto/sealingKeys.js';
import { newWebhookSecret, WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../src/webhooks/secretSealing.js';

const secretsUnder = (current: Buffer, previous: Buffer[] = []) => new WebhookSecrets(new SealingKeyring(current, previous, WEBHOOK_SECRET_SEALING));

/** A secret as the service sealed it before key ids (`v1.`): HKDF of SEALING_KEY, AES-256-GCM, endpoint id as associated data. */
function legacySeal(sealingKey: Buffer, secret: string, endpointId: string): string {
  const key = Buffer.from(hkdfSync('sha256', sealingKey, Buffer.alloc(0), 'wellstream webhook secret v1', 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(endpointId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

describe('webhook signing secrets across a SEALING_KEY rotation (docs/erasure.md "Rotating SEALING_KEY")', () => {
  const a = randomBytes(32);
  const b = randomBytes(32);
  const id = randomUUID();
  const secret = newWebhookSecret();

  it('a secret sealed under the old key opens once the old key is in SEALING_KEY_PREVIOUS, and not without it', () => {
    const sealed = secretsUnder(a).seal(secret, id);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(secretsUnder(b, [a]).open(sealed, id)).toBe(secret);
    expect(() => secretsUnder(b).open(sealed, id)).toThrow(SealingKeyError);
    expect(() => secretsUnder(b).open(sealed, id)).toThrow(/does not hold .*SEALING_KEY_PREVIOUS/);
  });

  it('a resealed secret is the same secret, current under the new key, and opens with the new key alone', () => {
    const rotating = secretsUnder(b, [a]);
    const old = secretsUnder(a).seal(secret, id);
    expect(rotating.isCurrent(old)).toBe(false);
    const resealed = rotating.seal(rotating.open(old, id), id);
    expect(rotating.isCurrent(resealed)).toBe(true);
    expect(secretsUnder(b).open(resealed, id)).toBe(secret);
  });

  it('secrets stored before key ids (v1) still open, under the current key or a previous one, and count as not current', () => {
    const legacy = legacySeal(a, secret, id);
    expect(secretsUnder(a).open(legacy, id)).toBe(secret);
    expect(secretsUnder(b, [a]).open(legacy, id)).toBe(secret);
    expect(secretsUnder(a).isCurrent(legacy)).toBe(false);
    expect(() => secretsUnder(b).open(legacy, id)).toThrow(/opens with none of the sealing keys/);
  });

  it('a sealed secret copied onto another endpoint does not open there (the endpoint id is bound)', () => {
    const s = secretsUnder(a);
    expect(() => s.open(s.seal(secret, id), randomUUID())).toThrow(SealingKeyError);
    expect(() => s.open(legacySeal(a, secret, id), randomUUID())).toThrow(SealingKeyError);
  });

  it('a data-key keyring under the same SEALING_KEY does not open a webhook secret (one derived key per purpose)', () => {
    const sealed = secretsUnder(a).seal(secret, id);
    expect(() => new WebhookSecrets(new SealingKeyring(a)).open(sealed, id)).toThrow(SealingKeyError);
  });

  it('refuses a sealed secret of unknown format with a clear error', () => {
    expect(() => secretsUnder(a).open('v9.x.y.z', id)).toThrow(/unknown format/);
    expect(() => secretsUnder(a).open('v2.only.three', id)).toThrow(/unknown format/);
  });
});
