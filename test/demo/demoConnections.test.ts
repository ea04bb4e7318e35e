import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { allowDemoWebhookTargets } from '../../src/demo/demoConnections.js';

describe('the demo lets webhooks reach a local receiver (issue 36 §7: the demo refused a webhook to http://127.0.0.1)', () => {
  it('a demo start allows private webhook targets unless the operator set WEBHOOK_ALLOW_PRIVATE_TARGETS; a start without the demo keeps refusing them', () => {
    const demo: NodeJS.ProcessEnv = {};
    allowDemoWebhookTargets(demo);
    expect(loadConfig(demo).webhookAllowPrivateTargets).toBe(true);
    const chosen: NodeJS.ProcessEnv = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' };
    allowDemoWebhookTargets(chosen);
    expect(loadConfig(chosen).webhookAllowPrivateTargets).toBe(false);
    expect(loadConfig({}).webhookAllowPrivateTargets).toBe(false);
  });
});
