import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/webhooks/secretSealing.js';
import { Signer } from '../../src/webhooks/signing.js';

describe('delivery signatures follow Standard Webhooks (contracts §5)', () => {
  // Multi-byte characters: the HMAC covers the body's UTF-8 bytes, as a receiver reads them.
  const body = JSON.stringify({ id: randomUUID(), type: 'data.written', data: { note: 'Zürich — 心拍 ❤️' } });

  it('the signature equals the one the standardwebhooks library computes for the same secret, id, time and body', () => {
    for (let i = 0; i < 20; i++) {
      const secret = newWebhookSecret();
      const id = randomUUID();
      const at = new Date(1_700_000_000_000 + i * 1_234_567);
      const headers = new Signer(secret).headers(id, at, body);
      expect(headers['webhook-id']).toBe(id);
      expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
      expect(headers['webhook-signature']).toBe(new Webhook(secret).sign(id, at, body));
    }
  });

  it('a receiver verifying with the library accepts the headers, and refuses them under another secret or body', () => {
    const secret = newWebhookSecret();
    const id = randomUUID();
    const headers = new Signer(secret).headers(id, new Date(), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body.replace('Zürich', 'Zurich'), headers)).toThrow();
  });
});
