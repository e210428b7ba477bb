/** Shared by the tests: the live daemon's address and small waits. */
import type { Sandbox } from 'cella';

export const URL = process.env.CELLA_URL ?? '';
export const TOKEN = process.env.CELLA_TOKEN ?? '';
/** A second tenant's token, for the isolation checks. */
export const OTHER_TOKEN = process.env.CELLA_OTHER_TOKEN ?? '';

if (!URL || !TOKEN) {
  throw new Error('these tests need a live daemon: set CELLA_URL and CELLA_TOKEN (tests/integration/test_ts_client.py does)');
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until pred() is true, polling; throws after limitMs. */
export async function waitUntil(pred: () => Promise<boolean> | boolean, limitMs = 30000, stepMs = 100): Promise<void> {
  const end = Date.now() + limitMs;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > end) throw new Error(`condition not met within ${limitMs} ms`);
    await sleep(stepMs);
  }
}

/** The command lines of every process in the sandbox (read from /proc inside it). */
export async function commandLines(sb: Sandbox): Promise<string[]> {
  const r = await sb.exec(['sh', '-c', 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done']);
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

/** True once no process in the sandbox has `marker` in its command line and no exec is in flight but ours. */
export async function goneFromSandbox(sb: Sandbox, marker: string): Promise<boolean> {
  const lines = await commandLines(sb);
  if (lines.some((l) => l.includes(marker))) return false;
  return (await sb.refresh()).execInFlight === 0;
}

/** A fetch that records each request's method, URL and JSON body. */
export function recordingFetch(log: { method: string; url: string; body: unknown }[]): typeof fetch {
  return async (input, init) => {
    let body: unknown;
    if (typeof init?.body === 'string') {
      try {
        body = JSON.parse(init.body);
      } catch {
        body = init.body;
      }
    }
    log.push({ method: init?.method ?? 'GET', url: String(input), body });
    return fetch(input, init);
  };
}
