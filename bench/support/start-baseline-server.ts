import { fork } from 'node:child_process';
import path from 'node:path';

/**
 * Forks bench/baseline-server.ts (a bare server answering hermod's 202 body)
 * and resolves once it listens; `https` serves the given certificate and key.
 */
export async function startBaselineServer(kind: 'http' | 'https', tls?: { cert: string; key: string }): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = fork(path.join(import.meta.dirname, '..', 'baseline-server.ts'), [kind, ...(tls ? [tls.cert, tls.key] : [])], {
    execArgv: ['--import', 'tsx'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`baseline server exited with ${code} before listening`)));
  });
  return {
    url: `${kind}://127.0.0.1:${port}`,
    stop: async () => {
      child.kill();
      await exited;
    },
  };
}
