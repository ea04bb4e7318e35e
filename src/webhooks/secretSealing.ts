import { randomBytes } from 'node:crypto';
import { SealingKeyError, type SealingKeyring, type SealingPurpose } from '../crypto/sealingKeys.js';

/**
 * Endpoint signing secrets are kept sealed (AES-256-GCM under a key derived from SEALING_KEY):
 * the sender needs the secret itself to sign, so a hash would not do, and the event log and
 * read models never hold it in plain. The derivation is the one `v1` secrets were sealed with,
 * so those still open.
 */
export const WEBHOOK_SECRET_SEALING: SealingPurpose = { info: 'wellstream webhook secret v1', name: 'the signing secret of webhook endpoint' };

/**
 * `v2.<kid>.<iv>.<ciphertext>.<tag>`: sealed by the keyring, naming the sealing key, so it opens
 * under SEALING_KEY_PREVIOUS during a rotation (docs/erasure.md). `v1.<iv>.<ciphertext>.<tag>`
 * (base64url), written before key ids, opens with whichever held key sealed it. The endpoint id
 * is bound as associated data: a sealed secret copied onto another endpoint does not open.
 */
export class WebhookSecrets {
  constructor(private readonly keyring: SealingKeyring) {}

  seal(secret: string, endpointId: string): string {
    const s = this.keyring.seal(Buffer.from(secret, 'utf8'), endpointId);
    return ['v2', s.kid, s.iv, s.ct, s.tag].join('.');
  }

  open(sealed: string, endpointId: string): string {
    const parts = sealed.split('.');
    if (parts[0] === 'v2' && parts.length === 5 && parts.every((p) => p.length > 0)) {
      const [, kid, iv, ct, tag] = parts as [string, string, string, string, string];
      return this.keyring.open({ kid, iv, ct, tag }, endpointId).toString('utf8');
    }
    if (parts[0] === 'v1' && parts.length === 4 && parts.every((p) => p.length > 0)) {
      const [, iv, ct, tag] = parts as [string, string, string, string];
      return this.keyring.openUnnamed({ iv, ct, tag }, endpointId).toString('utf8');
    }
    throw new SealingKeyError(`the sealed signing secret of webhook endpoint ${endpointId} has an unknown format`);
  }

  /** Sealed under the current SEALING_KEY in the current format: nothing for a reseal to do. */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`v2.${this.keyring.currentKid}.`);
  }
}

/** `whsec_` and the base64 of 32 random bytes: the form Standard Webhooks libraries take as is. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
