import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { openReader } from '../../src/core/open.js';
import type { Reader } from '../../src/core/reader-types.js';
import type { QmdError } from '../../src/errors.js';
import { checkAfterHandshake, HANDSHAKE_QUIET_MS, servedReader } from '../../src/serve/served-reader.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { damagePage, pagesOf } from '../support/damage.js';
import { FakeClock, flush } from '../support/fake-clock.js';

let box: Sandbox;
const readers: Reader[] = [];

beforeEach(async () => {
  box = sandbox();
  const notes: Record<string, string> = {};
  for (let i = 0; i < 60; i++) notes[`n${i}.md`] = `# Note ${i}\n\n${'checkpoint words '.repeat(60)}${i}\n`;
  const root = box.notes('notes', notes);
  const writer = openStore(box.index);
  await writer.addCollection(root, { name: 'notes' });
  await writer.close();
});

afterEach(async () => {
  for (const reader of readers.splice(0)) await reader.close();
  box.cleanup();
});

/** The index as `qmd mcp` over stdio opens it: no check at open (it is deferred); counts the checks. */
function opened(): { reader: Reader; checks: () => number } {
  const reader = openReader(box.index, { readonly: true, quickCheck: false, queryWorker: false });
  readers.push(reader);
  let checks = 0;
  const counted: Reader = Object.create(reader) as Reader;
  counted.verify = () => {
    checks++;
    reader.verify();
  };
  return { reader: counted, checks: () => checks };
}

/** A page of the notes' text damaged: only a whole-file check, or a read of that text, meets it. */
function damageText(): void {
  const pages = pagesOf(box.index, 'content');
  damagePage(box.index, pages[Math.floor(pages.length / 2)]!, 'random');
}

