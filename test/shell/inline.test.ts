// The inline-code readers (src/shell/inline/): what literal code spawns, as tables per language, each with
// code built to fool a tokenizer (a spawn name inside a string or a comment, a regex with quotes, a
// computed command). Then the same code run by the real interpreter where it is installed: a table row
// saying the code spawns nothing must not start a process, and one saying it spawns must.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { languageOf, type Spawned } from '../../src/shell/inline/index.js';

function show(s: Spawned): string {
  const at = s.cwd ? ` @${s.cwd.known ? s.cwd.value : '?'}` : '';
  if (s.kind === 'shell') return `sh: ${s.text.known ? s.text.value : '?'}${at}`;
  if (s.kind === 'argv') return `argv: ${s.argv.map((p) => (p.known ? p.value : '?')).join(' ')}${at}`;
  return `unknown${s.argvDerived ? ' (argv)' : ''}${at}`;
}

const spawns = (lang: string, code: string) => languageOf(lang)!.spawns(code).map(show);

type Row = [code: string, expected: string[]];

const PYTHON: Row[] = [
  ['import os; os.system("make")', ['sh: make']],
  ["import subprocess; subprocess.run(['make', 'test'])", ['argv: make test']],
  ['import subprocess as sp; sp.check_call(["make", "-C", "engines/lang/koda", "build"])', ['argv: make -C engines/lang/koda build']],
  ['from subprocess import run; run("make build", shell=True)', ['sh: make build']],
  ['from os import system as s; s("make build-safe")', ['sh: make build-safe']],
  ['import os; os.execv("/usr/bin/make", ["make", "build"])', ['argv: /usr/bin/make build']],
  ['import os; os.execlp("make", "make", "kasm")', ['argv: make kasm']],
  ['import os; os.spawnlp(os.P_WAIT, "make", "make", "build")', ['argv: make build']],
  ['import os; os.posix_spawnp("make", ["make", "build"], os.environ)', ['argv: make build']],
  ['import pty; pty.spawn(["make", "build"])', ['argv: make build']],
  ['__import__("os").system("make build")', ['sh: make build']],
  ['import os; os.chdir("engines/lang/koda"); os.system("make")', ['sh: make @engines/lang/koda']],
  ['import subprocess; subprocess.run(["make"], cwd="engines/lang/koda")', ['argv: make @engines/lang/koda']],
  ['import subprocess; subprocess.Popen("make " + "build", shell=True).wait()', ['sh: make build']],
  ['import subprocess; t = "build"; subprocess.run(["make", t])', ['argv: make ?']],
  ['import os; cmd = "make"; os.system(cmd)', ['unknown']],
  ['import os; f = os.system; f("make")', ['unknown']],
  ['import os; getattr(os, "system")("make")', ['unknown']],
  // A module or function reached by a name computed at run time (getattr, importers, sys.modules, tables).
  ['import os; getattr(os, "sys" + "tem")("make")', ['unknown']],
  ['import os as o; getattr(o, name)("make")', ['unknown']],
  ['getattr(__import__("o" + "s"), "system")("make")', ['unknown', 'unknown']],
  ['import importlib; importlib.import_module("os").system("make")', ['sh: make']],
  ['import importlib; importlib.import_module("o" + "s").system("make")', ['unknown']],
  ['import sys, os; sys.modules["os"].system("make")', ['sh: make']],
  ['__import__("os", globals(), locals(), ["system"], 0).system("make")', ['sh: make']],
  ['import os; os.__dict__["system"]("make")', ['unknown']],
  ['import os; vars(os)["system"]("make")', ['unknown']],
  ['getattr(__builtins__, "ex" + "ec")("import os; os.system(\'make\')")', ['unknown']],
  ['import builtins; getattr(builtins, "exec")("print(1)")', ['unknown']],
  ['exec(open("/tmp/build.py").read())', ['unknown']],
  ['import runpy; runpy.run_path("/tmp/build.py")', ['unknown']],
  ['import ctypes; ctypes.CDLL(None).system(b"make")', ['unknown']],
  ['exec("import os; os.system(\'make build\')")', ['sh: make build']],
  ['import os, sys; os.execvp(sys.argv[1], sys.argv[1:])', ['unknown (argv)']],
  ['import os; os.system(f"make {target}")', ['unknown']],
  ['import os; os.system(f"make {{x}}")', ['sh: make {{x}}']],
  ['import os; os.system("make build-saf\\x65")', ['sh: make build-safe']],
  ['import os; os.system(r"make \\x")', ['sh: make \\x']],
  ['import os\nos.system(\n  "make build"\n)', ['sh: make build']],
  // Nothing spawns: mentions in strings and comments, other functions named alike.
  ['print(1)', []],
  ['print("os.system(\\"make build\\")")', []],
  ['# os.system("make")\nprint(2)', []],
  ['import os; print(os.path.join("a", "b"))', []],
  ['import asyncio; asyncio.run(main())', []],
  ['"""os.system("make")"""', []],
  ['x = {"system": 1}; print(x["system"])', []],
  ['import os; print(getattr(os, "sep"))', []],
  ['import json; print(getattr(json, "dumps")({}))', []],
  ['x = getattr(obj, name)', []],
  ['import sys; print(sys.modules["os"].sep)', []],
  ['import importlib; print(importlib.import_module("json").dumps(1))', []],
  ['print(eval("2 + 3"))', []],
  ['import ctypes; print(ctypes.sizeof(ctypes.c_void_p))', []],
];

