/**
 * A client that leaves while a request is in flight (a relay SIGKILLed under the shared
 * server): the reply cannot be written, and that is a departure, not a protocol error. Real
 * SDK server over `serveStdioConnection`, a stdout that fails as a closed pipe does.
 */
import { PassThrough, Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { serveStdioConnection } from '../../src/mcp/stdio/connection.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';
import { recordingLog } from '../support/recording-log.js';

describe('a reply the client is gone for', () => {
  it('is not logged as a protocol error', async () => {
    const stdin = new PassThrough();
    const written: string[] = [];
    let gone = false;
    const stdout = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        if (!gone) {
          written.push(chunk.toString());
          callback();
          return;
        }
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    stdout.on('error', () => {});
    const held = deferred<void>();
    const entered = deferred<void>();
    const log = recordingLog();
    serveStdioConnection({
      createServer: () => {
        const server = new McpServer({ name: 't', version: '0' });
        server.registerTool('slow', { description: 'held' }, async () => {
          entered.resolve();
          await held.promise;
          return { content: [{ type: 'text', text: 'late' }] };
        });
        return server;
      },
      stdin,
      stdout,
      log,
      onClosed: () => {},
    });
    const send = (message: object) => stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    await entered.promise;
    expect(written.join('')).toContain('"id":0');
    gone = true;
    held.resolve();
    await flush();
    await flush();
    expect(log.lines.filter((l) => /protocol error/.test(l))).toEqual([]);
  });
});
