/** Errors thrown by the client: one class, carrying cella's error object. */

/** cella's error object, as the daemon sends it under `"error"`. */
export interface CellaErrorObject {
  type?: string;
  code?: string;
  message?: string;
  docs_url?: string | null;
  retryable?: boolean;
  fix?: Record<string, unknown> | null;
  fix_note?: string | null;
}

export interface CellaErrorOptions {
  status?: number;
  type?: string;
  fix?: Record<string, unknown> | null;
  fixNote?: string | null;
  retryable?: boolean;
  docsUrl?: string | null;
  cause?: unknown;
}

/**
 * A call that failed. `code` is cella's S-code (`"S002"`: no such sandbox,
 * `"S211"`: no such file, ... see docs/errors.md), `fix` a ready payload to
 * merge into the request and resend (or null), `fixNote` one line saying
 * what to do next. Failures that never reached the daemon have code
 * `"connection"`; answers that were not cella's error object have code
 * `"http"`; `ExecResult.check()` throws code `"exit"`.
 */
export class CellaError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly fix: Record<string, unknown> | null;
  readonly fixNote: string | null;
  readonly retryable: boolean;
  readonly docsUrl: string | null;

  constructor(code: string, message: string, options: CellaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CellaError';
    this.code = code;
    this.status = options.status;
    this.type = options.type;
    this.fix = options.fix ?? null;
    this.fixNote = options.fixNote ?? null;
    this.retryable = options.retryable ?? false;
    this.docsUrl = options.docsUrl ?? null;
  }

  /** The error from the daemon's error object and the HTTP status. */
  static fromObject(obj: CellaErrorObject, status?: number): CellaError {
    return new CellaError(String(obj.code ?? 'http'), String(obj.message ?? ''), {
      status,
      type: obj.type,
      fix: obj.fix ?? null,
      fixNote: obj.fix_note ?? null,
      retryable: Boolean(obj.retryable),
      docsUrl: obj.docs_url ?? null,
    });
  }

  override toString(): string {
    return `CellaError ${this.code}: ${this.message}${this.fixNote ? ` (${this.fixNote})` : ''}`;
  }
}