const IPYTHON: Row[] = [
  ['!make build', ['sh: make build']],
  ['x = !make kasm\nprint(x)', ['sh: make kasm']],
  ['%system make build', ['sh: make build']],
  ['%%bash\nmake build', ['sh: make build']],
  ['t = "build"\n!make $t', ['unknown']],
  ['get_ipython().system("make")', ['unknown']],
  ['import os; os.system("make")', ['sh: make']],
  ['print("!make build")', []],
  ['print(1)', []],
];

const NODE: Row[] = [
  ['require("child_process").execSync("make build", {stdio: "inherit"})', ['sh: make build']],
  ['require("child_process").spawnSync("/usr/bin/make", {stdio: "inherit"})', ['argv: /usr/bin/make']],
  ["const cp = require('node:child_process'); cp.spawn('make', ['-C', 'engines/lang/koda', 'build'])", ['argv: make -C engines/lang/koda build']],
  ['const { execSync } = require("child_process"); execSync("make")', ['sh: make']],
  ['const { execFileSync: run } = require("child_process"); run("make", ["kasm"])', ['argv: make kasm']],
  ['child_process.execSync("make")', ['sh: make']],
  ['require("child_process").spawn("make", ["build"], {shell: true})', ['sh: make build']],
  ['require("child_process").exec(`make build`)', ['sh: make build']],
  ['require("child_process").exec(`make ${t}`)', ['unknown']],
  ['process.chdir("engines/lang/koda"); require("child_process").execSync("make")', ['sh: make @engines/lang/koda']],
  ['require("child_process").execSync("make", {cwd: "engines/lang/koda"})', ['sh: make @engines/lang/koda']],
  ['require("child_process").fork("scripts/e2e.js")', ['argv: node scripts/e2e.js']],
  ['const cp = require("child_process"); const f = cp.execSync; f("make")', ['unknown']],
  ['require("child_process")["exec" + "Sync"]("make")', ['unknown']],
  ['require("child_process").spawnSync(process.argv[1], process.argv.slice(2))', ['unknown (argv)']],
  ['eval("require(\'child_process\').execSync(\'make build\')")', ['sh: make build']],
  // The module reached at run time: a computed name, the module object bound or handed along, Node's bindings.
  ['const m = "child_" + "process"; require(m)["exec" + "Sync"]("make")', ['unknown']],
  ['const c = require("child_process"); c["exec" + "Sync"]("make")', ['unknown']],
  ['const c = require("child_process"); const d = c; d[f]("make")', ['unknown']],
  ['Reflect.get(require("child_process"), "exec" + "Sync")("make")', ['unknown']],
  ['Object.values(require("child_process"))[5]("make")', ['unknown']],
  ['import("child_" + "process").then((c) => c.execSync("make"))', ['unknown', 'sh: make']],
  ['process.binding("spawn_sync").spawn({file: "make", args: ["make"], envPairs: [], stdio: [{type: "ignore"}, {type: "ignore"}, {type: "ignore"}]})', ['unknown', 'unknown']],
  ['const c = require("child_process"); c.execSync("make")', ['sh: make']],
  // Nothing spawns.
  ['console.log(1)', []],
  ['console.log("child_process.execSync(\\"make build\\")")', []],
  ['/"/.exec("a\\"b"); console.log(2)', []],
  ['const re = /make/; console.log(re.exec("make build"))', []],
  ['// require("child_process").execSync("make")\nconsole.log(3)', []],
  ['const x = 4 / 2; console.log(x / 1, "/")', []],
  ['const p = require("path"); console.log(p.join("a", "b"))', []],
  ['console.log(require("os").cpus().length)', []],
  ['console.log("child_process")', []],
  ['console.log(require.resolve("path"))', []],
  ['process.dlopen(module, "/tmp/addon.node")', ['unknown']],
];

