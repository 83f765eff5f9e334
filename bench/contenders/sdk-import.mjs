// The cost of the SDK's module code alone (bench/experiments/startup-profile.md, "The 0.6×
// floor"): imports `@modelcontextprotocol/server`, builds nothing, and answers the first line
// by hand. Run it under Node's compile cache (NODE_COMPILE_CACHE=DIR) to see the floor of any
// server that loads the SDK before its `initialize` reply.
import '@modelcontextprotocol/server';

process.stdin.once('data', () => process.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\n'));
process.stdin.on('end', () => process.exit(0));
