// The shape of a config file (`offhost.config.yaml`, `~/.config/offhost/config.yaml`) and of a rule
// pack (`rules/*.yaml`): one schema, since a pack is a config that mostly carries rules. zod validates;
// src/config/load.ts turns its issues into file:line messages.
import { z } from 'zod';
import { VM_ID_PATTERN } from '../vms/id.js';
import { keepGlobProblem } from '../run/keep-globs.js';

const role = z.enum(['laptop', 'vm', 'ci']);
const decision = z.enum(['allow', 'deny', 'reroute']);
const globList = z
  .union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
    error: 'expected a glob or a list of globs (quote words YAML reads as other types: "true", "false", "null", numbers)',
  })
  .transform((v) => (Array.isArray(v) ? v : [v]));

const flag = z
  .object({
    names: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (Array.isArray(v) ? v : [v])),
    values: globList.optional(),
    /** The value is a case-insensitive prefix of one of these (`flutter -d chr` picks chrome). */
    values_prefix_of: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();

type MatchIn = {
  program?: string | string[];
  cwd?: string | string[];
  value_options?: string[];
  grammar?: string;
  flags?: z.input<typeof flag>[];
  any_flag?: z.input<typeof flag>[];
  not_flags?: string[];
  subcommands?: (string | string[])[];
  positional?: { ignore?: string | string[]; any?: string | string[]; or_none?: boolean };
  args_contain?: string | string[];
  line_contains?: string | string[];
  env?: Record<string, string | string[]>;
  any_of?: MatchIn[];
};

const matchSchema: z.ZodType<unknown, MatchIn> = z.lazy(() =>
  z
    .object({
      program: globList.optional(),
      cwd: globList.optional(),
      value_options: z.array(z.string().regex(/^-/, 'an option starts with -')).optional(),
      /** A program's option grammar from offhost's registry (`make`): its value-taking options. */
      grammar: z.string().regex(/^[a-z][a-z0-9-]*$/).optional(),
      flags: z.array(flag).optional(),
      any_flag: z.array(flag).min(1).optional(),
      not_flags: z.array(z.string().regex(/^-/, 'an option starts with -')).optional(),
      subcommands: z.array(globList).min(1).optional(),
      positional: z
        .object({ ignore: globList.optional(), any: globList.optional(), or_none: z.boolean().optional() })
        .strict()
        .optional(),
      args_contain: globList.optional(),
      /** For a program that cannot be known: the whole command line matches one of these globs. */
      line_contains: globList.optional(),
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), globList).optional(),
      any_of: z.array(matchSchema).min(1).optional(),
    })
    .strict()
    .refine((m) => Object.keys(m).length > 0, 'a match needs at least one condition'),
);

const example = z.union([z.string(), z.object({ line: z.string(), cwd: z.string().optional() }).strict()]);

/** What a VM is (seed 002: honest isolation levels). */
export const VM_KINDS = ['container', 'vm', 'microvm'] as const;
const vmKind = z.enum(VM_KINDS);
/** Architectures as `uname -m` spells them. */
const arch = z.string().regex(/^[a-z0-9_]+$/, 'an architecture as `uname -m` prints it: x86_64, aarch64, arm64, riscv64');
const lifecycleTemplate = z.string().min(1);

/** A route's or a rule's demand on the VM it lands on: refused when not met, never downgraded. */
export const requireSchema = z
  .object({
    kind: z.union([vmKind, z.array(vmKind).min(1)]).transform((v) => (Array.isArray(v) ? v : [v])).optional(),
    arch: z.union([arch, z.array(arch).min(1)]).transform((v) => (Array.isArray(v) ? v : [v])).optional(),
    where: z.enum(['laptop', 'remote']).optional(),
  })
  .strict();

export const ruleSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'a rule id is lowercase letters, digits and dashes'),
    description: z.string().min(1),
    policy: z.string().regex(/^R\d+$/, 'policy is a POLICY.md section such as R1 or R5'),
    decision,
    route: z.string().min(1).optional(),
    message: z.string().min(1),
    roles: z.array(role).min(1).optional(),
    unknown: z.enum(['deny', 'match', 'ignore']).optional(),
    match: matchSchema,
    require: requireSchema.optional(),
    examples: z
      .object({ match: z.array(example).min(1, 'give at least one command line the rule must match'), not_match: z.array(example).default([]) })
      .strict(),
  })
  .strict()
  .refine((r) => (r.decision === 'reroute') === (r.route !== undefined), {
    message: 'a reroute rule names a route, and only a reroute rule does',
    path: ['route'],
  });

