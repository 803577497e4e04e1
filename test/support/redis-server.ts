import { spawn, type ChildProcess } from 'node:child_process';
import { eventually } from './eventually';

/**
 * A redis-server of a test's own on `port`, without persistence (stopped and started again, it comes back empty);
 * resolves once it accepts connections.
 */
export async function startRedisServer(port: number): Promise<ChildProcess> {
  const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  server.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  await eventually(() => (out.includes('Ready to accept connections') ? true : undefined), 10_000);
  return server;
}
