import { dereference } from '@readme/openapi-parser';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { OpenAPIV3_1 } from 'openapi-types';
import { expect } from 'vitest';

export type Document = OpenAPIV3_1.Document;
export type Operation = OpenAPIV3_1.OperationObject;
export type Op = ReturnType<typeof operationsOf>[number];
type Response = Awaited<ReturnType<FastifyInstance['inject']>>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The document with every $ref replaced by what it points to (the input is left as it was). */
export const dereferenced = (document: Document) => dereference(structuredClone(document)) as Promise<Document>;

/** Each operation of a paths (or webhooks) map, with its path and method. */
export function operationsOf(paths: Record<string, OpenAPIV3_1.PathItemObject | undefined> | undefined) {
  return Object.entries(paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item?.[method]).map((method) => {
      // openapi-types' 3.1 path item also carries 3.0's operation type, in which responses are required.
      const operation: Operation = item![method]!;
      return { path, method, operation };
    }),
  );
}

/**
 * Checks values against the document's schemas as a client generated from it would: OpenAPI 3.1
 * schemas are JSON Schema 2020-12, with the formats (uuid, date-time, uri) checked too.
 */
export function schemaChecker() {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormatsModule.default(ajv);
  return (schema: object, value: unknown): ErrorObject[] => {
    const validate = ajv.compile(schema);
    return validate(value) ? [] : (validate.errors ?? []);
  };
}

/** Every example of a media type or parameter: `example`, or each of `examples`. */
export function examplesOf(holder: { example?: unknown; examples?: Record<string, OpenAPIV3_1.ExampleObject | OpenAPIV3_1.ReferenceObject> }) {
  if (holder.example !== undefined) return [holder.example];
  return Object.values(holder.examples ?? {}).map((example) => (example as OpenAPIV3_1.ExampleObject).value);
}

/** The example of a parameter (every public path and query parameter has one). */
const parameterExample = (op: Op, name: string) =>
  (op.operation.parameters as Array<{ name: string; example?: unknown }> | undefined)?.find((parameter) => parameter.name === name)?.example;

/** The operation's URL from its parameters' examples; `params` and `query` replace single values. */
export function urlOf(op: Op, params: Record<string, string> = {}, query?: Record<string, string | undefined>) {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? encodeURIComponent(String(parameterExample(op, name))));
  const queryParameters = (op.operation.parameters as Array<{ name: string; in: string; example?: unknown }> | undefined)?.filter(
    (parameter) => parameter.in === 'query',
  );
  const values = Object.fromEntries((queryParameters ?? []).map((parameter) => [parameter.name, String(parameter.example)]));
  const search = new URLSearchParams(Object.entries({ ...values, ...query }).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return search.size > 0 ? `${path}?${search}` : path;
}

/** The first example of the operation's JSON request body. */
export const requestExample = (op: Op) => {
  const media = (op.operation.requestBody as { content?: Record<string, { example?: unknown; examples?: never }> } | undefined)?.content?.['application/json'];
  return media ? examplesOf(media)[0] : undefined;
};

/** The error codes an operation documents for a status. */
export const errorCodes = (operation: Operation, status: string): string[] => {
  const media = (operation.responses?.[status] as { content?: Record<string, { schema?: { properties?: { error?: { enum?: string[] } } } }> })?.content?.[
    'application/json'
  ];
  return media?.schema?.properties?.error?.enum ?? [];
};

/** The answer is one the operation documents: its status, its body's schema, and its documented headers. */
export function expectDocumented(check: ReturnType<typeof schemaChecker>, op: Op, response: Response, what: string) {
  const status = String(response.statusCode);
  const label = `${op.method.toUpperCase()} ${op.path}, ${what}: answered ${status} ${response.body}`;
  const documented = (op.operation.responses?.[status] ?? op.operation.responses?.[`${status[0]}XX`]) as
    { content?: Record<string, { schema: object }>; headers?: Record<string, unknown> } | undefined;
  expect(documented, label).toBeDefined();
  const schema = documented!.content?.['application/json']?.schema;
  if (schema) expect(check(schema, response.body ? response.json() : undefined), label).toStrictEqual([]);
  for (const header of Object.keys(documented!.headers ?? {})) expect(response.headers[header.toLowerCase()], `${label}: ${header}`).toBeDefined();
}
