/**
 * The TypeScript client against a live daemon: every method, the errors it
 * throws, streaming, aborts that kill the command on the server, files
 * both ways, typed runs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CellaError, Client, DEFAULT_URL, Sandbox, typed, type ExecEvent } from 'cella';
import { OTHER_TOKEN, TOKEN, URL, commandLines, goneFromSandbox, recordingFetch, waitUntil } from './helpers.js';

/** The command is running in the sandbox (so that its absence later means something). */
const seen = (sb: Sandbox, marker: string) => waitUntil(async () => (await commandLines(sb)).some((l) => l.includes(marker)), 10000);

const client = new Client({ url: URL, token: TOKEN });
let sb: Sandbox;
let tmp: string;

before(async () => {
  sb = await client.create('python', { name: 'ts-client' });
  tmp = await mkdtemp(join(tmpdir(), 'cella-ts-'));
});

after(async () => {
  await sb[Symbol.asyncDispose]();
  await rm(tmp, { recursive: true, force: true });
});

describe('client', () => {
  test('defaults come from the environment', async () => {
    const saved = { url: process.env.CELLA_URL, token: process.env.CELLA_TOKEN };
    try {
      const c = new Client();
      assert.equal(c.url, URL);
      assert.equal(c.token, TOKEN);
      assert.equal(await c.healthy(), true);
      assert.ok((await c.catalog()).some((i) => i.name === 'python'));
      delete process.env.CELLA_URL;
      delete process.env.CELLA_TOKEN;
      const bare = new Client();
      assert.equal(bare.url, DEFAULT_URL);
      assert.equal(bare.token, undefined);
      assert.equal(new Client({ url: URL, token: '' }).token, undefined);
    } finally {
      process.env.CELLA_URL = saved.url;
      process.env.CELLA_TOKEN = saved.token;
    }
    assert.throws(() => new Client({ url: 'ftp://x' }), TypeError);
  });

  test('list, sandbox(id), refresh', async () => {
    assert.ok((await client.list()).some((s) => s.sandboxId === sb.id && s.name === 'ts-client'));
    const again = await client.sandbox(sb.id);
    assert.equal(again.info.image, 'python');
    assert.equal(again.info.state, 'running');
    const info = await sb.refresh();
    assert.equal(info.sandboxId, sb.id);
    assert.equal(info.execInFlight, 0);
    assert.equal(typeof info.memoryMb, 'number');
  });
});

describe('exec', () => {
  test('results: stdout, stderr, exit codes, stdin, env, workdir', async () => {
    let r = await sb.exec(['python3', '-c', 'print(6*7)']);
    assert.deepEqual([r.stdout, r.exitCode, r.success, r.timedOut], ['42\n', 0, true, false]);
    assert.equal(r.check(), r);
    r = await sb.exec("sh -c 'echo out; echo err >&2; exit 3'");
    assert.deepEqual([r.stdout, r.stderr, r.exitCode, r.success], ['out\n', 'err\n', 3, false]);
    assert.throws(() => r.check(), (e: unknown) => e instanceof CellaError && e.code === 'exit' && /exited 3/.test(e.message));
    r = await sb.exec(['sh', '-c', 'cat; echo " $K"; pwd'], { stdin: new Uint8Array([105, 110]), env: { K: 'v' }, workdir: '/tmp' });
    assert.equal(r.stdout, 'in v\n/tmp\n');
    r = await sb.exec(['cat'], { stdin: 'héllo' });
    assert.equal(r.stdout, 'héllo');
    r = await sb.exec(['sh', '-c', 'kill -9 $$']);
    assert.equal(r.exitCode, null);
    assert.equal(r.signal, 9);
    r = await sb.exec(['no-such-program']);
    assert.equal(r.exitCode, 127);
    await assert.rejects(() => sb.exec([]), TypeError);
    await assert.rejects(() => sb.exec('   '), TypeError);
    await assert.rejects(() => sb.exec(['true'], { timeoutMs: 0 }), RangeError);
  });

  test('a timeout is a result: timedOut, exit 124, the output so far', async () => {
    const t0 = Date.now();
    const r = await sb.exec(['sh', '-c', 'echo before; sleep 30'], { timeoutMs: 500 });
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, 124);
    assert.equal(r.stdout, 'before\n');
    assert.equal(r.success, false);
    assert.ok(Date.now() - t0 < 15000);
  });

  test('timeoutMs is sent as whole ms, rounded up', async () => {
    const log: { method: string; url: string; body: unknown }[] = [];
    const c = new Client({ url: URL, token: TOKEN, fetch: recordingFetch(log) });
    const s = await c.sandbox(sb.id);
    await s.exec(['true'], { timeoutMs: 1500.2 });
    await s.exec('true', { timeoutMs: 7 });
    const bodies = log.filter((l) => l.url.endsWith('/exec')).map((l) => l.body as Record<string, unknown>);
    assert.deepEqual(bodies.map((b) => b.timeout_ms), [1501, 7]);
    assert.deepEqual(bodies[1]!.cmd, 'true');
  });

  test('output past the cap is marked truncated', async () => {
    const r = await sb.exec(['python3', '-c', "import sys; sys.stdout.write('x' * (2 << 20))"]);
    assert.equal(r.truncated, true);
    assert.equal(r.stdoutTruncated, true);
    assert.equal(r.stdout.length, 1 << 20);
  });

  test('aborting an exec kills the command on the server', async () => {
    const ac = new AbortController();
    const marker = 'sleep 299.25';
    const running = sb.exec(['sh', '-c', `echo started; exec ${marker}`], { signal: ac.signal });
    await seen(sb, marker);
    ac.abort();
    await assert.rejects(running, (e: unknown) => (e as Error).name === 'AbortError');
    await waitUntil(() => goneFromSandbox(sb, marker), 30000, 200);
    // An already aborted signal sends nothing.
    await assert.rejects(() => sb.exec(['true'], { signal: AbortSignal.abort() }), (e: unknown) => (e as Error).name === 'AbortError');
  });
});

