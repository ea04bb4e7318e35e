import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createWebhook } from '../../commands/webhooks/createWebhook.js';
import { deleteWebhook } from '../../commands/webhooks/deleteWebhook.js';
import { loadState } from '../../commands/shared/commandHandler.js';
import { webhookEndpointState, webhookEndpointStream } from '../../commands/webhooks/webhookEndpoint.js';
import { openStores } from '../../src/app/stores.js';
import { loadConfig } from '../../src/config.js';
import { DataKeys, dataKeyId } from '../../src/crypto/dataKeys.js';
import { SealingKeyring } from '../../src/crypto/sealingKeys.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../../src/webhooks/secretSealing.js';
import { replaceProviderKeys } from '../../commands/connections/replaceProviderKeys.js';
import { PROVIDER_KEY_PURPOSE, providerKeyOwner, providerKeysState, providerKeysStream } from '../../commands/connections/providerKeys.js';
import { connectionOwner, connectionState, connectionStream, TOKEN_PURPOSE } from '../../commands/connections/connection.js';
import { ValueSealer } from '../../src/crypto/sealedValue.js';
import { OpeningEventStore } from '../../src/crypto/openingEventStore.js';
import { EventOpener } from '../../src/crypto/recordSealing.js';

const sealerOf = (key: Buffer, previous: Buffer[] = []) => new ValueSealer((purpose) => new SealingKeyring(key, previous, { info: `wellstream ${purpose}`, name: purpose }));
import { tempDir } from '../support/tmp.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** `npm run cli -- datakeys reseal` as a child process with its own sealing keys. */
function reseal(dataDir: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const all: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, ...env };
  for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'LOG_LEVEL']) delete all[k];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['scripts/cli.mjs', 'datakeys', 'reseal'], { cwd: root, env: all, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

describe('cli: datakeys reseal (docs/erasure.md: rotating SEALING_KEY)', () => {
  it('seals every data key, live webhook signing secret, tenant provider key and OAuth token again under the new SEALING_KEY while the previous one is still given; then the previous one can go', { timeout: 60_000 }, async () => {
    const dataDir = tempDir('wellstream-cli-datakeys-');
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const refs = [0, 1, 2].map((i) => ({ userId: `6a1f0f9e-1111-4c1d-9a55-0d2c9a4e7f1${i}`, provider: 'device-a', generation: 0 }));
    const stores = await openStores(loadConfig({ DATA_DIR: dataDir } as NodeJS.ProcessEnv));
    const before = new DataKeys(stores.eventStore, new SealingKeyring(oldKey));
    const issued = [];
    for (const ref of refs) issued.push((await before.issue(ref, 't')).key);
    await before.destroy(refs[2]!);
    const oldSecrets = new WebhookSecrets(new SealingKeyring(oldKey, [], WEBHOOK_SECRET_SEALING));
    const tenantId = randomUUID();
    const webhook = (endpointId: string) => ({ tenantId, endpointId, url: 'https://example.test/hook', at: new Date().toISOString(), by: 'test' });
    const live = randomUUID();
    const { secret } = await createWebhook(stores.eventStore, oldSecrets, webhook(live), { allowPrivateTargets: false });
    const gone = randomUUID();
    await createWebhook(stores.eventStore, oldSecrets, webhook(gone), { allowPrivateTargets: false });
    await deleteWebhook(stores.eventStore, { tenantId, endpointId: gone, at: new Date().toISOString(), by: 'test' });
    const oldSealer = sealerOf(oldKey);
    const clientSecret = 'sandbox-oura-secret-value';
    await replaceProviderKeys(stores.eventStore, oldSealer, { tenantId, provider: 'oura', keys: { CLIENT_ID: 'OURACLIENT01', CLIENT_SECRET: clientSecret }, at: new Date().toISOString(), by: 'test' });
    const userId = refs[0]!.userId;
    const tokens = JSON.stringify({ accessToken: 'access-token-value', refreshToken: 'refresh-token-value', expiresAt: null, scope: 'daily' });
    await stores.eventStore.appendToStream(connectionStream(userId, 'oura'), [
      {
        type: 'connection.established',
        data: { tenant_id: tenantId, user_id: userId, provider: 'oura', state_hash: 'h', scopes: ['daily'], categories: ['activity'], application: 'a', tokens_sealed: oldSealer.seal(TOKEN_PURPOSE, connectionOwner(userId, 'oura'), tokens), reconnect: false, at: new Date().toISOString(), by: 'test' },
      },
    ]);
    await stores.eventStore.close();
    await stores.readStore.close();

    const run = await reseal(dataDir, { SEALING_KEY: newKey.toString('base64'), SEALING_KEY_PREVIOUS: oldKey.toString('base64') });
    expect(run.code, run.stderr).toBe(0);
    // The destroyed key is gone from the log altogether.
    // The deleted endpoint is not counted: nothing signs with its secret again.
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toEqual({
      keys: 2,
      resealed: 2,
      webhook_secrets: 1,
      webhook_secrets_resealed: 1,
      provider_keys: 1,
      provider_keys_resealed: 1,
      connection_tokens: 1,
      connection_tokens_resealed: 1,
    });
    for (const plain of [secret, clientSecret, 'access-token-value']) expect(run.stdout + run.stderr).not.toContain(plain);
    const again = await reseal(dataDir, { SEALING_KEY: newKey.toString('base64'), SEALING_KEY_PREVIOUS: oldKey.toString('base64') });
    // The resealed tokens were appended under the user's profile key (issue 20), made then, under the new key.
    expect(JSON.parse(again.stdout.trim().split('\n').pop()!)).toEqual({
      keys: 3,
      resealed: 0,
      webhook_secrets: 1,
      webhook_secrets_resealed: 0,
      provider_keys: 1,
      provider_keys_resealed: 0,
      connection_tokens: 1,
      connection_tokens_resealed: 0,
    });

    const after = await openStores(loadConfig({ DATA_DIR: dataDir } as NodeJS.ProcessEnv));
    try {
      const keys = new DataKeys(after.eventStore, new SealingKeyring(newKey));
      expect((await keys.get(dataKeyId(refs[0]!)))!.equals(issued[0]!)).toBe(true);
      expect((await keys.get(dataKeyId(refs[1]!)))!.equals(issued[1]!)).toBe(true);
      expect(await keys.get(dataKeyId(refs[2]!))).toBeNull();
      // The same secret, so receivers keep verifying; it opens with the new key alone.
      const { state } = await loadState(after.eventStore, webhookEndpointStream(live), webhookEndpointState);
      expect(new WebhookSecrets(new SealingKeyring(newKey, [], WEBHOOK_SECRET_SEALING)).open(state.secretSealed, live)).toBe(secret);
      // Provider keys and OAuth tokens open with the new key alone too.
      const newSealer = sealerOf(newKey);
      const keysState = (await loadState(after.eventStore, providerKeysStream(tenantId, 'oura'), providerKeysState)).state;
      expect(newSealer.open(PROVIDER_KEY_PURPOSE, providerKeyOwner(tenantId, 'oura', 'CLIENT_SECRET'), keysState.sealedValues.CLIENT_SECRET!)).toBe(clientSecret);
      const opened = new OpeningEventStore(after.eventStore, new EventOpener(keys));
      const conn = (await loadState(opened, connectionStream(userId, 'oura'), connectionState)).state;
      expect(JSON.parse(newSealer.open(TOKEN_PURPOSE, connectionOwner(userId, 'oura'), conn.tokensSealed!))).toEqual(JSON.parse(tokens));
    } finally {
      await after.eventStore.close();
      await after.readStore.close();
    }
  });
});
