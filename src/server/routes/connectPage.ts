/** The hosted connect page: plain server-rendered HTML, one form per provider, readable without scripts or styles. */
import { escapeHtml as escape } from './consentResultPage.js';

export type ConnectPageProvider = { slug: string; name: string; enabled: boolean; status: 'active' | 'needs_reauth' | 'disconnected' | null };
/** Whom a provider will be linked to: the tenant's name and the user as the tenant knows them. */
export type ConnectPageParty = { app: string; user: string };

/** The user as the page names them: the tenant's external_ref, else the end of the user id (enough to tell two apart, too little to be a handle). */
export const userLabel = (userId: string, externalRef: string | null | undefined) => externalRef ?? `user …${userId.slice(-6)}`;

const STATUS_TEXT = { active: 'Connected', needs_reauth: 'Needs you to connect again', disconnected: 'Disconnected' } as const;

/**
 * Says which app and which account a provider will be linked to before any button is pressed (a
 * forwarded link shows the stranger whose account it is), and each provider's button is the
 * confirmation: nothing redirects by itself.
 */
export function connectPage(actionBase: string, providers: readonly ConnectPageProvider[], message: string | null, party: ConnectPageParty | null = null): string {
  const items = providers
    .map((p) => {
      const status = p.status ? STATUS_TEXT[p.status] : 'Not connected';
      const label = p.status === 'active' ? `Connect ${p.name} again` : `Connect ${p.name}`;
      const action = p.enabled
        ? `<form method="post" action="${escape(`${actionBase}/${p.slug}`)}"><button type="submit">${escape(label)}</button></form>`
        : '<p>Not available</p>';
      return `<li data-provider="${escape(p.slug)}"><h2>${escape(p.name)}</h2><p data-status="${p.status ?? 'none'}">${escape(status)}</p>${action}</li>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Connect your health data</title></head>
<body>
<main>
<h1>Connect your health data</h1>
${
  party
    ? `<p data-party>You are connecting your health data to <strong data-app>${escape(party.app)}</strong>, for the account <strong data-user>${escape(party.user)}</strong>. If this is not your account, close this page: a provider you connect here is linked to it.</p>`
    : ''
}
${message ? `<p role="alert">${escape(message)}</p>` : ''}
<ul>
${items}
</ul>
</main>
</body>
</html>
`;
}
