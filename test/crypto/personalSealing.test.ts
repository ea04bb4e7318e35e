import { randomBytes, randomUUID } from 'node:crypto';
import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PERSONAL_FIELDS } from '../../commands/shared/personalFields.js';
import { providerKind } from '../../src/catalog/providerKinds.js';
import { DataKeys } from '../../src/crypto/dataKeys.js';
import { OpeningEventStore } from '../../src/crypto/openingEventStore.js';
import { openPersonal, PersonalSealer, PROFILE_KEY, profileKeyRef } from '../../src/crypto/personalSealing.js';
import { EventOpener } from '../../src/crypto/recordSealing.js';
import { SealingKeyring } from '../../src/crypto/sealingKeys.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';

/**
 * Issue 20, finding 4 (docs/erasure.md "Personal data"): the personal fields of an event are
 * appended sealed under the user's profile key, read back opened, and read as null once the user's
 * deletion destroyed the key; events without any stay as they are.
 */
function setup() {
  const raw = new SqliteEventStore({ path: ':memory:' });
  const keys = new DataKeys(raw, new SealingKeyring(randomBytes(32)));
  const store = new OpeningEventStore(raw, new EventOpener(keys), new PersonalSealer(keys, PERSONAL_FIELDS));
  return { raw, keys, store };
}

const tenantId = randomUUID();
const tag = (userId: string, label: string | null, note: string | null) => ({
  type: 'tag.created',
  data: { tag_id: randomUUID(), user_id: userId, tenant_id: tenantId, kind: 'illness', label, note, start: '2026-11-01T00:00:00.000Z', end: null, created_at: '2026-11-01T00:00:00.000Z' },
});

describe('personal fields sealed under the user’s profile key (issue 20)', () => {
  it('are stored sealed (what routes the event stays in the clear) and read back as appended, through reads and subscriptions', async () => {
    const { raw, store } = setup();
    const userId = randomUUID();
    const event = tag(userId, 'flu', 'stayed in bed');
    await store.appendToStream(`user-${userId}`, [event]);

    const [stored] = await raw.readStream(`user-${userId}`);
    expect(stored!.data).toMatchObject({ user_id: userId, tenant_id: tenantId, kind: 'illness', personal: { fields: ['label', 'note'], key: `${userId}/profile/0` } });
    expect(stored!.data).not.toHaveProperty('label');
    expect(JSON.stringify(stored)).not.toMatch(/flu|stayed in bed/);

    const [read] = await store.readStream(`user-${userId}`);
    expect(read!.data).toEqual(event.data);
    expect((await store.readAll({ filter: { eventTypes: ['tag.created'] } }))[0]!.data).toEqual(event.data);
    const live = await firstValueFrom(store.subscribeToAll({ filter: { eventTypes: ['tag.created'] } }).pipe(take(1), toArray()));
    expect(live[0]!.data).toEqual(event.data);
    await raw.close();
  });

  it('are stored sealed by a multi-stream append too, every stream of it, and read back as appended (issue 37: appendToStreams)', async () => {
    const { raw, store } = setup();
    const [a, b] = [randomUUID(), randomUUID()];
    const events = [tag(a, 'flu', 'stayed in bed'), tag(b, 'common cold', 'hot tea with honey')];
    await store.appendToStreams([
      { streamName: `user-${a}`, events: [events[0]!] },
      { streamName: `user-${b}`, events: [events[1]!] },
    ]);
    const stored = [...(await raw.readStream(`user-${a}`)), ...(await raw.readStream(`user-${b}`))];
    expect(stored.map((e) => (e.data.personal as { fields: string[] }).fields)).toEqual([['label', 'note'], ['label', 'note']]);
    expect(JSON.stringify(stored)).not.toMatch(/flu|stayed in bed|common cold|hot tea with honey/);
    expect([...(await store.readStream(`user-${a}`)), ...(await store.readStream(`user-${b}`))].map((e) => e.data)).toEqual(events.map((e) => e.data));
    await raw.close();
  });

  it('an event whose personal fields are all null is stored as it is, and makes no key', async () => {
    const { raw, keys, store } = setup();
    const userId = randomUUID();
    const event = tag(userId, null, null);
    await store.appendToStream(`user-${userId}`, [event]);
    expect((await raw.readStream(`user-${userId}`))[0]!.data).toEqual(event.data);
    expect(await keys.get(`${userId}/${PROFILE_KEY}/0`)).toBeNull();
    await raw.close();
  });

  it('once the profile key is destroyed (the user deleted), every stored copy reads its personal fields as null, and new ones are not stored', async () => {
    const { raw, keys, store } = setup();
    const userId = randomUUID();
    await store.appendToStream(`user-${userId}`, [tag(userId, 'flu', 'note')]);
    const copy = (await raw.readStream(`user-${userId}`))[0]!;
    await keys.destroy(profileKeyRef(userId));

    // A copy kept anywhere (another backend, a backup) opens to nothing.
    expect((await openPersonal(keys, copy)).data).toMatchObject({ label: null, note: null, kind: 'illness' });
    expect((await store.readStream(`user-${userId}`))[0]!.data).toMatchObject({ label: null, note: null });

    await store.appendToStream(`job-${userId}`, [{ type: 'user.deleted', data: { user_id: userId, tenant_id: tenantId, external_ref: 'patient-9', job_id: 'j', deleted_at: 'now' } }]);
    const [late] = await raw.readStream(`job-${userId}`);
    expect(late!.data).toMatchObject({ external_ref: null });
    expect(JSON.stringify(late)).not.toContain('patient-9');
    await raw.close();
  });

  it('sealed fields copied onto another user’s event do not open', async () => {
    const { raw, keys, store } = setup();
    const [a, b] = [randomUUID(), randomUUID()];
    await store.appendToStream(`user-${a}`, [tag(a, 'secret', null)]);
    const stored = (await raw.readStream(`user-${a}`))[0]!;
    const moved = { ...stored, data: { ...stored.data, user_id: b } } as RecordedEvent;
    await expect(openPersonal(keys, moved)).rejects.toThrow(/does not open/);
    await raw.close();
  });

  it('the profile key is no provider’s: no provider erasure can name it', () => {
    expect(providerKind(PROFILE_KEY)).toBeNull();
  });
});