/** Canonical test-VM id (POLICY R2): s.<host>.<env>-<target>[-<slug>]; the grammar is src/vms/id.ts. */
export const VM_ID = VM_ID_PATTERN;

export const vmSchema = z
  .object({
    id: z.string().regex(VM_ID, 'a test VM id is s.<host>.<env>-<target>[-<slug>] with env dev, stg or prd (production containers such as s.khost1.flow are never test VMs)'),
    backend: z.enum(['incus', 'ssh', 'lima', 'tart', 'docker', 'multipass', 'template']),
    host: z.string().min(1).optional(),
    instance: z.string().min(1).optional(),
    user: z.string().min(1).optional(),
    template: z.string().min(1).optional(),
    // offhost run (docs/RUN.md)
    sync: z.enum(['shared', 'rsync', 'git']).optional(),
    guest_dir: z.string().regex(/^\/[^\0\n]*$/, 'guest_dir is an absolute path on the VM').optional(),
    sync_exclude: z.array(z.string().regex(/^[^/\0\n]+$/, 'a sync_exclude entry is one path segment, such as node_modules')).optional(),
    // Cleaning the VM's copy before a run (src/run/ignored.ts; docs/RUN.md "Ignored files on the VM").
    clean: z.boolean().optional(),
    keep: z.array(z.string().superRefine((g, ctx) => {
      const why = keepGlobProblem(g);
      if (why) ctx.addIssue({ code: 'custom', message: `${why}: ${JSON.stringify(g)}` });
    })).optional(),
    host_key: z
      .string()
      .regex(/^(SHA256:[A-Za-z0-9+/]{43}=?|(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+={0,3})$/, 'host_key is a SHA256:… fingerprint (ssh-keygen -lf) or a public key line (ssh-ed25519 AAAA…)')
      .optional(),
    keepalive_seconds: z.number().int().positive().optional(),
    // What it is (src/vms/isolation.ts): container, vm or microvm; `uname -m`; this laptop or a remote host.
    kind: vmKind.optional(),
    arch: arch.optional(),
    where: z.enum(['laptop', 'remote']).optional(),
    // Provisioning and preflight (src/vms/provision.ts, src/vms/preflight.ts, docs/VMS.md).
    image: z.string().min(1).optional(),
    packages: z.array(z.string().regex(/^[a-z0-9][a-z0-9+.-]*$/, 'a Debian package name')).optional(),
    tools: z.array(z.string().regex(/^[A-Za-z0-9_.+-]+$/, 'a program name')).optional(),
    smoke: z.string().min(1).optional(),
    snapshot: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).optional(),
    mount: z
      .object({ source: z.string().min(1), path: z.string().regex(/^(\/|~|\{[a-z])/, 'an absolute path in the VM (or {root}, ~/…)'), readonly: z.boolean().default(true), device: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).optional() })
      .strict()
      .optional(),
    disk_floor_mb: z.number().int().min(0).optional(),
    // Disposable sandboxes (src/vms/sandbox.ts): lifecycle verbs as bash templates, {instance} the sandbox name.
    lifecycle: z
      .object({ up: lifecycleTemplate.optional(), exec: lifecycleTemplate, run: lifecycleTemplate.optional(), down: lifecycleTemplate.optional(), rm: lifecycleTemplate, reset: lifecycleTemplate.optional() })
      .strict()
      .optional(),
    /** The sandbox tool prints the host's verdict (vmbox: `VERDICT: clean poweroff`, exit 0/3/4/5/6). */
    verdicts: z.enum(['vmbox']).optional(),
  })
  .strict()
  .refine((v) => v.backend !== 'template' || v.template !== undefined, { message: 'the template backend needs a template', path: ['template'] })
  .refine((v) => !(v.clean === true && v.sync === 'shared'), {
    message: "clean: true needs a VM-side copy (sync: rsync or git); a sync: shared VM builds in the laptop's own tree, which offhost never cleans",
    path: ['clean'],
  });

