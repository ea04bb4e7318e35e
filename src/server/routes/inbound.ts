import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { changeProviderPermissions } from '../../../commands/connections/changeProviderPermissions.js';
import { categoriesOf } from '../../../commands/connections/completeConsent.js';
import { connectionState, connectionStream } from '../../../commands/connections/connection.js';
import { disconnect } from '../../../commands/connections/disconnect.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import type { ConnectionDoc } from '../../../projections/connections/connectionsProjection.js';
import { connectionsOfProviderUsers } from '../../../queries/connections/connectionsOfProviderUsers.js';
import { connectionsUnder, inboundApplicationsOf, type InboundApplications } from '../../../queries/connections/inboundApplications.js';
import type { AppContext } from '../appContext.js';
import { garmin } from '../../sources/providers/garmin/provider.js';
import { NotificationSplitter, NotificationTooLarge, PIECE_BYTES, type AccountChange, type GarminNotification } from '../../sources/providers/garmin/receive.js';
import { SUMMARY_CATEGORY, type SummaryType } from '../../sources/providers/garmin/vocabulary.js';
import { recordPushedPayloads } from '../../processes/sync/syncTriggers.js';
import { HttpProblem, problems } from '../problems.js';
import { feedBody } from '../slicedBody.js';
import { withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';
import { requiredBody } from '../routeAnswers.js';

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

/**
 * POST /inbound/garmin/{secret}: Garmin's push notifications (docs/connectors/garmin.md). Garmin
 * does not sign what it sends, so the address itself is the credential: its last segment is the
 * secret of the Garmin application the data was consented under (the tenant's INBOUND_SECRET
 * key, or GARMIN_INBOUND_SECRET for the instance's own keys). A user's data is stored only for
 * active connections whose application's secret is the one in the address; other users are
 * ignored and counted. Each user's part is stored unchanged through the shared payload store and
 * recorded as a `notification` sync run; the answer comes once everything is stored (Garmin
 * retries on anything but a 2xx, and a retried delivery stores nothing twice).
 *
 * Nothing is read before the address is known (issue 20): the application is found from the
 * secret's digest as soon as the headers are in, and an address naming none is a 401 whose body
 * is drained unread. A known address's body is split while it arrives, in bounded steps
 * (NotificationSplitter), at most 16 MiB and MAX_NOTIFICATION_ITEMS items (413 beyond).
 */
export const inboundRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  // The applications each request's address names, found before its body is read.
  const addressed = new WeakMap<object, InboundApplications>();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', async (request: FastifyRequest, payload: Readable): Promise<GarminNotification> => {
    const splitter = new NotificationSplitter();
    try {
      await feedBody(payload, { declaredLength: Number(request.headers['content-length'] ?? 0), limit: INBOUND_BODY_LIMIT, write: (chunk) => splitter.write(chunk), step: PIECE_BYTES });
      return splitter.end();
    } catch (err) {
      if (err instanceof NotificationTooLarge) throw new HttpProblem(413, err.message);
      throw err;
    }
  });

  app.post(
    '/inbound/:provider/:secret',
    {
      bodyLimit: INBOUND_BODY_LIMIT,
      config: { operation: requiredBody(['application/json'], 'The push notification, as Garmin sends it') },
      // Before the body: an address that names no application is refused on its headers alone.
      onRequest: async (request) => {
        const { provider, secret } = request.params as { provider: string; secret: string };
        if (provider !== garmin.slug) throw problems.notFound(`no push notifications for ${provider}`);
        const applications = secret.length <= 256 ? await inboundApplicationsOf(ctx.readStore, ctx.config.providers, garmin.slug, secret) : null;
        if (!applications) throw problems.unauthorized('unknown inbound address');
        addressed.set(request, applications);
      },
      schema: {
        summary: "Garmin Health API push notifications (the address registered in Garmin's endpoint configuration)",
        tags: ['connections'],
        params: z.object({ provider: z.string(), secret: z.string().max(256) }),
        response: withProblems({ 200: Received }, [400, 401, 404, 413, 415]),
      },
    },
    async (request) => {
      const applications = addressed.get(request);
      const notification = request.body as GarminNotification | undefined;
      if (!applications) throw problems.unauthorized('unknown inbound address');
      if (!notification || !Array.isArray(notification.payloads)) throw new HttpProblem(415, 'notifications are application/json');
      const at = new Date();

      // Every user the delivery names, looked up at once, then kept to the address's applications.
      const named = await connectionsOfProviderUsers(ctx.readStore, garmin.slug, [...notification.payloads, ...notification.accountChanges].map((p) => p.providerUserId));
      const reached = new Set((await connectionsUnder(ctx.readStore, garmin.slug, applications, [...named.values()].flat())).map((c) => c._id));
      const connectionsOf = (providerUserId: string) => (named.get(providerUserId) ?? []).filter((c) => reached.has(c._id));

      let stored = 0;
      let ignored = 0;
      let lastEtlPosition = 0;
      for (const payload of notification.payloads) {
        const connections = connectionsOf(payload.providerUserId).filter((c) => c.status === 'active');
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
        const connections = connectionsOf(change.providerUserId);
        if (connections.length === 0) ignored++;
        for (const c of connections) {
          const position = await applyAccountChange(ctx, c, change, at);
          if (position > 0) accountChanges++;
        }
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
    const position = (await disconnect(ctx.eventStore, { tenantId: c.tenant_id, userId: c.user_id, provider: garmin.slug, reason, at: at.toISOString(), by: garmin.slug })).position;
    await ctx.credentials.remove(c.user_id, garmin.slug);
    return position;
  } catch (err) {
    // The user is gone or being deleted: nothing to change.
    if (err instanceof DomainError) return 0;
    throw err;
  }
}