describe('stream', () => {
  test('yields output as it comes, then the exit', async () => {
    const events: ExecEvent[] = [];
    for await (const ev of sb.stream(['sh', '-c', 'echo one; echo two >&2; echo three; exit 4'])) events.push(ev);
    const last = events.at(-1)!;
    assert.equal(last.kind, 'exit');
    assert.equal(last.kind === 'exit' && last.result.exitCode, 4);
    const text = (k: string) => events.map((e) => (e.kind !== 'exit' && e.kind === k ? e.data : '')).join('');
    assert.equal(text('stdout'), 'one\nthree\n');
    assert.equal(text('stderr'), 'two\n');
  });

  test('a slow command streams before it ends', async () => {
    const t0 = Date.now();
    const seen: number[] = [];
    for await (const ev of sb.stream(['sh', '-c', 'echo a; sleep 1.5; echo b'])) {
      if (ev.kind === 'stdout') seen.push(Date.now() - t0);
    }
    assert.equal(seen.length, 2);
    assert.ok(seen[1]! - seen[0]! >= 1000, `the first line came ${seen[1]! - seen[0]!} ms before the second`);
  });

  test('leaving the loop early kills the command', async () => {
    const marker = 'sleep 299.5';
    for await (const ev of sb.stream(['sh', '-c', `echo started; exec ${marker}`])) {
      assert.deepEqual(ev, { kind: 'stdout', data: 'started\n' });
      await seen(sb, marker);
      break;
    }
    await waitUntil(() => goneFromSandbox(sb, marker), 30000, 200);
  });

  test('aborting the signal kills the command', async () => {
    const ac = new AbortController();
    const marker = 'sleep 299.75';
    const got: string[] = [];
    await assert.rejects(async () => {
      for await (const ev of sb.stream(['sh', '-c', `echo started; exec ${marker}`], { signal: ac.signal })) {
        if (ev.kind === 'stdout') got.push(ev.data);
        await seen(sb, marker);
        ac.abort();
      }
    }, (e: unknown) => (e as Error).name === 'AbortError');
    assert.deepEqual(got, ['started\n']);
    await waitUntil(() => goneFromSandbox(sb, marker), 30000, 200);
  });

  test('an error before the start is a CellaError', async () => {
    const gone = new Sandbox(client, { ...sb.info, sandboxId: 'ddb3cf83-3af9-4c0d-9598-f10d5a5d51ab' });
    await assert.rejects(async () => {
      for await (const _ of gone.stream(['true'])) void _;
    }, (e: unknown) => e instanceof CellaError && e.code === 'S002' && e.status === 404);
  });
});

