/**
 * The console's only way to the service: the public API on the same origin, with the key the
 * operator typed. The key lives in this module's memory only (never storage): a reload signs out.
 */
export type Role = 'tenant' | 'admin';

let credential: { key: string; role: Role } | null = null;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export function roleOfKey(key: string): Role | null {
  if (/^svc_sk_[A-Za-z0-9]{43}$/.test(key)) return 'tenant';
  if (/^svc_ak_[A-Za-z0-9]{43}$/.test(key)) return 'admin';
  return null;
}

export function currentRole(): Role | null {
  return credential?.role ?? null;
}

/** Checks the key against a route its kind may read, and keeps it only when the service accepts it. */
export async function signIn(key: string): Promise<Role> {
  const role = roleOfKey(key.trim());
  if (!role) throw new ApiError(400, 'a tenant API key starts with svc_sk_, the admin key with svc_ak_ (43 letters and digits follow)');
  const probe = role === 'tenant' ? '/v1/users?limit=1' : '/v1/admin/tenants?limit=1';
  await request('GET', probe, undefined, key.trim());
  credential = { key: key.trim(), role };
  return role;
}

export function signOut(): void {
  credential = null;
}

async function request<T>(method: string, path: string, body: unknown, key: string): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const detail = (json as { detail?: string } | undefined)?.detail ?? res.statusText;
    throw new ApiError(res.status, detail);
  }
  return json as T;
}

export function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  if (!credential) return Promise.reject(new ApiError(401, 'signed out'));
  return request<T>(method, path, body, credential.key);
}

export function get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
  return api<T>('GET', withQuery(path, query));
}

export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export type Page<T> = { data: T[]; next_cursor: string | null };

/** Every page of a list, following next_cursor, up to `max` items (the console's own ceiling). */
export async function allPages<T>(path: string, query: Record<string, string | number | undefined> = {}, max = 10_000): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await get<Page<T>>(path, { ...query, cursor });
    out.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && out.length < max);
  return out;
}

export const enc = encodeURIComponent;
