/** The hosted connect page: plain server-rendered HTML, one form per provider, readable without scripts or styles. */
import { escapeHtml as escape } from './consentResultPage.js';

export type ConnectPageProvider = { slug: string; name: string; enabled: boolean; status: 'active' | 'needs_reauth' | 'disconnected' | null };

const STATUS_TEXT = { active: 'Connected', needs_reauth: 'Needs you to connect again', disconnected: 'Disconnected' } as const;

export function connectPage(actionBase: string, providers: readonly ConnectPageProvider[], message: string | null): string {
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
${message ? `<p role="alert">${escape(message)}</p>` : ''}
<ul>
${items}
</ul>
</main>
</body>
</html>
`;
}
