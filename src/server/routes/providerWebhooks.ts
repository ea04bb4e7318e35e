import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { disconnect } from '../../../commands/connections/disconnect.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { connectionsOfProviderUsers } from '../../../queries/connections/connectionsOfProviderUsers.js';
import type { AppContext } from '../appContext.js';
import { queueNotificationRun } from '../../processes/sync/syncTriggers.js';
import { fitbitNotification } from '../../sources/providers/fitbit/notification.js';
import { googleNotification } from '../../sources/providers/google/notification.js';
import { ouraNotification } from '../../sources/providers/oura/notification.js';
import { stravaNotification } from '../../sources/providers/strava/notification.js';
import { whoopNotification } from '../../sources/providers/whoop/notification.js';
import { withingsNotification } from '../../sources/providers/withings/notification.js';
import { MalformedNotification, type NotificationItem } from '../../sources/shared/providerNotifications.js';
import type { WebhookApplication } from '../webhookApplications.js';
import { hmacMatches, SIGNATURE_TOLERANCE_MS, sameText, signatureTime } from '../../sources/shared/webhookSignatures.js';
import { HttpProblem, problems } from '../problems.js';
import { withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';
import { requiredBody } from '../routeAnswers.js';

/** Change notifications are a few hundred bytes; Fitbit batches several items. */
const BODY_LIMIT = 256 * 1024;

const Received = z
  .object({
    queued: z.number().int().describe('Notification sync runs queued by this delivery'),
    repeated: z.number().int().describe('Runs an earlier delivery of the same notification queued already'),
    ignored: z.number().int().describe('Items naming no active connection of a verified application, or data no connector pulls'),
    disconnected: z.number().int().describe('Connections ended because the user withdrew the app at the provider'),
  })
  .describe('Notification received');
type Counts = z.infer<typeof Received>;

/**
 * The applications whose secret `verifies` the delivery; none: 401, nothing queued. The
 * applications come opened from the cache (WebhookApplications): a delivery, signed or not,
 * reads and unseals no keys.
 */
async function verifiedApplications(ctx: AppContext, provider: string, verifies: (a: WebhookApplication) => boolean): Promise<Set<string>> {
  const verified = new Set<string>();
  // Every application is tried (no early exit), so the answer's timing tells nothing of which matched.
  for (const a of await ctx.webhookApplications.of(provider)) if (verifies(a)) verified.add(a.application);
  if (verified.size === 0) throw problems.unauthorized('the delivery is not signed by an application this service knows');
  return verified;
}

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | null => {
  const v = headers[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 1024 ? v : null;
};

/**
 * Oura and WHOOP: an HMAC-SHA256 keyed by the client secret over the timestamp header followed by
 * the body. A timestamp more than SIGNATURE_TOLERANCE_MS from the clock is refused before any
 * signature is computed: a recorded delivery cannot be replayed later.
 */
async function timestampSigned(
  ctx: AppContext,
  provider: string,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
  names: { signature: string; timestamp: string; encoding: 'hex' | 'base64' },
): Promise<Set<string>> {
  const signature = header(headers, names.signature);
  const message = Buffer.concat([Buffer.from(recentTimestamp(ctx, headers, names.timestamp)), body]);
  return verifiedApplications(ctx, provider, (a) => !!signature && hmacMatches({ algorithm: 'sha256', key: a.clientSecret, message, given: signature, encoding: names.encoding }));
}

/** The signature's timestamp header, or 401 when it is missing, not a Unix time or too far from the clock. */
function recentTimestamp(ctx: AppContext, headers: Record<string, string | string[] | undefined>, name: string): string {
  const timestamp = header(headers, name);
  const signedAt = timestamp === null ? null : signatureTime(timestamp);
  if (signedAt === null) throw problems.unauthorized(`${name} is missing or not a Unix time`);
  if (Math.abs(ctx.sync.now().getTime() - signedAt) > SIGNATURE_TOLERANCE_MS) {
    throw problems.unauthorized(`${name} is more than ${SIGNATURE_TOLERANCE_MS / 60_000} minutes from this server's clock: a replayed or delayed delivery`);
  }
  return timestamp!;
}

/**
 * contracts §18, before the body: what the headers alone can refuse (a signature missing, a
 * timestamp missing or stale) is refused from the headers. A signature over the body can only
 * be checked once the body is in: those bodies are bounded by BODY_LIMIT and BODY_IDLE_TIMEOUT_S.
 */
function signedHeaders(ctx: AppContext, names: { signature: string; timestamp?: string }) {
  return async (request: FastifyRequest) => {
    if (header(request.headers, names.signature) === null) throw problems.unauthorized(`${names.signature} is missing`);
    if (names.timestamp) recentTimestamp(ctx, request.headers, names.timestamp);
  };
}

function parsed(parse: () => NotificationItem[]): NotificationItem[] {
  try {
    return parse();
  } catch (err) {
    if (err instanceof MalformedNotification) throw problems.badRequest(err.message);
    throw err;
  }
}

/**
 * Each item, for the active connections of that provider user made with a verified application:
 * a change queues a `notification` run (named by the notification, so a redelivery queues
 * nothing more); the user withdrawing the app disconnects (the provider as actor). Answers once
 * the runs are queued and the read models hold them.
 */
async function apply(ctx: AppContext, provider: string, verified: Set<string>, items: NotificationItem[]): Promise<Counts> {
  const counts: Counts = { queued: 0, repeated: 0, ignored: 0, disconnected: 0 };
  const now = ctx.sync.now();
  let last = 0;
  // Every provider user the delivery names, looked up at once (a Fitbit list may name thousands).
  const named = await connectionsOfProviderUsers(ctx.readStore, provider, items.filter((i) => i.kind !== 'ignored').map((i) => i.providerUserId));
  for (const item of items) {
    const connections = item.kind === 'ignored' ? [] : (named.get(item.providerUserId) ?? []).filter((c) => c.status === 'active' && verified.has(c.application));
    if (connections.length === 0) counts.ignored++;
    for (const c of connections) {
      try {
        if (item.kind === 'changed') {
          const run = await queueNotificationRun(
            { eventStore: ctx.eventStore, now: () => now, enqueue: (run) => ctx.sync.enqueue(run) },
            { userId: c.user_id, provider, dataType: item.dataType, window: item.window, notificationId: item.notificationId },
          );
          if (run.created) counts.queued++;
          else counts.repeated++;
        } else if (item.kind === 'deauthorized') {
          const r = await disconnect(ctx.eventStore, { tenantId: c.tenant_id, userId: c.user_id, provider, reason: `access withdrawn at ${provider}`, at: now.toISOString(), by: provider });
          await ctx.credentials.remove(c.user_id, provider);
          last = Math.max(last, r.position);
          counts.disconnected++;
        }
      } catch (err) {
        // The connection ended, the user is being deleted, the provider's data erased: nothing to pull.
        if (err instanceof DomainError) {
          counts.ignored++;
          continue;
        }
        throw err;
      }
    }
  }
  if (counts.queued > 0 || last > 0) await ctx.settle(undefined, ['sync_runs', 'connections']);
  return counts;
}

/** The applications whose webhook token is the address's (Strava and Withings sign nothing: the address is the credential). */
async function tokenApplications(ctx: AppContext, provider: string, token: string): Promise<Set<string>> {
  return verifiedApplications(ctx, provider, (a) => sameText(token, a.token));
}

/** Applications a delivery's address or Authorization header proved, before its body was read (contracts §18). */
const provenBeforeBody = new WeakMap<FastifyRequest, Set<string>>();

/** An onRequest hook: the delivery's credential (its address, or its Authorization header) checked from the headers alone. */
function credentialBeforeBody(prove: (request: FastifyRequest) => Promise<Set<string>>) {
  return async (request: FastifyRequest) => {
    provenBeforeBody.set(request, await prove(request));
  };
}

function proven(request: FastifyRequest): Set<string> {
  const verified = provenBeforeBody.get(request);
  if (!verified) throw problems.unauthorized('the delivery is not signed by an application this service knows');
  return verified;
}

const raw = (body: unknown): Buffer => {
  if (!Buffer.isBuffer(body)) throw new HttpProblem(415, 'send the notification as its provider does (JSON or a form)');
  return body;
};

const noBody = (reply: FastifyReply, status: number) => reply.code(status).send(null);

/**
 * Provider webhooks of the pull providers (docs/connections.md "Provider webhooks"): each
 * provider's change notification, verified the way that provider documents, queues a
 * `notification` sync run of the data type it names instead of waiting for the schedule.
 */
/** A notification's body is required and read raw (its signature is over the bytes): the document says so (contracts §17). */
const JSON_NOTIFICATION = requiredBody(['application/json'], "The provider's notification, as it sends it");
const FORM_NOTIFICATION = requiredBody(['application/x-www-form-urlencoded'], "The provider's notification, as it sends it");

export const providerWebhooksRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  app.removeAllContentTypeParsers();
  // Signatures are over the bytes as sent: every body is kept raw.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));
  const tags = ['connections'];
  const TokenParams = z.object({ token: z.string().max(256) });

  // Strava: one subscription per application; the callback is validated with the verify token given when subscribing.
  app.get(
    '/webhooks/strava/:token',
    {
      schema: {
        summary: "Strava's subscription validation: echoes hub.challenge when hub.verify_token is the address's",
        tags,
        params: TokenParams,
        querystring: z.object({ 'hub.mode': z.literal('subscribe'), 'hub.challenge': z.string().min(1).max(512), 'hub.verify_token': z.string().max(256) }),
        response: withProblems({ 200: z.object({ 'hub.challenge': z.string() }) }, [400, 401]),
      },
    },
    async (request) => {
      const { token } = request.params;
      await tokenApplications(ctx, 'strava', token);
      if (!sameText(request.query['hub.verify_token'], token)) throw problems.unauthorized('hub.verify_token is not this address’s');
      return { 'hub.challenge': request.query['hub.challenge'] };
    },
  );
  app.post(
    '/webhooks/strava/:token',
    {
      bodyLimit: BODY_LIMIT, config: { operation: JSON_NOTIFICATION },
      onRequest: credentialBeforeBody((request) => tokenApplications(ctx, 'strava', (request.params as { token: string }).token)),
      schema: { summary: 'Strava webhook events (activities; athlete deauthorization)', tags, params: TokenParams, response: withProblems({ 200: Received }, [400, 401, 413, 415]) },
    },
    async (request) => {
      const verified = proven(request);
      const body = raw(request.body);
      return apply(ctx, 'strava', verified, parsed(() => stravaNotification(body, ctx.sync.now())));
    },
  );

  // Fitbit: the subscriber's verification code (from its developer console) answers 204, anything else 404.
  app.get(
    '/webhooks/fitbit',
    {
      schema: {
        summary: "Fitbit's subscriber verification: 204 for the application's verification code, 404 otherwise",
        tags,
        querystring: z.object({ verify: z.string().max(256) }),
        response: withProblems({ 204: z.null() }, [400, 404]),
      },
    },
    async (request, reply) => {
      const verify = request.query.verify;
      let known = false;
      for (const a of await ctx.webhookApplications.of('fitbit')) if (a.verificationCode && sameText(verify, a.verificationCode)) known = true;
      if (!known) throw problems.notFound('not this subscriber’s verification code');
      return noBody(reply, 204);
    },
  );
  app.post(
    '/webhooks/fitbit',
    { bodyLimit: BODY_LIMIT, config: { operation: JSON_NOTIFICATION }, onRequest: signedHeaders(ctx, { signature: 'x-fitbit-signature' }), schema: { summary: 'Fitbit subscription notifications (X-Fitbit-Signature)', tags, response: withProblems({ 204: z.null() }, [400, 401, 413, 415]) } },
    async (request, reply) => {
      const body = raw(request.body);
      const signature = header(request.headers, 'x-fitbit-signature');
      const verified = await verifiedApplications(ctx, 'fitbit', (a) => !!signature && hmacMatches({ algorithm: 'sha1', key: `${a.clientSecret}&`, message: body, given: signature, encoding: 'base64' }));
      await apply(ctx, 'fitbit', verified, parsed(() => fitbitNotification(body, ctx.sync.now())));
      return noBody(reply, 204);
    },
  );

  // Oura: a subscription names a verification token, which Oura sends back with a challenge to echo.
  app.get(
    '/webhooks/oura',
    {
      schema: {
        summary: "Oura's subscription verification: echoes the challenge when verification_token is an application's",
        tags,
        querystring: z.object({ verification_token: z.string().max(256), challenge: z.string().min(1).max(512) }),
        response: withProblems({ 200: z.object({ challenge: z.string() }) }, [400, 401]),
      },
    },
    async (request) => {
      await verifiedApplications(ctx, 'oura', (a) => sameText(request.query.verification_token, a.token));
      return { challenge: request.query.challenge };
    },
  );
  app.post(
    '/webhooks/oura',
    {
      bodyLimit: BODY_LIMIT, config: { operation: JSON_NOTIFICATION },
      onRequest: signedHeaders(ctx, { signature: 'x-oura-signature', timestamp: 'x-oura-timestamp' }),
      schema: { summary: 'Oura webhook notifications (x-oura-signature over x-oura-timestamp and the body)', tags, response: withProblems({ 200: Received }, [400, 401, 413, 415]) },
    },
    async (request) => {
      const body = raw(request.body);
      const verified = await timestampSigned(ctx, 'oura', request.headers, body, { signature: 'x-oura-signature', timestamp: 'x-oura-timestamp', encoding: 'hex' });
      return apply(ctx, 'oura', verified, parsed(() => ouraNotification(body, ctx.sync.now())));
    },
  );

  // WHOOP: every delivery is signed; the webhook URL is set in the application's settings.
  app.post(
    '/webhooks/whoop',
    {
      bodyLimit: BODY_LIMIT, config: { operation: JSON_NOTIFICATION },
      onRequest: signedHeaders(ctx, { signature: 'x-whoop-signature', timestamp: 'x-whoop-signature-timestamp' }),
      schema: { summary: 'WHOOP webhooks (X-WHOOP-Signature over X-WHOOP-Signature-Timestamp and the body)', tags, response: withProblems({ 200: Received }, [400, 401, 413, 415]) },
    },
    async (request) => {
      const body = raw(request.body);
      const verified = await timestampSigned(ctx, 'whoop', request.headers, body, { signature: 'x-whoop-signature', timestamp: 'x-whoop-signature-timestamp', encoding: 'base64' });
      return apply(ctx, 'whoop', verified, parsed(() => whoopNotification(body, ctx.sync.now())));
    },
  );

  // Google Health: the subscriber's endpoint authorization secret (the application's webhook token) comes as the Authorization header.
  app.post(
    '/webhooks/google',
    {
      bodyLimit: BODY_LIMIT, config: { operation: JSON_NOTIFICATION },
      onRequest: credentialBeforeBody((request) => {
        const secret = header(request.headers, 'authorization');
        return verifiedApplications(ctx, 'google', (a) => !!secret && sameText(secret, a.token));
      }),
      schema: {
        summary: "Google Health API notifications (Authorization: the subscriber's secret); the endpoint verification answers 201",
        tags,
        response: withProblems({ 200: Received, 201: z.null() }, [400, 401, 413, 415]),
      },
    },
    async (request, reply) => {
      // Authenticated before the body was read (onRequest): an unsigned delivery (the verification's second call too) is 401.
      const verified = proven(request);
      const body = raw(request.body);
      let verification = false;
      const items = parsed(() => {
        const read = googleNotification(body, ctx.sync.now());
        verification = read === null;
        return read ?? [];
      });
      if (verification) return noBody(reply, 201);
      return apply(ctx, 'google', verified, items);
    },
  );

  // Withings: a per-user subscription names this address; Withings checks it answers before subscribing.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/webhooks/withings/:token',
    schema: { summary: "Withings' check of the callback address: 200 when the address is an application's", tags, params: TokenParams, response: withProblems({ 200: z.null() }, [401]) },
    handler: async (request, reply) => {
      await tokenApplications(ctx, 'withings', request.params.token);
      return noBody(reply, 200);
    },
  });
  app.post(
    '/webhooks/withings/:token',
    {
      bodyLimit: BODY_LIMIT, config: { operation: FORM_NOTIFICATION },
      onRequest: credentialBeforeBody((request) => tokenApplications(ctx, 'withings', (request.params as { token: string }).token)),
      schema: { summary: 'Withings data update notifications (form: userid, appli, startdate, enddate)', tags, params: TokenParams, response: withProblems({ 200: Received }, [400, 401, 413, 415]) },
    },
    async (request) => {
      const verified = proven(request);
      const form = new URLSearchParams(raw(request.body).toString('utf8'));
      return apply(ctx, 'withings', verified, parsed(() => withingsNotification(form, ctx.sync.now())));
    },
  );
};
