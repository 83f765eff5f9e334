import type { WatchedIndex } from '../core/watch-writer.js';
import { errorMessage, QmdError } from '../errors.js';
import type { Log } from '../log.js';
import type { WatchClock } from './clock.js';

/** Texts handed to one `embed` call: small, so closing waits little and the report moves. */
const TEXTS_PER_CALL = 4;
/** After a busy index or a failed call, the next try waits this long. */
const RETRY_MS = 2000;

/**
 * Vectors follow the text (docs/design.md §9.5): the texts a batch brought in are embedded in
 * the background with the served reader's model, one chunk at a time (`embedTexts`), so a
 * query's embedding waits behind one chunk at most — as it would behind a concurrent `qmd
 * embed`. Only when the index has vectors; never a download (the served model loads only a
 * file on disk). A model that cannot be had, or vectors of another model, stop it with one log
 * line: those notes wait for `qmd embed`, as without a watcher.
 */
export class VectorFollower {
  /** Paths waiting, by the text they now hold. */
  private readonly waiting = new Map<string, Set<string>>();
  private running: Promise<void> | undefined;
  private readonly controller = new AbortController();
  private stoppedBecause: string | undefined;
  private retry: unknown;

  constructor(
    private readonly index: () => WatchedIndex | undefined,
    private readonly log: Log,
    private readonly clock: WatchClock,
  ) {}

  /** Notes whose text is indexed and whose vectors are not yet. */
  get pending(): number {
    let n = 0;
    for (const paths of this.waiting.values()) n += paths.size;
    return n;
  }

  /** Why vectors are not followed, once they stopped. */
  get stopped(): string | undefined {
    return this.stoppedBecause;
  }

  /** Texts just committed, with the paths (`collection/path`) that hold them. */
  add(texts: ReadonlyArray<{ hash: string; path: string }>): void {
    if (this.stoppedBecause !== undefined || this.controller.signal.aborted) return;
    const index = this.index();
    if (index === undefined || !index.hasVectors()) return;
    for (const { hash, path } of texts) {
      for (const paths of this.waiting.values()) paths.delete(path);
      const paths = this.waiting.get(hash) ?? new Set<string>();
      paths.add(path);
      this.waiting.set(hash, paths);
    }
    for (const [hash, paths] of this.waiting) if (paths.size === 0) this.waiting.delete(hash);
    this.kick();
  }

  /** Stops at once: the call in flight is abandoned (the model's disposal waits for its native part). */
  async close(): Promise<void> {
    this.controller.abort();
    this.clock.clearTimeout(this.retry);
    await this.running;
  }

  private kick(): void {
    if (this.running !== undefined || this.waiting.size === 0 || this.controller.signal.aborted) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
    });
  }

  private async drain(): Promise<void> {
    const { signal } = this.controller;
    while (this.waiting.size > 0 && !signal.aborted && this.stoppedBecause === undefined) {
      const index = this.index();
      if (index === undefined) return;
      const hashes = [...this.waiting.keys()].slice(0, TEXTS_PER_CALL);
      try {
        const result = await index.embed(hashes, { signal, onText: (hash) => this.waiting.delete(hash) });
        if ('refused' in result && result.refused === 'no-vectors') this.waiting.clear();
        else if ('refused' in result) {
          this.stop(
            'the index holds vectors of another model or chunking than the served one (qmd embed brings them in step)',
          );
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof QmdError && error.code === 'MODEL_UNAVAILABLE') {
          this.stop(`the embedding model is not on disk (${errorMessage(error)}); qmd embed fetches it`);
        } else if (error instanceof QmdError && error.code === 'CLOSED') {
          this.stop('the index is closed');
        } else {
          // A busy index (another writer), a passing failure: try again later.
          this.retry = this.clock.setTimeout(() => this.kick(), RETRY_MS, { unref: true });
          return;
        }
      }
    }
  }

  private stop(reason: string): void {
    this.stoppedBecause = reason;
    this.waiting.clear();
    this.log.line(`Watching: vectors no longer follow changes: ${reason}`);
  }
}
