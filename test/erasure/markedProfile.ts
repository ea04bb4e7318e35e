import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { connectThroughSandbox, providerUserIdOf } from '../connections/consentFlow.js';
import { expectStatus, type TenantHandle, type TestApp } from '../support/server.js';
import type { Receiver } from '../webhooks/receiver.js';
import { eventually } from '../webhooks/receiver.js';
import { markedHealthKit, uploadMarked, type Markers } from './markedData.js';

/**
 * A user whose personal data outside the health records is marked (issue 20, finding 4): an
 * external_ref, a time tag's label and note, and, when connected through the provider sandbox,
 * the consent evidence, the redirect_uri of the consent request and the provider's id of the user.
 * Every webhook delivery about the user is marked by its `webhook-id` (which only deliveries hold).
 */
export type ProfiledUser = {
  id: string;
  externalRef: string;
  /** Markers the user's deletion must leave nowhere (the external_ref is apart: user.deleted carries it). */
  markers: Markers;
  /** Markers no read model holds (only the log, sealed): in no file even while the user exists. */
  sealedOnly: Markers;
  /** The `webhook-id` of every delivery received about the user. */
  webhookIds: string[];
};

const hex = () => randomBytes(6).toString('hex');

export async function profiledUser(
  t: TestApp,
  tenant: TenantHandle,
  receiver: Receiver,
  path: string,
  tag: string,
  connect?: string,
): Promise<ProfiledUser> {
  const externalRef = `ref-${tag}-${hex()}`;
  const user = await t.createUser(tenant.apiKey, { external_ref: externalRef });
  const label = `label-${tag}-${hex()}`;
  const note = `note-${tag}-${hex()}`;
  const created = await t.call('POST', `/v1/users/${user.id}/tags`, {
    key: tenant.apiKey,
    body: { kind: 'illness', label, note, start: '2026-11-01T00:00:00Z', end: '2026-11-04T00:00:00Z' },
  });
  expectStatus(created, 201);
  await uploadMarked(t, tenant.apiKey, user.id, 'device-a', markedHealthKit(tag, 5).payload);
  const texts = [label, note];
  const sealedOnly: string[] = [];
  const types = ['user.created', 'tag.created', 'data.written'];
  if (connect) {
    const redirect = `redirect-${tag}-${hex()}`;
    const { callback } = await connectThroughSandbox(t, tenant.apiKey, user.id, connect, { redirect_uri: `https://app.example.com/done?who=${redirect}` });
    expect(callback.statusCode).toBe(302);
    const providerUserId = await eventually(() => providerUserIdOf(t, user.id, connect));
    const history = await t.call('GET', `/v1/users/${user.id}/consents/history`, { key: tenant.apiKey });
    expectStatus(history, 200);
    const evidence = [...new Set((history.json() as { data: { evidence: string }[] }).data.map((c) => c.evidence))];
    expect(evidence.length).toBeGreaterThan(0);
    texts.push(providerUserId, ...evidence);
    sealedOnly.push(redirect);
    types.push('connection.created');
  }
  const about = () => receiver.at(path).filter((r) => (r.verified?.data as { user_id?: string } | undefined)?.user_id === user.id);
  await receiver.waitFor(() => types.every((type) => about().some((r) => r.verified?.type === type)), 60_000);
  const webhookIds = [...new Set(about().map((r) => String(r.headers['webhook-id'])))];
  return { id: user.id, externalRef, markers: { texts: [...texts, ...webhookIds], uuids: [], values: [] }, sealedOnly: { texts: sealedOnly, uuids: [], values: [] }, webhookIds };
}
