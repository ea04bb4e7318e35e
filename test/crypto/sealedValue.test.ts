import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SealingKeyError, SealingKeyring } from '../../src/crypto/sealingKeys.js';
import { ValueSealer } from '../../src/crypto/sealedValue.js';

const sealerOf = (key: Buffer, previous: Buffer[] = []) => new ValueSealer((purpose) => new SealingKeyring(key, previous, { info: `wellstream ${purpose}`, name: purpose }));

/** The `s1` format values were sealed in before they named their key. */
function legacySeal(key: Buffer, purpose: string, owner: string, value: string): string {
  const derived = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `wellstream ${purpose}`, 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derived, iv);
  cipher.setAAD(Buffer.from(owner));
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return ['s1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

describe('sealed connection secrets (provider keys, OAuth tokens, PKCE verifiers) rotate with SEALING_KEY (docs/erasure.md)', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('a value sealed under the previous key opens while SEALING_KEY_PREVIOUS holds it, and not after it is dropped', () => {
    const sealed = sealerOf(oldKey).seal('provider token v1', 'u:oura', 'tokens');
    expect(sealerOf(newKey, [oldKey]).open('provider token v1', 'u:oura', sealed)).toBe('tokens');
    expect(() => sealerOf(newKey).open('provider token v1', 'u:oura', sealed)).toThrow(SealingKeyError);
  });

  it('a value sealed for one purpose or owner does not open as another', () => {
    const sealer = sealerOf(newKey);
    const sealed = sealer.seal('provider key v1', 't:oura:CLIENT_SECRET', 'secret');
    expect(() => sealer.open('provider token v1', 't:oura:CLIENT_SECRET', sealed)).toThrow(SealingKeyError);
    expect(() => sealer.open('provider key v1', 'other:oura:CLIENT_SECRET', sealed)).toThrow(SealingKeyError);
  });

  it('values sealed before they named their key (s1) open with whichever held key sealed them, and a reseal rewrites them', () => {
    const legacy = legacySeal(oldKey, 'pkce verifier v1', 'u:whoop', 'verifier');
    const sealer = sealerOf(newKey, [oldKey]);
    expect(sealer.open('pkce verifier v1', 'u:whoop', legacy)).toBe('verifier');
    expect(sealer.isCurrent('pkce verifier v1', legacy)).toBe(false);
    const again = sealer.reseal('pkce verifier v1', 'u:whoop', legacy)!;
    expect(sealer.isCurrent('pkce verifier v1', again)).toBe(true);
    expect(sealer.reseal('pkce verifier v1', 'u:whoop', again)).toBeNull();
    expect(sealerOf(newKey).open('pkce verifier v1', 'u:whoop', again)).toBe('verifier');
  });

  it('an altered value is refused, never opened wrongly', () => {
    const sealer = sealerOf(newKey);
    const parts = sealer.seal('provider token v1', 'u:oura', 'tokens').split('.');
    parts[3] = Buffer.from('x'.repeat(6)).toString('base64');
    expect(() => sealer.open('provider token v1', 'u:oura', parts.join('.'))).toThrow(SealingKeyError);
    expect(() => sealer.open('provider token v1', 'u:oura', 'nonsense')).toThrow(SealingKeyError);
  });
});
