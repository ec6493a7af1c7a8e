// The VM lock frontmatter (POLICY R3) as a zod schema, with messages a person can act on.
// Pure: no fs, no git, no clock.
import { z } from 'zod';
import { UsageError } from '../errors.js';

/** Fields a lock file may carry, in the order `serializeLock` writes them. */
export const LOCK_FIELDS = ['vm', 'session', 'ai', 'started', 'reason', 'heartbeat', 'ttl_minutes'] as const;
export type LockField = (typeof LOCK_FIELDS)[number];
export const REQUIRED_FIELDS: readonly LockField[] = ['vm', 'session', 'ai', 'started', 'reason'];

export const DEFAULT_TTL_MINUTES = 120;
/**
 * The longest ttl_minutes (24 h): the most a lock may go without a heartbeat. A longer hold stays alive by
 * heartbeats; a bigger number only makes an abandoned lock block its VM longer (and 1e9 for ever).
 */
export const MAX_TTL_MINUTES = 24 * 60;

// The VM-id grammar is src/vms/id.ts (one grammar for config, locks, routes and lint).
import { VM_ID_PATTERN, isVmId, isProductionContainer as isProductionVmId, vmIdProblem as vmIdProblemOf } from '../vms/id.js';

/** Canonical test-VM id: `s.<host>.<env>-<target>[-<slug>]`, env one of dev, stg, prd. */
export const VM_ID_RE = VM_ID_PATTERN;

export function isCanonicalVmId(id: string): boolean {
  return isVmId(id);
}

/** True for ids like `s.khost1.flow`, `s.khost1.hub`: a host with a one-word name, no `<env>-` prefix. */
export function isProductionContainer(id: string): boolean {
  return isProductionVmId(id);
}

/**
 * Why `id` cannot be locked as a test VM, or null when it can: it must be a canonical id (src/vms/id.ts)
 * whose env is `dev` (POLICY R2: test VMs are dev by definition; stg and prd ones are not test VMs).
 */
export function vmIdProblem(id: string): string | null {
  const p = vmIdProblemOf(id);
  if (p) return p;
  const env = /^s\.[^.]+\.(dev|stg|prd)-/.exec(id)?.[1];
  if (env !== 'dev') {
    return `is a ${env} VM, not a test VM: POLICY R2 says test VMs are dev by definition (s.<host>.dev-<target>), so only dev VMs are locked as test VMs; lock a dev VM such as s.khost1.dev-linux-koda`;
  }
  return null;
}

/** Strict ISO-8601 UTC: `2026-05-19T22:30:00Z`, optional fraction of a second, always `Z`. */
const ISO_UTC_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;

/** Parses a strict ISO-8601 UTC timestamp; null when it is not one (or is not a real date). */
export function parseUtc(text: string): Date | null {
  const m = ISO_UTC_RE.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  if (mo! < 1 || mo! > 12 || d! < 1 || h! > 23 || mi! > 59 || s! > 59) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== d || date.getUTCMonth() + 1 !== mo || date.getUTCFullYear() !== y) return null;
  return date;
}

/** `2026-05-19T22:30:00Z` (milliseconds only when there are some). */
export function formatUtc(date: Date): string {
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/** A best guess of what the writer meant, in the strict form, for the error message. */
export function suggestUtc(text: string): string {
  const t = text.trim();
  // Date and time with a space, or without seconds, or lowercase t/z, with no zone: assume UTC as written.
  const m = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?\s*([zZ]|UTC|GMT)?$/.exec(t);
  if (m) {
    const guess = `${m[1]}T${m[2]}${m[3] ?? ':00'}Z`;
    if (parseUtc(guess)) return guess;
  }
  // With an explicit offset: convert to UTC.
  if (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*[+-]\d{2}:?\d{2}$/.test(t)) {
    const d = new Date(t.replace(' ', 'T').replace(/\s+/g, ''));
    if (!Number.isNaN(d.getTime())) return formatUtc(d);
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(t) && parseUtc(`${t}T00:00:00Z`)) return `${t}T00:00:00Z`;
  return '2026-05-19T22:30:00Z';
}

const utcTimestamp = z.string({ error: () => 'is not an ISO-8601 UTC timestamp; write it like 2026-05-19T22:30:00Z' }).refine(
  (s) => parseUtc(s) !== null,
  { error: (iss) => `is not an ISO-8601 UTC timestamp; write it like ${suggestUtc(String(iss.input))}` },
);

const tokenRe = /^[a-z][a-z0-9._-]*$/;

/** zod schema of the frontmatter as YAML gives it (strings stay strings: the yaml package's core schema). */
export const lockFrontmatterSchema = z
  .object({
    vm: z.string({ error: () => 'must be a VM id written as text, e.g. s.khost1.dev-linux-koda' }).superRefine((s, ctx) => {
      const p = vmIdProblem(s);
      if (p) ctx.addIssue({ code: 'custom', message: p, params: { production: isProductionContainer(s) } });
    }),
    session: z
      .string({ error: () => "must be the holding session's tag written as text, e.g. claude-2026-05-19-rfc019" })
      .refine((s) => s.trim().length > 0, { error: () => "is empty: write the holding session's tag, e.g. claude-2026-05-19-rfc019" })
      .refine((s) => !/[\r\n]/.test(s) && s.trim() === s, { error: () => 'must be one word on one line, e.g. claude-2026-05-19-rfc019' }),
    ai: z
      .string({ error: () => 'must be the agent name as text: claude, codex, gemini, human or another lowercase name' })
      .refine((s) => tokenRe.test(s), {
        error: () => 'must be a lowercase name: claude, codex, gemini, human or another lowercase word (letters, digits, . _ -)',
      }),
    started: utcTimestamp,
    reason: z
      .string({ error: () => 'must be text: one sentence saying which test or operation, and the ticket' })
      .refine((s) => s.trim().length > 0, { error: () => 'is empty: say in one sentence which test or operation, and the ticket' }),
    heartbeat: utcTimestamp.optional(),
    ttl_minutes: z
      .number({ error: () => 'must be a whole number of minutes without quotes, e.g. ttl_minutes: 60' })
      .int({ error: () => 'must be a whole number of minutes, e.g. ttl_minutes: 60' })
      .positive({ error: () => 'must be a positive number of minutes, e.g. ttl_minutes: 60' })
      .max(MAX_TTL_MINUTES, { error: () => `is over the ${MAX_TTL_MINUTES}-minute (24 h) bound: a lock kept longer is kept alive by heartbeats, e.g. ttl_minutes: 120` })
      .optional(),
  })
  .loose();

export type LockFrontmatter = z.infer<typeof lockFrontmatterSchema>;

/** An example line for a missing field. */
export const FIELD_EXAMPLES: Record<LockField, string> = {
  vm: 'vm: s.khost1.dev-linux-koda',
  session: 'session: claude-2026-05-19-rfc019',
  ai: 'ai: claude',
  started: 'started: 2026-05-19T22:30:00Z',
  reason: 'reason: which test or operation, and the ticket',
  heartbeat: 'heartbeat: 2026-05-19T23:10:00Z',
  ttl_minutes: 'ttl_minutes: 60',
};

/** `--now ISO`: the instant, or a UsageError that says how to write it. */
export function parseNowOption(value: string): Date {
  const d = parseUtc(value);
  if (!d) throw new UsageError(`--now '${value}' is not an ISO-8601 UTC timestamp; write it like 2026-05-19T22:30:00Z`);
  return d;
}
