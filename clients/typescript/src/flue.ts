/**
 * The Flue driver: cella sandboxes behind Flue's `SandboxFactory`.
 *
 *     import { cella } from 'cella/flue';
 *
 *     const sandbox = cella({ image: 'python' });   // $CELLA_URL, $CELLA_TOKEN
 *     // in an agent: useSandbox(sandbox)
 *
 * `createSandbox({ id })` maps each Flue id (an agent instance or a workflow
 * run) to one cella sandbox named `flue:<id>`: made on the id's first call,
 * reused by every later call with the same id (also from another process
 * of the same tenant, found by its name), and made anew when the old one is
 * gone. The driver never stops a sandbox on Flue's behalf: the daemon's idle
 * reaper does (`idleTimeoutSecs`, default the daemon's 300 s), or the
 * application calls `factory.stop(id)` / `factory.stopAll()`.
 */
import { createHash } from 'node:crypto';

import { SandboxDiedError, SandboxOperationUnsupportedError, sandboxFromDriver } from '@flue/runtime';
import type { FileStat, OrphanedExecSettlement, Sandbox as FlueSandbox, SandboxDriver, SandboxFactory, ShellResult } from '@flue/runtime';

import { Client, type ClientOptions } from './client.js';
import { CellaError } from './errors.js';
import { Sandbox, MAX_TIMEOUT_MS, type Env } from './sandbox.js';

// ---- errors ------------------------------------------------------------------

const ERRNO: Record<string, [number, string]> = {
  ENOENT: [-2, 'no such file or directory'],
  EACCES: [-13, 'permission denied'],
  EEXIST: [-17, 'file already exists'],
  ENOTDIR: [-20, 'not a directory'],
  EISDIR: [-21, 'illegal operation on a directory'],
  ENOTEMPTY: [-39, 'directory not empty'],
  ELOOP: [-40, 'too many symbolic links encountered'],
  ERR_FS_EISDIR: [21, 'is a directory'],
};

/**
 * A file operation that failed, shaped like Node's fs errors: `code` is
 * `ENOENT`, `EISDIR`, `ENOTDIR`, `EEXIST`, `ENOTEMPTY`, `EACCES`, `ELOOP` (or
 * `ERR_FS_EISDIR` from `rm` on a directory without `recursive`, as Node's
 * `fs.rm`), with `errno`, `syscall` and `path`; `cella` is the daemon's
 * error behind it, when there was one.
 */
export class CellaFsError extends Error {
  readonly code: string;
  readonly errno: number;
  readonly syscall: string;
  readonly path: string;
  readonly cella: CellaError | undefined;

  constructor(code: string, syscall: string, path: string, cella?: CellaError, message?: string) {
    const [errno, what] = ERRNO[code] ?? [0, code];
    super(message ?? `${code}: ${what}, ${syscall} '${path}'${cella ? ` (cella ${cella.code}: ${cella.message})` : ''}`, cella ? { cause: cella } : undefined);
    this.name = 'CellaFsError';
    this.code = code;
    this.errno = errno;
    this.syscall = syscall;
    this.path = path;
    this.cella = cella;
  }
}

function isCode(e: unknown, ...codes: string[]): e is CellaError {
  return e instanceof CellaError && codes.includes(e.code);
}

/** S212 is also the daemon's answer to ELOOP, whose message is strerror's. */
function isLoop(e: unknown): e is CellaError {
  return isCode(e, 'S212') && /too many levels of symbolic links/i.test(e.message);
}

/**
 * S212 saying a path component is not a directory: a write's parent
 * (`parent is not a directory: ...`), or strerror(ENOTDIR) after the path
 * (`read /workspace/f/x: Not a directory`).
 */
function isNotDir(e: CellaError): boolean {
  return /^(parent is )?not a directory: |: not a directory$/i.test(e.message);
}

/**
 * A path ending in '/' or '/.' ('f/', 'f//', 'f/.'), but not '/' itself: to
 * Node's fs (the kernel) it names a directory, following a symlink, and
 * anything else is ENOTDIR. The daemon drops the suffix before looking the
 * path up (docs/files.md), so the driver checks the type itself.
 */
function wantsDir(path: string): boolean {
  return path.length > 1 && /\/\.?$/.test(path);
}

/** The directory a path's last component is in ('a/b/' → 'a', 'a/.' → 'a', 'b/' → '.', '/b/' → '/'). */
function parentOf(path: string): string {
  const bare = path.replace(/\/+$/, '');
  const i = bare.lastIndexOf('/');
  return i < 0 ? '.' : i === 0 ? '/' : bare.slice(0, i);
}

