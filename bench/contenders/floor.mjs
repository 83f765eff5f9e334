// The floor: a bare node process that speaks just enough MCP to be timed like a server. It
// answers `initialize` with a hand-written result (any other request gets "method not found"),
// loads nothing, and exits on stdin EOF because nothing else holds the event loop. Every other
// contender pays this much; whatever it pays beyond is its own.
let buffered = '';

function reply(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function answer(line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id === undefined || typeof message.method !== 'string') return; // a notification or a response
  if (message.method === 'initialize') {
    reply({
      jsonrpc: '2.0',
      id: message.id,
      result: {
        protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'floor', version: '0.0.0' },
      },
    });
  } else {
    reply({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
  }
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim() !== '') answer(line);
  }
});
