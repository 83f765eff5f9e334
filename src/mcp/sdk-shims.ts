import { createRequire } from 'node:module';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';

/**
 * What the bundle links in place of `@modelcontextprotocol/server/_shims` (scripts/build.ts):
 * the Node shim's two exports, with the JSON Schema validator loaded on first use.
 *
 * The SDK's Node shim imports its bundled ajv, and ajv's module code runs at import time, a
 * share of every `qmd mcp` start-up (docs/design.md §5, "Start-up"), for a validator qmd never
 * calls — its tools declare zod schemas, and the SDK validates JSON
 * Schemas only for elicitation, which qmd does not do. Should that change, the first call loads
 * the SDK's own `AjvJsonSchemaValidator` (its CommonJS build, from node_modules) and behaves
 * exactly as it would have.
 *
 * Running from sources (tsx, vitest), the SDK's own shim is used; this file is only bundled.
 */
export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  private real: jsonSchemaValidator | undefined;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.real ??= loadAjvValidator();
    return this.real.getValidator<T>(schema);
  }
}

function loadAjvValidator(): jsonSchemaValidator {
  const sdk = createRequire(import.meta.url)('@modelcontextprotocol/server/validators/ajv') as {
    AjvJsonSchemaValidator: new () => jsonSchemaValidator;
  };
  return new sdk.AjvJsonSchemaValidator();
}

/** The shim's other export: node's `process` (what `shimsNode.mjs` re-exports from `node:process`). */
const nodeProcess: NodeJS.Process = process;

export { nodeProcess as process };
