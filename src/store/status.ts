import * as fs from 'node:fs';
import type { Collections } from './collections.js';
import type { Contexts } from './contexts.js';
import type { Sqlite } from './sqlite.js';
import type { CollectionStatus, StatusReport } from './types.js';
import type { Vectors } from './vectors/vectors.js';

/**
 * `status()`: ours and qmd 2.8's fields, from a handful of aggregate queries; no
 * document text is read except, for texts never chunked, whether they are blank.
 */
export class StatusReader {
  private readonly newest;
  private readonly toEmbed;
  private readonly unchunked;

  constructor(
    db: Sqlite,
    private readonly parts: { path: string; collections: Collections; vectors: Vectors; contexts: Contexts },
  ) {
    this.newest = db.prepare<[], { name: string; newest: number | null }>(
      `SELECT c.name, max(d.mtime_ms) AS newest FROM collections c
       LEFT JOIN documents d ON d.collection = c.name GROUP BY c.name`,
    );
    // What `qmd embed` would work on, counted as qmd 2.8 counts it (distinct texts): a text
    // not chunked yet (blank ones never are: `embed.ts` skips them), or one with a chunk that
    // has no vector from the index's model. With no model (NULL), every chunked text counts.
    this.toEmbed = db.column<[string | null], number>(
      `SELECT count(*) FROM (SELECT DISTINCT hash FROM documents) d WHERE
           (NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash)
             AND (SELECT length(trim(body, ' \n\r\t')) > 0 FROM content WHERE hash = d.hash))
           OR EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash AND NOT EXISTS
             (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.chunk_hash = c.hash))`,
    );
    // Its first half alone: one lookup per text, not per chunk (the whole count is 0.35 s at
    // 10k notes and 9.6 s at 100k; this part 50 ms at 10k: docs/design.md §8.4).
    this.unchunked = db.column<[], number>(
      `SELECT count(*) FROM (SELECT DISTINCT hash FROM documents) d
         WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash)
           AND (SELECT length(trim(body, ' \n\r\t')) > 0 FROM content WHERE hash = d.hash)`,
    );
  }

  report(): StatusReport {
    const { path, collections, vectors, contexts } = this.parts;
    const newest = new Map(this.newest.all().map((row) => [row.name, row.newest]));
    const listed: CollectionStatus[] = collections.info().map((c) => {
      const mtime = newest.get(c.name);
      return {
        ...c,
        path: c.root,
        pattern: c.mask,
        lastUpdated: mtime === null || mtime === undefined ? c.updatedAt : new Date(mtime).toISOString(),
      };
    });
    const documents = listed.reduce((sum, c) => sum + c.documents, 0);
    const embeddings = vectors.status();
    // Every distinct chunk has a vector of the index's model (the usual state of a served
    // index): no text has a chunk left to embed, so only the texts never chunked count.
    const allEmbedded = embeddings.embeddedChunks === embeddings.chunks;
    return {
      index: path,
      sizeBytes: fileSize(path) + fileSize(`${path}-wal`),
      documents,
      totalDocuments: documents,
      needsEmbedding: (allEmbedded ? this.unchunked.get() : this.toEmbed.get(vectors.state().fingerprint)) ?? 0,
      hasVectorIndex: embeddings.vectorBackend !== 'none',
      collections: listed,
      contexts: contexts.list(),
      embeddings,
    };
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
