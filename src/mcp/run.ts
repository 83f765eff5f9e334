import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorMessage, isQmdError, QmdError } from '../errors.js';
import type { Log } from '../log.js';
import type { McpDeps } from './deps.js';
import { MAX_MESSAGE_CHARS } from './limits.js';

export type ToolName = 'query' | 'get' | 'multi_get' | 'status';

/**
 * Runs one tool call as one in-flight unit of the gate, so the lifecycle's drain counts it and
 * escalation can abort it. `requestSignal` is the SDK's `ctx.mcpReq.signal`, which `server.close()`
 * aborts (the SDK's `Protocol._onclose`, 2.4.0); the gate's signal fires on that or on `gate.abortAll()`.
 *
 * Whatever `work` does, the promise resolves to a `CallToolResult`: errors become `isError`
 * results, so a bad request never crashes the process nor leaks a stack to the client.
 */
export function runTool(
  deps: McpDeps,
  name: ToolName,
  requestSignal: AbortSignal,
  work: (signal: AbortSignal) => CallToolResult | Promise<CallToolResult>,
): Promise<CallToolResult> {
  return deps.gate.run(
    async (signal) => {
      try {
        // Inert failpoints return undefined synchronously: no extra await on the hot path.
        const pending = deps.failpoints.hit(`tool.${name}`, signal);
        if (pending !== undefined) await pending;
        throwIfAborted(signal);
        return await work(signal);
      } catch (error) {
        return errorResult(describeFailure(error, signal, deps.log, `tool ${name}`));
      }
    },
    { signal: requestSignal },
  );
}

export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortedError(signal.reason);
}

/**
 * One line for the client. QmdErrors and aborts are expected and only reported; anything else
 * is a bug: reported by message (no stack) and logged on stderr so it can be found.
 */
export function describeFailure(error: unknown, signal: AbortSignal, log: Log, where: string): string {
  if (signal.aborted && !isQmdError(error)) return oneLine(abortedError(signal.reason).message);
  if (isQmdError(error)) return oneLine(error.message);
  const message = oneLine(errorMessage(error)) || 'unknown error';
  log.warn(`${where} failed: ${message}`);
  return message;
}

function abortedError(reason: unknown): QmdError {
  // The gate's escalation reason reads "aborted: the server is shutting down"; the SDK's is a
  // bare DOMException "This operation was aborted".
  const why = reason instanceof Error ? reason.message : String(reason ?? 'cancelled');
  return new QmdError('ABORTED', why.startsWith('aborted') ? why : `aborted: ${why}`);
}

export function oneLine(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS - 1)}…` : flat;
}