/** Node code as an ES module (`node --input-type=module -e`): the module object bound by an import. */
const NODE_ESM: Row[] = [
  ['import cp from "node:child_process"; cp["exec" + "Sync"]("make")', ['unknown']],
  ['import * as cp from "child_process"; cp[f]("make")', ['unknown']],
  ['import cp, { spawn } from "child_process"; cp[f]("make")', ['unknown']],
  ['import * as cp from "child_process"; cp.execSync("make")', ['sh: make']],
  ['import fs from "fs"; console.log(fs.existsSync("x"))', []],
];

const PERL: Row[] = [
  ['exec {"/usr/bin/make"} "cc", "build"', ['argv: /usr/bin/make build']],
  ['system("make", "-C", "engines/lang/koda", "build")', ['argv: make -C engines/lang/koda build']],
  ['system "make build"', ['sh: make build']],
  ["system 'make', 'kasm' or die", ['argv: make kasm']],
  ['print `make build`', ['sh: make build']],
  ['my $x = qx{make build-safe}', ['sh: make build-safe']],
  ['print qx/make $t/', ['unknown']],
  ['open(my $fh, "-|", "make", "build") or die', ['argv: make build']],
  ['open(F, "make build |")', ['sh: make build']],
  ['chdir "engines/lang/koda"; system "make"', ['sh: make @engines/lang/koda']],
  ['system("make " . "build")', ['sh: make build']],
  ['my @c = qw(make build); system @c', ['unknown']],
  ['exec @ARGV', ['unknown (argv)']],
  ['eval "system q(make build)"', ['sh: make build']],
  ['system "make $target"', ['unknown']],
  // Nothing spawns.
  ['print "hello\\n"', []],
  ['s/system\\("make"\\)/x/g; print', []],
  ['print "exec make build\\n"', []],
  ['my %h = (system => 1); print $h{system}', []],
  ['# system "make"\nprint 1', []],
  ['print q{system("make")}', []],
  ['print "price: \\$5"', []],
  // POSIX::system and CORE::system are system; a sub called by a computed name; the process modules.
  ['use POSIX; POSIX::system("make build")', ['sh: make build']],
  ['CORE::system("make", "kasm")', ['argv: make kasm']],
  ['use POSIX; $f = "POSIX::sys" . "tem"; &$f("make")', ['unknown']],
  ['&{"CORE::system"}("make")', ['unknown']],
  ['use IPC::Open3; open3(my $i, my $o, undef, "make", "build")', ['unknown']],
  ['use IPC::Cmd qw(run); run(command => "make build")', ['unknown']],
  ['IPC::Cmd::run(command => "make")', ['unknown']],
  ['my $x = 5 & 3; print $x', []],
  ['print "a" && "b"', []],
  ['use POSIX; print floor(3.7)', []],
  ['my %h = (run => 1); print $h{run}', []],
];

const RUBY: Row[] = [
  ['system("make", "build")', ['argv: make build']],
  ['system "make build-safe"', ['sh: make build-safe']],
  ['exec "make"', ['sh: make']],
  ['puts `make build`', ['sh: make build']],
  ['x = %x(make kasm)', ['sh: make kasm']],
  ['Process.spawn("make build")', ['sh: make build']],
  ['IO.popen(["make", "build"]).read', ['argv: make build']],
  ['require "open3"; Open3.capture2("make", "build")', ['argv: make build']],
  ['system({"CC" => "gcc"}, "make", "build")', ['argv: make build']],
  ['system(["/usr/bin/make", "cc"], "build")', ['argv: /usr/bin/make build']],
  ['system("make", chdir: "engines/lang/koda")', ['sh: make @engines/lang/koda']],
  ['Dir.chdir("engines/lang/koda"); system("make")', ['sh: make @engines/lang/koda']],
  ['system("make #{t}")', ['unknown']],
  ['exec(*ARGV)', ['unknown (argv)']],
  ['send(:system, "make")', ['unknown']],
  // Nothing spawns.
  ['puts 1', []],
  ['puts "system(\\"make\\")"', []],
  ['h = {system: 1}; p h', []],
  ['# system "make"\nputs 2', []],
  // A method reached by a name the code computes, or by a string naming a spawn.
  ['Kernel.public_send("sys" + "tem", "make")', ['unknown']],
  ['Kernel.send("system", "make")', ['unknown']],
  ['m = :system; Kernel.send(m, "make")', ['unknown', 'unknown']],
  ['puts [1, 2].send(:sum)', []],
  ['puts "x".public_send(:upcase)', []],
];

