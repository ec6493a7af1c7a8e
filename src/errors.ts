// Error classes and the exit statuses they map to, in one place.

/** Exit statuses shared by every subcommand. */
export const EXIT = {
  ok: 0,
  /** check: deny; lint/scan/ci: findings; lock: held by another session. */
  deny: 1,
  findings: 1,
  held: 1,
  /** Usage, config, parse-of-input-file, git or lock-file errors: nothing was changed. */
  error: 2,
  /** check: reroute. */
  reroute: 3,
  /** A route's backend tool (ssh, incus, limactl, ...) is missing: setup guidance was printed. */
  backendMissing: 69,
  // The VMs' own outcomes (src/vms/, docs/VMS.md), in the band of offhost run's own outcomes (above any
  // signal status a shell reports, below ssh's 255), so a command's status is never mistaken for them.
  /** A preflight check failed: host unreachable, instance stopped, mount missing or not as configured, tools missing, smoke failed. */
  preflightFailed: 232,
  /** The guest disk is under its floor: reported, never cleaned by stopping or deleting a VM (seed 001). */
  diskFull: 233,
  /** The VM is not what the route or rule requires (kind, arch, laptop/remote): refused, never downgraded (seed 002). */
  isolationRefused: 234,
  /** `run --fresh`: the sandbox host's verdict (vmbox: dirty 3, rebooted 4, crashed 5, hung 6), an outcome of its own. */
  sandboxDirty: 235,
  sandboxRebooted: 236,
  sandboxCrashed: 237,
  sandboxHung: 238,
  /** The lock store (refs/offhost/locks, here or where it is shared) is broken: `offhost lock repair` (docs/LOCKS.md). */
  lockStoreBroken: 230,
  /** The remote refused the lock push (a pre-receive hook, a protected ref): its message is printed, nothing retried. */
  lockPushRefused: 231,
  /** The VM (a route's instance) does not exist on its host: `offhost vm provision ID` creates it (= offhost run's vm-not-found). */
  vmMissing: 243,
  /** The host presents another key than the pinned `host_key` (= offhost run's host-key-mismatch). */
  hostKeyMismatch: 248,
  /** `offhost shell -c`: the command was refused. */
  refused: 126,
  /** Interrupted by SIGINT. */
  interrupted: 130,
} as const;

/**
 * `offhost run`'s own outcomes (docs/RUN.md has the table). The command's status is passed through
 * unchanged, so these sit where no command's status usually is: above 192 (the highest signal status a
 * shell reports is 128+64) and below 255 (ssh's own error). The verdict line on stderr (`--json`: one
 * JSON object) says which it was either way.
 */
export const RUN_EXIT = {
  denied: 240,
  held: 241,
  toolMissing: 242,
  vmNotFound: 243,
  connectionLost: 244,
  sourceMismatch: 245,
  syncFailed: 246,
  configError: 247,
  hostKeyMismatch: 248,
  lockLost: 249,
  timeout: 250,
  dirtyTree: 251,
  internal: 252,
} as const;

export interface Position {
  /** Offset into the text. */
  offset: number;
  /** 1-based line and column. */
  line: number;
  column: number;
}

const BRAND = Symbol.for('offhost.error');

export class OffhostError extends Error {
  readonly exitCode: number = EXIT.error;
  /** Recognised across bundles: a lazily loaded command bundle may carry its own copy of these classes. */
  get [BRAND](): true {
    return true;
  }
}

/** `err instanceof OffhostError`, also for an error class from another bundle's copy of this module. */
export function isOffhostError(err: unknown): err is OffhostError {
  return err instanceof OffhostError || (typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true);
}

/** The command line is not valid bash (or exceeds a limit): carries the position. */
export class ParseError extends OffhostError {
  readonly position: Position;
  constructor(message: string, position: Position) {
    // A parse error is input, not a bug: no stack trace (capturing one deep in a recursive descent
    // costs more than the whole classification).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`${message} at line ${position.line}, column ${position.column}`);
    Error.stackTraceLimit = limit;
    this.position = position;
    this.name = 'ParseError';
  }
  /** The message without the position suffix. */
  get reason(): string {
    return this.message.replace(/ at line \d+, column \d+$/, '');
  }
}

/** Bad configuration or rule pack: carries the file and line when known. */
export class ConfigError extends OffhostError {
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(file ? `${file}${line ? `:${line}${column ? `:${column}` : ''}` : ''}: ${message}` : message);
    this.name = 'ConfigError';
  }
}

/** A lock file cannot be read or a lock operation cannot proceed. */
export class LockError extends OffhostError {
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(file ? `${file}${line ? `:${line}` : ''}: ${message}` : message);
    this.name = 'LockError';
  }
}

/** The lock store is broken (garbage ref, missing object, not a commit, wrong tree entry): never read as empty. */
export class LockStoreBrokenError extends LockError {
  override readonly exitCode: number = EXIT.lockStoreBroken;
  constructor(message: string, file?: string) {
    super(message, file);
    this.name = 'LockStoreBrokenError';
  }
}

/** The remote refused the push of the lock ref (not a race: retrying cannot help). */
export class LockPushRefusedError extends LockError {
  override readonly exitCode: number = EXIT.lockPushRefused;
  constructor(message: string) {
    super(message);
    this.name = 'LockPushRefusedError';
  }
}

/** A git operation failed (not a repository, bad ref, rejected push we could not resolve, ...). */
export class GitError extends OffhostError {
  constructor(message: string) {
    super(message);
    this.name = 'GitError';
  }
}

/** Wrong command-line usage. */
export class UsageError extends OffhostError {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A backend tool is missing; `hint` tells how to set it up. */
export class BackendMissingError extends OffhostError {
  override readonly exitCode: number = EXIT.backendMissing;
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'BackendMissingError';
  }
}

/** A VM is missing, failed its preflight, is full, or is not what was required (src/vms/): carries its status. */
export class VmError extends OffhostError {
  override readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
    this.name = 'VmError';
  }
}

/** The exit status for any thrown value: offhost's own errors carry theirs; anything else is an error (2). */
export function exitCodeFor(err: unknown): number {
  return isOffhostError(err) ? err.exitCode : EXIT.error;
}

/** Offset -> 1-based line/column. */
export function positionAt(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset, line, column: end - lineStart + 1 };
}
