import { z } from 'zod';
import { literalHost, checkAddress, ForbiddenAddressError } from '../../src/shared/addressPolicy.js';
import { WEBHOOK_EVENT_TYPES, isWebhookEventType } from '../../src/webhooks/eventCatalog.js';
import { DomainError } from '../shared/domainError.js';

/** What lets deliveries reach private addresses, said with each refusal (here and by the sender). */
export const PRIVATE_TARGETS_HINT = 'WEBHOOK_ALLOW_PRIVATE_TARGETS is off';

/** Spec "Webhook endpoint" and "Limits": url at most 2048 characters, description at most 255. */
export const WebhookUrl = z
  .string()
  .max(2048)
  .url()
  .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'url must be http or https')
  .describe('Where deliveries are POSTed: http(s), at most 2048 characters');
export const WebhookDescription = z.string().max(255).describe('At most 255 characters');
export const WebhookEventTypes = z
  .array(z.string().min(1).max(64))
  .max(64)
  .superRefine((types, ctx) => {
    const unknown = types.filter((t) => !isWebhookEventType(t));
    if (unknown.length) ctx.addIssue({ code: 'custom', message: `unknown event type(s) ${unknown.join(', ')}; known: ${WEBHOOK_EVENT_TYPES.join(', ')}` });
  })
  .describe('Types to receive; empty or absent: every type, including types added later');

/** Duplicates say nothing more; the catalog order keeps the stored list stable. */
export function normaliseEventTypes(types: readonly string[] | undefined): string[] {
  const wanted = new Set(types ?? []);
  return WEBHOOK_EVENT_TYPES.filter((t) => wanted.has(t));
}

/**
 * A literal private address is refused when the endpoint is written, with a clear 400; names are
 * resolved and checked on every connection (src/webhooks/guardedAgent.ts), which is what closes
 * the DNS-rebinding gap.
 */
export function checkTargetUrl(url: string, allowPrivateTargets: boolean): void {
  const host = literalHost(new URL(url));
  if (host === null) return;
  try {
    checkAddress(host, allowPrivateTargets, PRIVATE_TARGETS_HINT);
  } catch (err) {
    if (err instanceof ForbiddenAddressError) throw new DomainError('invalid', err.message);
    throw err;
  }
}
