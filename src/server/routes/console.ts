import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { sendProblem } from '../problems.js';

/**
 * The built console lives in `dist/console` beside the package's root, found by walking up from
 * this file: it runs from `src/server/routes` (tsx) and from `dist/src/server/routes` (compiled).
 */
export function consoleAssetsDir(from = dirname(fileURLToPath(import.meta.url))): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const assets = join(dir, 'dist', 'console');
      return existsSync(join(assets, 'index.html')) ? assets : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The page may run its own scripts and talk to this origin only; nothing may frame it (the key it
 * holds in memory is worth a click-jacking attempt). uPlot positions its parts with inline styles.
 */
const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** The operator console (docs/console.md): static assets under /console/, no credentials needed to load them. */
export const consoleRoutes: FastifyPluginAsync<{ assetsDir?: string | null }> = async (app, opts) => {
  const root = opts.assetsDir === undefined ? consoleAssetsDir() : opts.assetsDir;
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 301));
  if (!root) {
    app.get('/console/*', { schema: { hide: true } }, async (request, reply) =>
      sendProblem(request, reply, 503, 'the console is not built: run `npm run build` (or `npm install`) in the checkout'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    index: 'index.html',
    decorateReply: false,
    setHeaders: (res) => {
      res.setHeader('content-security-policy', CONSOLE_CSP);
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('referrer-policy', 'no-referrer');
    },
  });
};
