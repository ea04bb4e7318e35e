import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordKey } from '../../../../projections/records/recordIds.js';
import { locatorId, userLocators } from '../../../../projections/records/sampleBlocks/sampleBlock.js';

/** A locator `_id` inside a filter's `_id` range, compared as the stores compare (binary; ASCII here). */
const inRange = (id: string, userId: string): boolean => {
  const range = userLocators(userId)._id as { $gte: string; $lt: string };
  return id >= range.$gte && id < range.$lt;
};

describe('the samples locator names its user by its _id (docs/sample-blocks.md "Layout")', () => {
  it("a user's erasure range holds every locator of that user and none of another user", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.constantFrom('device-a', 'garmin', 'oura'), fc.string({ minLength: 1, maxLength: 40 }), (user, other, provider, externalId) => {
        fc.pre(user !== other);
        const id = locatorId(user, recordKey(user, provider, externalId));
        expect(inRange(id, user)).toBe(true);
        expect(inRange(id, other)).toBe(false);
        expect(inRange(locatorId(other, recordKey(other, provider, externalId)), user)).toBe(false);
      }),
    );
  });

  it('is the same for the same user and record key, and differs between records of one user', () => {
    const a = recordKey('u', 'device-a', 'x1');
    const b = recordKey('u', 'device-a', 'x2');
    expect(locatorId('u', a)).toBe(locatorId('u', a));
    expect(locatorId('u', a)).not.toBe(locatorId('u', b));
  });
});
