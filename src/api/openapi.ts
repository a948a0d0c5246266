import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { webhooksDocument } from './webhooks.js';

/**
 * Two OpenAPI 3.1 documents are cut from the one that @fastify/swagger builds out of the route
 * schemas (zod, through fastify-type-provider-zod): the public API with the webhooks we send,
 * served to anyone at /api/v1/openapi.json and /docs, and the first-party API, served only
 * behind the internal token at /internal/v1/openapi.json. Neither shows the other's routes.
 */
const PUBLIC_TAGS = [
  { name: 'contacts', description: 'Create or update contacts, keyed by phone number.' },
  {
    name: 'subscriptions',
    description: 'REST Hooks: subscribe an https URL to an event, list and remove subscriptions, and read their delivery log.',
  },
  { name: 'events', description: 'Recent events as sample data, and (under Webhooks) the signed POST each event sends.' },
  { name: 'identity', description: 'The account and key an API key acts as.' },
];

const INTERNAL_TAGS = [
  { name: 'keys', description: 'Issue, list and revoke the API keys of an account.' },
  { name: 'contacts', description: 'Owner edits and CRM syncs.' },
  { name: 'calls', description: 'Finished calls, which fire new_conversation and missed_call.' },
  { name: 'portal', description: "Links to the owner's portal (/portal), and ending its sessions." },
];

const PUBLIC_DESCRIPTION = [
  'Every request carries `Authorization: Bearer <API key>`; a subscription belongs to the key that created it.',
  'Bodies are JSON (`Content-Type: application/json`, at most 64 KiB). Every error is `{"error": code}`; each operation lists the codes it can answer.',
  'Each event reaches each subscription as one POST signed the Standard Webhooks way, at most once: see Webhooks.',
].join('\n\n');

/** Registers the generator; it must come before the routes it documents. */
export async function registerOpenApi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'contact-hooks', version: '1.0.0' },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (`chk_…`), issued by the platform.' },
          internalToken: { type: 'http', scheme: 'bearer', description: 'INTERNAL_API_TOKEN, for the platform’s own systems.' },
        },
      },
    },
    transform: jsonSchemaTransform,
  });
}

type Document = OpenAPIV3_1.Document;

const pathsUnder = (document: Document, prefix: string) => Object.fromEntries(Object.entries(document.paths ?? {}).filter(([path]) => path.startsWith(prefix)));

function publicDocument(generated: Document): Document {
  const { schemas, webhooks } = webhooksDocument();
  return {
    openapi: generated.openapi,
    info: { ...generated.info, title: 'contact-hooks public API', description: PUBLIC_DESCRIPTION },
    tags: PUBLIC_TAGS,
    security: [{ apiKey: [] }],
    paths: pathsUnder(generated, '/api/v1/'),
    webhooks: webhooks as Document['webhooks'],
    components: {
      securitySchemes: { apiKey: generated.components!.securitySchemes!.apiKey! },
      schemas: schemas as Record<string, OpenAPIV3_1.SchemaObject>,
    },
  };
}

function internalDocument(generated: Document): Document {
  return {
    openapi: generated.openapi,
    info: { ...generated.info, title: 'contact-hooks first-party API', description: 'For the platform’s own systems only.' },
    tags: INTERNAL_TAGS,
    security: [{ internalToken: [] }],
    paths: pathsUnder(generated, '/internal/v1/'),
    components: { securitySchemes: { internalToken: generated.components!.securitySchemes!.internalToken! } },
  };
}

const generated = (app: FastifyInstance) => app.swagger() as unknown as Document;

/** The public document at /api/v1/openapi.json, and the Swagger UI on the same document at /docs. */
export const publicDocs: FastifyPluginAsync = async (app) => {
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // Every document the UI serves (/docs/json, /docs/yaml) is the public one.
    transformSpecification: (document) => publicDocument(document as unknown as Document),
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => publicDocument(generated(app)));
};

/** The first-party document, for the scope already behind the internal token. */
export const internalDocs: FastifyPluginAsync = async (internal) => {
  internal.get('/openapi.json', { schema: { hide: true } }, async () => internalDocument(generated(internal)));
};
