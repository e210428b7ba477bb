/**
 * The HTTP transport: Node's fetch, JSON in and out, cella's error objects
 * thrown as CellaError, bodies streamed both ways, Server-Sent Events read
 * as they come.
 */
import { CellaError } from './errors.js';

/** A fetch function: the global one, or one of your own (a proxy, a custom dispatcher). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  headers?: Record<string, string>;
  body?: RequestInit['body'];
  /**
   * Bounds the wait for the answer's headers, in ms (null: no bound). With
   * `wholeBody`, the bound covers reading the body too.
   */
  timeoutMs?: number | null;
  wholeBody?: boolean;
  signal?: AbortSignal;
}

/** One answer in flight: `abort()` closes the connection (the daemon sees the client go). */
export interface Flight {
  res: Response;
  abort(): void;
  /** Maps a failure while reading the body as request() maps its own. */
  fail(err: unknown): never;
  /** Stops the deadline, if any (the body is being streamed). */
  settle(): void;
}

/**
 * A sandbox path as the files/ and archive/ routes take it: absolute
 * (relative means under /workspace), without its leading '/', each
 * component percent-encoded. '.' and '..' are encoded too, so no URL
 * layer folds them: the sandbox resolves them.
 */
export function quotePath(path: string): string {
  if (typeof path !== 'string' || path === '') {
    throw new TypeError('a sandbox path must be a non-empty string');
  }
  if (path.includes('\0')) throw new TypeError('a sandbox path cannot hold a NUL byte');
  const abs = path.startsWith('/') ? path : `/workspace/${path}`;
  return abs
    .replace(/^\/+/, '')
    .split('/')
    .map((part) => (part === '.' || part === '..' ? part.replaceAll('.', '%2E') : encodeURIComponent(part)))
    .join('/');
}

