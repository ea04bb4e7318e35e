import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CONNECT_SESSION_TTL_SECONDS, createConnectSession, openConnectSession } from '../../../commands/connections/connectSession.js';
import { browserHash } from '../../../commands/connections/bindConsent.js';
import { requestConsent, stateHash } from '../../../commands/connections/requestConsent.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { listConnections } from '../../../queries/connections/listConnections.js';
import { instanceUrls, resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import { getTenant } from '../../../queries/tenants/listTenants.js';
import { getUser } from '../../../queries/users/getUser.js';
import { CONNECTED_PROVIDERS, connectedProvider } from '../../catalog/providers.js';
import { UUID_RE } from '../../shared/ids.js';
import { newConsentCookieValue, setConsentCookie } from '../consentCookie.js';
import { problems } from '../problems.js';
import { DateTime, withProblems } from '../schemas.js';
import { connectPage, userLabel, type ConnectPageProvider } from './connectPage.js';
import { RedirectUri } from './connections.js';
import type { RouteOptions } from './routeOptions.js';
import { HTML } from '../routeAnswers.js';

/**
 * Connect sessions (spec "Providers and connections"): POST makes a short-lived link; the link's
 * page lists the oauth and push providers with the user's status and starts the same consent
 * flow as POST …/connections/{provider}, bound to the browser that pressed the button. The page
 * names the app and the account first. After consenting the user comes back to `redirect_uri`
 * when the session has one, else to the page itself.
 */
export const connectSessionsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  const openSessions = new WeakMap<FastifyRequest, NonNullable<Awaited<ReturnType<typeof openConnectSession>>>>();
  // The page's forms post urlencoded bodies (empty); this parser is scoped to this plugin.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));

  app.post(
    '/v1/users/:id/connect-sessions',
    {
      config: { auth: 'tenant', audit: 'connection.session_created' },
      schema: {
        summary: 'A short-lived link to a hosted page where the user connects providers',
        tags: ['connections'],
        params: z.object({ id: z.string().describe('User id (uuid)') }),
        body: z
          .object({
            redirect_uri: RedirectUri.optional(),
            ttl_seconds: z.number().int().min(60).max(CONNECT_SESSION_TTL_SECONDS.max).optional().describe('Lifetime of the link, 60 to 86400 seconds (default 3600)'),
          })
          .nullish(),
        response: withProblems({ 201: z.object({ url: z.string(), expires_at: DateTime }) }),
      },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      if (!UUID_RE.test(request.params.id) || !(await getUser(ctx.readStore, tenantId, request.params.id.toLowerCase()))) throw problems.notFound('user not found');
      const { secret, expiresAt } = await createConnectSession(ctx.eventStore, {
        tenantId,
        userId: request.params.id.toLowerCase(),
        redirectUri: request.body?.redirect_uri ?? null,
        ttlSeconds: request.body?.ttl_seconds ?? CONNECT_SESSION_TTL_SECONDS.default,
        at: new Date().toISOString(),
        by: request.principal!.actorId,
      });
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ url: `${ctx.config.publicBaseUrl}/connect/${secret}`, expires_at: expiresAt });
    },
  );

  const page = async (secret: string, message: string | null) => {
    const session = await openConnectSession(ctx.eventStore, secret, new Date());
    if (!session) return null;
    const connections = new Map((await listConnections(ctx.readStore, session.tenant_id, session.user_id)).map((c) => [c.provider, c.status]));
    const providers: ConnectPageProvider[] = [];
    for (const p of CONNECTED_PROVIDERS) {
      const client = await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, session.tenant_id, p.slug);
      // A retired provider cannot be connected (contracts §14): shown disabled.
      providers.push({ slug: p.slug, name: p.name, enabled: client !== null && !p.retirement, status: connections.get(p.slug) ?? null });
    }
    const tenant = await getTenant(ctx.readStore, session.tenant_id);
    const user = await getUser(ctx.readStore, session.tenant_id, session.user_id);
    return connectPage(`/connect/${secret}`, providers, message, { app: tenant?.name ?? 'this app', user: userLabel(session.user_id, user?.external_ref) });
  };
  const gone = 'This link is unknown or has expired. Ask the app that sent you for a new one.';

  app.get(
    '/connect/:secret',
    { config: { answers: { 200: { description: 'The connect page', media: [HTML] }, 404: { description: 'An unknown or expired link: a page that says so', media: [HTML] } } }, schema: { summary: 'The hosted connect page of a connect session', tags: ['connections'], params: z.object({ secret: z.string().max(64) }), querystring: z.object({ status: z.string().max(20).optional(), provider: z.string().max(64).optional() }).passthrough() } },
    async (request, reply) => {
      const q = request.query;
      const name = q.provider ? (connectedProvider(q.provider)?.name ?? null) : null;
      const message = name && q.status === 'connected' ? `${name} is connected.` : name && q.status === 'error' ? `${name} could not be connected. Try again.` : null;
      const html = await page(request.params.secret, message);
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      return reply.code(html ? 200 : 404).type('text/html; charset=utf-8').send(html ?? connectPage('', [], gone));
    },
  );

  app.post(
    '/connect/:secret/:provider',
    {
      config: { answers: { 303: { description: "To the provider's authorisation page", media: [], headers: ['location'] }, 404: { description: 'An unknown link or provider: a page that says so', media: [HTML] }, 409: { media: [HTML] } } },
      // The session's secret is the credential: checked from the address, before the body is read (contracts §18).
      onRequest: async (request, reply) => {
        const session = await openConnectSession(ctx.eventStore, (request.params as { secret: string }).secret, new Date());
        if (!session) return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').code(404).send(connectPage('', [], gone));
        openSessions.set(request, session);
      },
      schema: { summary: 'Start the consent flow of a provider from the hosted page', tags: ['connections'], params: z.object({ secret: z.string().max(64), provider: z.string().max(64) }) },
    },
    async (request, reply) => {
      const { secret, provider } = request.params;
      // Opened by onRequest, which answered 404 itself when there was none.
      const session = openSessions.get(request)!;
      const html = () => reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
      const descriptor = connectedProvider(provider);
      const client = descriptor ? await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, session.tenant_id, provider) : null;
      if (!descriptor || !client) return html().code(404).send(await page(secret, `${provider} is not available.`));
      try {
        // The button press is the start of the flow: the state is bound to this browser at once.
        const cookie = newConsentCookieValue();
        const result = await requestConsent(ctx.eventStore, ctx.valueSealer, ctx.grants, client, {
          tenantId: session.tenant_id,
          userId: session.user_id,
          provider,
          redirectUri: session.redirect_uri ?? `${ctx.config.publicBaseUrl}/connect/${secret}`,
          callbackUrl: instanceUrls(ctx.config.publicBaseUrl, provider).redirect,
          at: new Date().toISOString(),
          by: session.by,
          browserHash: browserHash(cookie),
        });
        await ctx.settle(result.position, ['connections']);
        setConsentCookie(reply, ctx.config.publicBaseUrl, provider, stateHash(result.state), cookie);
        return reply.header('cache-control', 'no-store').redirect(result.providerUrl, 303);
      } catch (err) {
        if (err instanceof DomainError && err.code === 'conflict') return html().code(409).send(await page(secret, err.message));
        throw err;
      }
    },
  );
};
