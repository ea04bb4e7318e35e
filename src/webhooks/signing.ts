import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/**
 * Standard Webhooks signing (contracts §5): `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">` keyed by the base64 part of the `whsec_` secret. Computed with node:crypto
 * (every delivery signs once; the `standardwebhooks` library's pure-JavaScript SHA-256 cost several
 * times as much); the tests verify every delivery with that library, and test/webhooks/signing.test.ts
 * holds the two signatures equal.
 */
export class Signer {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    if (this.key.length === 0) throw new Error("Secret can't be empty.");
  }

  headers(eventId: string, at: Date, body: string): Record<string, string> {
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const signature = createHmac('sha256', this.key).update(`${eventId}.${timestamp}.${body}`).digest('base64');
    return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
  }
}