describe('files', () => {
  test('round trips: text, bytes, modes, odd names', async () => {
    assert.equal(await sb.writeFile('dir/a.txt', 'héllo\n'), 7);
    assert.equal(await sb.readText('/workspace/dir/a.txt'), 'héllo\n');
    const blob = new Uint8Array(256 * 1000).map((_, i) => i % 256);
    assert.equal(await sb.writeFile('/workspace/b.bin', blob, { mode: '0600' }), blob.length);
    assert.deepEqual(await sb.readFile('b.bin'), blob);
    assert.equal((await sb.stat('b.bin')).mode, '0600');
    for (const name of ['a b#c?.txt', '100%.txt', 'ünï', '..dots']) {
      await sb.writeFile(`odd/${name}`, name);
      assert.equal(await sb.readText(`odd/${name}`), name);
    }
    await assert.rejects(
      () => sb.writeFile('nodir/x', 'x', { parents: false }),
      (e: unknown) => e instanceof CellaError && e.code === 'S211' && e.status === 404 && (e.fix as { parents?: boolean })?.parents === true,
    );
    await assert.rejects(() => sb.readFile('nothing/here'), (e: unknown) => e instanceof CellaError && e.code === 'S211');
  });

  test('upload and download stream through local files', async () => {
    const local = join(tmp, 'up.bin');
    const bytes = randomBytes(3 << 20);
    await writeFile(local, bytes);
    assert.equal(await sb.upload(local, 'up/up.bin'), 3 << 20);
    assert.equal(await sb.download('up/up.bin', join(tmp, 'down.bin')), 3 << 20);
    assert.deepEqual(await readFile(join(tmp, 'down.bin')), bytes);
    await sb.download('/workspace/dir/a.txt', tmp); // into a directory
    assert.equal(await readFile(join(tmp, 'a.txt'), 'utf8'), 'héllo\n');
    assert.equal(await sb.upload(local, 'up/ro.bin', { mode: '0400' }), 3 << 20);
    assert.equal((await sb.stat('up/ro.bin')).mode, '0400');
  });

  test('a failed download leaves nothing', async () => {
    const dir = await mkdtemp(join(tmp, 'empty-'));
    await assert.rejects(
      () => sb.download('/workspace/missing', join(dir, 'x')),
      (e: unknown) => e instanceof CellaError && e.code === 'S211' && e.status === 404,
    );
    assert.deepEqual(await readdir(dir), []);
  });

  test('fs operations', async () => {
    assert.equal(await sb.mkdir('t/u', { parents: true }), true);
    assert.equal(await sb.mkdir('t/u', { parents: true }), false);
    await assert.rejects(() => sb.mkdir('t/u'), (e: unknown) => e instanceof CellaError && e.code === 'S213');
    await sb.writeFile('t/u/f.py', 'x = 1  # TODO\n');
    await sb.writeFile('t/g.txt', 'nothing\n');
    assert.deepEqual((await sb.ls('t')).map((e) => e.name), ['g.txt', 'u']);
    const info = await sb.stat('t/u');
    assert.equal(info.isDir, true);
    assert.equal(info.isSymlink, false);
    assert.ok(info.modified.getUTCFullYear() >= 2024);
    assert.equal(await sb.exists('t/g.txt'), true);
    assert.equal(await sb.exists('t/none'), false);
    const g = await sb.grep('TODO', '/workspace/t');
    assert.deepEqual(g.matches.map((m) => [m.path, m.line]), [['/workspace/t/u/f.py', 1]]);
    assert.equal(g.truncated, false);
    assert.equal((await sb.grep('todo', '/workspace/t', { ignoreCase: true, include: ['*.py'] })).matches.length, 1);
    assert.equal((await sb.grep('todo', '/workspace/t', { exclude: ['*.py'] })).matches.length, 0);
    assert.deepEqual(await sb.glob('**/*.py', '/workspace/t'), ['/workspace/t/u/f.py']);
    const res = await sb.sed('TODO', 'DONE', { files: ['/workspace/t/u/f.py'] });
    assert.equal(res.total_replacements, 1);
    assert.equal(await sb.readText('t/u/f.py'), 'x = 1  # DONE\n');
    await sb.mv('t/g.txt', 't/h.txt');
    await assert.rejects(() => sb.mv('t/u/f.py', 't/h.txt'), (e: unknown) => e instanceof CellaError && e.code === 'S213');
    await sb.mv('t/u/f.py', 't/h.txt', { overwrite: true });
    assert.equal(await sb.chmod('t/h.txt', '0640'), 1);
    assert.equal((await sb.stat('t/h.txt')).mode, '0640');
    const raw = await sb.fs<{ size: number; body?: string }>('read', { path: '/workspace/t/h.txt' });
    assert.equal(raw.body, 'x = 1  # DONE\n');
    await assert.rejects(() => sb.rm('t'), (e: unknown) => e instanceof CellaError && e.code === 'S214');
    await sb.rm('t', { recursive: true });
    assert.equal(await sb.exists('t'), false);
  });
});

