import type { MultiGetResult } from '../../core/types.js';
import { csvField, type OutputFormat, xmlEscape } from './output-format.js';

interface Row {
  file: string;
  docid?: string;
  title: string;
  context?: string;
  body?: string;
  skipped?: string;
}

/**
 * multi-get's documents in qmd 2.x's six formats (its `multiGet`), the skipped ones after them
 * as it shows them, `{ skipped: true, reason }`, `[SKIPPED]`, `> reason`, with their docid,
 * title and context when `describe` knows them. `file` is ours, `collection/path.md`, which
 * `get` takes back.
 */
export function formatDocuments(
  result: MultiGetResult,
  format: OutputFormat,
  describe: (file: string) => { docid: string; title: string; context?: string } | undefined = () => undefined,
): string {
  const rows: Row[] = [
    ...result.documents.map((d) => ({
      file: d.file,
      docid: d.docid,
      title: d.title,
      ...(d.context !== undefined && { context: d.context }),
      body: d.text,
    })),
    ...result.skipped.map((s) => ({ file: s.file, title: s.file, ...describe(s.file), skipped: s.reason })),
  ];
  switch (format) {
    case 'json':
      return JSON.stringify(
        rows.map((r) => ({
          file: r.file,
          ...(r.docid !== undefined && { docid: r.docid }),
          title: r.title,
          ...(r.context !== undefined && { context: r.context }),
          ...(r.skipped !== undefined ? { skipped: true, reason: r.skipped } : { body: r.body }),
        })),
        null,
        2,
      );
    case 'csv':
      return [
        'docid,file,title,context,skipped,body',
        ...rows.map((r) =>
          [r.docid, r.file, r.title, r.context, r.skipped === undefined ? 'false' : 'true', r.skipped ?? r.body]
            .map(csvField)
            .join(','),
        ),
      ].join('\n');
    case 'files':
      return rows
        .map((r) => {
          const id = r.docid === undefined ? '' : `${r.docid},`;
          const context = r.context === undefined ? '' : `,"${r.context.replace(/"/g, '""')}"`;
          return `${id}${r.file}${context}${r.skipped === undefined ? '' : ',[SKIPPED]'}`;
        })
        .join('\n');
    case 'md':
      return rows
        .map((r) => {
          const parts = [`## ${r.file}\n`];
          if (r.docid !== undefined) parts.push(`**docid:** \`${r.docid}\`\n`);
          if (r.title !== r.file) parts.push(`**Title:** ${r.title}\n`);
          if (r.context !== undefined) parts.push(`**Context:** ${r.context}\n`);
          parts.push(r.skipped === undefined ? `\`\`\`\n${r.body}\n\`\`\`\n` : `> ${r.skipped}\n`);
          return parts.join('\n');
        })
        .join('\n');
    case 'xml':
      return [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<documents>',
        ...rows.map((r) =>
          [
            `  <document${r.docid === undefined ? '' : ` docid="${r.docid}"`}>`,
            `    <file>${xmlEscape(r.file)}</file>`,
            `    <title>${xmlEscape(r.title)}</title>`,
            ...(r.context === undefined ? [] : [`    <context>${xmlEscape(r.context)}</context>`]),
            ...(r.skipped === undefined
              ? [`    <body>${xmlEscape(r.body ?? '')}</body>`]
              : ['    <skipped>true</skipped>', `    <reason>${xmlEscape(r.skipped)}</reason>`]),
            '  </document>',
          ].join('\n'),
        ),
        '</documents>',
      ].join('\n');
    case 'cli':
      return rows
        .map((r) => {
          const banner = `\n${'='.repeat(60)}\nFile: ${r.file}${r.docid === undefined ? '' : `  ${r.docid}`}\n${'='.repeat(60)}\n`;
          if (r.skipped !== undefined) return `${banner}\n[SKIPPED: ${r.skipped}]`;
          const context = r.context === undefined ? '' : `Folder Context: ${r.context}\n---\n\n`;
          return `${banner}\n${context}${r.body}`;
        })
        .join('\n');
  }
}
