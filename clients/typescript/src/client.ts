/** The entry point: a Client talks to one cella daemon. */
import { Transport, type FetchLike } from './http.js';
import { runResult, sandboxInfo, type RunResult, type SandboxInfo } from './results.js';
import { Sandbox, toBase64, toMs, type Env, type SandboxOwner } from './sandbox.js';

export const DEFAULT_URL = 'http://127.0.0.1:7878';

export interface ClientOptions {
  /** The daemon's URL (default $CELLA_URL, then http://127.0.0.1:7878). */
  url?: string;
  /** Sent as `Authorization: Bearer` (default $CELLA_TOKEN; an empty string sends none). */
  token?: string;
  /**
   * Bounds, in ms, the wait for each answer (default 60000; null: no bound).
   * Commands, streams and file transfers are not bounded by it once their
   * answer has started: a command has its own `timeoutMs`.
   */
  timeoutMs?: number | null;
  /** The fetch to use (default the global one): e.g. one with a proxy or a custom dispatcher. */
  fetch?: FetchLike;
}

export interface CreateOptions {
  /** CPU time, fractional allowed (default the daemon's, 1). */
  cpus?: number;
  memoryMb?: number;
  /** A label for listings (at most 120 bytes). */
  name?: string;
  /** Stopped by the daemon after this long unused (default the daemon's, 300 s). */
  idleTimeoutSecs?: number;
  /** Added to every command's environment. */
  env?: Env;
  signal?: AbortSignal;
}

/** The types a typed run knows (docs/api.md, typed runs). */
export type TypedType = 'int' | 'float' | 'str' | 'bool' | 'datetime' | 'timedelta' | 'file';
/** A typed value in the wire form. */
export interface Typed {
  type: TypedType;
  value: unknown;
}
/**
 * A typed run's input: a number (an integer is `int`, any other `float`;
 * use `typed.float(3)` for a whole float), a bigint (`int`), a string, a
 * boolean, a Date (`datetime`), a Uint8Array (`file`), or a `Typed` value
 * such as `typed.timedelta(86400)`.
 */
export type TypedInput = number | bigint | string | boolean | Date | Uint8Array | Typed;

/** Builders for the wire form, where a JavaScript value is ambiguous. */
export const typed = {
  int: (v: number | bigint): Typed => ({ type: 'int', value: typeof v === 'bigint' ? Number(v) : v }),
  float: (v: number): Typed => ({ type: 'float', value: v }),
  str: (v: string): Typed => ({ type: 'str', value: v }),
  bool: (v: boolean): Typed => ({ type: 'bool', value: v }),
  /** An ISO 8601 string or a Date. */
  datetime: (v: string | Date): Typed => ({ type: 'datetime', value: v instanceof Date ? v.toISOString() : v }),
  /** Seconds, or an ISO 8601 duration ("P1DT2H") or Python's str(timedelta). */
  timedelta: (v: number | string): Typed => ({ type: 'timedelta', value: v }),
  file: (v: Uint8Array | string): Typed => ({ type: 'file', value: { content_b64: toBase64(v) } }),
};

function typedInputs(inputs: Record<string, TypedInput>): Record<string, Typed> {
  const out: Record<string, Typed> = {};
  for (const [name, v] of Object.entries(inputs)) {
    if (v instanceof Uint8Array) out[name] = typed.file(v);
    else if (v instanceof Date) out[name] = typed.datetime(v);
    else if (typeof v === 'boolean') out[name] = typed.bool(v);
    else if (typeof v === 'bigint') out[name] = typed.int(v);
    else if (typeof v === 'number') out[name] = Number.isInteger(v) ? typed.int(v) : typed.float(v);
    else if (typeof v === 'string') out[name] = typed.str(v);
    else if (v && typeof v === 'object' && 'type' in v) out[name] = v;
    else throw new TypeError(`input ${JSON.stringify(name)}: cannot send ${typeof v} (number, bigint, string, boolean, Date, Uint8Array or a typed.* value)`);
  }
  return out;
}

export interface RunOptions {
  /** Default "python". */
  image?: string;
  /** python, node, shell or an interpreter's path; default python for the python image and for typed runs. */
  lang?: string;
  /** Files written first: path (relative: under /workspace) to UTF-8 text. */
  files?: Record<string, string>;
  env?: Env;
  stdin?: string | Uint8Array;
  /** Each attempt's deadline in ms, rounded up (default the daemon's, 300 s). */
  timeoutMs?: number;
  /** Keep the sandbox and return its id (`result.sandboxId`). */
  keepSandbox?: boolean;
  // With any of the fields below, the run is a typed run (Flyte-style).
  /** Staged as files at /var/inputs/<name>. */
  inputs?: Record<string, TypedInput>;
  /** Read back from /var/outputs/<name>: name to type. */
  outputs?: Record<string, TypedType>;
  /** Auto-IO (Python's default): inputs as variables, outputs from variables. */
  autoIo?: boolean;
  /** Command mode: the argv, run in /workspace without a shell (excludes code and lang). */
  command?: string[];
  arguments?: string[];
  /** Attempts after a failed one (0 to 10). */
  retries?: number;
  cache?: 'auto' | 'override' | 'disable';
  signal?: AbortSignal;
}

