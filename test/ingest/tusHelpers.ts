import type { TestApp } from '../support/server.js';

/** Requests of the tus 1.0 protocol at /v1/uploads/tus (contracts §13), as a client sends them. */
export const TUS = { 'tus-resumable': '1.0.0' };

/** tus Upload-Metadata: `key base64value` pairs. */
export const tusMetadata = (o: Record<string, string>) =>
  Object.entries(o)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

export function tusRequests(t: () => TestApp) {
  const auth = (token: string) => ({ ...TUS, authorization: `Bearer ${token}` });
  return {
    create: (token: string, length: number, metadata: Record<string, string>) =>
      t().app.inject({ method: 'POST', url: '/v1/uploads/tus', headers: { ...auth(token), 'upload-length': String(length), 'upload-metadata': tusMetadata(metadata) } }),
    patch: (token: string, location: string, offset: number, body: Buffer) =>
      t().app.inject({ method: 'PATCH', url: location, headers: { ...auth(token), 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, payload: body }),
    head: (token: string, location: string) => t().app.inject({ method: 'HEAD', url: location, headers: auth(token) }),
    terminate: (token: string, location: string) => t().app.inject({ method: 'DELETE', url: location, headers: auth(token) }),
  };
}
