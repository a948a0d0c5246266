import { dereference } from '@readme/openapi-parser';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { OpenAPIV3_1 } from 'openapi-types';

export type Document = OpenAPIV3_1.Document;
export type Operation = OpenAPIV3_1.OperationObject;
export type Schema = OpenAPIV3_1.SchemaObject;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The document with every $ref replaced by what it points to (the input is left as it was). */
export const dereferenced = (document: Document) => dereference(structuredClone(document)) as Promise<Document>;

/** Each operation of a paths (or webhooks) map, with its path and method. */
export function operationsOf(paths: Record<string, OpenAPIV3_1.PathItemObject | undefined> | undefined) {
  return Object.entries(paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item?.[method]).map((method) => ({ path, method, operation: item![method]! as Operation })),
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
