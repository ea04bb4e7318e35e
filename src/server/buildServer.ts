import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { plainParamsValidatorCompiler } from './plainParams.js';
import type { AppContext } from './appContext.js';
import { CursorCodec } from '../shared/cursor.js';
import { auditPlugin } from './audit.js';
import { authPlugin, withUserScope } from './auth.js';
import { corsPlugin } from './cors.js';
import { installErrorHandling } from './errorHandler.js';
import { drainUnreadBodies } from './unreadBodies.js';
import { closeStalledBodies } from './stalledTransfers.js';
import { problemClientErrorHandler } from './clientErrors.js';
import { sendProblem } from './problems.js';
import { idempotencyStore } from './idempotency.js';
import { openapiPlugin } from './openapi.js';
import { requestIdOf } from './requestId.js';
import { lazyChildLoggerFactory, RequestLineController } from './requestLogger.js';
import { adminMirror } from './adminMirror.js';
import { adminRuntimeRoutes } from './routes/adminRuntime.js';
import { adminTenantsRoutes } from './routes/adminTenants.js';
import { auditLogRoutes } from './routes/auditLog.js';
import { deletionsRoutes } from './routes/deletions.js';
import { providerErasureRoutes } from './routes/providerErasure.js';
import { ingestRoutes } from './routes/ingest.js';
import { samplesRoutes } from './routes/samples.js';
import { categorySamplesRoutes } from './routes/categorySamples.js';
import { sleepRoutes } from './routes/sleep.js';
import { workoutsRoutes } from './routes/workouts.js';
import { nutritionRoutes } from './routes/nutrition.js';
import { dailyRoutes } from './routes/daily.js';
import { ecgRoutes } from './routes/ecg.js';
import { heartbeatRoutes } from './routes/heartbeat.js';
import { menstrualCyclesRoutes } from './routes/menstrualCycles.js';
import { sampleStatsRoutes } from './routes/sampleStats.js';
import { coverageRoutes } from './routes/coverage.js';
import { pipelineRoutes } from './routes/pipeline.js';
import { uploadsRoutes } from './routes/uploads.js';
import { tusUploadsRoutes } from './routes/tusUploads.js';
import { rejectedRecordsRoutes } from './routes/rejectedRecords.js';
import { sourcePriorityPreviewRoutes } from './routes/sourcePriorityPreview.js';
import { consoleRoutes } from './routes/console.js';
import { sourcePrioritiesRoutes } from './routes/sourcePriorities.js';
import { freshnessRoutes } from './routes/freshness.js';
import { ADMIN_PREFIX } from './routes/routeOptions.js';
import { providerKeysRoutes, providersRoutes } from './routes/providers.js';
import { connectionsRoutes } from './routes/connections.js';
import { oauthFlowRoutes } from './routes/oauthFlow.js';
import { syncRunsRoutes } from './routes/syncRuns.js';
import { connectSessionsRoutes } from './routes/connectSessions.js';
import { inboundRoutes } from './routes/inbound.js';
import { providerWebhooksRoutes } from './routes/providerWebhooks.js';
import { tagsRoutes } from './routes/tags.js';
import { archiveRoutes } from './routes/archive.js';
import { demoUserRoutes } from './routes/demoUser.js';
import { tokensRoutes } from './routes/tokens.js';
import { usersRoutes } from './routes/users.js';
import { webhooksRoutes } from './routes/webhooks.js';
import { mcpRoutes } from './routes/mcp.js';
import { fhirRoutes } from './routes/fhir.js';

/** The longest path parameter any route's rule allows (src/server/routes: `.max(256)`); routeLimits.test.ts holds the routes to it. */
export const MAX_PATH_SEGMENT = 256;

/** A hop count trusts that many proxies in front (fastify does so at run time; its types want the function). */
const trustProxyOption = (setting: AppContext['config']['trustProxy']) => (typeof setting === 'number' ? (_address: string, hop: number) => hop < setting : setting);

