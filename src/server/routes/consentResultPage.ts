/** The built-in page a user sees after consenting when the tenant gave no redirect_uri: plain, accessible HTML. */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function resultPage(provider: string, status: 'connected' | 'error', message: string): string {
  const title = status === 'connected' ? `${provider} connected` : `${provider}: connection failed`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p role="status" data-status="${status}">${escapeHtml(message)}</p>
</main>
</body>
</html>
`;
}
