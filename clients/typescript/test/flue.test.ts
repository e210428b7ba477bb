/**
 * The Flue driver against a live daemon, through real Sandboxes made by
 * @flue/runtime's sandboxFromDriver: the factory's id-to-sandbox mapping,
 * exec (exit codes, timeouts with exit 124, timeoutMs rounded up, aborts
 * that kill the command on the server), and the file rules of
 * flue-sandbox-adapter-api.md: rm exactly as Node's fs.rm, stat following
 * symlinks, exists never throwing, readdir names, binary-safe writes with
 * parents made by the runtime's retry.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodefs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { SandboxOperationUnsupportedError } from '@flue/runtime';
import type { Sandbox as FlueSandbox } from '@flue/runtime';
import { Client, MAX_TIMEOUT_MS, Sandbox } from 'cella';
import { CellaDriver, CellaFsError, cella, type CellaSandboxFactory } from 'cella/flue';
import { TOKEN, URL, commandLines, goneFromSandbox, recordingFetch, waitUntil } from './helpers.js';

const requests: { method: string; url: string; body: unknown }[] = [];
let factory: CellaSandboxFactory;
let flue: FlueSandbox;
let sb: Sandbox;
const runId = `run-${process.pid}-${Date.now()}`;

before(async () => {
  factory = cella({ url: URL, token: TOKEN, image: 'python', clientOptions: { fetch: recordingFetch(requests) } });
  flue = await factory.createSandbox({ id: runId });
  sb = await factory.sandboxFor(runId);
});

after(async () => {
  await factory.stopAll();
});

/** Runs a shell script in the sandbox through the driver's own exec, in /workspace. */
async function sh(script: string): Promise<void> {
  const r = await flue.exec(script);
  assert.equal(r.exitCode, 0, r.stderr);
}

describe('the factory', () => {
  test('one sandbox per id, reused, found again by name, and never stopped on its own', async () => {
    assert.equal(flue.cwd, '/workspace');
    assert.equal(sb.info.name, `flue:${runId}`);
    assert.equal(sb.info.image, 'python');
    const again = await factory.createSandbox({ id: runId });
    assert.equal((await factory.sandboxFor(runId)).id, sb.id);
    await again.writeFile('shared.txt', 'one sandbox');
    assert.equal(await flue.readFile('shared.txt'), 'one sandbox');
    const viaOld = await factory.createSessionEnv({ id: runId });
    assert.equal(await viaOld.readFile('/workspace/shared.txt'), 'one sandbox');

    // Another process (a new factory) finds the same sandbox by its name.
    const other = cella({ url: URL, token: TOKEN, image: 'python' });
    assert.equal((await other.sandboxFor(runId)).id, sb.id);

    // Concurrent first calls of a new id share one sandbox.
    const id2 = `${runId}-b`;
    const [a, b] = await Promise.all([factory.sandboxFor(id2), factory.sandboxFor(id2)]);
    assert.equal(a.id, b.id);
    assert.notEqual(a.id, sb.id);
    // stop(id) is the application's; the next call makes a new sandbox.
    assert.equal(await factory.stop(id2), true);
    assert.equal(await factory.stop(id2), false);
    const c = await factory.sandboxFor(id2);
    assert.notEqual(c.id, a.id);
    // A sandbox gone behind the factory's back (the idle reaper) is replaced too.
    await c.stop({ wait: true });
    const d = await factory.sandboxFor(id2);
    assert.notEqual(d.id, c.id);
    assert.equal(await factory.stop(id2), true);

    const long = 'x'.repeat(300);
    assert.ok(Buffer.byteLength(factory.nameFor(long)) <= 120);
    assert.match(factory.nameFor(long), /^flue:sha256:[0-9a-f]{64}$/);
  });

  test('a factory bound to an existing sandbox serves every id with it and never stops it', async () => {
    const bound = cella({ url: URL, token: TOKEN, sandbox: sb.id });
    const s1 = await bound.createSandbox({ id: 'one' });
    await bound.createSandbox({ id: 'two' });
    assert.equal((await bound.sandboxFor('two')).id, sb.id);
    assert.equal(await s1.readFile('shared.txt'), 'one sandbox');
    assert.equal(await bound.stop('one'), false);
    assert.equal(await bound.stopAll(), 0);
    assert.equal((await sb.refresh()).state, 'running');
  });
});

