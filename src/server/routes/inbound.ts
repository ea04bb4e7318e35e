import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { changeProviderPermissions } from '../../../commands/connections/changeProviderPermissions.js';
import { categoriesOf } from '../../../commands/connections/completeConsent.js';
import { connectionState, connectionStream } from '../../../commands/connections/connection.js';
import { disconnect } from '../../../commands/connections/disconnect.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import type { ConnectionDoc } from '../../../projections/connections/connectionsProjection.js';
import { connectionsOfProviderUser } from '../../../queries/connections/connectionsOfProviderUser.js';
import { resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import type { AppContext } from '../../app/context.js';
import { garmin } from '../../connectors/garmin/provider.js';
import { splitNotification, type AccountChange } from '../../connectors/garmin/receive.js';
import { SUMMARY_CATEGORY, type SummaryType } from '../../connectors/garmin/vocabulary.js';
import { recordPushedPayloads } from '../../connectors/sync/syncTriggers.js';
import { HttpProblem, problems } from '../problems.js';
import { withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

const MiB = 1024 * 1024;
/** Garmin's largest notifications are activity details (a sample per second) for several users at once. */
export const INBOUND_BODY_LIMIT = 16 * MiB;

const Received = z
  .object({
    stored: z.number().int().describe("Users' payloads stored (or already stored by an earlier delivery)"),
    ignored: z.number().int().describe('Users not known as an active connection under this address, or without consent for the data'),
    account_changes: z.number().int().describe('Deregistrations and permission changes applied'),
    pings: z.number().int().describe('Ping-mode items (callbackURL) ignored: push mode must be configured'),
  })
  .describe('Notification received');

/** Constant-time comparison of the path secret with a configured one (digests first: lengths differ). */
function sameSecret(given: string, expected: string | undefined): boolean {
  if (!expected) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * POST /inbound/garmin/{secret}: Garmin's push notifications (docs/connectors/garmin.md). Garmin
 * does not sign what it sends, so the address itself is the credential: its last segment is the
 * secret of the Garmin application the data was consented under (the tenant's INBOUND_SECRET
 * key, or GARMIN_INBOUND_SECRET for the instance's own keys). A user's data is stored only for
 * active connections whose application's secret is the one in the address; other users are
 * ignored and counted. Each user's part is stored unchanged through the shared payload store and
 * recorded as a `notification` sync run; the answer comes once everything is stored (Garmin
 * retries on anything but a 2xx, and a retried delivery stores nothing twice).
 */
export const inboundRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: INBOUND_BODY_LIMIT }, (_req, body, done) => done(null, body));

  app.post(
    '/inbound/:provider/:secret',
    {
      bodyLimit: INBOUND_BODY_LIMIT,
      schema: {
        summary: "Garmin Health API push notifications (the address registered in Garmin's endpoint configuration)",
        tags: ['connections'],
        params: z.object({ provider: z.string(), secret: z.string().max(256) }),
        response: withProblems({ 200: Received }, [400, 401, 404, 413, 415]),
      },
    },
    async (request) => {
      if (request.params.provider !== garmin.slug) throw problems.notFound(`no push notifications for ${request.params.provider}`);
      if (!Buffer.isBuffer(request.body)) throw new HttpProblem(415, 'notifications are application/json');
      const notification = splitNotification(request.body);
      const secret = request.params.secret;
      const at = new Date();
      const matches = secretMatcher(ctx, secret);

      let stored = 0;
      let ignored = 0;
      let lastEtlPosition = 0;
      for (const payload of notification.payloads) {
        const connections = (await matches(await connectionsOfProviderUser(ctx.readStore, garmin.slug, payload.providerUserId))).filter((c) => c.status === 'active');
        if (connections.length === 0) {
          ignored++;
          continue;
        }
        const category = SUMMARY_CATEGORY[payload.dataType as SummaryType];
        for (const c of connections) {
          const { state } = await loadState(ctx.eventStore, connectionStream(c.user_id, garmin.slug), connectionState);
          if (state.status !== 'active' || !state.categories.includes(category)) {
            ignored++;
            continue;
          }
          try {
            // The run is named by the part's content (its ref holds the body's digest): a redelivery names it again and stores nothing twice.
            await recordPushedPayloads(
              { eventStore: ctx.eventStore, rawStore: ctx.rawStore, dataKeys: ctx.dataKeys, now: () => at, afterStored: async (position) => void (lastEtlPosition = Math.max(lastEtlPosition, position)) },
              { userId: c.user_id, provider: garmin.slug, dataType: payload.dataType, window: payload.window ?? { start: at, end: new Date(at.getTime() + 1000) }, notificationId: payload.ref, payloads: [payload] },
            );
          } catch (err) {
            // The user is being deleted, the provider's data erased, or the same delivery is being stored right now: nothing more to keep.
            if (err instanceof DomainError) {
              ignored++;
              continue;
            }
            throw err;
          }
          stored++;
        }
      }

      let accountChanges = 0;
      for (const change of notification.accountChanges) {
        const connections = await matches(await connectionsOfProviderUser(ctx.readStore, garmin.slug, change.providerUserId));
        if (connections.length === 0) ignored++;
        for (const c of connections) {
          const position = await applyAccountChange(ctx, c, change, at);
          if (position > 0) accountChanges++;
        }
      }

      // A secret that names no application at all (neither the instance's nor any tenant's of these users) is refused.
      if (!matches.anyMatched() && !sameSecret(secret, ctx.config.providers[garmin.slug]?.inboundSecret)) {
        throw problems.unauthorized('unknown inbound address');
      }
      if (lastEtlPosition > 0) {
        await ctx.settle(lastEtlPosition, ['etl_jobs']);
        ctx.etl.kick();
      }
      // Read-your-writes for the runs and connections this delivery changed.
      if (stored > 0 || accountChanges > 0) await ctx.settle(undefined, ['sync_runs', 'connections']);
      return { stored, ignored, account_changes: accountChanges, pings: notification.pings };
    },
  );
};

/**
 * Keeps the connections whose Garmin application's inbound secret is the one in the address:
 * the tenant's INBOUND_SECRET when the tenant connects with its own keys, GARMIN_INBOUND_SECRET
 * when it uses the instance's. Remembers whether any matched (for the 401).
 */
function secretMatcher(ctx: AppContext, secret: string) {
  // Per tenant: the application it connects Garmin with now, when the address's secret is that application's.
  const byTenant = new Map<string, string | null>();
  let matched = false;
  const matches = async (connections: ConnectionDoc[]): Promise<ConnectionDoc[]> => {
    const out: ConnectionDoc[] = [];
    for (const c of connections) {
      let application = byTenant.get(c.tenant_id);
      if (application === undefined) {
        const client = await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, c.tenant_id, garmin.slug);
        const expected = !client ? undefined : client.application === 'instance' ? ctx.config.providers[garmin.slug]?.inboundSecret : client.values.INBOUND_SECRET;
        application = client && sameSecret(secret, expected) ? client.application : null;
        byTenant.set(c.tenant_id, application);
      }
      if (application !== null && application === c.application) {
        matched = true;
        out.push(c);
      }
    }
    return out;
  };
  return Object.assign(matches, { anyMatched: () => matched });
}

/**
 * Garmin's registration notifications: a deregistration disconnects (every category revoked, the
 * provider as actor); a permission change grants and revokes categories, and disconnects when it
 * leaves none. Answers the last position appended, 0 when nothing changed.
 */
async function applyAccountChange(ctx: AppContext, c: ConnectionDoc, change: AccountChange, at: Date): Promise<number> {
  const remaining = change.kind === 'userPermissionsChange' && change.permissions ? categoriesOf(garmin, change.permissions) : [];
  try {
    if (change.kind === 'userPermissionsChange' && change.permissions && remaining.length > 0) {
      return await changeProviderPermissions(ctx.eventStore, { userId: c.user_id, provider: garmin, permissions: change.permissions, at: at.toISOString() });
    }
    const reason = change.kind === 'deregistrations' ? 'deregistered at Garmin' : 'every permission withdrawn at Garmin';
    return (await disconnect(ctx.eventStore, { tenantId: c.tenant_id, userId: c.user_id, provider: garmin.slug, reason, at: at.toISOString(), by: garmin.slug })).position;
  } catch (err) {
    // The user is gone or being deleted: nothing to change.
    if (err instanceof DomainError) return 0;
    throw err;
  }
}