for (const [lang, rows] of [['python3', PYTHON], ['ipython', IPYTHON], ['node', NODE], ['node', NODE_ESM], ['perl', PERL], ['ruby', RUBY]] as const) {
  describe(`inline ${lang}`, () => {
    for (const [code, expected] of rows) {
      it(code.replace(/\n/g, '\\n'), () => {
        expect(spawns(lang, code)).toEqual(expected);
      });
    }
  });
}

/**
 * Rows the readers call unknown because the code computes the name of what it calls: each really starts a
 * process when the real interpreter runs it (so the row is a bypass, not a false alarm), checked below.
 */
const COMPUTED: [lang: string, code: string][] = [
  ['python3', 'import os; getattr(os, "sys" + "tem")("make")'],
  ['python3', 'getattr(__import__("o" + "s"), "system")("make")'],
  ['python3', 'import importlib; importlib.import_module("o" + "s").system("make")'],
  ['python3', 'import os; os.__dict__["system"]("make")'],
  ['python3', 'import os; vars(os)["system"]("make")'],
  ['python3', 'getattr(__builtins__, "ex" + "ec")("import os; os.system(\'make\')")'],
  ['node', 'const m = "child_" + "process"; require(m)["exec" + "Sync"]("make")'],
  ['node', 'const c = require("child_process"); c["exec" + "Sync"]("make")'],
  ['node', 'Reflect.get(require("child_process"), "exec" + "Sync")("make")'],
  ['node', 'Object.values(require("child_process")).find((f) => f.name === "execSync")("make")'],
  ['python3', 'import ctypes; ctypes.CDLL(None).system(b"make")'],
  // Perl's builtins cannot be called through a name (`&CORE::system` dies): a module's sub can.
  ['perl', 'use POSIX; $f = "POSIX::sys" . "tem"; &$f("make")'],
  ['perl', 'use IPC::Open3; my $p = open3(my $i, my $o, undef, "make"); waitpid($p, 0)'],
  ['perl', 'use IPC::Cmd qw(run); run(command => "make")'],
  ['ruby', 'Kernel.public_send("sys" + "tem", "make")'],
  ['ruby', 'm = :system; Kernel.send(m, "make")'],
];

// The tables against the real interpreter: a `make` stand-in first on PATH records that it ran. Rows that
// spawn a literal `make` (not computed, not from argv) must start it; rows that spawn nothing must not.
const available = (p: string) => spawnSync(p, ['-e', ''], { encoding: 'utf8' }).status === 0 || spawnSync(p, ['-c', ''], { encoding: 'utf8' }).status === 0;
describe('inline tables against the real interpreters', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inline-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  mkdirSync(join(dir, 'engines/lang/koda'), { recursive: true });
  mkdirSync(join(dir, 'scripts'));
  writeFileSync(join(dir, 'scripts/e2e.js'), '');
  const log = join(dir, 'ran.log');
  writeFileSync(join(bin, 'make'), `#!/bin/sh\necho "make $*" >> ${log}\n`);
  chmodSync(join(bin, 'make'), 0o755);
  for (const [lang, flag, rows] of [['python3', '-c', PYTHON], ['node', '-e', NODE], ['perl', '-e', PERL], ['ruby', '-e', RUBY]] as const) {
    const here = available(lang);
    for (const [code, expected] of rows) {
      const literalMake = expected.length > 0 && expected.every((e) => /^(sh|argv): (\/usr\/bin\/)?make\b/.test(e) && !e.includes('?'));
      if (expected.length > 0 && !literalMake) continue;
      it.skipIf(!here)(`${lang}: ${code.replace(/\n/g, '\\n')}${here ? '' : ` (skipped: ${lang} is not installed)`}`, () => {
        writeFileSync(log, '');
        // /usr/bin/make by path is outside the stand-in: point those rows at it.
        const text = code.replaceAll('/usr/bin/make', join(bin, 'make'));
        spawnSync(lang, [flag, text], { cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, t: 'x' }, encoding: 'utf8', timeout: 20_000 });
        const ran = existsSync(log) ? readFileSync(log, 'utf8').trim() : '';
        if (literalMake) expect(ran, 'the real interpreter started make').not.toBe('');
        else expect(ran, 'the real interpreter started nothing').toBe('');
      });
    }
  }
  for (const [lang, code] of COMPUTED) {
    const here = available(lang);
    it.skipIf(!here)(`${lang} (computed, read as unknown): ${code}${here ? '' : ` (skipped: ${lang} is not installed)`}`, () => {
      expect(spawns(lang, code)).toContain('unknown');
      writeFileSync(log, '');
      spawnSync(lang, [lang === 'python3' ? '-c' : '-e', code], { cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir }, encoding: 'utf8', timeout: 20_000 });
      expect(readFileSync(log, 'utf8').trim(), 'the real interpreter started make').toBe('make');
    });
  }
});
