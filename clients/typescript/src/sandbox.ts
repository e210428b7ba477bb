/** One sandbox: commands, streamed output, files. */
import { open as openFile, rename, stat as statLocal, unlink } from 'node:fs/promises';
import { openAsBlob } from 'node:fs';
import { basename, dirname, join, resolve as resolveLocal } from 'node:path';
import { randomUUID } from 'node:crypto';

import { CellaError } from './errors.js';
import { bodyChunks, quotePath, type Transport } from './http.js';
import {
  execResult,
  fileInfo,
  sandboxInfo,
  type ExecEvent,
  type ExecResult,
  type FileInfo,
  type GrepResult,
  type SandboxInfo,
  type SedResult,
} from './results.js';

/** A command: an argv array, or a string split into words as a shell would (quotes honoured; no pipes, variables or `&&`: use `['sh', '-c', '...']` for those). */
export type Command = string | readonly string[];
/** Environment variables, applied in key order over the sandbox's. */
export type Env = Record<string, string>;

export interface ExecOptions {
  /** Laid over the sandbox's environment. */
  env?: Env;
  /** Bytes fed to stdin (a string is sent as UTF-8); without it stdin is at end-of-file at once. */
  stdin?: string | Uint8Array;
  /** The command's deadline in ms, rounded up to a whole ms (default: the daemon's, 300 s). */
  timeoutMs?: number;
  /** Absolute working directory (default /workspace). */
  workdir?: string;
  /** Aborting it closes the connection: the daemon kills the command, and the call rejects with the abort's reason. */
  signal?: AbortSignal;
}

export interface WriteOptions {
  /** Octal mode string, e.g. "0600" (default 0644). */
  mode?: string;
  /** Make missing parent directories (default true). */
  parents?: boolean;
  signal?: AbortSignal;
}

/** What `Sandbox` needs from its client (kept structural to avoid an import cycle). */
export interface SandboxOwner {
  readonly transport: Transport;
}

/** The API's upper bound for timeout_ms (the daemon caps it at its max_exec_timeout_ms). */
export const MAX_TIMEOUT_MS = 4294967295000;

/** A timeout in ms as the API takes it: a whole number of ms, rounded up, never shorter than asked. */
export function toMs(ms: number | undefined): number | undefined {
  if (ms === undefined) return undefined;
  if (typeof ms !== 'number' || Number.isNaN(ms) || ms <= 0) {
    throw new RangeError(`a timeout must be a positive number of ms, not ${ms}`);
  }
  return Math.min(MAX_TIMEOUT_MS, Math.max(1, Math.ceil(ms)));
}

export function toBase64(data: string | Uint8Array): string {
  return (typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)).toString('base64');
}

export function execPayload(cmd: Command, opts: ExecOptions = {}): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  if (typeof cmd === 'string') {
    // The daemon splits a command line like shlex.split (quotes honoured).
    if (cmd.trim() === '') throw new TypeError('the command is empty');
    p.cmd = cmd;
  } else {
    if (!Array.isArray(cmd) || cmd.length === 0) throw new TypeError('the command is empty');
    p.argv = cmd.map(String);
  }
  if (opts.env && Object.keys(opts.env).length) p.env = { ...opts.env };
  if (opts.stdin !== undefined) p.stdin = toBase64(opts.stdin);
  p.timeout_ms = toMs(opts.timeoutMs);
  p.workdir = opts.workdir;
  return p;
}

/**
 * A live sandbox. Stop it with `stop()`, or let `await using` do it:
 *
 *     await using sb = await client.create('python');
 *     console.log((await sb.exec("python3 -c 'print(6*7)'")).stdout);
 */
export class Sandbox {
  info: SandboxInfo;
  private readonly t: Transport;

  constructor(owner: SandboxOwner, info: SandboxInfo) {
    this.t = owner.transport;
    this.info = info;
  }

  get id(): string {
    return this.info.sandboxId;
  }

  toString(): string {
    return `cella.Sandbox(${this.id}, image=${this.info.image})`;
  }

  private path(tail: string): string {
    return `/v1/sandboxes/${encodeURIComponent(this.id)}${tail}`;
  }

  // ---- lifecycle ----------------------------------------------------------

  /** Reads the sandbox's state again (S002 when it is gone). */
  async refresh(): Promise<SandboxInfo> {
    this.info = sandboxInfo(await this.t.json('GET', this.path('')));
    return this.info;
  }

  /** Stops the sandbox: every process killed, its workspace removed. `wait`: answer after the teardown. */
  async stop(options: { wait?: boolean } = {}): Promise<void> {
    await this.t.json('DELETE', this.path(''), undefined, { query: { wait: options.wait ? 'true' : undefined } });
  }