/**
 * The daemon's error as the driver throws it: a missing sandbox
 * (S002: gone, reaped or stopped; S004: stopped) is Flue's SandboxDiedError;
 * file errors are Node-style CellaFsErrors; anything else stays a CellaError.
 * `wrongType` is the errno for S212 (a directory where a file is wanted, or
 * the reverse), which depends on the operation; S212 that names a path
 * component that is not a directory is ENOTDIR whatever the operation.
 */
function mapError(e: unknown, operation: string, path: string, wrongType: 'EISDIR' | 'ENOTDIR' = 'ENOTDIR'): unknown {
  if (!(e instanceof CellaError)) return e;
  switch (e.code) {
    case 'S002':
    case 'S004':
      return new SandboxDiedError({ operation, reason: 'stopped' });
    case 'S211':
      return new CellaFsError('ENOENT', operation, path, e);
    case 'S212':
      return new CellaFsError(isLoop(e) ? 'ELOOP' : isNotDir(e) ? 'ENOTDIR' : wrongType, operation, path, e);
    case 'S213':
      return new CellaFsError('EEXIST', operation, path, e);
    case 'S214':
      return new CellaFsError('ENOTEMPTY', operation, path, e);
    case 'S215':
      return new CellaFsError('EACCES', operation, path, e);
    default:
      return e;
  }
}

// ---- the driver ----------------------------------------------------------------

interface RawStat {
  name: string;
  is_dir: boolean;
  size: number;
  mode: string;
  mtime: number;
  is_symlink: boolean;
}

export interface CellaDriverOptions {
  /** The shell that runs each command as `<shell> -c <command>` (default "bash": Flue's tools speak bash). */
  shell?: string;
}

/**
 * Flue's `SandboxDriver` over one cella sandbox. `sandboxFromDriver(new
 * CellaDriver(sb), '/workspace')` makes the Flue `Sandbox`; the factory
 * from `cella()` does that for you.
 */
export class CellaDriver implements SandboxDriver {
  readonly sandbox: Sandbox;
  private readonly shell: string;

  constructor(sandbox: Sandbox, options: CellaDriverOptions = {}) {
    this.sandbox = sandbox;
    this.shell = options.shell ?? 'bash';
  }

