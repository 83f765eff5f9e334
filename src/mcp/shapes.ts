import type { EmbeddedResource } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { DocumentSlice } from '../core/reader-types.js';
import { withContext } from './format.js';
import { documentUri } from './refs.js';

/**
 * Output shapes shared by tools. The SDK publishes them as JSON Schema with
 * `additionalProperties: false` and the client validates replies against it, so replies are built field by field from these, never by spreading a store object.
 */

/**
 * A tool's arguments as an object that refuses keys it does not know: the SDK
 * would otherwise strip them silently, and a client that misspells `maxLines` would never
 * learn why nothing changed. The error names the unknown keys and the known ones; the
 * published JSON Schema says `additionalProperties: false`.
 */
export function strictArguments<Shape extends z.ZodRawShape>(tool: string, shape: Shape) {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown argument${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}: ${tool} takes ${known}`
        : undefined,
  });
}

/** `lineNumbers` as both `get` and `multi_get` take it: on unless asked otherwise, as in qmd 2.8. */
export const lineNumbersArgument = z
  .boolean()
  .default(true)
  .describe("Prefix each line with its number ('12: text'). On by default; false for the raw text.");

export const sliceShape = {
  file: z.string(),
  docid: z.string(),
  title: z.string(),
  uri: z.string().describe('qmd:// resource URI of the document'),
  fromLine: z.number().int().describe('1-based first line returned'),
  lines: z.number().int().describe('number of lines returned'),
  totalLines: z.number().int(),
  context: z.string().optional().describe('What the contexts covering this document say (qmd context add)'),
};

export function sliceMeta(slice: DocumentSlice): z.infer<z.ZodObject<typeof sliceShape>> {
  return {
    file: slice.file,
    docid: slice.docid,
    title: slice.title,
    uri: documentUri(slice.file),
    fromLine: slice.fromLine,
    lines: slice.lines,
    totalLines: slice.totalLines,
    ...(slice.context !== undefined && { context: slice.context }),
  };
}

/**
 * A document as an embedded resource, as qmd 2.8 returns one from `get` and `multi_get`: its
 * URI and text (the contexts that cover it first, `withContext`), with `name` (collection/path,
 * what `get` takes) and `title` as qmd 2.8 sets them. Those two are not in MCP's
 * `ResourceContents`, and SDK 2.4.0's `Server` validates a `tools/call` result against it, so
 * they are stripped on the wire (measured; `structuredContent` carries `file` and `title`);
 * they are kept here so a client gets them from an SDK that passes them on, as `resources/read`
 * does today.
 */
export function documentResource(slice: DocumentSlice): EmbeddedResource {
  const resource = {
    uri: documentUri(slice.file),
    name: slice.file,
    title: slice.title || slice.file,
    mimeType: 'text/markdown',
    text: withContext(slice.text, slice.context),
  };
  return { type: 'resource', resource };
}
