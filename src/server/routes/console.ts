import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { packageRootOf } from '../../shared/packageRoot.js';
import { problems, sendProblem } from '../problems.js';
import { HTML } from '../routeAnswers.js';

/**
 * The built console lives in `dist/console` beside the package's root, found by walking up from
 * this file: it runs from `src/server/routes` (tsx) and from `dist/src/server/routes` (compiled).
 */
export function consoleAssetsDir(from = dirname(fileURLToPath(import.meta.url))): string | null {
  const root = packageRootOf(from);
  if (!root) return null;
  const assets = join(root, 'dist', 'console');
  return existsSync(join(assets, 'index.html')) ? assets : null;
}

/**
 * The page may run its own scripts and talk to this origin only; nothing may frame it (the key it
 * holds in memory is worth a click-jacking attempt). uPlot positions its parts with inline styles.
 */
const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const tags = ['console'];
const AssetParams = z.object({ file: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'an asset file name').describe('Asset file name as the build wrote it') });

/**
 * The operator console (docs/console.md): a page and its built assets under /console/, loaded
 * without credentials (the page asks for a key and sends it only to the API). The build is flat
 * (index.html and assets/), so two routes serve it and nothing else of the disk is reachable.
 */
export const consoleRoutes: FastifyPluginAsync<{ assetsDir?: string | null }> = async (app, opts) => {
  const root = opts.assetsDir === undefined ? consoleAssetsDir() : opts.assetsDir;
  const security = (reply: FastifyReply) =>
    reply.header('content-security-policy', CONSOLE_CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
  // A checkout without the build has no console to serve: not found, with the way to build it (not a 5xx: nothing failed).
  const notBuilt = (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(request, reply, 404, 'the console is not built: run `npm run build` (or `npm install`) in the checkout');

  if (root) await app.register(fastifyStatic, { root, serve: false, index: false, cacheControl: false });

  app.get('/console', { config: { answers: { 301: { description: 'To /console/', media: [], headers: ['location'] } } }, schema: { summary: 'The operator console (redirects to /console/)', tags } }, async (_request, reply) => reply.redirect('/console/', 301));

  app.get('/console/', { config: { answers: { 200: { description: 'The console page', media: [HTML] }, 404: { description: 'The console is not built' } } }, schema: { summary: 'The operator console page (HTML; sign in with a tenant or admin key)', tags } }, async (request, reply) => {
    if (!root) return notBuilt(request, reply);
    // The page names its hashed assets: it is read afresh every time, the assets may be kept.
    return security(reply).header('cache-control', 'no-cache').sendFile('index.html');
  });

  app.get('/console/assets/:file', { config: { answers: { 200: { description: 'A script, style sheet or image of the build', media: ['text/javascript', 'text/css', 'image/svg+xml'] } } }, schema: { summary: "The operator console's scripts and styles", tags, params: AssetParams } }, async (request, reply) => {
    if (!root) return notBuilt(request, reply);
    const { file } = request.params as z.infer<typeof AssetParams>;
    if (!existsSync(join(root, 'assets', file))) throw problems.notFound('no such console asset');
    return security(reply).header('cache-control', 'public, max-age=31536000, immutable').sendFile(`assets/${file}`);
  });
};