/**
 * A connection to a cella daemon.
 *
 *     const client = new Client();            // $CELLA_URL, $CELLA_TOKEN
 *     const sb = await client.create('python');
 */
export class Client implements SandboxOwner {
  readonly url: string;
  readonly token: string | undefined;
  readonly timeoutMs: number | null;
  /** The HTTP transport (for the package's own modules). */
  readonly transport: Transport;

  constructor(options: ClientOptions = {}) {
    const env = typeof process !== 'undefined' ? process.env : {};
    this.url = options.url || env.CELLA_URL || DEFAULT_URL;
    const token = options.token !== undefined ? options.token : env.CELLA_TOKEN;
    this.token = token || undefined;
    this.timeoutMs = options.timeoutMs === undefined ? 60000 : options.timeoutMs;
    this.transport = new Transport(this.url, this.token, this.timeoutMs, options.fetch);
  }

  toString(): string {
    return `cella.Client(${this.url})`;
  }

  /** Creates a sandbox (from the warm pool when one is ready). */
  async create(image = 'python', options: CreateOptions = {}): Promise<Sandbox> {
    const o = await this.transport.json<Record<string, unknown>>(
      'POST',
      '/v1/sandboxes',
      {
        image,
        cpus: options.cpus,
        memory_mb: options.memoryMb,
        name: options.name,
        idle_timeout_secs: options.idleTimeoutSecs,
        env: options.env && Object.keys(options.env).length ? options.env : undefined,
      },
      { signal: options.signal },
    );
    return new Sandbox(this, sandboxInfo(o));
  }

  /** An existing sandbox of yours, by id (S002 when there is none). */
  async sandbox(id: string): Promise<Sandbox> {
    const o = await this.transport.json<Record<string, unknown>>('GET', `/v1/sandboxes/${encodeURIComponent(id)}`);
    return new Sandbox(this, sandboxInfo(o));
  }

  /** Your sandboxes, oldest first. */
  async list(): Promise<SandboxInfo[]> {
    const o = await this.transport.json<{ sandboxes: Record<string, unknown>[] }>('GET', '/v1/sandboxes');
    return o.sandboxes.map(sandboxInfo);
  }

  /** The images, as the daemon describes them. */
  async catalog(): Promise<Record<string, unknown>[]> {
    const o = await this.transport.json<{ images: Record<string, unknown>[] }>('GET', '/v1/catalog');
    return o.images;
  }

  /** True when the daemon answers /healthz; never throws. */
  async healthy(): Promise<boolean> {
    try {
      const o = await this.transport.json<{ status?: string }>('GET', '/healthz');
      return o?.status === 'ok';
    } catch {
      return false;
    }
  }

  /**
   * One-shot: a fresh sandbox runs `code` (or `options.command`) and is
   * stopped. With `inputs`, `outputs`, `autoIo`, `command`, `arguments`,
   * `retries` or `cache` it is a typed run: inputs are staged under
   * /var/inputs, declared outputs come back in `result.outputs`.
   */
  async run(code?: string, options: RunOptions = {}): Promise<RunResult> {
    const o = options;
    const isTyped = [o.inputs, o.outputs, o.autoIo, o.command, o.arguments, o.retries, o.cache].some((x) => x !== undefined);
    const image = o.image ?? 'python';
    const p: Record<string, unknown> = {
      image,
      code,
      env: o.env && Object.keys(o.env).length ? o.env : undefined,
      timeout_ms: toMs(o.timeoutMs),
      keep_sandbox: o.keepSandbox || undefined,
    };
    if (o.command === undefined) {
      if (code === undefined) throw new TypeError('give code (or, for a typed run, options.command)');
      p.lang = o.lang ?? (image === 'python' || isTyped ? 'python' : undefined);
      if (p.lang === undefined) throw new TypeError('give options.lang for an image other than python');
    }
    if (o.files && Object.keys(o.files).length) {
      p.files = Object.entries(o.files).map(([path, content]) => ({ path, content }));
    }
    if (o.stdin !== undefined) p.stdin = toBase64(o.stdin);
    if (isTyped) {
      Object.assign(p, {
        inputs: o.inputs ? typedInputs(o.inputs) : undefined,
        outputs: o.outputs,
        auto_io: o.autoIo,
        command: o.command,
        arguments: o.arguments,
        retries: o.retries,
        cache: o.cache,
      });
    }
    // The answer comes when the run ends: wait past its own deadline.
    const wait = this.timeoutMs === null ? null : Math.max(this.timeoutMs, (toMs(o.timeoutMs) ?? 300000) * (1 + (o.retries ?? 0)) + 30000);
    return runResult(await this.transport.json('POST', '/v1/run', p, { timeoutMs: wait, signal: o.signal }));
  }
}
