import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (contracts §5), done by the `standardwebhooks` library:
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed by the base64 part
 * of the `whsec_` secret.
 */
export class Signer {
  private readonly webhook: Webhook;

  constructor(secret: string) {
    this.webhook = new Webhook(secret);
  }

  headers(eventId: string, at: Date, body: string): Record<string, string> {
    return {
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': this.webhook.sign(eventId, at, body),
    };
  }
}