  /**
   * Runs `<shell> -c command`. Every command that completes resolves, with
   * its exit code (128+N when signal N killed it). `timeoutMs` is sent to
   * the daemon rounded up to a whole ms; without it the daemon's upper bound
   * (`max_exec_timeout_ms`, 1 h by default) applies. A timeout resolves with
   * exit code 124, the output captured so far, and a line on stderr saying
   * so. Aborting `signal` closes the connection, and the daemon kills the
   * command's whole process group; the call rejects with the abort reason.
   */
  async exec(
    command: string,
    options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<ShellResult> {
    const hint = options.timeoutMs;
    const limited = typeof hint === 'number' && Number.isFinite(hint) && hint > 0;
    const timeoutMs = limited ? Math.min(MAX_TIMEOUT_MS, Math.ceil(hint)) : MAX_TIMEOUT_MS;
    let r;
    try {
      r = await this.sandbox.exec([this.shell, '-c', command], {
        workdir: options.cwd,
        env: options.env,
        timeoutMs,
        signal: options.signal,
      });
    } catch (e) {
      throw mapError(e, 'exec', options.cwd ?? '');
    }
    const notes: string[] = [];
    let exitCode: number;
    if (r.timedOut) {
      exitCode = 124;
      notes.push(
        limited
          ? `cella: the command timed out after ${timeoutMs} ms (timeoutMs) and was killed; its output up to then is kept`
          : `cella: the command reached the daemon's max_exec_timeout_ms after ${r.durationMs} ms and was killed; its output up to then is kept`,
      );
    } else if (r.exitCode !== null) {
      exitCode = r.exitCode;
    } else {
      exitCode = r.signal !== null ? 128 + r.signal : 1;
      notes.push(`cella: the command was killed by signal ${r.signal ?? 'unknown'}`);
    }
    if (r.oomKilled) notes.push("cella: the sandbox's memory limit killed a process");
    if (r.stdoutTruncated) notes.push('cella: stdout passed the output cap; the rest was dropped');
    if (r.stderrTruncated) notes.push('cella: stderr passed the output cap; the rest was dropped');
    let stderr = r.stderr;
    if (notes.length) {
      if (stderr && !stderr.endsWith('\n')) stderr += '\n';
      stderr += notes.join('\n') + '\n';
    }
    return { stdout: r.stdout, stderr, exitCode };
  }

  /** The file as UTF-8 text (bad bytes become U+FFFD). */
  async readFile(path: string): Promise<string> {
    return new TextDecoder().decode(await this.readFileBuffer(path));
  }

  /**
   * The file's bytes, through the raw file route (any size). A path ending
   * in '/' must lead to a directory (following symlinks), as in Node: a file
   * there is ENOTDIR, a directory EISDIR.
   */
  async readFileBuffer(path: string): Promise<Uint8Array> {
    try {
      if (wantsDir(path) && !(await this.sandbox.fs<RawStat>('stat', { path, follow: true })).is_dir) {
        throw new CellaFsError('ENOTDIR', 'open', path);
      }
      return await this.sandbox.readFile(path);
    } catch (e) {
      throw mapError(e, 'open', path, 'EISDIR');
    }
  }

  /**
   * Replaces the file, atomically, with a string (as UTF-8) or the bytes
   * as they are. A missing parent is not made here: it throws ENOENT, and
   * `sandboxFromDriver`'s writeFile then makes the parent and retries. A
   * parent that is a file is ENOTDIR. A symlink at the path is replaced by
   * the file (the daemon's write acts on the link itself), where Node's
   * fs.writeFile would write through it. A path ending in '/' is never
   * written: EISDIR, as Node's (ENOENT or ENOTDIR when its parent is
   * missing or not a directory).
   */
  async writeFile(path: string, content: string | Uint8Array): Promise<void> {
    try {
      if (wantsDir(path)) {
        const parent = parentOf(path);
        if (!(await this.sandbox.fs<RawStat>('stat', { path: parent, follow: true })).is_dir) {
          throw new CellaFsError('ENOTDIR', 'open', path);
        }
        throw new CellaFsError('EISDIR', 'open', path);
      }
      await this.sandbox.writeFile(path, content, { parents: false });
    } catch (e) {
      throw mapError(e, 'open', path, 'EISDIR');
    }
  }

  private async lstat(path: string, syscall: string): Promise<RawStat> {
    try {
      return await this.sandbox.fs<RawStat>('stat', { path });
    } catch (e) {
      throw mapError(e, syscall, path);
    }
  }

  /** What a path that is not a directory leads to, by `fs/read`, which opens regular files only (following symlinks). */
  private async regular(path: string): Promise<{ size: number; mtime: number } | null> {
    try {
      const r = await this.sandbox.fs<{ size: number; mtime: number }>('read', { path });
      return { size: Number(r.size), mtime: Number(r.mtime) };
    } catch (e) {
      if (isCode(e, 'S212') && !isLoop(e)) return null; // a FIFO, socket or device
      throw mapError(e, 'stat', path);
    }
  }

  /**
   * Follows symlinks; `isSymbolicLink` describes the path itself. Exactly:
   * 1. `fs/stat` (an lstat) of the path. Not a symlink: a directory is a
   *    directory; anything else with a size above 0 is a regular file
   *    (FIFOs, sockets and devices have size 0); at size 0, `fs/read`
   *    (which opens regular files only) tells an empty file from those.
   * 2. A symlink: `fs/stat` with `follow: true` (cella's stat(2)) gives
   *    what it leads to: type, size and mtime, then as in 1. A dangling
   *    symlink throws ENOENT and a loop ELOOP, as Node's fs.stat does.
   * 3. A path ending in '/' must lead to a directory, as in Node: anything
   *    else there throws ENOTDIR (so `exists` is false).
   * mtime has the daemon's precision: whole seconds.
   */
  async stat(path: string): Promise<FileStat> {
    const l = await this.lstat(path, 'stat');
    let t = l;
    if (l.is_symlink) {
      try {
        t = await this.sandbox.fs<RawStat>('stat', { path, follow: true });
      } catch (e) {
        throw mapError(e, 'stat', path);
      }
    }
    const base = { isSymbolicLink: l.is_symlink, size: Number(t.size), mtime: new Date(t.mtime * 1000) };
    if (t.is_dir) return { isFile: false, isDirectory: true, ...base };
    if (wantsDir(path)) throw new CellaFsError('ENOTDIR', 'stat', path);
    const isFile = Number(t.size) > 0 || (await this.regular(path)) !== null;
    return { isFile, isDirectory: false, ...base };
  }

  /** The directory's entry names (not paths), sorted. */
  async readdir(path: string): Promise<string[]> {
    try {
      return (await this.sandbox.ls(path)).map((e) => e.name);
    } catch (e) {
      throw mapError(e, 'scandir', path);
    }
  }

  /** True when the path leads somewhere (a dangling symlink: false, as Node's fs.existsSync). Never throws. */
  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch {
      return false;
    }
  }