describe('errors', () => {
  test('carry code, status, fix and fixNote', async () => {
    await assert.rejects(() => client.create('no-such-image'), (e: unknown) => {
      assert.ok(e instanceof CellaError && e instanceof Error);
      assert.equal(e.code, 'S100');
      assert.equal(e.status, 400);
      assert.match(e.message, /python/);
      assert.match(e.docsUrl ?? '', /errors\.md#s100/);
      assert.equal(e.retryable, false);
      return true;
    });
    await assert.rejects(() => client.sandbox('ddb3cf83-3af9-4c0d-9598-f10d5a5d51ab'), (e: unknown) => {
      assert.ok(e instanceof CellaError);
      assert.equal(e.code, 'S002');
      assert.equal(e.status, 404);
      assert.ok(e.fixNote);
      assert.match(String(e), /^CellaError S002: /);
      return true;
    });
    await assert.rejects(
      () => new Client({ url: URL, token: 'wrong-token-0123456789abcdef' }).list(),
      (e: unknown) => e instanceof CellaError && e.code === 'S005' && e.status === 401,
    );
    await assert.rejects(
      () => new Client({ url: 'http://127.0.0.1:1', token: TOKEN }).list(),
      (e: unknown) => e instanceof CellaError && e.code === 'connection' && /cannot reach/.test(e.message) && !!e.fixNote,
    );
    assert.equal(await new Client({ url: 'http://127.0.0.1:1' }).healthy(), false);
  });
});

describe('tenants and stop', () => {
  test('another tenant sees nothing; stop; dispose is quiet', { skip: !OTHER_TOKEN && 'no CELLA_OTHER_TOKEN' }, async () => {
    const s = await client.create('shell');
    assert.ok((await client.list()).some((x) => x.sandboxId === s.id));
    const bob = new Client({ url: URL, token: OTHER_TOKEN });
    assert.ok(!(await bob.list()).some((x) => x.sandboxId === s.id));
    await assert.rejects(() => bob.sandbox(s.id), (e: unknown) => e instanceof CellaError && e.code === 'S002');
    assert.equal((await client.sandbox(s.id)).info.image, 'shell');
    await s.stop({ wait: true });
    assert.ok(!(await client.list()).some((x) => x.sandboxId === s.id));
    await assert.rejects(() => s.stop(), (e: unknown) => e instanceof CellaError && e.code === 'S002');
    await s[Symbol.asyncDispose](); // already gone: quiet
  });
});

describe('run', () => {
  test('one-shot runs', async () => {
    let r = await client.run('import sys; print(sys.stdin.read())', { stdin: 'hi', files: { 'd.txt': 'data' } });
    assert.equal(r.stdout, 'hi\n');
    assert.equal(r.success, true);
    assert.equal(r.sandboxId, null);
    r = await client.run('cat /workspace/d.txt', { image: 'shell', lang: 'shell', files: { 'd.txt': 'data' } });
    assert.equal(r.stdout, 'data');
    r = await client.run('import time; print(1, flush=True); time.sleep(20)', { timeoutMs: 800 });
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, 124);
    assert.equal(r.stdout, '1\n');
    r = await client.run('print(2)', { keepSandbox: true });
    assert.ok(r.sandboxId);
    await (await client.sandbox(r.sandboxId!)).stop();
    await assert.rejects(() => client.run(), TypeError);
    await assert.rejects(() => client.run('echo', { image: 'shell' }), TypeError);
  });

  test('typed runs', async () => {
    // A comment unique to this run keeps the result cache of earlier runs out.
    const code = `end = start + step\nn = len(open(blob, 'rb').read())\nratio = n / 2  # ${process.pid} ${Date.now()}`;
    const inputs = { start: new Date('2024-01-01T00:00:00Z'), step: typed.timedelta(86400), blob: new Uint8Array([0, 1, 2]) };
    const r = await client.run(code, { inputs, outputs: { end: 'datetime', n: 'int', ratio: 'float' } });
    assert.equal(r.success, true, `${r.stderr} ${r.outputsError}`);
    assert.deepEqual(r.outputs, { end: '2024-01-02T00:00:00+00:00', n: 3, ratio: 1.5 });
    assert.equal(r.attempts, 1);
    const again = await client.run(code, { inputs, outputs: { end: 'datetime', n: 'int', ratio: 'float' } });
    assert.equal(again.cached, true);
    assert.deepEqual(again.outputs, r.outputs);
    const c = await client.run(undefined, { command: ['/bin/sh', '-c', 'exit 3'], retries: 1, cache: 'disable' });
    assert.equal(c.exitCode, 3);
    assert.equal(c.attempts, 2);
    assert.equal(c.success, false);
    const k = await client.run('y = x * 2\nz = f * 2\nok = not b', {
      inputs: { x: 21, f: typed.float(2), b: false, s: 'text', big: 7n },
      outputs: { y: 'int', z: 'float', ok: 'bool' },
    });
    assert.deepEqual(k.outputs, { y: 42, z: 4, ok: true });
    await assert.rejects(() => client.run('x = 1', { inputs: { bad: {} as never } }), TypeError);
  });
});
