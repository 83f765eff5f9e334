import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCacheDir } from '../../src/cli/boot.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  readConfig,
  withWatchOff,
} from '../../src/cli/config.js';
import { embedStoreOptions } from '../../src/cli/embed-model.js';
import { modelFlags, modelStoreOptions } from '../../src/cli/query-models.js';
import { packageVersion } from '../../src/cli/version.js';
import { MAX_TIMER_MS, parseWholeNumber, qmdCacheDir } from '../../src/env.js';
import { QmdError } from '../../src/errors.js';
import {
  DEFAULT_EMBED_MODEL,
  DEFAULT_EXPAND_MODEL,
  DEFAULT_RERANK_MODEL,
  defaultModelsDir,
} from '../../src/llm/index.js';
import { resolveIndexPath } from '../../src/store/paths.js';
import { recordingLog } from '../support/recording-log.js';

const config = (env: NodeJS.ProcessEnv, flags = {}) => readConfig(flags, env);

/** The error a section throws, so a test can say which variable it names. */
function failure(read: () => unknown): QmdError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(QmdError);
    expect((error as QmdError).code).toBe('BAD_ARGUMENT');
    return error as QmdError;
  }
  throw new Error('expected the read to throw');
}

describe('parseWholeNumber', () => {
  it('takes decimal digits within the bounds, and nothing Number() would stretch to a number', () => {
    expect(parseWholeNumber('0')).toBe(0);
    expect(parseWholeNumber('007')).toBe(7);
    expect(parseWholeNumber('65535', 0, 65535)).toBe(65535);
    for (const text of ['', ' ', '1e3', '0x10', '-1', '+1', '1.5', '1.0', 'Infinity', 'NaN', ' 5', '5 ', '١٢']) {
      expect(parseWholeNumber(text), JSON.stringify(text)).toBeUndefined();
    }
    expect(parseWholeNumber('0', 1)).toBeUndefined();
    expect(parseWholeNumber('65536', 0, 65535)).toBeUndefined();
    expect(parseWholeNumber('9007199254740993')).toBeUndefined();
  });
});

describe('qmdCacheDir', () => {
  it('is qmd under XDG_CACHE_HOME, else under $HOME/.cache; blank counts as unset; always absolute', () => {
    expect(qmdCacheDir({ XDG_CACHE_HOME: '/x', HOME: '/h' }, 'models')).toBe('/x/qmd/models');
    expect(qmdCacheDir({ XDG_CACHE_HOME: '  ', HOME: '/h' })).toBe('/h/.cache/qmd');
    expect(qmdCacheDir({ XDG_CACHE_HOME: 'rel' })).toBe(path.resolve('rel', 'qmd'));
    expect(path.isAbsolute(qmdCacheDir({}))).toBe(true);
  });

  it('is the one root of the default index, the compile cache and the models, whatever the environment', () => {
    for (const env of [{ XDG_CACHE_HOME: '/x', HOME: '/h' }, { HOME: '/h' }, { XDG_CACHE_HOME: ' ', HOME: '/h' }, {}]) {
      const root = qmdCacheDir(env);
      expect(path.dirname(resolveIndexPath({ env }))).toBe(path.join(root, 'indexes'));
      expect(path.dirname(compileCacheDir(env))).toBe(root);
      // Before: the models ignored HOME and took a blank XDG_CACHE_HOME as the current directory.
      expect(path.dirname(defaultModelsDir(env))).toBe(root);
    }
  });
});

