import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { emptyEndpoint, type WebhookEndpointState } from '../../../commands/webhooks/webhookEndpoint.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { EndpointDirectory } from '../../../src/processes/webhooks/endpointDirectory.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../../src/webhooks/secretSealing.js';

/** Issue 26, retention: the webhook engine's EndpointDirectory forgets deleted endpoints. */
const endpoint = (id: string, status: WebhookEndpointState['status']): WebhookEndpointState => ({
  ...emptyEndpoint(),
  id,
  tenantId: 'tenant-a',
  status,
  url: `https://example.test/${id}`,
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
  activeSince: '2026-11-01T00:00:00.000Z',
});

describe('EndpointDirectory (issue 26: retention)', () => {
  it('forgets a deleted endpoint: unknown to get, all and activeOf; the tenant’s other endpoints stay', () => {
    const directory = new EndpointDirectory(new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING)));
    directory.set(endpoint('one', 'active'));
    directory.set(endpoint('two', 'active'));
    directory.set(endpoint('one', 'disabled'));
    expect(directory.get('one')?.status).toBe('disabled');
    directory.set(endpoint('one', 'deleted'));
    expect(directory.get('one')).toBeUndefined();
    expect([...directory.all()].map((e) => e.id)).toEqual(['two']);
    expect(directory.activeOf('tenant-a').map((e) => e.id)).toEqual(['two']);
    directory.set(endpoint('two', 'deleted'));
    expect([...directory.all()]).toEqual([]);
    expect(directory.activeOf('tenant-a')).toEqual([]);
  });

  it('hasActive answers whether the tenant has an active endpoint, as activeOf would (the dispatcher builds no payload otherwise)', () => {
    const directory = new EndpointDirectory(new WebhookSecrets(new SealingKeyring(randomBytes(32), [], WEBHOOK_SECRET_SEALING)));
    expect(directory.hasActive('tenant-a')).toBe(false);
    directory.set(endpoint('one', 'disabled'));
    expect(directory.hasActive('tenant-a')).toBe(false);
    directory.set(endpoint('two', 'active'));
    expect(directory.hasActive('tenant-a')).toBe(true);
    expect(directory.hasActive('tenant-b')).toBe(false);
    directory.set(endpoint('two', 'deleted'));
    expect(directory.hasActive('tenant-a')).toBe(false);
  });
});