  /** Makes a directory; `recursive` makes parents and accepts an existing directory, as Node's fs.mkdir. */
  async mkdir(path: string, options: { recursive?: boolean } = {}): Promise<void> {
    try {
      await this.sandbox.mkdir(path, { parents: Boolean(options.recursive) });
    } catch (e) {
      throw mapError(e, 'mkdir', path);
    }
  }

  /**
   * Removes as Node's fs.rm does: a missing path throws ENOENT unless
   * `force`; a directory (not a symlink to one, which is removed itself)
   * throws ERR_FS_EISDIR unless `recursive`, before anything is removed;
   * `recursive` removes a tree, never following symlinks. `force` ignores
   * only a missing path. The type is read by `fs/stat` (an lstat) before
   * `fs/rm`. A path ending in '/' must lead to a directory, as in Node:
   * anything else there (a file, a FIFO, a symlink to either) throws
   * ENOTDIR, even with `force`, and nothing is removed. A path ending in
   * '/' that names a symlink is its target, as Node's lstat has it (a
   * dangling one is missing); when that target is a directory, `recursive`
   * would make Node empty it through the link, which the driver does not
   * do: it throws SandboxOperationUnsupportedError before changing anything.
   */
  async rm(path: string, options: { recursive?: boolean; force?: boolean } = {}): Promise<void> {
    const recursive = Boolean(options.recursive);
    const force = Boolean(options.force);
    // Node's lstat of "link/" follows the link (the trailing slash asks for
    // a directory); cella's fs/stat and fs/rm act on the link itself.
    const trailing = wantsDir(path);
    let l: RawStat;
    try {
      l = await this.sandbox.fs<RawStat>('stat', { path });
      if (trailing && l.is_symlink) {
        l = { ...(await this.sandbox.fs<RawStat>('stat', { path, follow: true })), is_symlink: false };
        // Node would empty the target through the link: never emulated.
        if (l.is_dir && recursive) {
          throw new SandboxOperationUnsupportedError({ operation: 'rm', provider: 'cella', options: ['recursive'] });
        }
      }
    } catch (e) {
      if (e instanceof SandboxOperationUnsupportedError) throw e;
      if (force && isCode(e, 'S211')) return;
      throw mapError(e, 'lstat', path);
    }
    // After the catch: Node's force ignores only ENOENT.
    if (trailing && !l.is_dir) throw new CellaFsError('ENOTDIR', 'lstat', path);
    if (l.is_dir && !l.is_symlink && !recursive) {
      throw new CellaFsError('ERR_FS_EISDIR', 'rm', path, undefined, `Path is a directory: rm returned EISDIR (is a directory) ${path}`);
    }
    try {
      await this.sandbox.rm(path, { recursive });
    } catch (e) {
      if (force && isCode(e, 'S211')) return;
      throw mapError(e, 'rm', path);
    }
  }
}

// ---- the factory -----------------------------------------------------------------

export interface CellaFlueOptions {
  /** The daemon's URL (default $CELLA_URL, then http://127.0.0.1:7878). */
  url?: string;
  /** Bearer token (default $CELLA_TOKEN). */
  token?: string;
  /** A client to use instead of url and token. */
  client?: Client;
  /** Further client options (timeoutMs, fetch). */
  clientOptions?: Omit<ClientOptions, 'url' | 'token'>;
  /** The image of the sandboxes made (default "python": python3, bash, node when the host has it). */
  image?: string;
  /**
   * An existing sandbox (or its id) to serve every id with, instead of a
   * sandbox per id. The factory then never makes or stops one.
   */
  sandbox?: Sandbox | string;
  /** The base cwd handed to Flue (default /workspace). */
  cwd?: string;
  cpus?: number;
  memoryMb?: number;
  /** The daemon stops a sandbox unused for this long (default the daemon's, 300 s). */
  idleTimeoutSecs?: number;
  /** Added to every command's environment. */
  env?: Env;
  /** Sandbox names are this plus the Flue id (default "flue:"). */
  namePrefix?: string;
  /** See CellaDriverOptions.shell. */
  shell?: string;
  /** Passed to sandboxFromDriver: hears of commands whose caller aborted. */
  onOrphanSettled?: (settlement: OrphanedExecSettlement) => void;
}

/** Flue's SandboxFactory, plus what an application needs to manage the sandboxes behind it. */
export interface CellaSandboxFactory extends SandboxFactory {
  createSandbox(options: { id: string }): Promise<FlueSandbox>;
  /** The deprecated name of createSandbox, for runtimes that still call it. */
  createSessionEnv(options: { id: string }): Promise<FlueSandbox>;
  /** The cella sandbox serving an id (made or found as createSandbox does). */
  sandboxFor(id: string): Promise<Sandbox>;
  /** The sandbox's name for an id. */
  nameFor(id: string): string;
  /** Stops the sandbox serving an id, when there is one; true when one was stopped. */
  stop(id: string): Promise<boolean>;
  /** Stops every sandbox this factory made or found; how many were stopped. */
  stopAll(): Promise<number>;
  readonly client: Client;
}

