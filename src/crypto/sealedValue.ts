import { SealingKeyError, SealingKeyring } from './sealingKeys.js';

/**
 * Secrets the service must use again (tenants' provider client secrets, OAuth tokens, PKCE
 * verifiers), sealed by the same keyring as data keys and webhook secrets (src/crypto/
 * sealingKeys.ts): AES-256-GCM under a key derived from SEALING_KEY per purpose (a value sealed
 * for one use never opens as another), the owner bound as associated data (a sealed value copied
 * onto another tenant or connection does not open), and the sealing key named in the value, so
 * SEALING_KEY_PREVIOUS opens it during a rotation and `datakeys reseal` finds what to rewrite.
 *
 * `s2.<kid>.<iv>.<ct>.<tag>`. `s1.<iv>.<ct>.<tag>` (base64url), written before values named
 * their key, opens with whichever held key sealed it.
 */
export class ValueSealer {
  private readonly rings = new Map<string, SealingKeyring>();

  constructor(private readonly ringOf: (purpose: string) => SealingKeyring) {}

  private ring(purpose: string): SealingKeyring {
    let ring = this.rings.get(purpose);
    if (!ring) this.rings.set(purpose, (ring = this.ringOf(purpose)));
    return ring;
  }

  seal(purpose: string, owner: string, value: string): string {
    const s = this.ring(purpose).seal(Buffer.from(value, 'utf8'), owner);
    return ['s2', s.kid, s.iv, s.ct, s.tag].join('.');
  }

  /** Throws SealingKeyError when no held key opens it, or it was sealed for another purpose or owner, or altered. */
  open(purpose: string, owner: string, sealed: string): string {
    const parts = sealed.split('.');
    if (parts[0] === 's2' && parts.length === 5 && parts.every((p) => p.length > 0)) {
      const [, kid, iv, ct, tag] = parts as [string, string, string, string, string];
      return this.ring(purpose).open({ kid, iv, ct, tag }, owner).toString('utf8');
    }
    if (parts[0] === 's1' && parts.length === 4 && parts[1] && parts[3] && parts[2] !== undefined) {
      const [, iv, ct, tag] = parts as [string, string, string, string];
      return this.ring(purpose).openUnnamed({ iv, ct, tag }, owner).toString('utf8');
    }
    throw new SealingKeyError(`sealed ${purpose} of ${owner} has an unknown format`);
  }

  /** Sealed under the current SEALING_KEY in the current format: nothing for a reseal to do. */
  isCurrent(purpose: string, sealed: string): boolean {
    const parts = sealed.split('.');
    return parts[0] === 's2' && parts[1] === this.ring(purpose).currentKid;
  }

  /** The same value sealed under the current key, or null when it already is. */
  reseal(purpose: string, owner: string, sealed: string): string | null {
    return this.isCurrent(purpose, sealed) ? null : this.seal(purpose, owner, this.open(purpose, owner, sealed));
  }
}

export function sealValue(sealer: ValueSealer, purpose: string, owner: string, value: string): string {
  return sealer.seal(purpose, owner, value);
}

export function openValue(sealer: ValueSealer, purpose: string, owner: string, sealed: string): string {
  return sealer.open(purpose, owner, sealed);
}
