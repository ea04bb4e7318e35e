import type { PullContext, PulledPayload, ProviderRequest } from './pullConnector.js';

/**
 * Collections paged by an opaque token (Oura `next_token`, WHOOP `next_token` sent back as
 * `nextToken`): each page is yielded as the provider answered it before the next is asked for,
 * so the sync engine stores it first. A 404 is an empty collection. A token the provider hands
 * out twice ends the paging instead of looping.
 */
export type TokenPaging = {
  /** The query parameter the next request carries the token in. */
  tokenParam: string;
  /** The token of the next page in an answer, null on the last page. */
  nextToken: (body: Record<string, unknown>) => string | null;
};

export async function* tokenPages(ctx: PullContext, dataType: string, request: ProviderRequest, paging: TokenPaging): AsyncIterable<PulledPayload> {
  const seen = new Set<string>();
  let token: string | null = null;
  do {
    ctx.signal.throwIfAborted();
    const query: Record<string, string> = { ...request.query, ...(token ? { [paging.tokenParam]: token } : {}) };
    const answer = await ctx.http({ ...request, query });
    if (answer.status === 404 || answer.status === 204) return;
    yield { dataType, body: answer.body, contentType: answer.headers.get('content-type') ?? 'application/json', ref: requestRef(request.path, query) };
    let body: unknown;
    try {
      body = answer.json();
    } catch {
      return; // Stored as sent; the decoder reports it. Nothing says where a next page would be.
    }
    token = body && typeof body === 'object' && !Array.isArray(body) ? paging.nextToken(body as Record<string, unknown>) : null;
    if (token !== null && seen.has(token)) return;
    if (token !== null) seen.add(token);
  } while (token);
}

/** What a stored page answers: the path and its query in a stable order. */
export function requestRef(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(Object.entries(query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))).toString();
  return q ? `${path}?${q}` : path;
}

export const stringOrNull = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