const NAME_MAX = 120;

/**
 * A Flue `SandboxFactory` over a cella daemon. Each `createSandbox({ id })`
 * answers a Flue Sandbox built by `sandboxFromDriver(new CellaDriver(sb),
 * cwd)` over the id's sandbox: one per id, reused for repeated calls (see the
 * module's comment). Nothing here stops a sandbox unless the application
 * calls `stop` or `stopAll`.
 */
export function cella(options: CellaFlueOptions = {}): CellaSandboxFactory {
  const client = options.client ?? new Client({ ...options.clientOptions, url: options.url, token: options.token });
  const cwd = options.cwd ?? '/workspace';
  const image = options.image ?? 'python';
  const prefix = options.namePrefix ?? 'flue:';
  const byId = new Map<string, Promise<Sandbox>>();
  let bound: Promise<Sandbox> | undefined;

  const nameFor = (id: string): string => {
    const name = prefix + id;
    if (Buffer.byteLength(name) <= NAME_MAX) return name;
    return `${prefix}sha256:${createHash('sha256').update(id).digest('hex')}`;
  };

  const isAlive = async (sb: Sandbox): Promise<boolean> => {
    try {
      return (await sb.refresh()).state === 'running';
    } catch (e) {
      if (isCode(e, 'S002', 'S004')) return false;
      throw e;
    }
  };

  const findOrCreate = async (id: string): Promise<Sandbox> => {
    const name = nameFor(id);
    const mine = (await client.list()).find((s) => s.name === name && s.state === 'running');
    if (mine) return new Sandbox(client, mine);
    return client.create(image, {
      name,
      cpus: options.cpus,
      memoryMb: options.memoryMb,
      idleTimeoutSecs: options.idleTimeoutSecs,
      env: options.env,
    });
  };

  const sandboxFor = async (id: string): Promise<Sandbox> => {
    if (typeof id !== 'string' || id === '') throw new TypeError('a Flue id must be a non-empty string');
    if (options.sandbox !== undefined) {
      const s = options.sandbox;
      bound ??= typeof s === 'string' ? client.sandbox(s) : Promise.resolve(s);
      return bound;
    }
    for (;;) {
      const cached = byId.get(id);
      if (!cached) {
        const made = findOrCreate(id);
        byId.set(id, made);
        made.catch(() => {
          if (byId.get(id) === made) byId.delete(id);
        });
        return made;
      }
      let sb: Sandbox;
      try {
        sb = await cached;
      } catch {
        if (byId.get(id) === cached) byId.delete(id);
        continue;
      }
      if (await isAlive(sb)) return sb;
      // Reaped or stopped since: the next lap makes (or finds) a new one.
      if (byId.get(id) === cached) byId.delete(id);
    }
  };

  const createSandbox = async ({ id }: { id: string }): Promise<FlueSandbox> => {
    const sb = await sandboxFor(id);
    return sandboxFromDriver(new CellaDriver(sb, { shell: options.shell }), cwd, {
      onOrphanSettled: options.onOrphanSettled,
    });
  };

  const stopQuietly = async (sb: Sandbox): Promise<boolean> => {
    try {
      await sb.stop({ wait: true });
      return true;
    } catch (e) {
      if (isCode(e, 'S002', 'S004')) return false;
      throw e;
    }
  };

  return {
    client,
    createSandbox,
    createSessionEnv: createSandbox,
    sandboxFor,
    nameFor,
    async stop(id: string): Promise<boolean> {
      if (options.sandbox !== undefined) return false;
      const cached = byId.get(id);
      byId.delete(id);
      if (cached) {
        const sb = await cached.catch(() => undefined);
        if (sb) return stopQuietly(sb);
      }
      const name = nameFor(id);
      let stopped = false;
      for (const s of await client.list()) {
        if (s.name === name && (await stopQuietly(new Sandbox(client, s)))) stopped = true;
      }
      return stopped;
    },
    async stopAll(): Promise<number> {
      if (options.sandbox !== undefined) return 0;
      const all = [...byId.values()];
      byId.clear();
      let n = 0;
      for (const p of all) {
        const sb = await p.catch(() => undefined);
        if (sb && (await stopQuietly(sb))) n++;
      }
      return n;
    },
  };
}

export default cella;