describe('exec', () => {
  test('resolves for every completed command, with its exit code, cwd and env', async () => {
    let r = await flue.exec('echo "$PWD"; echo err >&2; exit 3');
    assert.deepEqual(r, { stdout: '/workspace\n', stderr: 'err\n', exitCode: 3 });
    await flue.mkdir('sub');
    r = await flue.exec('pwd; echo "$GREETING" | tr a-z A-Z', { cwd: 'sub', env: { GREETING: 'hi there' } });
    assert.deepEqual(r, { stdout: '/workspace/sub\nHI THERE\n', stderr: '', exitCode: 0 });
    r = await flue.exec('kill -9 $$');
    assert.equal(r.exitCode, 137);
    assert.match(r.stderr, /signal 9/);
    r = await flue.exec('no-such-command-here');
    assert.equal(r.exitCode, 127);
    r = await flue.exec('set -o pipefail; echo a | grep b');
    assert.equal(r.exitCode, 1);
  });

  test('a timeout resolves with exit 124, the output kept and the details on stderr', async () => {
    const t0 = Date.now();
    const r = await flue.exec('echo before; echo partial >&2; sleep 30; echo after', { timeoutMs: 700 });
    assert.equal(r.exitCode, 124);
    assert.equal(r.stdout, 'before\n');
    assert.match(r.stderr, /^partial\ncella: the command timed out after 700 ms/);
    assert.ok(Date.now() - t0 < 15000);
  });

  test('timeoutMs is rounded up to whole ms, and absent means the daemon\'s upper bound', async () => {
    requests.length = 0;
    await flue.exec('true', { timeoutMs: 1500.2 });
    await flue.exec('true', { timeoutMs: 0.01 });
    await flue.exec('true');
    const sent = requests.filter((q) => q.url.endsWith('/exec')).map((q) => (q.body as { timeout_ms: number }).timeout_ms);
    assert.deepEqual(sent, [1501, 1, MAX_TIMEOUT_MS]);
    const argv = (requests.find((q) => q.url.endsWith('/exec'))!.body as { argv: string[] }).argv;
    assert.deepEqual(argv, ['bash', '-c', 'true']);
  });

  test('an abort rejects and kills the command on the server', async () => {
    const marker = 'sleep 298.5';
    const orphans: unknown[] = [];
    const f = cella({ url: URL, token: TOKEN, sandbox: sb, onOrphanSettled: (o) => orphans.push(o) });
    const fs = await f.createSandbox({ id: runId });
    const ac = new AbortController();
    const running = fs.exec(`echo started; ${marker}; echo never`, { signal: ac.signal });
    await waitUntil(async () => (await commandLines(sb)).some((l) => l.includes(marker)), 10000);
    ac.abort();
    await assert.rejects(running, (e: unknown) => (e as Error).name === 'AbortError');
    await waitUntil(() => goneFromSandbox(sb, marker), 30000, 200);
    // The driver's own call ended too (the runtime reports it as an orphan).
    await waitUntil(() => orphans.length === 1, 10000);
    // Straight on the driver, an abort rejects the call itself.
    const driver = new CellaDriver(sb);
    const ac2 = new AbortController();
    const direct = driver.exec(`${marker}`, { signal: ac2.signal });
    await waitUntil(async () => (await commandLines(sb)).some((l) => l.includes(marker)), 10000);
    ac2.abort();
    await assert.rejects(direct, (e: unknown) => (e as Error).name === 'AbortError');
    await waitUntil(() => goneFromSandbox(sb, marker), 30000, 200);
  });
});