  /** For `await using`: stops the sandbox, quietly when it is already gone. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.stop();
    } catch (e) {
      if (!(e instanceof CellaError && (e.code === 'S002' || e.code === 'S004'))) throw e;
    }
  }

  // ---- commands -----------------------------------------------------------

  private async *events(cmd: Command, opts: ExecOptions): AsyncGenerator<ExecEvent, void, undefined> {
    const payload = execPayload(cmd, opts);
    let exit: ExecResult | undefined;
    for await (const [event, data] of this.t.sse(this.path('/exec'), payload, { signal: opts.signal })) {
      const d = (data ?? {}) as Record<string, unknown>;
      if (event === 'stdout' || event === 'stderr') {
        yield { kind: event, data: String(d.data ?? '') };
      } else if (event === 'exit') {
        // The stream ends right after its exit event: read it to the end, so
        // the connection is left whole (not cut under a finished command).
        exit = execResult(d, '', '');
      } else if (event === 'error') {
        const obj = (d.error && typeof d.error === 'object' ? d.error : d) as Record<string, unknown>;
        throw CellaError.fromObject(obj);
      }
    }
    if (exit) {
      yield { kind: 'exit', result: exit };
      return;
    }
    throw new CellaError('connection', "the stream ended before the command's exit");
  }

  /**
   * Runs a command and waits for it. A timeout is not an error: the result
   * has `timedOut`, exit code 124 and the output captured so far. The call
   * rides the streaming route, so a command may run for as long as its
   * timeout allows (no HTTP wait bound applies while it runs).
   */
  async exec(cmd: Command, options: ExecOptions = {}): Promise<ExecResult> {
    const out: string[] = [];
    const err: string[] = [];
    for await (const ev of this.events(cmd, options)) {
      if (ev.kind === 'exit') return { ...ev.result, stdout: out.join(''), stderr: err.join('') };
      (ev.kind === 'stdout' ? out : err).push(ev.data);
    }
    throw new CellaError('connection', "the stream ended before the command's exit");
  }

  /**
   * Runs a command and yields its output as it comes: `stdout`/`stderr`
   * events with text, then one `exit` event with the result (its stdout and
   * stderr empty). Leaving the loop early, or aborting `signal`, closes the
   * connection and the daemon kills the command.
   */
  stream(cmd: Command, options: ExecOptions = {}): AsyncGenerator<ExecEvent, void, undefined> {
    execPayload(cmd, options); // bad arguments throw now, not on the first next()
    return this.events(cmd, options);
  }

  // ---- files --------------------------------------------------------------

  /**
   * Any file operation by its name (`ls`, `stat`, `mkdir`, `write`, `read`,
   * `rm`, `chmod`, `mv`, `grep`, `sed`, `glob`) with the API's own fields
   * (docs/files.md), answering its JSON as it is: for what the methods below
   * do not wrap, such as `read`'s metadata of a symlink's target.
   */
  fs<T = Record<string, unknown>>(op: string, fields: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    return this.t.json<T>('POST', this.path(`/fs/${op}`), fields, { signal });
  }

  /** The file's bytes (any size or content; relative paths are under /workspace). */
  async readFile(path: string, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    const f = await this.t.request('GET', this.path(`/files/${quotePath(path)}`), { signal: options.signal });
    try {
      return new Uint8Array(await f.res.arrayBuffer());
    } catch (err) {
      return f.fail(err);
    } finally {
      f.settle();
    }
  }

  /** The file as text (UTF-8 by default). */
  async readText(path: string, options: { encoding?: string; signal?: AbortSignal } = {}): Promise<string> {
    return new TextDecoder(options.encoding ?? 'utf-8').decode(await this.readFile(path, options));
  }