describe('readConfig', () => {
  it('reads the index and --debug from the flags first, as resolveIndexPath orders them', () => {
    const env = { QMD_INDEX: '/env/i.sqlite', HOME: '/h' };
    expect(config(env).indexPath).toBe('/env/i.sqlite');
    expect(config(env, { index: '/flag/i.sqlite', debug: true })).toMatchObject({
      indexPath: '/flag/i.sqlite',
      debug: true,
    });
    expect(config({ HOME: '/h' }).debug).toBe(false);
  });

  it('takes --embed-model over QMD_EMBED_MODEL, and neither when blank; the default is applied once, by embedStoreOptions', () => {
    expect(config({ QMD_EMBED_MODEL: '/env.gguf' }, { embedModel: '/flag.gguf' }).embed).toMatchObject({
      model: '/flag.gguf',
      modelSource: 'flag',
    });
    expect(config({ QMD_EMBED_MODEL: ' /env.gguf ' }).embed).toMatchObject({ model: '/env.gguf', modelSource: 'env' });
    expect(config({ QMD_EMBED_MODEL: '/env.gguf' }, { embedModel: ' ' }).embed.model).toBe('/env.gguf');
    expect(config({ QMD_EMBED_MODEL: '' }).embed).toEqual({ debug: false });
    const log = recordingLog();
    // Nothing named: the index's model, else the default, chosen by the store.
    expect(embedStoreOptions({ config: config({}), log })).toEqual({ defaultEmbedModel: DEFAULT_EMBED_MODEL });
    expect(embedStoreOptions({ config: config({}, { embedModel: '/m.gguf' }), log })).toMatchObject({
      embedModel: '/m.gguf',
      embedModelGivenAs: '--embed-model',
    });
    expect(embedStoreOptions({ config: config({ QMD_EMBED_MODEL: '/e.gguf' }), log })).toMatchObject({
      embedModel: '/e.gguf',
      embedModelGivenAs: 'QMD_EMBED_MODEL',
    });
    const tuned = embedStoreOptions({ config: config({ QMD_EMBED_THREADS: '1', QMD_DEBUG_EMBED: '1' }), log });
    expect(tuned.embedThreads).toBe(1);
    expect(typeof tuned.trace).toBe('function');
  });

  it('makes a relative model path absolute where it is read (the index stores it; other directories read it)', () => {
    const cwd = process.cwd();
    expect(config({}, { embedModel: 'models/m.gguf' }).embed.model).toBe(path.join(cwd, 'models/m.gguf'));
    expect(config({ QMD_EMBED_MODEL: './m.gguf' }).embed.model).toBe(path.join(cwd, 'm.gguf'));
    const uri = 'hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf';
    expect(config({ QMD_EMBED_MODEL: uri }).embed.model).toBe(uri);
    expect(config({}, { embedModel: 'https://example.com/m.gguf' }).embed.model).toBe('https://example.com/m.gguf');
  });

  it('reads the GPU choice and the two query models: a flag over its variable, off turns a model off', () => {
    expect(config({}).models).toEqual({
      gpu: 'auto',
      rerankModel: DEFAULT_RERANK_MODEL,
      expandModel: DEFAULT_EXPAND_MODEL,
      given: { gpu: false, rerankModel: false, expandModel: false },
    });
    expect(config({ QMD_GPU: ' Vulkan ' }).models.gpu).toBe('vulkan');
    expect(config({ QMD_GPU: 'cuda' }, { gpu: 'off' }).models.gpu).toBe('off');
    expect(config({ QMD_GPU: ' ' }).models.gpu).toBe('auto');
    expect(failure(() => config({ QMD_GPU: 'rocm' }).models).message).toBe(
      'QMD_GPU must be one of auto, off, metal, cuda, vulkan, got "rocm"',
    );
    const set = config(
      { QMD_RERANK_MODEL: '/env-rerank.gguf', QMD_EXPAND_MODEL: 'OFF', QMD_GENERATE_MODEL: '/peer.gguf' },
      { rerankModel: '/flag-rerank.gguf' },
    ).models;
    expect(set).toMatchObject({ rerankModel: '/flag-rerank.gguf', given: { rerankModel: true, expandModel: true } });
    expect(set.expandModel).toBeUndefined();
    // The peer's name for the expansion model is read when ours is not set.
    expect(config({ QMD_GENERATE_MODEL: '/peer.gguf' }).models.expandModel).toBe('/peer.gguf');
    expect(config({}, { rerankModel: 'off' }).models.rerankModel).toBeUndefined();
  });

  it('hands a child the flags for what was set, and only that (the shared server a relay starts)', () => {
    expect(modelFlags({ config: config({}) })).toEqual([]);
    expect(
      modelFlags({ config: config({ QMD_GPU: 'vulkan', QMD_RERANK_MODEL: 'off' }, { expandModel: '/e.gguf' }) }),
    ).toEqual(['--gpu', 'vulkan', '--rerank-model', 'off', '--expand-model', '/e.gguf']);
    expect(modelStoreOptions({ config: config({ QMD_RERANK_MODEL: 'off' }) }, { query: true })).toEqual({
      gpu: 'auto',
      expandModel: DEFAULT_EXPAND_MODEL,
    });
    expect(modelStoreOptions({ config: config({}) }, { query: false })).toEqual({ gpu: 'auto' });
  });

  it('gives the documented defaults when nothing is set', () => {
    const c = config({});
    expect(c.lifecycle).toEqual({});
    expect(c.http).toEqual({
      sessionIdleMs: DEFAULT_SESSION_IDLE_MS,
      maxSessions: DEFAULT_MAX_SESSIONS,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    });
    // The version a relay and its server compare: package.json's.
    expect(c.shared).toEqual({ requested: false, version: packageVersion() });
    expect(c.daemonChild).toBe(false);
    expect(c.failpoints.hit('tool.query')).toBeUndefined();
  });

  it('reads every variable into its typed field', () => {
    const c = config({
      QMD_DRAIN_TIMEOUT_MS: '0',
      QMD_STEP_TIMEOUT_MS: '250',
      QMD_EXIT_WATCHDOG_MS: String(MAX_TIMER_MS),
      QMD_LIFECYCLE_TRACE: ' /tmp/t.jsonl ',
      QMD_INSPECT: 'ws://127.0.0.1:8080',
      QMD_HTTP_SESSION_IDLE_MS: '1',
      QMD_HTTP_MAX_SESSIONS: '2',
      QMD_HTTP_MAX_BODY_BYTES: '3',
      QMD_SHARED: '1',
      QMD_SHARED_IDLE_MS: '4',
      QMD_SHARED_CONNECT_MS: '5',
      QMD_SHARED_TRACE: '/tmp/s.jsonl',
      QMD_TEST_VERSION: '9.9.9',
      QMD_DAEMON_CHILD: '1',
    });
    expect(c.lifecycle).toEqual({
      drainTimeoutMs: 0,
      stepTimeoutMs: 250,
      watchdogMs: MAX_TIMER_MS,
      traceFile: '/tmp/t.jsonl',
      inspectUrl: 'ws://127.0.0.1:8080',
    });
    expect(c.http).toEqual({ sessionIdleMs: 1, maxSessions: 2, maxBodyBytes: 3 });
    expect(c.shared).toEqual({
      requested: true,
      idleMs: 4,
      connectBoundMs: 5,
      traceFile: '/tmp/s.jsonl',
      version: '9.9.9',
    });
    expect(c.daemonChild).toBe(true);
  });

  it('refuses a malformed number with an error naming the variable and what it takes', () => {
    const delays = [
      ['lifecycle', 'QMD_DRAIN_TIMEOUT_MS'],
      ['lifecycle', 'QMD_STEP_TIMEOUT_MS'],
      ['lifecycle', 'QMD_EXIT_WATCHDOG_MS'],
      ['shared', 'QMD_SHARED_IDLE_MS'],
      ['shared', 'QMD_SHARED_CONNECT_MS'],
      ['http', 'QMD_HTTP_SESSION_IDLE_MS'],
    ] as const;
    for (const [section, name] of delays) {
      for (const bad of ['1e3', '-1', '1.5', 'soon', String(MAX_TIMER_MS + 1)]) {
        const error = failure(() => config({ [name]: bad })[section]);
        expect(error.message).toBe(
          `${name} must be a whole number of milliseconds from ${name === 'QMD_HTTP_SESSION_IDLE_MS' ? 1 : 0} to ${MAX_TIMER_MS}, got "${bad}"`,
        );
      }
    }
    const counts = [
      ['http', 'QMD_HTTP_MAX_SESSIONS'],
      ['http', 'QMD_HTTP_MAX_BODY_BYTES'],
      ['embed', 'QMD_EMBED_THREADS'],
    ] as const;
    for (const [section, name] of counts) {
      for (const bad of ['0', '0x10', '2.0', 'many']) {
        expect(failure(() => config({ [name]: bad })[section]).message).toBe(
          `${name} must be a whole number ≥ 1, got "${bad}"`,
        );
      }
    }
    expect(failure(() => config({ QMD_FAILPOINTS: 'tool.query=explode' }).failpoints).message).toMatch(/explode/);
  });

  it('reads a section only when it is used: a bad HTTP variable does not fail a command that never reads it', () => {
    const c = config({ QMD_HTTP_MAX_SESSIONS: 'lots', QMD_EMBED_MODEL: '/m.gguf' });
    expect(c.embed.model).toBe('/m.gguf');
    expect(c.lifecycle).toEqual({});
    expect(() => c.http).toThrow(/QMD_HTTP_MAX_SESSIONS/);
  });

  it('watching is on unless QMD_WATCH=0; --no-watch turns it off and leaves every other section unread', () => {
    expect(config({}).watch).toEqual({ enabled: true });
    expect(config({ QMD_WATCH: '1' }).watch).toEqual({ enabled: true });
    expect(config({ QMD_WATCH: ' ' }).watch).toEqual({ enabled: true });
    expect(config({ QMD_WATCH: '0' }).watch).toEqual({ enabled: false, off: 'QMD_WATCH=0' });
    expect(() => config({ QMD_WATCH: 'no' }).watch).toThrow('QMD_WATCH must be 0 (no watching) or 1, got "no"');
    const flagged = withWatchOff(config({ QMD_WATCH: '1', QMD_HTTP_MAX_SESSIONS: 'lots', QMD_EMBED_MODEL: '/m.gguf' }));
    expect(flagged.watch).toEqual({ enabled: false, off: '--no-watch' });
    expect(flagged.embed.model).toBe('/m.gguf');
    expect(() => flagged.http).toThrow(/QMD_HTTP_MAX_SESSIONS/);
  });

  it('reads each section once: the failpoints one process hits are one set', () => {
    const c = config({ QMD_FAILPOINTS: 'tool.query=throw' });
    expect(c.failpoints).toBe(c.failpoints);
    expect(c.shared).toBe(c.shared);
  });

  it('says on the log when a failpoint fires, so a test knows a request is in flight', async () => {
    const log = recordingLog();
    const c = readConfig({}, { QMD_FAILPOINTS: 'tool.query=throw' }, log);
    await expect(c.failpoints.hit('tool.query')).rejects.toThrow(/tool\.query/);
    expect(log.lines).toEqual(['QMD Debug: failpoint tool.query hit (throw)']);
  });
});
