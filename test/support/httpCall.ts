/** What a request to a service running in a child process answered. */
export type HttpAnswer = { status: number; json: () => Record<string, unknown>; text: string };

/**
 * One request to a service process listening at `base` (tests that run `src/main.ts` as a child):
 * bearer `key`, a JSON body (or a Buffer sent as is, with the caller's content type).
 */
export async function httpCall(base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, ...headers } };
  if (body !== undefined) {
    if (Buffer.isBuffer(body)) init.body = body;
    else {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
  }
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return { status: res.status, json: () => JSON.parse(text) as Record<string, unknown>, text };
}
