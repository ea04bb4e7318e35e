import swagger from '@fastify/swagger';
import fp from 'fastify-plugin';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

export const API_VERSION = '0.1.0';

/**
 * The OpenAPI 3.1 document is generated from the route schemas (zod is the single source of
 * truth), so a route cannot exist without being described. Served at GET /openapi.yaml.
 */
export const openapiPlugin = fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Wellstream health data aggregation API',
        version: API_VERSION,
        description: 'Collects end users’ health data from wearables and phones and serves it normalised. Errors are RFC 9457 problem+json.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'svc_sk_ tenant key, svc_ut_ user token or svc_ak_ admin key' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  app.get(
    '/openapi.yaml',
    { config: { auth: 'none' }, schema: { summary: 'This API described in OpenAPI 3.1', tags: ['meta'], security: [] } },
    async (_request, reply) =>
      reply.type('application/yaml; charset=utf-8').header('access-control-allow-origin', '*').send(app.swagger({ yaml: true })),
  );
});
