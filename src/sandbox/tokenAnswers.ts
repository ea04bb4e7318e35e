import type { ServerResponse } from 'node:http';
import { fitbitUserId } from './data/fitbit.js';
import { stravaAthleteId } from './data/strava.js';
import type { IssuedToken } from './sandboxTypes.js';

/**
 * Token endpoint answers in each provider's documented shape: RFC 6749 JSON for most; Withings
 * wraps everything in `{status, body}` and answers errors with HTTP 200 and a non-zero status;
 * Strava adds `expires_at` and the athlete; Fitbit and Polar name their user.
 */
export function tokenAnswer(provider: string, res: ServerResponse, t: IssuedToken, now: Date): void {
  const expiresIn = Math.round((t.expiresAt - now.getTime()) / 1000);
  const base = { access_token: t.access, refresh_token: t.refresh, expires_in: expiresIn, token_type: 'Bearer', scope: t.scope };
  let body: unknown;
  switch (provider) {
    case 'withings':
      body = { status: 0, body: { userid: String(sandboxNumericUser(t.user)), ...base } };
      break;
    case 'strava': {
      const { scope: _scope, ...rest } = base;
      body = { ...rest, expires_at: Math.floor(t.expiresAt / 1000), athlete: { id: stravaAthleteId(t.user), firstname: 'Sandbox', lastname: 'Athlete' } };
      break;
    }
    case 'fitbit':
      body = { ...base, user_id: fitbitUserId(t.user) };
      break;
    case 'polar':
      body = { access_token: t.access, token_type: 'bearer', expires_in: expiresIn, x_user_id: sandboxNumericUser(t.user) };
      break;
    default:
      body = base;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export function tokenError(provider: string, res: ServerResponse, error: string, description: string, status = 400): void {
  if (provider === 'withings') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: error === 'invalid_grant' ? 503 : 293, error: `${error}: ${description}` }));
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error, error_description: description }));
}

/** A provider's numeric id of the sandbox user (Withings userid, Polar x_user_id), derived from it so each application's user keeps one. */
export function sandboxNumericUser(user: string): number {
  return 10_000_000 + (parseInt(user.slice(0, 8), 16) % 90_000_000);
}
