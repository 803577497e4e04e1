import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';

/**
 * The ceiling for the send benchmark: a bare server that reads the body and
 * answers the same 202 JSON that hermod does, with no work behind it.
 * argv: <http|https> [certFile keyFile]
 */
const [kind, certFile, keyFile] = process.argv.slice(2);
const BODY = JSON.stringify({ id: '2b1e6f0e-7d1c-4b5e-9a51-3f1f7a8c9d10', status: 'accepted', detail: '+6421000001' });

const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BODY) });
    res.end(BODY);
  });
};

const server =
  kind === 'https' ? https.createServer({ cert: fs.readFileSync(certFile!), key: fs.readFileSync(keyFile!) }, handler) : http.createServer(handler);
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as { port: number }).port });
});
