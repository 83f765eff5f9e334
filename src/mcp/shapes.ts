import * as z from 'zod';
import type { DocumentSlice } from '../store/types.js';
import { documentUri } from './refs.js';

/**
 * Output shapes shared by tools. The SDK publishes them as JSON Schema with
 * `additionalProperties: false` and the client validates replies against it (SDK 1.32.2 and
 * v2), so replies are built field by field from these, never by spreading a store object.
 */

export const sliceShape = {
  file: z.string(),
  docid: z.string(),
  title: z.string(),
  uri: z.string().describe('qmd:// resource URI of the document'),
  fromLine: z.number().int().describe('1-based first line returned'),
  lines: z.number().int().describe('number of lines returned'),
  totalLines: z.number().int(),
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
  };
}
