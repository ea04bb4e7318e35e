import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createWebhook } from '../../../commands/webhooks/createWebhook.js';
import { deleteWebhook } from '../../../commands/webhooks/deleteWebhook.js';
import { replayDeliveries } from '../../../commands/webhooks/replayDeliveries.js';
import { requestWebhookTest } from '../../../commands/webhooks/requestWebhookTest.js';
import { updateWebhook } from '../../../commands/webhooks/updateWebhook.js';
import { WebhookDescription, WebhookEventTypes, WebhookUrl } from '../../../commands/webhooks/webhookFields.js';
import { getDelivery, listDeliveries } from '../../../queries/webhooks/webhookDeliveries.js';
import { getWebhook, listWebhooks, type WebhookEndpointView } from '../../../queries/webhooks/webhookEndpoints.js';
import { DELIVERIES, DELIVERY_STATUSES, type DeliveryDoc } from '../../webhooks/deliveryDocs.js';
import { enqueueRecovery, recoverableFilter } from '../../processes/webhooks/recoveryJob.js';
import { UUID_RE } from '../../shared/ids.js';
import { problems } from '../problems.js';
import { Cursor, DateTime, Limit, Uuid, withProblems } from '../schemas.js';
import type { RouteOptions } from './routeOptions.js';

export const WebhookEndpoint = z
  .object({
    id: Uuid,
    url: z.string(),
    description: z.string(),
    event_types: z.array(z.string()),
    status: z.enum(['active', 'disabled']),
    disabled_reason: z.string().nullable(),
    failing_since: DateTime.nullable(),
    last_success_at: DateTime.nullable(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .describe('Webhook endpoint');
const CreatedWebhookEndpoint = WebhookEndpoint.extend({ secret: z.string().describe('whsec_ signing secret, shown once') }).describe('Webhook endpoint with its secret');

const Attempt = z.object({
  id: z.number().int(),
  attempt: z.number().int(),
  started_at: DateTime,
  duration_ms: z.number().int(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  response_body_excerpt: z.string().nullable().describe("First 1 KiB of the receiver's answer"),
});
const DeliveryStatus = z.enum(DELIVERY_STATUSES);
export const WebhookDelivery = z
  .object({
    id: z.number().int(),
    event_id: Uuid.describe('Equals the webhook-id header and the payload id'),
    event_type: z.string(),
    status: DeliveryStatus,
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: DateTime.nullable(),
    delivered_at: DateTime.nullable(),
    created_at: DateTime,
    replay_of: z.number().int().nullable(),
    payload: z.record(z.string(), z.unknown()).describe('The exact JSON body sent on every attempt'),
    attempt_history: z.array(Attempt).describe('Last 20 attempts, oldest first'),
  })
  .describe('Webhook delivery');

export const toEndpoint = (e: WebhookEndpointView) => ({
  id: e.id,
  url: e.url,
  description: e.description,
  event_types: e.event_types,
  status: e.status,
  disabled_reason: e.disabled_reason,
  failing_since: e.failing_since,
  last_success_at: e.last_success_at,
  created_at: e.created_at,
  updated_at: e.updated_at,
});

export const toDelivery = (d: DeliveryDoc) => ({
  id: d.id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  next_attempt_at: d.next_attempt_at,
  delivered_at: d.delivered_at,
  created_at: d.created_at,
  replay_of: d.replay_of,
  payload: JSON.parse(d.payload) as Record<string, unknown>,
  attempt_history: d.attempt_history,
});

const CreateBody = z.strictObject({ url: WebhookUrl, description: WebhookDescription.optional(), event_types: WebhookEventTypes.optional() });
const UpdateBody = z.strictObject({
  url: WebhookUrl.optional(),
  description: WebhookDescription.optional(),
  event_types: WebhookEventTypes.optional(),
  enabled: z.boolean().optional().describe('false: disabled by the tenant, pending deliveries parked; true: active again, new events only'),
});
const RecoverBody = z.strictObject({ since: z.string().datetime({ offset: true }).describe('RFC 3339: parked deliveries created since then are replayed') });
const DeliveriesQuery = z.object({ status: DeliveryStatus.optional(), cursor: Cursor.optional(), limit: Limit });

const WebhookParams = z.object({ webhook_id: z.string().describe('Webhook endpoint id (uuid)') });
const DeliveryParams = WebhookParams.extend({ delivery_id: z.string().describe('Delivery id (integer)') });

/**
 * Webhook endpoints and their deliveries (spec "Webhooks", contracts §8). Create and update are
 * mirrored on the admin routes. Idempotency-Key is ignored here (spec "Conventions" 4).
 */
export const webhooksRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  const auth = 'tenant';
  const allowPrivateTargets = ctx.config.webhookAllowPrivateTargets;

  /** The tenant's endpoint, or 404 for a malformed, unknown, deleted or another tenant's id. */
  const endpointOf = async (tenantId: string, webhookId: string) => {
    const endpoint = UUID_RE.test(webhookId) ? await getWebhook(ctx.readStore, tenantId, webhookId.toLowerCase()) : null;
    if (!endpoint) throw problems.notFound('webhook endpoint not found');
    return endpoint;
  };
  const deliveryOf = async (endpointId: string, deliveryId: string) => {
    const delivery = /^[0-9]{1,15}$/.test(deliveryId) ? await getDelivery(ctx.readStore, endpointId, Number(deliveryId)) : null;
    if (!delivery) throw problems.notFound('webhook delivery not found');
    return delivery;
  };
  /** Waits for the endpoint read model and for the engine (deliveries made, parked) up to the write. */
  const settle = async (position: number) => {
    await ctx.settle(position || undefined, ['webhook_endpoints']);
    await ctx.webhooks.settle(position);
  };

  app.post(
    '/webhooks',
    {
      config: { auth, audit: 'webhook.create' },
      schema: { summary: 'Create a webhook endpoint', tags: ['webhooks'], body: CreateBody, response: withProblems({ 201: CreatedWebhookEndpoint }) },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const endpointId = randomUUID();
      const result = await createWebhook(
        ctx.eventStore,
        ctx.webhookSecrets,
        { tenantId, endpointId, url: request.body.url, description: request.body.description, eventTypes: request.body.event_types, at: new Date().toISOString(), by: request.principal!.actorId },
        { allowPrivateTargets },
      );
      await settle(result.position);
      const endpoint = await endpointOf(tenantId, endpointId);
      reply.header('location', `/v1/webhooks/${endpointId}`);
      return reply.code(201).send({ ...toEndpoint(endpoint), secret: result.secret });
    },
  );

  app.patch(
    '/webhooks/:webhook_id',
    {
      config: { auth, audit: 'webhook.update' },
      schema: { summary: 'Change a webhook endpoint', tags: ['webhooks'], params: WebhookParams, body: UpdateBody, response: withProblems({ 200: WebhookEndpoint, 409: z.any() }) },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const { id } = await endpointOf(tenantId, request.params.webhook_id);
      const b = request.body;
      const result = await updateWebhook(
        ctx.eventStore,
        { tenantId, endpointId: id, url: b.url, description: b.description, eventTypes: b.event_types, enabled: b.enabled, at: new Date().toISOString(), by: request.principal!.actorId },
        { allowPrivateTargets },
      );
      await settle(result.position);
      return toEndpoint(await endpointOf(tenantId, id));
    },
  );

  app.get(
    '/webhooks',
    {
      config: { auth },
      schema: {
        summary: "List the tenant's webhook endpoints, oldest first, on one page",
        tags: ['webhooks'],
        response: withProblems({ 200: z.object({ data: z.array(WebhookEndpoint), next_cursor: z.null() }) }),
      },
    },
    async (request) => ({ data: (await listWebhooks(ctx.readStore, request.tenantId!)).map(toEndpoint), next_cursor: null }),
  );

  app.get(
    '/webhooks/:webhook_id',
    { config: { auth }, schema: { summary: 'Get a webhook endpoint', tags: ['webhooks'], params: WebhookParams, response: withProblems({ 200: WebhookEndpoint }) } },
    async (request) => toEndpoint(await endpointOf(request.tenantId!, request.params.webhook_id)),
  );

  app.delete(
    '/webhooks/:webhook_id',
    {
      config: { auth, audit: 'webhook.delete' },
      schema: { summary: 'Delete a webhook endpoint; its pending deliveries are parked', tags: ['webhooks'], params: WebhookParams, response: withProblems({ 204: z.null() }) },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const { id } = await endpointOf(tenantId, request.params.webhook_id);
      const result = await deleteWebhook(ctx.eventStore, { tenantId, endpointId: id, at: new Date().toISOString(), by: request.principal!.actorId });
      await settle(result.position);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      config: { auth },
      schema: {
        summary: "An endpoint's deliveries, newest first",
        tags: ['webhooks'],
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: withProblems({ 200: z.object({ data: z.array(WebhookDelivery), next_cursor: z.string().nullable() }) }),
      },
    },
    async (request) => {
      const { id } = await endpointOf(request.tenantId!, request.params.webhook_id);
      const scope = `webhook-deliveries:${request.tenantId}:${id}:${request.query.status ?? ''}`;
      const after = request.query.cursor ? cursors.decode(request.query.cursor, scope) : null;
      const page = await listDeliveries(ctx.readStore, id, request.query.status, { after, limit: request.query.limit });
      return { data: page.items.map(toDelivery), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );

  app.get(
    '/webhooks/:webhook_id/deliveries/:delivery_id',
    { config: { auth }, schema: { summary: 'Get a webhook delivery', tags: ['webhooks'], params: DeliveryParams, response: withProblems({ 200: WebhookDelivery }) } },
    async (request) => {
      const { id } = await endpointOf(request.tenantId!, request.params.webhook_id);
      return toDelivery(await deliveryOf(id, request.params.delivery_id));
    },
  );

  app.post(
    '/webhooks/:webhook_id/deliveries/:delivery_id/replay',
    {
      config: { auth, audit: 'webhook.replay' },
      schema: {
        summary: 'Replay a delivery: a new delivery of the same event and payload',
        tags: ['webhooks'],
        params: DeliveryParams,
        response: withProblems({ 202: WebhookDelivery, 409: z.any() }),
      },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const { id } = await endpointOf(tenantId, request.params.webhook_id);
      const original = await deliveryOf(id, request.params.delivery_id);
      const result = await replayDeliveries(ctx.eventStore, { tenantId, endpointId: id, deliveryIds: [original.id], at: new Date().toISOString(), by: request.principal!.actorId });
      await settle(result.position);
      return reply.code(202).send(toDelivery(await deliveryOf(id, String(result.position))));
    },
  );

  app.post(
    '/webhooks/:webhook_id/test',
    {
      config: { auth, audit: 'webhook.test' },
      schema: { summary: 'Send a webhook.test event to the endpoint', tags: ['webhooks'], params: WebhookParams, response: withProblems({ 202: WebhookDelivery, 409: z.any() }) },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const { id } = await endpointOf(tenantId, request.params.webhook_id);
      const result = await requestWebhookTest(ctx.eventStore, { tenantId, endpointId: id, at: new Date().toISOString(), by: request.principal!.actorId });
      await settle(result.position);
      return reply.code(202).send(toDelivery(await deliveryOf(id, String(result.position))));
    },
  );

  app.post(
    '/webhooks/:webhook_id/recover',
    {
      config: { auth, audit: 'webhook.recover' },
      schema: {
        summary: 'Replay every parked delivery of the endpoint created since a time (recovery after an outage); the replays are made by a background job',
        tags: ['webhooks'],
        params: WebhookParams,
        body: RecoverBody,
        response: withProblems({ 202: z.object({ replayed: z.number().int().describe('Parked deliveries the recovery replays (made in the background; list them with status=pending or done)') }), 409: z.any() }),
      },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const endpoint = await endpointOf(tenantId, request.params.webhook_id);
      if (endpoint.status !== 'active') throw problems.conflict('webhook endpoint is disabled; enable it first (PATCH enabled: true)');
      // Recovery is a job (issue 26): the request counts and enqueues, the job replays in chunks.
      const payload = {
        tenantId,
        endpointId: endpoint.id,
        since: new Date(request.body.since).toISOString(),
        // Deliveries made after the recovery began (its own replays among them) are not part of it.
        upTo: await ctx.eventStore.headPosition(),
        at: new Date().toISOString(),
        by: request.principal!.actorId,
      };
      const replayed = await ctx.readStore.count(DELIVERIES, recoverableFilter(payload));
      if (replayed > 0) {
        await enqueueRecovery(ctx.jobs.queue, payload);
        ctx.jobs.kick();
      }
      return reply.code(202).send({ replayed });
    },
  );
};