const pathMap = z.array(z.object({ from: z.string().min(1), to: z.string().min(1) }).strict());

export const routeSchema = z
  .object({
    /** One VM, or a pool: the first free one is taken (POLICY R4 option b). */
    vms: z.array(z.string().regex(VM_ID, 'a route names test VMs by canonical id s.<host>.<env>-<target>; production containers such as s.khost1.flow are never test VMs (POLICY R2)')).min(1),
    path_map: pathMap.optional(),
    description: z.string().optional(),
    require: requireSchema.optional(),
    /**
     * Redefining a built-in route keeps the built-in route's `require` (R1: heavy work runs on a remote VM)
     * unless this is true: the named opt-in to replace it with this entry's `require` (or none).
     */
    weaken_builtin_require: z.boolean().optional(),
    /** POLICY R2: a stg-/prd- VM only on a route that declares its staging or production scenario. */
    scenario: z.enum(['staging', 'production']).optional(),
  })
  .strict();

export const configSchema = z
  .object({
    role: role.optional(),
    /**
     * The canonical checkout of the monorepo (POLICY R6: the path the VMs see), `~` allowed; in a project
     * config a relative path is taken from the file's folder (`root: .`). Rules' `{root}` names it; every
     * other checkout of the monorepo is judged as the same place under it (src/config/checkout.ts).
     */
    root: z.string().min(1).optional(),
    /** More checkouts the policy applies to whatever they hold (a sparse checkout, a copy): added to the lower layers'. */
    roots: z.array(z.string().min(1)).optional(),
    /** Files (relative to a checkout's top) that mark a checkout as the monorepo's: added to the lower layers'. */
    markers: z.array(z.string().min(1).regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$)).+$/, 'a path relative to the checkout, without ..')).optional(),
    /** Path variables usable as `{name}` in rule cwd globs; `{root}` and `{home}` are always there. */
    paths: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), z.string().min(1)).optional(),
    vms: z.array(vmSchema).optional(),
    routes: z.record(z.string().regex(/^[a-z0-9][a-z0-9-]*$/), routeSchema).optional(),
    path_map: pathMap.optional(),
    /** Built-in (or earlier-layer) rule ids to turn off. */
    disable: z.array(z.string()).optional(),
    rules: z.array(ruleSchema).optional(),
    hook: z
      .object({ mode: z.enum(['rewrite', 'suggest']).optional(), allow_rewrite: z.boolean().optional() })
      .strict()
      .optional(),
    scan: z
      .object({
        /** Files meant to run on a VM or in CI: not flagged. */
        vm_globs: z.array(z.string()).optional(),
        ignore: z.array(z.string()).optional(),
        /** Markdown files whose shell blocks agents follow. */
        markdown_globs: z.array(z.string()).optional(),
        /** CI runner labels that mean a developer's machine (those jobs are scanned). */
        laptop_runners: z.array(z.string()).optional(),
        /** Where the repository sits on a laptop (default: root). */
        laptop_root: z.string().min(1).optional(),
        dockerfile_is_laptop: z.boolean().optional(),
      })
      .strict()
      .optional(),
    locks: z
      .object({
        notices_dir: z.string().min(1).optional(),
        push: z.boolean().optional(),
        skew_seconds: z.number().int().min(0).optional(),
        poll_seconds: z.number().positive().optional(),
        /**
         * The remote refs/offhost/locks is pushed to (default origin): a remote's name or URL, never read as
         * one of git's options (it is passed to `git ls-remote`, `fetch` and `push`).
         */
        remote: z
          .string()
          .min(1)
          .refine((r) => !r.startsWith('-') && !/[\u0000-\u001f\u007f]/.test(r), { message: "a remote's name or URL, not starting with '-' and without control characters" })
          .optional(),
        /** Lock-ref commit message: {action} {target} {session} (default: conventional when commitlint is used). */
        commit_message: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    audit: z.object({ path: z.string().optional(), max_bytes: z.number().int().positive().optional(), record: z.enum(['decisions', 'all']).optional() }).strict().optional(),
  })
  .strict();

export type ConfigFile = z.output<typeof configSchema>;
export type RuleFile = z.output<typeof ruleSchema>;
export type VmFile = z.output<typeof vmSchema>;
