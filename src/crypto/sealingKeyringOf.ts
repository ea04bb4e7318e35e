import { resolveSealingKey } from '../app/dataDir.js';
import type { Config } from '../config.js';
import { DATA_KEY_SEALING, SealingKeyring, type SealingPurpose } from './sealingKeys.js';

/**
 * The keyring of one purpose from the sealing keys of the configuration (SEALING_KEY, or the
 * embedded default's generated one, and SEALING_KEY_PREVIOUS). A configuration crosses into
 * threads by structured clone, which turns its Buffers into plain byte arrays; both are taken.
 */
export function sealingKeyringOf(config: Config, purpose: SealingPurpose = DATA_KEY_SEALING): SealingKeyring {
  const current = resolveSealingKey(config.dataDir, config.sealingKey ? Buffer.from(config.sealingKey) : undefined);
  return new SealingKeyring(current, (config.previousSealingKeys ?? []).map((k) => Buffer.from(k)), purpose);
}
