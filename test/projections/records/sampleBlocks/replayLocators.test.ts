import { describe, expect, it } from 'vitest';
import { locatorId } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import { ReplayLocators, replayLocatorsOf } from '../../../../projections/records/sampleBlocks/replayLocators.js';
import { recordKey } from '../../../../projections/records/recordIds.js';

const idOf = (user: number, i: number) => locatorId(`user-${user}`, recordKey(`user-${user}`, 'device-a', `ext-${i}`));

describe('the locators a rebuild replay wrote (a Bloom filter)', () => {
  it('holds every locator added, so a re-sent record is always looked up', () => {
    const f = new ReplayLocators();
    const added = Array.from({ length: 50_000 }, (_, i) => idOf(i % 3, i));
    for (const id of added) f.add(id);
    expect(added.every((id) => f.mayHold(id))).toBe(true);
  });

  it('holds few locators never added, so a new record is rarely looked up', () => {
    const f = new ReplayLocators();
    for (let i = 0; i < 50_000; i++) f.add(idOf(1, i));
    let wrong = 0;
    for (let i = 50_000; i < 100_000; i++) if (f.mayHold(idOf(1, i))) wrong++;
    expect(wrong).toBeLessThan(50);
  });

  it('starts empty for every replay', () => {
    const first = { projection: 'samples' };
    replayLocatorsOf(first).add(idOf(1, 1));
    expect(replayLocatorsOf(first).mayHold(idOf(1, 1))).toBe(true);
    expect(replayLocatorsOf({ projection: 'samples' }).mayHold(idOf(1, 1))).toBe(false);
  });
});