/** The HTTP face of the service: one plugin per capability, all state in `ctx`. */
export async function buildServer(ctx: AppContext) {
  const app = Fastify({
    loggerInstance: ctx.log as unknown as FastifyBaseLogger,
    childLoggerFactory: lazyChildLoggerFactory,
    logController: new RequestLineController(ctx.log as unknown as FastifyBaseLogger),
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    // contracts §17: a path segment as long as the longest identifier a route's rule allows (a
    // provider webhook's token or an inbound secret, 256) reaches its route; fastify's 100 answered
    // 414 to a 128-character Upload-Id. Longer segments are still refused by the router (414).
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT },
    // X-Forwarded-For/-Proto/-Host are believed only from the configured proxy (TRUST_PROXY).
    trustProxy: trustProxyOption(ctx.config.trustProxy),
    // Errors Node's parser raises before fastify sees a request (oversized headers, a malformed request line).
    clientErrorHandler: problemClientErrorHandler(ctx.log as unknown as FastifyBaseLogger),
    // Errors fastify raises before routing (an undecodable URL) are problems like any other.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      void sendProblem(request, reply, error.statusCode ?? 400, error.message);
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(plainParamsValidatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandling(app);
  // An answer given before the body was read (413, 401, 415) drains the body instead of resetting the upload.
  drainUnreadBodies(app);
  // contracts §18: a body that stops arriving is 408 and its connection closed (BODY_IDLE_TIMEOUT_S).
  closeStalledBodies(app, ctx.config.bodyIdleTimeoutMs);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  await idempotencyStore(app, ctx.readStore);
  const cursors = new CursorCodec(ctx.sealingKey);
  const opts = { ctx, cursors };

  await app.register(openapiPlugin);
  // Before the credential check: a browser's preflight carries none (contracts §17, CORS_ORIGINS).
  await app.register(corsPlugin, { origins: ctx.config.corsOrigins });
  await app.register(authPlugin, { ctx });
  await app.register(auditPlugin, { ctx });
  await app.register(adminTenantsRoutes, opts);
  await app.register(adminRuntimeRoutes, opts);
  await app.register(auditLogRoutes, opts);
  await app.register(usersRoutes, { ...opts, prefix: '/v1' });
  await app.register(adminMirror(usersRoutes, ['GET /users/:id', 'DELETE /users/:id']), { ...opts, prefix: ADMIN_PREFIX });
  await app.register(tokensRoutes, { ...opts, prefix: '/v1' });
  await app.register(deletionsRoutes, { ...opts, prefix: '/v1' });
  await app.register(providerErasureRoutes, { ...opts, prefix: '/v1' });
  await app.register(ingestRoutes, { ...opts, prefix: '/v1' });
  await app.register(samplesRoutes, { ...opts, prefix: '/v1' });
  await app.register(categorySamplesRoutes, { ...opts, prefix: '/v1' });
  await app.register(sleepRoutes, { ...opts, prefix: '/v1' });
  await app.register(workoutsRoutes, { ...opts, prefix: '/v1' });
  await app.register(nutritionRoutes, { ...opts, prefix: '/v1' });
  await app.register(dailyRoutes, { ...opts, prefix: '/v1' });
  await app.register(ecgRoutes, { ...opts, prefix: '/v1' });
  await app.register(heartbeatRoutes, { ...opts, prefix: '/v1' });
  await app.register(menstrualCyclesRoutes, { ...opts, prefix: '/v1' });
  await app.register(sampleStatsRoutes, { ...opts, prefix: '/v1' });
  await app.register(coverageRoutes, { ...opts, prefix: '/v1' });
  await app.register(pipelineRoutes, { ...opts, prefix: '/v1' });
  await app.register(rejectedRecordsRoutes, { ...opts, prefix: '/v1' });
  await app.register(uploadsRoutes, { ...opts, prefix: '/v1' });
  // Every resumable-upload route takes a user token with the upload scope, checked before the body (contracts §18).
  await app.register(withUserScope(tusUploadsRoutes, 'upload'), { ...opts, prefix: '/v1' });
  await app.register(adminMirror(uploadsRoutes, ['GET /users/:id/uploads', 'GET /users/:id/uploads/:provider/:upload_id']), { ...opts, prefix: ADMIN_PREFIX });
  await app.register(sourcePrioritiesRoutes, { ...opts, prefix: '/v1' });
  await app.register(sourcePriorityPreviewRoutes, { ...opts, prefix: '/v1' });
  await app.register(freshnessRoutes, { ...opts, prefix: '/v1' });
  await app.register(tagsRoutes, { ...opts, prefix: '/v1' });
  await app.register(archiveRoutes, { ...opts, prefix: '/v1' });
  await app.register(demoUserRoutes, { ...opts, prefix: ADMIN_PREFIX });
  await app.register(webhooksRoutes, { ...opts, prefix: '/v1' });
  await app.register(adminMirror(webhooksRoutes, ['POST /webhooks', 'PATCH /webhooks/:webhook_id']), { ...opts, prefix: ADMIN_PREFIX });
  await app.register(providersRoutes, { ...opts, prefix: '/v1' });
  await app.register(providerKeysRoutes, { ...opts, prefix: ADMIN_PREFIX });
  await app.register(connectionsRoutes, { ...opts, prefix: '/v1' });
  await app.register(adminMirror(connectionsRoutes, ['GET /users/:id/connections']), { ...opts, prefix: ADMIN_PREFIX });
  await app.register(syncRunsRoutes, { ...opts, prefix: '/v1' });
  await app.register(adminMirror(syncRunsRoutes, ['POST /users/:id/connections/:provider/sync', 'GET /users/:id/sync-runs', 'GET /users/:id/sync-runs/:run_id']), { ...opts, prefix: ADMIN_PREFIX });
  await app.register(oauthFlowRoutes, opts);
  await app.register(connectSessionsRoutes, opts);
  await app.register(inboundRoutes, opts);
  await app.register(providerWebhooksRoutes, opts);
  await app.register(mcpRoutes, opts);
  await app.register(fhirRoutes, { ...opts, prefix: '/v1' });
  await app.register(consoleRoutes);
  // The rest of the admin table (spec "Instance admin routes"): the tenant's handlers, mirrored (adminMirror.ts).
  await app.register(adminMirror(sleepRoutes, ['GET /users/:id/sleep']), { ...opts, prefix: ADMIN_PREFIX });
  await app.register(adminMirror(sampleStatsRoutes, ['GET /users/:id/samples/stats']), { ...opts, prefix: ADMIN_PREFIX });
  await app.register(adminMirror(coverageRoutes, ['GET /users/:id/coverage']), { ...opts, prefix: ADMIN_PREFIX });
  await app.ready();
  return app as unknown as FastifyInstance;
}
