/**
 * Proof, in every `npm test`, that the generated tests judge the machine and not only the
 * host: a few mutants from test/model/mutants.ts are applied to a copy of the
 * machine, host and tests under test/.tmp/, and the copy's cheap cut of the generated tests
 * (test/model/quick.ts) must fail with the guarantee the mutant breaks. The full set runs with
 * `npm run test:mutants`.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FAST_MUTANTS, MUTANTS } from '../model/mutants.js';
import { mutatedCopy } from '../support/mutant-copy.js';

const ROOT = join(import.meta.dirname, '../..');
const WORK = join(ROOT, 'test/.tmp', `mutants-${process.pid}`);

const EXPECTED: Record<string, string> = {
  'drain-skipped': 'drain before dispose',
  'repeated-departure-reenters-closing': 'teardown runs exactly once',
  'same-departure-escalates': 'a repeated departure never escalates',
  'store-skipped-after-transport-failure': 'a failed step does not stop the chain',
  'drain-ignores-watcher-writes': 'a write is in flight until it settles',
  'store-disposed-with-live-session': 'the store is disposed only after every session is done',
  'late-close-ignored': 'a late close aborts the session’s handlers',
};

/** The lifecycle's cut (test/model/quick.ts), or the shared server's (test/model/shared-quick.ts). */
const CUT: Record<string, string> = {
  'machines/lifecycle.ts': 'test/model/quick.ts',
  'machines/triggers.ts': 'test/model/quick.ts',
  'machines/teardown.ts': 'test/model/quick.ts',
  'machines/shared-server.ts': 'test/model/shared-quick.ts',
  'machines/session.ts': 'test/model/shared-quick.ts',
};

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

describe('the generated tests kill', () => {
  it.each(FAST_MUTANTS)('%s', async (name) => {
    const mutant = MUTANTS.find((m) => m.name === name)!;
    const dir = mutatedCopy(ROOT, join(WORK, name), mutant, ['machines', 'src', 'test/support', 'test/model'], false);
    const quick = (await import(
      pathToFileURL(join(dir, CUT[mutant.file]!)).href
    )) as typeof import('../model/quick.js');
    const message = await quick.brokenGuarantee(EXPECTED[name]!);
    expect(message).toContain(`guarantee "${EXPECTED[name]}" broken: `);
  });
});
