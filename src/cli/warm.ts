// Exercising the hot paths in-process, output discarded, so that the loader's V8 code cache (written
// when that process exits) holds their compiled functions: `npm run build` runs `offhost --warm-cache`.
import { EXIT } from '../errors.js';
import type { Io } from '../io.js';
import { everyProgramModule } from '../shell/programs/index.js';

/** Lines that take the guard through allow, deny, reroute, wrappers and a parse error. */
export function warmLines(home: string): string[] {
  return [
    'ls -la',
    `cd ${home}/dev/koder/engines/lang/koda && make build-safe 2>&1 | tail -50`,
    'sudo env FOO=1 bash -c "timeout 60 npx playwright test" | tee log',
    'qemu-system-x86_64 -hda win10.qcow2',
    'echo "unterminated',
  ];
}

/**
 * What agents run most, all of it allowed, for the hook's code cache (with warmLines' deny, reroute and
 * parse error): the more kinds of line the cache has seen, the less a hook call compiles on its way.
 */
export const AGENT_LINES: readonly string[] = [
  'git status --short && git diff --stat | head -50',
  'cd src && grep -rn "TODO" . | sort | uniq -c > /tmp/todo.txt 2>&1',
  'timeout 120 npx vitest run test/unit --reporter=dot; echo "exit=$?"',
  'for f in src/*.ts; do wc -l "$f"; done',
  "find . -name '*.log' -mtime +7 -print0 | xargs -0 rm -f",
  "sed -i 's/foo/bar/g' src/a.ts && npm run lint -- --fix",
  'python3 -c "import json,sys; print(json.load(sys.stdin))" < package.json',
  'cat > notes.md <<EOF\nline $(date)\nEOF',
  // Lines that make offhost read files: a package.json script, a Makefile, a script.
  'npm test -- --run',
  'make -j4 test',
  'bash scripts/check.sh --fast',
];

/** An Io that discards output and never writes a real audit log. */
export function quietIo(io: Io): Io {
  return { ...io, stdout: () => {}, stderr: () => {}, env: { ...io.env, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: '/dev/null' } };
}

/**
 * `offhost --warm-cache hook`: the hook over the agent lines and the warm-up lines, for the three agents,
 * in dist/hook.cjs (src/cli/hook-bin.ts); `--warm-cache shell` (below) warms dist/shell.cjs, and
 * `offhost --warm-cache` warms dist/hot.cjs with check (src/cli/main.ts). Each bundle has its own code
 * cache, holding what its door runs. Every program family is loaded each time, so that each has its own
 * cache written.
 */
export async function warmHook(io: Io, hook: { run(args: string[], io: Io): Promise<number> }): Promise<number> {
  const quiet = quietIo(io);
  everyProgramModule();
  for (const command of [...AGENT_LINES, ...warmLines(io.env.HOME ?? '/home/koder')]) {
    const preToolUse = JSON.stringify({ session_id: 'warm', cwd: io.cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
    const beforeTool = JSON.stringify({ session_id: 'warm', cwd: io.cwd, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command } });
    for (const [agent, event] of [['claude-code', preToolUse], ['codex', preToolUse], ['gemini', beforeTool]] as const) {
      await hook.run([agent], { ...quiet, readStdin: async () => event });
    }
  }
  return EXIT.ok;
}

/** The shell door's warm-up: the integration's check over the same lines (nothing is run, nothing logged). */
export async function warmShell(io: Io, shell: { run(args: string[], io: Io): Promise<number> }): Promise<number> {
  const quiet = quietIo(io);
  everyProgramModule();
  for (const line of [...AGENT_LINES, ...warmLines(io.env.HOME ?? '/home/koder')]) {
    await shell.run(['--check', '--private', '--cwd', io.cwd, '--', line], quiet);
  }
  return EXIT.ok;
}
