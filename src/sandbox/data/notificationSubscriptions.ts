import type { DataHandler } from '../sandboxTypes.js';
import { fitbitUserId } from './fitbit.js';

/**
 * Per-user notification subscriptions as Fitbit and Withings keep them (the service makes them
 * after a connection's first backfill): made, listed back, a repeat being the same subscription.
 * Kept per sandbox user, in memory, one store per sandbox.
 */
export function notificationSubscriptions(): { fitbit: DataHandler; withings: DataHandler } {
  const subscriptions = new Map<string, Map<string, Record<string, unknown>>>();
  const of = (provider: string, user: string) => {
    const key = `${provider}:${user}`;
    let m = subscriptions.get(key);
    if (!m) subscriptions.set(key, (m = new Map()));
    return m;
  };

  /** `POST /1/user/-/apiSubscriptions/{id}.json` (201, or 200 when it exists) and `GET /1/user/-/apiSubscriptions.json`. */
  const fitbit: DataHandler = ({ method, path, token }) => {
    const mine = of('fitbit', token.user);
    if (method === 'GET' && path === '/1/user/-/apiSubscriptions.json') return { status: 200, body: { apiSubscriptions: [...mine.values()] } };
    const id = method === 'POST' ? FITBIT_SUBSCRIPTION.exec(path)?.[1] : undefined;
    if (!id) return null;
    const existed = mine.has(id);
    const sub = { collectionType: 'user', ownerId: fitbitUserId(token.user), ownerType: 'user', subscriberId: '1', subscriptionId: id };
    mine.set(id, sub);
    return { status: existed ? 200 : 201, body: sub };
  };

  /** `POST /notify` with `action` `subscribe` (per `appli` and `callbackurl`) and `list`. */
  const withings: DataHandler = ({ method, path, query, form, token }) => {
    if (path !== '/notify') return null;
    const p = method === 'GET' ? query : form;
    const mine = of('withings', token.user);
    const action = p.get('action');
    if (action === 'list') return { status: 200, body: { status: 0, body: { profiles: [...mine.values()] } } };
    if (action !== 'subscribe') return null;
    const appli = p.get('appli') ?? '';
    const callbackurl = p.get('callbackurl') ?? '';
    if (!/^\d{1,3}$/.test(appli) || !/^https?:\/\//.test(callbackurl)) return { status: 200, body: { status: 503, error: 'Invalid Params' } };
    mine.set(`${appli} ${callbackurl}`, { appli: Number(appli), callbackurl, comment: '', expires: 2147483647 });
    return { status: 200, body: { status: 0, body: {} } };
  };

  return { fitbit, withings };
}

const FITBIT_SUBSCRIPTION = /^\/1\/user\/-\/apiSubscriptions\/([A-Za-z0-9_-]{1,50})\.json$/;
