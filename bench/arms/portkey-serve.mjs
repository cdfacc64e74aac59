// Runs Portkey's published Node server (build/start-server.js of
// @portkey-ai/gateway) bound to one host only.
//
//   node portkey-serve.mjs <path/to/start-server.js> --port=PORT --headless
//
// start-server.js takes --port=N but no host: it calls @hono/node-server's
// serve({fetch, port}), i.e. server.listen(port, undefined, cb), which binds
// every interface. Before loading it, patch net.Server#listen so a listen
// call with a numeric port and no host gets BIND_HOST (default 127.0.0.1).
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const host = process.env.BIND_HOST || '127.0.0.1';
const entry = process.argv[2];
if (!entry) {
  console.error('usage: node portkey-serve.mjs <start-server.js> [--port=N] [--headless]');
  process.exit(2);
}

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') {
    const rest = args.slice(1).filter((a) => a !== undefined);
    return listen.call(this, args[0], host, ...rest);
  }
  return listen.apply(this, args);
};

// start-server.js reads its flags from process.argv.slice(2).
process.argv.splice(2, 1);
await import(pathToFileURL(path.resolve(entry)).href);