describe('servedReader: the deferred check', () => {
  it('reads before `arm` (the instructions) skip it; the first read after runs it once, and a healthy index serves', async () => {
    const { reader, checks } = opened();
    const served = servedReader(reader, { deferCheck: true });
    expect(served.store.listCollections().map((c) => c.name)).toEqual(['notes']);
    expect(checks()).toBe(0);
    served.arm();
    expect(served.store.get('notes/n1.md').title).toBe('Note 1');
    expect(await served.store.multiGet('notes/n2.md')).toMatchObject({ documents: [{ title: 'Note 2' }] });
    expect(checks()).toBe(1);
  });

  it('damage it finds: the read that ran it fails with it, onDamaged hears it once, and every later read is refused', async () => {
    damageText();
    const { reader } = opened();
    const served = servedReader(reader, { deferCheck: true });
    const heard: QmdError[] = [];
    served.onDamaged((error) => heard.push(error));
    expect(served.store.listContexts()).toEqual([]);
    served.arm();
    const first = await expectQmdError(() => served.store.listCollections(), 'INDEX_CORRUPT');
    expect(first.message).toMatch(/is damaged \(quick_check: /);
    await expectQmdError(() => served.store.query('checkpoint'), 'INDEX_CORRUPT');
    await expectQmdError(() => served.store.status(), 'INDEX_CORRUPT');
    expect(heard).toEqual([first]);
  });

  it('checkSoon (after the handshake) runs it once armed, never before; what it finds goes to onDamaged, not to the caller', () => {
    damageText();
    const { reader, checks } = opened();
    const served = servedReader(reader, { deferCheck: true });
    const heard: QmdError[] = [];
    served.checkSoon();
    expect(checks()).toBe(0);
    served.arm();
    expect(() => served.checkSoon()).not.toThrow();
    expect(checks()).toBe(1);
    served.onDamaged((error) => heard.push(error));
    expect(heard.map((e) => e.code)).toEqual(['INDEX_CORRUPT']);
    served.checkSoon();
    expect(checks()).toBe(1);
  });

  it('checked(): false while a deferred check is owed, true once it ran, or found damage, or none was asked', () => {
    const healthy = servedReader(opened().reader, { deferCheck: true });
    expect(healthy.checked()).toBe(false);
    healthy.arm();
    healthy.checkSoon();
    expect(healthy.checked()).toBe(true);
    expect(servedReader(opened().reader, { deferCheck: false }).checked()).toBe(true);
    damageText();
    const damaged = servedReader(opened().reader, { deferCheck: true });
    damaged.arm();
    damaged.checkSoon();
    expect(damaged.checked()).toBe(true);
  });

  it('without a deferred check nothing is read through: a read meets the damage, onDamaged hears it', async () => {
    const leaves = pagesOf(box.index, 'documents');
    damagePage(box.index, leaves[leaves.length - 1]!, 'random');
    const { reader, checks } = opened();
    const served = servedReader(reader, { deferCheck: false });
    const heard: QmdError[] = [];
    served.onDamaged((error) => heard.push(error));
    served.arm();
    expect(served.store.listCollections()).toHaveLength(1);
    const met = await expectQmdError(() => served.store.listDocuments('notes'), 'INDEX_CORRUPT');
    expect(met.message).toMatch(/is damaged \(SQLITE_CORRUPT/);
    expect(heard).toEqual([met]);
    expect(checks()).toBe(0);
    await expectQmdError(() => served.store.listCollections(), 'INDEX_CORRUPT');
  });

  it('one note whose stored text no longer matches its hash fails only that read: the file is not damaged', async () => {
    const db = new Sqlite(box.index);
    db.exec(
      "UPDATE content SET body = replace(body, 'Note 1', 'Note 3') WHERE hash = (SELECT hash FROM documents WHERE path = 'n1.md')",
    );
    db.close();
    const { reader } = opened();
    const served = servedReader(reader, { deferCheck: true });
    const heard: QmdError[] = [];
    served.onDamaged((error) => heard.push(error));
    served.arm();
    const error = await expectQmdError(() => served.store.get('notes/n1.md'), 'INDEX_CORRUPT');
    expect(error.message).toContain('the stored text of notes/n1.md does not match its content hash');
    expect(served.store.get('notes/n2.md').title).toBe('Note 2');
    expect(heard).toEqual([]);
  });

  it('onSound: at once without a deferred check; else once it ran clean, after the read that ran it; never after damage', async () => {
    const sounds: string[] = [];
    servedReader(opened().reader, { deferCheck: false }).onSound(() => sounds.push('unchecked'));
    const healthy = servedReader(opened().reader, { deferCheck: true });
    healthy.onSound(() => sounds.push('healthy'));
    healthy.arm();
    await flush();
    expect(sounds).toEqual(['unchecked']);
    expect(healthy.store.get('notes/n1.md').title).toBe('Note 1');
    expect(sounds).toEqual(['unchecked']); // not inside the read
    await flush();
    expect(sounds).toEqual(['unchecked', 'healthy']);
    healthy.onSound(() => sounds.push('late'));
    await flush();
    expect(sounds).toEqual(['unchecked', 'healthy', 'late']);

    damageText();
    const damaged = servedReader(opened().reader, { deferCheck: true });
    damaged.onSound(() => sounds.push('damaged'));
    damaged.arm();
    damaged.checkSoon();
    damaged.onSound(() => sounds.push('damaged, asked after'));
    await flush();
    expect(sounds).toEqual(['unchecked', 'healthy', 'late']);
  });
});

describe('checkAfterHandshake: the deferred check waits for the handshake, not for the first reply', () => {
  it(`runs it ${HANDSHAKE_QUIET_MS} ms after the first reply is written, not before; later replies move nothing`, async () => {
    damageText();
    const { reader, checks } = opened();
    const served = servedReader(reader, { deferCheck: true });
    const heard: QmdError[] = [];
    served.onDamaged((error) => heard.push(error));
    served.arm();
    const clock = new FakeClock();
    const out = new PassThrough();
    checkAfterHandshake(served, out, clock);
    await clock.advance(10 * HANDSHAKE_QUIET_MS);
    expect(checks()).toBe(0); // no reply yet: nothing is timed
    out.write('{"id":1}\n'); // the initialize reply
    expect(clock.pending('unref')).toBe(1); // it never keeps the process alive
    await clock.advance(HANDSHAKE_QUIET_MS - 1);
    out.write('{"id":2}\n'); // tools/list: answered, the check still owed
    expect(checks()).toBe(0);
    await clock.advance(1);
    expect(checks()).toBe(1);
    expect(heard.map((e) => e.code)).toEqual(['INDEX_CORRUPT']);
    expect(clock.pending()).toBe(0);
    expect(out.read()?.toString()).toBe('{"id":1}\n{"id":2}\n');
  });

  it('a read before the wait is over runs it then, and the timer finds nothing left to do; without a deferred check nothing is timed', async () => {
    const { reader, checks } = opened();
    const served = servedReader(reader, { deferCheck: true });
    served.arm();
    const clock = new FakeClock();
    const out = new PassThrough();
    checkAfterHandshake(served, out, clock);
    out.write('{"id":1}\n');
    expect(served.store.get('notes/n3.md').title).toBe('Note 3');
    expect(checks()).toBe(1);
    await clock.advance(HANDSHAKE_QUIET_MS);
    expect(checks()).toBe(1);

    const unchecked = servedReader(opened().reader, { deferCheck: false });
    const quiet = new FakeClock();
    checkAfterHandshake(unchecked, out, quiet);
    out.write('{"id":2}\n');
    expect(quiet.pending()).toBe(0);
  });
});
