import type { Replay } from '../../../src/projector/projection.js';

/** 2^25 bits (4 MiB): about 0.2 % false positives at a million locators, 2 % at ten million. */
const BITS_LOG2 = 25;
const PROBES = 4;

/**
 * The locators a rebuild's replay wrote, as a Bloom filter: `mayHold` is false only for a
 * locator `_id` never added, true for every one added (and, wrongly, for a few others). The
 * replay starts from dropped collections and only it writes them (Replay), so a locator the
 * filter does not hold is not stored, and the batch's record it stands for was never sent before:
 * the session need not look it up (docs/rebuild.md). A false positive only costs the lookup the
 * live projection makes for every record. Locators deleted since (an erasure) stay in the filter:
 * they are looked up and not found, as live.
 */
export class ReplayLocators {
  private readonly bits = new Uint32Array(2 ** (BITS_LOG2 - 5));

  add(id: string): void {
    let [h, step] = hashes(id);
    for (let i = 0; i < PROBES; i++, h = (h + step) >>> 0) {
      const bit = h >>> (32 - BITS_LOG2);
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  mayHold(id: string): boolean {
    let [h, step] = hashes(id);
    for (let i = 0; i < PROBES; i++, h = (h + step) >>> 0) {
      const bit = h >>> (32 - BITS_LOG2);
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

const ofReplay = new WeakMap<Replay, ReplayLocators>();

/** The filter of `replay`'s locators, empty when the replay begins (one per rebuild: a WeakMap keyed by its Replay). */
export function replayLocatorsOf(replay: Replay): ReplayLocators {
  let f = ofReplay.get(replay);
  if (!f) ofReplay.set(replay, (f = new ReplayLocators()));
  return f;
}

/**
 * Two 32-bit FNV-1a hashes of the id (two offset bases), the second odd: the probes are
 * h, h + step, h + 2·step… (double hashing). A locator's `_id` is base64url of SHA-256 digests,
 * so its characters are already uniform; FNV only folds them into 32 bits.
 */
function hashes(id: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, (b | 1) >>> 0];
}