  /**
   * Replaces the file with `data` (a string is written as UTF-8),
   * atomically, through the raw file route; missing parent directories are
   * made unless `parents: false` (then a missing one is S211 with
   * `fix: {parents: true}`). Returns the bytes written.
   */
  async writeFile(path: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<number> {
    const body = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    return this.put(path, body, options);
  }

  /** Streams a local file into the sandbox (never whole in memory). Returns the bytes written. */
  async upload(localPath: string, remotePath: string, options: WriteOptions = {}): Promise<number> {
    const blob = await openAsBlob(localPath);
    return this.put(remotePath, blob, options);
  }

  private async put(path: string, body: Uint8Array | Blob, options: WriteOptions): Promise<number> {
    const o = await this.t.json<{ bytes_written: number }>('PUT', this.path(`/files/${quotePath(path)}`), undefined, {
      body: body as RequestInit['body'],
      headers: { 'Content-Type': 'application/octet-stream' },
      query: { parents: options.parents ?? true, mode: options.mode },
      signal: options.signal,
      // A transfer has no time bound: only the wait for its answer after the bytes.
      timeoutMs: null,
    });
    return Number(o.bytes_written);
  }

  /**
   * Streams a sandbox file to a local path (a directory: the file keeps its
   * name). The bytes go to a temporary file beside the target, renamed when
   * complete, so a failed download leaves nothing behind. Returns the bytes
   * written.
   */
  async download(remotePath: string, localPath: string, options: { signal?: AbortSignal } = {}): Promise<number> {
    let dest = resolveLocal(localPath);
    try {
      if ((await statLocal(dest)).isDirectory()) dest = join(dest, basename(remotePath.replace(/\/+$/, '')));
    } catch {
      // not there yet: a file to make
    }
    const f = await this.t.request('GET', this.path(`/files/${quotePath(remotePath)}`), { signal: options.signal, timeoutMs: undefined });
    const tmp = join(dirname(dest), `.cella-${randomUUID()}`);
    let n = 0;
    try {
      const fh = await openFile(tmp, 'wx', 0o644);
      try {
        for await (const chunk of bodyChunks(f)) {
          await fh.write(chunk);
          n += chunk.byteLength;
        }
      } finally {
        await fh.close();
      }
      const want = f.res.headers.get('Content-Length');
      if (want !== null && Number(want) !== n) {
        throw new CellaError('S216', `the download ended after ${n} of ${want} bytes`);
      }
      await rename(tmp, dest);
    } catch (err) {
      f.abort();
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    f.settle();
    return n;
  }

  /** The directory's entries, sorted by name, each lstat'ed. */
  async ls(path = '/workspace'): Promise<FileInfo[]> {
    const o = await this.fs<{ entries: Record<string, unknown>[] }>('ls', { path });
    return o.entries.map(fileInfo);
  }

  /** The path's lstat (a symlink is described, not followed). */
  async stat(path: string): Promise<FileInfo> {
    return fileInfo(await this.fs('stat', { path }));
  }

  /** True when the path exists (a symlink counts, even a dangling one: this is lstat). */
  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (e) {
      if (e instanceof CellaError && e.code === 'S211') return false;
      throw e;
    }
  }

  /** True when it was made, false when it existed (with `parents`). */
  async mkdir(path: string, options: { parents?: boolean; mode?: string } = {}): Promise<boolean> {
    const o = await this.fs<{ created: boolean }>('mkdir', { path, parents: options.parents || undefined, mode: options.mode });
    return Boolean(o.created);
  }

  /** Removes a file, a symlink (never followed) or a directory (non-empty: `recursive`, else S214). */
  async rm(path: string, options: { recursive?: boolean } = {}): Promise<void> {
    await this.fs('rm', { path, recursive: options.recursive || undefined });
  }

  /** Moves or renames (an existing dst: `overwrite`, else S213). */
  async mv(src: string, dst: string, options: { overwrite?: boolean } = {}): Promise<void> {
    await this.fs('mv', { src, dst, overwrite: options.overwrite || undefined });
  }

  /** Changes the mode; returns how many paths changed. */
  async chmod(path: string, mode: string, options: { recursive?: boolean } = {}): Promise<number> {
    const o = await this.fs<{ updated: number }>('chmod', { path, mode, recursive: options.recursive || undefined });
    return Number(o.updated);
  }

  /** Lines matching a PCRE2 pattern under `path` (binary files skipped). */
  async grep(
    pattern: string,
    path = '/workspace',
    options: { ignoreCase?: boolean; include?: string[]; exclude?: string[]; maxMatches?: number; recursive?: boolean } = {},
  ): Promise<GrepResult> {
    const o = await this.fs<{ matches: { path: string; line: number; content: string }[]; truncated: boolean }>('grep', {
      path,
      pattern,
      ignore_case: options.ignoreCase || undefined,
      include_glob: options.include?.length ? options.include : undefined,
      exclude_glob: options.exclude?.length ? options.exclude : undefined,
      max_matches: options.maxMatches,
      recursive: options.recursive,
    });
    return {
      matches: o.matches.map((m) => ({ path: m.path, line: Number(m.line), content: m.content })),
      truncated: Boolean(o.truncated),
    };
  }

  /** Paths under `path` matching a gitignore-style pattern, sorted, absolute. */
  async glob(pattern: string, path = '/workspace', options: { includeHidden?: boolean; maxResults?: number } = {}): Promise<string[]> {
    const o = await this.fs<{ paths: string[] }>('glob', {
      path,
      pattern,
      include_hidden: options.includeHidden || undefined,
      max_results: options.maxResults,
    });
    return o.paths;
  }

  /**
   * Replaces in the given files, or in every text file under `path`. One
   * failing file does not stop the others: check each result's `success`.
   */
  async sed(
    pattern: string,
    replacement: string,
    options: { path?: string; files?: string[]; regex?: boolean; firstOnly?: boolean; ignoreCase?: boolean } = {},
  ): Promise<SedResult> {
    return this.fs<SedResult>('sed', {
      pattern,
      replacement,
      path: options.path,
      files: options.files,
      regex: options.regex,
      first_only: options.firstOnly || undefined,
      ignore_case: options.ignoreCase || undefined,
    });
  }
}
