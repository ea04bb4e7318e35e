import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bindConsent, browserHash } from '../../../commands/connections/bindConsent.js';
import { completeConsent } from '../../../commands/connections/completeConsent.js';
import { connectionOwner, VERIFIER_PURPOSE } from '../../../commands/connections/connection.js';
import { providerAuthorizeUrl, stateHash } from '../../../commands/connections/requestConsent.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { findConsentState } from '../../../queries/connections/consentHistory.js';
import { instanceUrls, resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import { connectedProvider } from '../../catalog/providers.js';
import { openValue } from '../../crypto/sealedValue.js';
import { newConsentCookieValue, readConsentCookie, setConsentCookie } from '../consentCookie.js';
import { resultPage } from './consentResultPage.js';
import type { RouteOptions } from './routeOptions.js';
import { HTML } from '../routeAnswers.js';

/**
 * `authorize_url` (contracts §7): the service's start address, whose query is exactly the one the
 * provider's authorisation page receives (client_id, redirect_uri, response_type, scope, state and
 * the PKCE challenge); opening it binds the state to the browser and redirects there.
 */
export function consentStartUrl(publicBaseUrl: string, provider: string, providerUrl: string): string {
  return `${publicBaseUrl}/oauth/${provider}/authorize${new URL(providerUrl).search}`;
}

const UNKNOWN = 'This consent link is unknown, already used or expired. Start the connection again.';
const OTHER_BROWSER = 'This connection was started in another browser, so it cannot be completed here. Nothing was connected. Start the connection again from the app, in this browser.';

/** The pages a browser reaches with a consent state in its address: never cached, never passed on as a referrer. */
const htmlPage = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send(body);

/**
 * The browser's side of the consent flow (no credentials: the state is the secret, and the cookie
 * set by the start address says which browser may use it; docs/connections.md "Consent flow").
 */
export const oauthFlowRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx }) => {
  const StateQuery = z.object({ state: z.string().max(512).optional() }).passthrough();

  app.get(
    '/oauth/:provider/authorize',
    {
      config: { answers: { 302: { description: "To the provider's authorisation page", media: [], headers: ['location'] }, 400: { media: [HTML] }, 403: { media: [HTML] } } },
      schema: {
        summary: 'authorize_url: binds the consent state to this browser, then redirects to the provider',
        description:
          "The first browser to open it owns the flow: it gets a cookie (HttpOnly, SameSite=Lax, 10 minutes, path /oauth/{provider}/) and a 302 to the provider's authorisation page with the same query. Another browser gets an error page (403); an unknown, used or expired state one too (400).",
        tags: ['connections'],
        params: z.object({ provider: z.string().max(64) }),
        querystring: StateQuery,
      },
    },
    async (request, reply) => {
      const { provider } = request.params;
      const descriptor = connectedProvider(provider);
      const state = request.query.state;
      const hash = state ? stateHash(state) : null;
      const found = descriptor && hash ? await findConsentState(ctx.readStore, hash) : null;
      const name = descriptor?.name ?? provider;
      if (!descriptor || !state || !hash || !found || found.provider !== provider) return htmlPage(reply, 400, resultPage(name, 'error', UNKNOWN));
      const client = await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, found.tenant_id, provider);
      if (!client) return htmlPage(reply, 400, resultPage(name, 'error', `${name} is no longer enabled for this service.`));
      const presented = readConsentCookie(request, hash);
      const fresh = newConsentCookieValue();
      let bound;
      try {
        bound = await bindConsent(ctx.eventStore, {
          tenantId: found.tenant_id,
          userId: found.user_id,
          provider,
          stateHash: hash,
          presentedHash: presented ? browserHash(presented) : null,
          freshHash: browserHash(fresh),
          at: new Date().toISOString(),
        });
      } catch (err) {
        if (err instanceof DomainError && err.code === 'conflict') return htmlPage(reply, 403, resultPage(name, 'error', OTHER_BROWSER));
        if (err instanceof DomainError) return htmlPage(reply, 400, resultPage(name, 'error', UNKNOWN));
        throw err;
      }
      if (bound.fresh) setConsentCookie(reply, ctx.config.publicBaseUrl, provider, hash, fresh);
      const verifier = bound.pending.verifierSealed ? openValue(ctx.valueSealer, VERIFIER_PURPOSE, connectionOwner(found.user_id, provider), bound.pending.verifierSealed) : null;
      const to = providerAuthorizeUrl(descriptor, ctx.grants, client, { callbackUrl: instanceUrls(ctx.config.publicBaseUrl, provider).redirect, state, verifier });
      return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(to, 302);
    },
  );

  app.get(
    '/oauth/:provider/callback',
    {
      config: { answers: { 200: { description: 'The result page', media: [HTML] }, 302: { description: 'To the redirect_uri given when the flow started', media: [], headers: ['location'] }, 400: { media: [HTML] }, 403: { media: [HTML] } } },
      schema: {
        summary: "The provider's redirect target after consent",
        description:
          'Sends the user to the redirect_uri given when the flow started, with query status (connected or error) and provider; without one, shows a result page. Only the browser that opened authorize_url (its consent cookie) completes the flow: any other gets an error page (403) and the state stays usable.',
        tags: ['connections'],
        params: z.object({ provider: z.string() }),
        querystring: z.object({ state: z.string().max(512).optional(), code: z.string().max(4096).optional(), error: z.string().max(512).optional(), scope: z.string().max(2048).optional() }).passthrough(),
      },
    },
    async (request, reply) => {
      const { provider } = request.params;
      const descriptor = connectedProvider(provider);
      const q = request.query;
      const hash = q.state ? stateHash(q.state) : null;
      const pending = descriptor && hash ? await findConsentState(ctx.readStore, hash) : null;
      if (!descriptor || !hash || !pending || pending.provider !== provider) return htmlPage(reply, 400, resultPage(provider, 'error', UNKNOWN));
      const presented = readConsentCookie(request, hash);
      const client = await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, pending.tenant_id, provider);
      const outcome = client
        ? await completeConsent(ctx.eventStore, ctx.valueSealer, ctx.credentials, ctx.grants, client, {
            tenantId: pending.tenant_id,
            userId: pending.user_id,
            provider: descriptor,
            stateHash: hash,
            code: q.code ?? null,
            error: q.error ?? null,
            scope: q.scope ?? null,
            callbackUrl: instanceUrls(ctx.config.publicBaseUrl, provider).redirect,
            application: client.application,
            at: new Date().toISOString(),
            browserHash: presented ? browserHash(presented) : null,
          })
        : { status: 'error' as const, redirectUri: null, error: `${descriptor.name} is no longer enabled for this service`, position: 0 };
      // Another browser changed nothing: the flow's own browser may still finish it, with its cookie.
      if ('otherBrowser' in outcome && outcome.otherBrowser) return htmlPage(reply, 403, resultPage(descriptor.name, 'error', OTHER_BROWSER));
      if (presented) setConsentCookie(reply, ctx.config.publicBaseUrl, provider, hash, null);
      if (outcome.position) await ctx.settle(outcome.position, ['connections']);
      if (outcome.redirectUri) {
        const to = new URL(outcome.redirectUri);
        to.searchParams.set('status', outcome.status);
        to.searchParams.set('provider', provider);
        return reply.redirect(to.toString(), 302);
      }
      const ok = outcome.status === 'connected';
      return htmlPage(
        reply,
        ok ? 200 : 400,
        resultPage(descriptor.name, outcome.status, ok ? `Your ${descriptor.name} account is connected. You can close this page.` : `The connection did not succeed: ${outcome.error ?? 'unknown error'}.`),
      );
    },
  );
};
