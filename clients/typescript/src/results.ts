/** What the calls answer: plain objects with camelCase fields. */
import { CellaError } from './errors.js';

type Json = Record<string, unknown>;

/**
 * A finished command. `exitCode` is 124 after a timeout (the output
 * captured so far is kept, `timedOut` is true) and null when a signal
 * killed the command (`signal` then holds its number).
 */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** exitCode === 0 and not timed out. */
  success: boolean;
  /** stdout or stderr passed the daemon's cap (1 MiB each by default). */
  truncated: boolean;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  signal: number | null;
  /** The sandbox's memory limit killed a process during the command. */
  oomKilled: boolean;
  /** Throws CellaError (code "exit") unless the command succeeded; returns the result. */
  check(): ExecResult;
}

/** A one-shot run: the command's result plus, for a typed run, its outputs. */
export interface RunResult extends ExecResult {
  /** The sandbox kept with `keepSandbox`, else null. */
  sandboxId: string | null;
  outputs: Record<string, unknown>;
  outputsError: string | null;
  attempts: number;
  cached: boolean;
  check(): RunResult;
}

/** One event of a streamed command: output as it comes, then the exit. */
export type ExecEvent =
  | { kind: 'stdout' | 'stderr'; data: string }
  | { kind: 'exit'; result: ExecResult };

/**
 * A path as `ls` and `stat` describe it: lstat, so a symlink is described,
 * not followed. `mode` is the octal string ("0644"), `mtime` Unix seconds.
 */
export interface FileInfo {
  name: string;
  isDir: boolean;
  size: number;
  mode: string;
  mtime: number;
  isSymlink: boolean;
  /** mtime as a Date. */
  modified: Date;
}

export interface GrepMatch {
  /** Absolute path of the file. */
  path: string;
  /** 1-based line number. */
  line: number;
  content: string;
}

export interface GrepResult {
  matches: GrepMatch[];
  truncated: boolean;
}

/** A sandbox as the daemon lists it; `raw` is the whole object. */
export interface SandboxInfo {
  sandboxId: string;
  image: string;
  /** "running" or "dead". */
  state: string;
  name: string | null;
  cpus: number | null;
  memoryMb: number | null;
  idleTimeoutSecs: number | null;
  execInFlight: number;
  createdAt: string | null;
  lastUsedAt: string | null;
  raw: Json;
}

export interface SedResult {
  results: { path: string; replacements: number; success: boolean; error?: string }[];
  total_replacements: number;
}

function describe(r: ExecResult): string {
  if (r.timedOut) return 'timed out';
  if (r.exitCode === null) return `was killed by signal ${r.signal}`;
  return `exited ${r.exitCode}`;
}

export function execResult(o: Json, stdout?: string, stderr?: string): ExecResult {
  const r: ExecResult = {
    stdout: stdout ?? String(o.stdout ?? ''),
    stderr: stderr ?? String(o.stderr ?? ''),
    exitCode: typeof o.exit_code === 'number' ? o.exit_code : null,
    timedOut: Boolean(o.timed_out),
    durationMs: Number(o.duration_ms ?? 0),
    success: Boolean(o.success),
    truncated: Boolean(o.truncated),
    stdoutTruncated: Boolean(o.stdout_truncated),
    stderrTruncated: Boolean(o.stderr_truncated),
    signal: typeof o.signal === 'number' ? o.signal : null,
    oomKilled: Boolean(o.oom_killed),
    check() {
      if (!this.success) {
        throw new CellaError('exit', `the command ${describe(this)}: ${this.stderr.slice(-500)}`);
      }
      return this;
    },
  };
  return r;
}

export function runResult(o: Json): RunResult {
  const base = execResult(o);
  return {
    ...base,
    sandboxId: typeof o.sandbox_id === 'string' ? o.sandbox_id : null,
    outputs: (o.outputs as Record<string, unknown>) ?? {},
    outputsError: typeof o.outputs_error === 'string' ? o.outputs_error : null,
    attempts: Number(o.attempts ?? 1),
    cached: Boolean(o.cached),
    check() {
      base.check.call(this);
      return this;
    },
  };
}

export function fileInfo(o: Json): FileInfo {
  const mtime = Number(o.mtime);
  return {
    name: String(o.name),
    isDir: Boolean(o.is_dir),
    size: Number(o.size),
    mode: String(o.mode),
    mtime,
    isSymlink: Boolean(o.is_symlink),
    modified: new Date(mtime * 1000),
  };
}

export function sandboxInfo(o: Json): SandboxInfo {
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  return {
    sandboxId: String(o.sandbox_id),
    image: String(o.image ?? ''),
    state: String(o.state ?? 'running'),
    name: typeof o.name === 'string' ? o.name : null,
    cpus: num(o.cpus),
    memoryMb: num(o.memory_mb),
    idleTimeoutSecs: num(o.idle_timeout_secs),
    execInFlight: Number(o.exec_in_flight ?? 0),
    createdAt: typeof o.created_at === 'string' ? o.created_at : null,
    lastUsedAt: typeof o.last_used_at === 'string' ? o.last_used_at : null,
    raw: o,
  };
}
