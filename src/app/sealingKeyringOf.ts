import { resolveSealingKey } from './dataDir.js';
import type { Config } from '../config.js';
import { ValueSealer } from '../crypto/sealedValue.js';
import { DATA_KEY_SEALING, SealingKeyring, type SealingPurpose } from '../crypto/sealingKeys.js';

/**
 * The keyring of one purpose from the sealing keys of the configuration (SEALING_KEY, or the
 * embedded default's generated one, and SEALING_KEY_PREVIOUS). A configuration crosses into
 * threads by structured clone, which turns its Buffers into plain byte arrays; both are taken.
 */
export function sealingKeyringOf(config: Config, purpose: SealingPurpose = DATA_KEY_SEALING): SealingKeyring {
  const current = resolveSealingKey(config.dataDir, config.sealingKey ? Buffer.from(config.sealingKey) : undefined);
  return new SealingKeyring(current, (config.previousSealingKeys ?? []).map((k) => Buffer.from(k)), purpose);
}

/** The sealer of provider keys, OAuth tokens and PKCE verifiers (src/crypto/sealedValue.ts) from the configuration's sealing keys. */
export function valueSealerOf(config: Config): ValueSealer {
  // The derivation is the one `s1` values were sealed with: HKDF info `wellstream <purpose>`.
  return new ValueSealer((purpose) => sealingKeyringOf(config, { info: `wellstream ${purpose}`, name: purpose }));
}
