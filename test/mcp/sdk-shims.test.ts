import { describe, expect, it } from 'vitest';
import { DefaultJsonSchemaValidator, process as shimProcess } from '../../src/mcp/sdk-shims.js';

describe("the bundle's stand-in for the SDK's Node shim", () => {
  it("validates JSON Schemas with the SDK's own ajv validator, loaded on first use", () => {
    const validate = new DefaultJsonSchemaValidator().getValidator<{ name: string }>({
      type: 'object',
      properties: { name: { type: 'string', format: 'email' } },
      required: ['name'],
    });
    expect(validate({ name: 'a@example.org' })).toEqual({
      valid: true,
      data: { name: 'a@example.org' },
      errorMessage: undefined,
    });
    const refused = validate({ name: 'not an email' });
    expect(refused.valid).toBe(false);
    expect(refused.errorMessage).toMatch(/format/);
  });

  it("exports node's process, as the SDK's Node shim does", () => {
    expect(shimProcess).toBe(process);
  });
});