describe('files', () => {
  test('writeFile is binary-safe and parents are made by the runtime\'s retry', async () => {
    const bytes = new Uint8Array(4096).map((_, i) => (i * 7) % 256);
    await flue.writeFile('deep/er/blob.bin', bytes);
    assert.deepEqual(await flue.readFileBuffer('deep/er/blob.bin'), bytes);
    await flue.writeFile('/workspace/deep/text.txt', 'héllo wörld\n');
    assert.equal(await flue.readFile('deep/text.txt'), 'héllo wörld\n');
    assert.equal((await flue.stat('deep/text.txt')).size, Buffer.byteLength('héllo wörld\n'));
    await flue.writeFile('deep/text.txt', '');
    assert.equal(await flue.readFile('deep/text.txt'), '');
    // The driver itself does not make parents: the missing-parent error propagates.
    const driver = new CellaDriver(sb);
    await assert.rejects(() => driver.writeFile('/workspace/no/such/dir/f', 'x'), (e: unknown) => e instanceof CellaFsError && e.code === 'ENOENT');
    assert.equal(await flue.exists('no'), false);
    await assert.rejects(() => flue.readFile('deep'), (e: unknown) => e instanceof CellaFsError && e.code === 'EISDIR');
    await assert.rejects(() => flue.readFile('missing.txt'), (e: unknown) => e instanceof CellaFsError && e.code === 'ENOENT');
    await assert.rejects(() => flue.writeFile('deep', 'x'), (e: unknown) => e instanceof CellaFsError && e.code === 'EISDIR');
  });

  test('readdir answers names; mkdir as Node\'s', async () => {
    await sh('mkdir -p rd/sub && touch rd/a rd/.hidden && ln -s a rd/link');
    assert.deepEqual((await flue.readdir('rd')).sort(), ['.hidden', 'a', 'link', 'sub']);
    await assert.rejects(() => flue.readdir('rd/a'), (e: unknown) => e instanceof CellaFsError && e.code === 'ENOTDIR');
    await assert.rejects(() => flue.readdir('rd/none'), (e: unknown) => e instanceof CellaFsError && e.code === 'ENOENT');
    await flue.mkdir('mk/a/b', { recursive: true });
    await flue.mkdir('mk/a/b', { recursive: true });
    await assert.rejects(() => flue.mkdir('mk/a/b'), (e: unknown) => e instanceof CellaFsError && e.code === 'EEXIST');
    await assert.rejects(() => flue.mkdir('mk/x/y'), (e: unknown) => e instanceof CellaFsError && e.code === 'ENOENT');
    assert.equal((await flue.stat('mk/a/b')).isDirectory, true);
  });

  test('stat follows symlinks; isSymbolicLink is the path\'s own; nothing is invented', async () => {
    await sh('mkdir -p st/d && printf abc > st/f && : > st/empty && mkfifo st/p && cd st && ln -s f lf && ln -s d ld && ln -s nowhere dang && ln -s p lp && ln -s loop loop && ln -s lf llf');
    const f = await flue.stat('st/f');
    assert.deepEqual({ ...f, mtime: undefined }, { isFile: true, isDirectory: false, isSymbolicLink: false, size: 3, mtime: undefined });
    assert.ok(f.mtime instanceof Date && Math.abs(f.mtime.getTime() - Date.now()) < 600000);
    const d = await flue.stat('st/d');
    assert.equal(d.isDirectory, true);
    assert.equal(d.isFile, false);
    assert.equal(d.isSymbolicLink, false);
    assert.equal(typeof d.size, 'number');
    const e = await flue.stat('st/empty');
    assert.deepEqual([e.isFile, e.isDirectory, e.size], [true, false, 0]);
    const p = await flue.stat('st/p');
    assert.deepEqual([p.isFile, p.isDirectory, p.isSymbolicLink], [false, false, false]);
    const lf = await flue.stat('st/lf');
    assert.deepEqual([lf.isFile, lf.isDirectory, lf.isSymbolicLink, lf.size], [true, false, true, 3]);
    assert.equal(lf.mtime?.getTime(), f.mtime?.getTime());
    const llf = await flue.stat('st/llf');
    assert.deepEqual([llf.isFile, llf.isSymbolicLink, llf.size], [true, true, 3]);
    const ld = await flue.stat('st/ld');
    assert.deepEqual([ld.isFile, ld.isDirectory, ld.isSymbolicLink, ld.size], [false, true, true, d.size]);
    assert.equal(ld.mtime?.getTime(), d.mtime?.getTime());
    const lp = await flue.stat('st/lp');
    // A link to a FIFO: neither file nor directory, with the FIFO's own size and mtime.
    assert.deepEqual([lp.isFile, lp.isDirectory, lp.isSymbolicLink, lp.size], [false, false, true, 0]);
    assert.ok(lp.mtime instanceof Date);
    await assert.rejects(() => flue.stat('st/dang'), (e: unknown) => e instanceof CellaFsError && e.code === 'ENOENT');
    await assert.rejects(() => flue.stat('st/loop'), (e: unknown) => e instanceof CellaFsError && e.code === 'ELOOP');
    await assert.rejects(() => flue.stat('st/none'), (e: unknown) => e instanceof CellaFsError && e.code === 'ENOENT');
  });

  test('a trailing slash on stat asks for a directory, following symlinks, as Node\'s fs.stat', async () => {
    // Flue's Sandbox normalizes 'f/' to 'f', so these go to the driver itself.
    const driver = new CellaDriver(sb);
    const code = (want: string) => (e: unknown) => e instanceof CellaFsError && e.code === want && e.syscall === 'stat';
    for (const p of ['f/', 'f/.', 'f//', 'empty/', 'lf/', 'llf/', 'p/', 'lp/']) {
      await assert.rejects(() => driver.stat(`/workspace/st/${p}`), code('ENOTDIR'), p);
    }
    assert.deepEqual(await driver.stat('/workspace/st/d/'), await driver.stat('/workspace/st/d'));
    const ld = await driver.stat('/workspace/st/ld/');
    assert.deepEqual([ld.isDirectory, ld.isFile], [true, false]);
    await assert.rejects(() => driver.stat('/workspace/st/dang/'), code('ENOENT'));
    await assert.rejects(() => driver.stat('/workspace/st/loop/'), code('ELOOP'));
    await assert.rejects(() => driver.stat('/workspace/st/none/'), code('ENOENT'));
    await assert.rejects(() => driver.stat('st/f/'), code('ENOTDIR'));
    assert.equal((await driver.stat('/')).isDirectory, true);
  });

  test('exists follows symlinks and never throws', async () => {
    assert.equal(await flue.exists('st/f'), true);
    assert.equal(await flue.exists('st/d'), true);
    assert.equal(await flue.exists('st/lf'), true);
    assert.equal(await flue.exists('st/p'), true);
    assert.equal(await flue.exists('st/dang'), false);
    assert.equal(await flue.exists('st/loop'), false);
    assert.equal(await flue.exists('st/none'), false);
    assert.equal(await flue.exists('st/f/below-a-file'), false);
    assert.equal(await flue.exists('bad\0path'), false);
    // A trailing slash (given to the driver: Flue's Sandbox drops it) needs a directory, as in Node.
    const driver = new CellaDriver(sb);
    for (const p of ['f/', 'f/.', 'lf/', 'p/', 'dang/', 'none/']) assert.equal(await driver.exists(`/workspace/st/${p}`), false, p);
    for (const p of ['d/', 'ld/', 'd/.']) assert.equal(await driver.exists(`/workspace/st/${p}`), true, p);
    // Nor when the daemon cannot be reached.
    const unreachable = new Sandbox(new Client({ url: 'http://127.0.0.1:1', token: TOKEN }), sb.info);
    assert.equal(await new CellaDriver(unreachable).exists('/workspace/st/f'), false);
  });

  test('readFile and writeFile: a file where a directory is needed is ENOTDIR, as in Node', async () => {
    await sh('rm -rf wf && mkdir -p wf/d && printf hi > wf/f && cd wf && ln -s f lf && ln -s d ld');
    const driver = new CellaDriver(sb);
    const code = (want: string) => (e: unknown) => e instanceof CellaFsError && e.code === want;
    // A parent that is a file (or a symlink to one); through Flue's Sandbox
    // too, whose retry after making the parent fails the same way.
    for (const p of ['f/x', 'lf/x', 'f/x/y']) {
      await assert.rejects(() => driver.writeFile(`/workspace/wf/${p}`, 'new'), code('ENOTDIR'), p);
      await assert.rejects(() => flue.writeFile(`wf/${p}`, 'new'), code('ENOTDIR'), p);
      await assert.rejects(() => flue.readFile(`wf/${p}`), code('ENOTDIR'), p);
    }
    await assert.rejects(() => flue.writeFile('wf/d', 'new'), code('EISDIR'));
    await assert.rejects(() => flue.readFile('wf/d'), code('EISDIR'));
    // A trailing slash (Flue's Sandbox drops it, so to the driver itself):
    // readFile needs a directory there, and then a directory is EISDIR.
    for (const p of ['f/', 'f/.', 'lf/']) {
      await assert.rejects(() => driver.readFile(`/workspace/wf/${p}`), code('ENOTDIR'), p);
      await assert.rejects(() => driver.readFileBuffer(`/workspace/wf/${p}`), code('ENOTDIR'), p);
    }
    for (const p of ['d/', 'ld/']) await assert.rejects(() => driver.readFile(`/workspace/wf/${p}`), code('EISDIR'), p);
    await assert.rejects(() => driver.readFile('/workspace/wf/none/'), code('ENOENT'));
    // writeFile never writes a path ending in '/': EISDIR as Node's (open
    // with O_CREAT), unless its parent is missing or not a directory.
    for (const p of ['f/', 'lf/', 'd/', 'ld/', 'none/']) {
      await assert.rejects(() => driver.writeFile(`/workspace/wf/${p}`, 'new'), code('EISDIR'), p);
    }
    await assert.rejects(() => driver.writeFile('/workspace/wf/f/./', 'new'), code('ENOTDIR'));
    await assert.rejects(() => driver.writeFile('/workspace/wf/f/x/', 'new'), code('ENOTDIR'));
    await assert.rejects(() => driver.writeFile('/workspace/wf/no/x/', 'new'), code('ENOENT'));
    assert.deepEqual((await flue.readdir('wf')).sort(), ['d', 'f', 'ld', 'lf']);
    assert.deepEqual(await flue.readdir('wf/d'), []);
    assert.equal(await flue.readFile('wf/f'), 'hi');
    assert.equal((await flue.stat('wf/lf')).isSymbolicLink, true);
  });

  test('writeFile onto a symlink replaces the link (Node would write through it)', async () => {
    // Pinned as it is, and said in docs/clients.md: the daemon's write acts
    // on the link itself (docs/files.md), so the target is left alone.
    await sh('rm -rf wl && mkdir wl && printf old > wl/f && ln -s f wl/lf && ln -s nowhere wl/dang');
    await flue.writeFile('wl/lf', 'new');
    const lf = await flue.stat('wl/lf');
    assert.deepEqual([lf.isFile, lf.isSymbolicLink, lf.size], [true, false, 3]);
    assert.equal(await flue.readFile('wl/lf'), 'new');
    assert.equal(await flue.readFile('wl/f'), 'old');
    // A dangling link is replaced the same way; nothing appears where it pointed.
    await new CellaDriver(sb).writeFile('/workspace/wl/dang', 'here');
    assert.equal((await flue.stat('wl/dang')).isSymbolicLink, false);
    assert.deepEqual((await flue.readdir('wl')).sort(), ['dang', 'f', 'lf']);
  });

  test('rm does exactly what Node\'s fs.rm does', async () => {
    const tree = 'rm -rf rmt && mkdir -p rmt/d rmt/e/sub && echo hi > rmt/f && touch rmt/e/x rmt/e/sub/y && ln -s d rmt/ld && ln -s f rmt/lf && ln -s nowhere rmt/dang';
    const local = await nodefs.mkdtemp(join(tmpdir(), 'cella-rm-'));
    const makeLocal = async () => {
      await nodefs.rm(join(local, 'rmt'), { recursive: true, force: true });
      await nodefs.mkdir(join(local, 'rmt/d'), { recursive: true });
      await nodefs.mkdir(join(local, 'rmt/e/sub'), { recursive: true });
      await nodefs.writeFile(join(local, 'rmt/f'), 'hi\n');
      await nodefs.writeFile(join(local, 'rmt/e/x'), '');
      await nodefs.writeFile(join(local, 'rmt/e/sub/y'), '');
      await nodefs.symlink('d', join(local, 'rmt/ld'));
      await nodefs.symlink('f', join(local, 'rmt/lf'));
      await nodefs.symlink('nowhere', join(local, 'rmt/dang'));
    };
    const outcome = async (fn: () => Promise<void>) => {
      try {
        await fn();
        return 'ok';
      } catch (e) {
        return String((e as { code?: string }).code ?? e);
      }
    };
    type Opts = { recursive?: boolean; force?: boolean };
    const cases: [string, Opts][] = [];
    const all: Opts[] = [{}, { force: true }, { recursive: true }, { recursive: true, force: true }];
    for (const p of ['f', 'd', 'e', 'ld', 'lf', 'dang', 'missing', 'f/below', 'e/sub']) for (const o of all) cases.push([p, o]);
    // Flue's Sandbox normalizes paths ('f/' reaches the driver as 'f'), so a
    // trailing slash is sent to the driver itself: it must name a directory
    // (following a symlink), else ENOTDIR with nothing removed, force or not.
    for (const p of ['f/', 'f/.', 'f//', 'lf/', 'd/', 'e/', 'dang/', 'missing/', 'f/below/']) for (const o of all) cases.push([p, o]);
    // 'ld/' with recursive is the one case not emulated (below).
    cases.push(['ld/', {}], ['ld/', { force: true }]);
    const driver = new CellaDriver(sb);
    const seen = new Set<string>();
    try {
      for (const [p, o] of cases) {
        await makeLocal();
        // (Not path.join, which would drop the '/.' of 'f/.'.)
        const want = await outcome(() => nodefs.rm(`${local}/rmt/${p}`, o));
        const wantLeft = (await nodefs.readdir(join(local, 'rmt'))).sort();
        const wantE = (await nodefs.readdir(join(local, 'rmt/e')).catch(() => [])).sort();
        await sh(tree);
        const got = await outcome(() => (p.endsWith('/') || p.endsWith('/.') ? driver.rm(`/workspace/rmt/${p}`, o) : flue.rm(`rmt/${p}`, o)));
        const gotLeft = (await flue.readdir('rmt')).sort();
        const gotE = (await flue.readdir('rmt/e').catch(() => [])).sort();
        const what = `rm ${p} ${JSON.stringify(o)}`;
        assert.equal(got, want, what);
        assert.deepEqual(gotLeft, wantLeft, what);
        assert.deepEqual(gotE, wantE, what);
        seen.add(want);
      }
    } finally {
      await nodefs.rm(local, { recursive: true, force: true });
    }
    // The matrix covers success and each of Node's refusals.
    assert.deepEqual([...seen].sort(), ['ENOENT', 'ENOTDIR', 'ERR_FS_EISDIR', 'ok']);
    assert.equal(cases.length, 74);
    // The driver itself, given a trailing slash, follows the symlink as Node's lstat does.
    await sh(tree);
    await assert.rejects(() => driver.rm('/workspace/rmt/lf/', { recursive: true, force: true }),
      (e: unknown) => e instanceof CellaFsError && e.code === 'ENOTDIR');
    assert.equal(await flue.readFile('rmt/f'), 'hi\n');
    assert.equal((await flue.stat('rmt/lf')).isSymbolicLink, true);
    await assert.rejects(() => driver.rm('/workspace/rmt/ld/'), (e: unknown) => e instanceof CellaFsError && e.code === 'ERR_FS_EISDIR');
    assert.equal((await flue.stat('rmt/ld')).isSymbolicLink, true);
    await assert.rejects(() => driver.rm('/workspace/rmt/ld/', { recursive: true }),
      (e: unknown) => e instanceof SandboxOperationUnsupportedError);
    assert.deepEqual((await flue.readdir('rmt/d')).length, 0);
    assert.equal((await flue.stat('rmt/ld')).isSymbolicLink, true);
  });

  test('a stopped sandbox is Flue\'s SandboxDiedError', async () => {
    const id = `${runId}-dies`;
    const f = await factory.createSandbox({ id });
    await f.writeFile('x', 'y');
    await (await factory.sandboxFor(id)).stop({ wait: true });
    for (const call of [() => f.readFile('x'), () => f.exec('true'), () => f.stat('x'), () => f.rm('x')]) {
      await assert.rejects(call, (e: unknown) => (e as Error).name === 'SandboxDiedError');
    }
    assert.equal(await f.exists('x'), false);
    // The next createSandbox for the id makes a new one.
    const fresh = await factory.createSandbox({ id });
    assert.equal(await fresh.exists('x'), false);
    assert.equal(await factory.stop(id), true);
  });
});

describe('the client behind the driver', () => {
  test('is the package\'s Client', () => {
    assert.ok(factory.client instanceof Client);
    assert.equal(factory.client.url, URL);
  });
});