/** The error for an answer with status >= 400 and its body's text. */
export function errorFrom(status: number, raw: string): CellaError {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    doc = undefined;
  }
  if (doc && typeof doc === 'object') {
    const d = doc as Record<string, unknown>;
    const obj = d.error && typeof d.error === 'object' ? (d.error as Record<string, unknown>) : d;
    if (typeof obj.code === 'string') return CellaError.fromObject(obj, status);
  }
  const text = raw.slice(0, 300).trim();
  return new CellaError('http', `HTTP ${status}: ${text || 'no body'}`, { status });
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export class Transport {
  readonly url: string;
  readonly token: string | undefined;
  readonly timeoutMs: number | null;
  private readonly fetchFn: FetchLike;

  constructor(url: string, token: string | undefined, timeoutMs: number | null, fetchFn?: FetchLike) {
    if (!/^https?:\/\//.test(url)) {
      throw new TypeError(`the daemon's URL must start with http:// or https://, not ${JSON.stringify(url)}`);
    }
    this.url = url.replace(/\/+$/, '');
    this.token = token;
    this.timeoutMs = timeoutMs;
    this.fetchFn = fetchFn ?? ((input, init) => fetch(input, init));
  }

  /**
   * Sends one request. Answers with status < 400 come back to be read by the
   * caller; others throw CellaError, and so do failures to connect.
   * `opts.signal` aborting rejects with its reason and closes the connection.
   */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Flight> {
    let url = this.url + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) {
        if (v === undefined || v === null || v === false) continue;
        q.set(k, v === true ? '1' : String(v));
      }
      const s = q.toString();
      if (s) url += `?${s}`;
    }
    const headers: Record<string, string> = { 'User-Agent': 'cella-typescript/0.1.0' };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    Object.assign(headers, opts.headers ?? {});

    const ctl = new AbortController();
    const user = opts.signal;
    if (user?.aborted) throw abortError(user);
    const onUser = () => ctl.abort(abortError(user!));
    user?.addEventListener('abort', onUser, { once: true });
    const limit = opts.timeoutMs === undefined ? this.timeoutMs : opts.timeoutMs;
    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (limit !== null && limit !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        ctl.abort(new DOMException('timed out', 'TimeoutError'));
      }, limit);
    }
    const settle = () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
    const finish = () => {
      settle();
      user?.removeEventListener('abort', onUser);
    };
    const fail = (err: unknown): never => {
      finish();
      if (user?.aborted) throw abortError(user);
      if (timedOut) {
        throw new CellaError('connection', `no answer from the cella daemon at ${this.url} within ${limit} ms`, {
          retryable: true,
          fixNote: 'retry, or give the client a longer timeoutMs',
          cause: err,
        });
      }
      if (err instanceof CellaError) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
      const why = cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
      throw new CellaError('connection', `cannot reach the cella daemon at ${this.url}: ${why}`, {
        fixNote: 'start it with `cella serve`, or set CELLA_URL to where it listens',
        cause: err,
      });
    };

    const init: RequestInit & { duplex?: 'half' } = { method, headers, signal: ctl.signal };
    if (opts.body !== undefined && opts.body !== null) {
      init.body = opts.body;
      if (typeof (opts.body as ReadableStream).getReader === 'function') init.duplex = 'half';
    }
    let res: Response;
    try {
      res = await this.fetchFn(url, init);
    } catch (err) {
      return fail(err);
    }
    if (res.status >= 400) {
      let raw = '';
      try {
        raw = await res.text();
      } catch (err) {
        return fail(err);
      }
      finish();
      throw errorFrom(res.status, raw);
    }
    if (!opts.wholeBody) settle();
    return {
      res,
      abort: () => {
        finish();
        ctl.abort(new DOMException('closed by the client', 'AbortError'));
      },
      fail,
      settle: finish,
    };
  }

  /** A JSON call: the payload (undefined fields dropped) in, the parsed answer out. */
  async json<T = unknown>(
    method: string,
    path: string,
    payload?: Record<string, unknown>,
    opts: RequestOptions = {},
  ): Promise<T> {
    const req: RequestOptions = { ...opts, wholeBody: true };
    if (payload !== undefined) {
      req.body = JSON.stringify(dropUndefined(payload));
      req.headers = { ...opts.headers, 'Content-Type': 'application/json' };
    }
    const f = await this.request(method, path, req);
    let raw: string;
    try {
      raw = await f.res.text();
    } catch (err) {
      return f.fail(err);
    }
    f.settle();
    return (raw ? JSON.parse(raw) : null) as T;
  }

  /**
   * POSTs the payload and yields [event, data] from a text/event-stream
   * answer. Leaving the loop early (or `signal` aborting) closes the
   * connection, which has the daemon kill the command. `timeoutMs` bounds
   * the wait for the headers only: a quiet command's stream carries a
   * keep-alive comment every 15 s, so the stream itself needs no bound.
   */
  async *sse(
    path: string,
    payload: Record<string, unknown>,
    opts: { signal?: AbortSignal; timeoutMs?: number | null } = {},
  ): AsyncGenerator<[string, unknown], void, undefined> {
    const f = await this.request('POST', path, {
      body: JSON.stringify(dropUndefined(payload)),
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    try {
      const ctype = f.res.headers.get('Content-Type') ?? '';
      if (!ctype.startsWith('text/event-stream')) {
        // An answer decided before the command started is plain JSON.
        let raw: string;
        try {
          raw = await f.res.text();
        } catch (err) {
          return f.fail(err);
        }
        throw errorFrom(f.res.status, raw);
      }
      if (!f.res.body) throw new CellaError('http', 'the stream has no body');
      const decoder = new TextDecoder();
      let buf = '';
      let scanned = 0;
      let event = 'message';
      let data: string[] = [];
      for await (const chunk of bodyChunks(f)) {
        buf += decoder.decode(chunk, { stream: true });
        let start = 0;
        for (;;) {
          const nl = buf.indexOf('\n', scanned);
          if (nl < 0) break;
          let line = buf.slice(start, nl);
          start = scanned = nl + 1;
          if (line.endsWith('\r')) line = line.slice(0, -1);
          if (line === '') {
            if (data.length) {
              const ev = event;
              const parsed: unknown = JSON.parse(data.join('\n'));
              event = 'message';
              data = [];
              yield [ev, parsed];
            } else {
              event = 'message';
            }
          } else if (line.startsWith(':')) {
            continue; // keep-alive
          } else if (line.startsWith('event:')) {
            event = line.slice(6).trim();
          } else if (line.startsWith('data:')) {
            data.push(line.slice(5).replace(/^ /, ''));
          }
        }
        buf = buf.slice(start);
        scanned = buf.length;
      }
    } finally {
      // Closing the connection before the end has the daemon kill the command.
      f.abort();
    }
  }
}

/** The answer's body as it arrives; a failure to read it is mapped by f.fail. */
export async function* bodyChunks(f: Flight): AsyncGenerator<Uint8Array, void, undefined> {
  if (!f.res.body) return;
  const reader = f.res.body.getReader();
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (err) {
      return f.fail(err);
    }
    if (chunk.done) return;
    yield chunk.value;
  }
}

/** The object without its undefined (and null) fields: the daemon takes absent for null anyway. */
export function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}
