import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EXIT_INTERRUPTED, onInterrupt } from '../../../src/cli/terminal/interrupt.js';
import { createProgress } from '../../../src/cli/terminal/progress.js';
import { FakeClock } from '../../support/fake-clock.js';
import { recordingLog } from '../../support/recording-log.js';

function setup() {
  const source = new EventEmitter();
  const log = recordingLog();
  const exits: number[] = [];
  const interrupt = onInterrupt({ log, unit: 'chunk', source, exit: (code) => exits.push(code) });
  return { source, log, exits, interrupt };
}

describe('Ctrl-C: the first stops after the current unit, the second quits at once', () => {
  it('first: one line, `stop` fires, no exit; second: one line, exit 130', () => {
    const { source, log, exits, interrupt } = setup();
    expect(interrupt.stop.aborted).toBe(false);
    source.emit('SIGINT');
    expect(interrupt.stop.aborted).toBe(true);
    expect(interrupt.interrupted).toBe(true);
    expect(log.lines).toEqual(['Stopping after the current chunk (Ctrl-C again to quit at once)...']);
    expect(exits).toEqual([]);
    source.emit('SIGINT');
    expect(exits).toEqual([EXIT_INTERRUPTED]);
    expect(log.lines[1]).toBe('Quitting at once; the index keeps everything committed before now.');
  });

  it('keeps its listener after the first Ctrl-C: a SIGINT never finds the process without one', async () => {
    const { source, interrupt } = setup();
    source.emit('SIGINT');
    expect(source.listenerCount('SIGINT')).toBe(1);
    await interrupt.finish();
    expect(source.listenerCount('SIGINT')).toBe(1);
    interrupt.dispose();
    expect(source.listenerCount('SIGINT')).toBe(0);
  });

  it('once the work is over, a Ctrl-C quits at once: there is nothing left to stop', async () => {
    const { source, exits, interrupt } = setup();
    await interrupt.finish();
    source.emit('SIGINT');
    expect(exits).toEqual([EXIT_INTERRUPTED]);
  });

  it('a Ctrl-C heard during the turn finish() gives the loop still counts as one during the work', async () => {
    const { source, log, exits, interrupt } = setup();
    const finishing = interrupt.finish();
    source.emit('SIGINT');
    await finishing;
    expect(interrupt.interrupted).toBe(true);
    expect(exits).toEqual([]);
    expect(log.lines).toHaveLength(1);
  });

  it('the second Ctrl-C runs onQuit before it exits, and exits even if onQuit throws', () => {
    const source = new EventEmitter();
    const order: string[] = [];
    onInterrupt({
      log: recordingLog(),
      unit: 'chunk',
      source,
      exit: (code) => order.push(`exit ${code}`),
      onQuit: () => {
        order.push('onQuit');
        throw new Error('cannot remove');
      },
    });
    source.emit('SIGINT');
    expect(() => source.emit('SIGINT')).toThrow('cannot remove');
    expect(order).toEqual(['onQuit', 'exit 130']);
  });

  it('the second Ctrl-C ends what draws before its line: the bar is never drawn after it', async () => {
    // A terminal of 80 columns, as the progress bar sees one.
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
    let written = '';
    stream.on('data', (chunk: Buffer) => {
      written += chunk.toString();
    });
    const clock = new FakeClock();
    const progress = createProgress({ stream, clock, env: {} });
    const source = new EventEmitter();
    const exits: number[] = [];
    onInterrupt({
      log: progress.log,
      unit: 'batch of files',
      source,
      exit: (code) => exits.push(code),
      endOutput: () => progress.stop(),
    });
    progress.stage('Indexing notes', { unit: 'files', total: 6000 });
    source.emit('SIGINT');
    // After the first, the work goes on and the bar with it, under the line.
    expect(written.endsWith('\x1b[K')).toBe(true);
    await clock.advance(500);
    progress.update(1024);
    source.emit('SIGINT');
    expect(exits).toEqual([EXIT_INTERRUPTED]);
    const quit = 'Quitting at once; the index keeps everything committed before now.\n';
    expect(written.endsWith(`\r\x1b[K${quit}`)).toBe(true);
    // Whatever the work does until the process is gone draws nothing more.
    progress.update(1280);
    await clock.advance(1000);
    expect(written.endsWith(quit)).toBe(true);
  });

  it('leaveIfInterrupted: exit 130 once the work is closed if Ctrl-C was pressed, nothing otherwise', () => {
    const { source, exits, interrupt } = setup();
    interrupt.leaveIfInterrupted();
    expect(exits).toEqual([]);
    source.emit('SIGINT');
    interrupt.leaveIfInterrupted();
    expect(exits).toEqual([EXIT_INTERRUPTED]);
  });
});
