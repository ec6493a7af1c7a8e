// Exercising a bundle's hot path in-process, output discarded, so that the loader's V8 code cache (written
// when that process exits) holds its compiled functions: `npm run build` does it once per bundle.
import type { Io } from './io.js';

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

/** An Io that discards output and never writes a real audit log. */
export function quietIo(io: Io): Io {
  return { ...io, stdout: () => {}, stderr: () => {}, env: { ...io.env, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: '/dev/null' } };
}
