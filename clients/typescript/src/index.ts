/**
 * cella: run untrusted code in sandboxes, from TypeScript.
 *
 *     import { Client } from 'cella';
 *
 *     const client = new Client();                 // $CELLA_URL, $CELLA_TOKEN
 *     const sb = await client.create('python');
 *     await sb.writeFile('main.py', 'print(6 * 7)');
 *     console.log((await sb.exec(['python3', 'main.py'])).stdout);   // 42
 *     await sb.stop();
 *
 * No runtime dependency: Node's fetch. Errors are thrown as CellaError,
 * with cella's S-code, message, fix and fixNote.
 */
export { Client, DEFAULT_URL, typed } from './client.js';
export type { ClientOptions, CreateOptions, RunOptions, Typed, TypedInput, TypedType } from './client.js';
export { CellaError } from './errors.js';
export type { CellaErrorObject, CellaErrorOptions } from './errors.js';
export type { FetchLike } from './http.js';
export { Sandbox, MAX_TIMEOUT_MS } from './sandbox.js';
export type { Command, Env, ExecOptions, WriteOptions } from './sandbox.js';
export type {
  ExecEvent,
  ExecResult,
  FileInfo,
  GrepMatch,
  GrepResult,
  RunResult,
  SandboxInfo,
  SedResult,
} from './results.js';

export const VERSION = '0.1.0';
