// What the portal's browser tests share: free ports, waiting for the
// system, and make dev's binary started on its own ports and data folder.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const WAIT = 60_000; // how long to wait for the system to do something; never asserted on

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
    s.on('error', fail);
  });
}

export async function until(what, fn) {
  const end = Date.now() + WAIT;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('gave up waiting for ' + what);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// startDev runs the dev binary with env on free ports and a fresh data
// folder, and resolves when its API answers: { api, log(), stop() }.
export async function startDev(devBin, env) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gifq-portal-data-'));
  const [apiPort, recvPort, dynPort, sqsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const api = `http://127.0.0.1:${apiPort}`;
  let log = '';
  const dev = spawn(devBin, [], {
    detached: true,
    env: {
      ...process.env, API_ADDR: `127.0.0.1:${apiPort}`, RECEIVER_ADDR: `127.0.0.1:${recvPort}`,
      DYNAMODB_ADDR: `127.0.0.1:${dynPort}`, SQS_ADDR: `127.0.0.1:${sqsPort}`, DATA_DIR: dataDir, ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  dev.stdout.on('data', (b) => { log += b; });
  dev.stderr.on('data', (b) => { log += b; });
  await until('make dev to answer /healthz', async () => {
    try { return (await fetch(api + '/healthz')).ok; } catch { return false; }
  });
  return {
    api,
    log: () => log,
    stop: async () => {
      try { process.kill(-dev.pid, 'SIGTERM'); } catch { /* already gone */ }
      await new Promise((r) => (dev.exitCode !== null ? r() : dev.on('exit', r)));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
