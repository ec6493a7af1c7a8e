// Package installers: `apt install qemu-system-x86` takes package names and runs none of them; apt and
// dpkg run a command only from the hook options they name (`-o APT::Update::Pre-Invoke::=CMD`,
// `--pre-invoke=CMD`) or from a configuration file (`-c FILE`: unknown).
import type { Field } from '../expand.js';
import type { Call } from '../walk-state.js';
import type { ProgramModule, Unwrapped } from './types.js';

/**
 * apt's configuration items whose value it runs (apt.conf(5)): the hooks (`APT::Update::Pre-Invoke`,
 * `DPkg::Post-Invoke`, `DPkg::Pre-Install-Pkgs`...) and the programs it calls (`Dir::Bin::dpkg`).
 */
const APT_HOOK = /(Pre|Post)-(Invoke|Install-Pkgs)|Invoke-(Success|Failure)|^Dir::Bin::/i;

/**
 * `apt install qemu-system-x86`: package names, nothing run; `apt-get -o 'APT::Update::Pre-Invoke::=CMD'
 * update` and `dpkg --pre-invoke=CMD -i x.deb` run CMD in a shell here.
 */
function installerHooks(call: Call): Unwrapped {
  const items: Unwrapped[] = [];
  const argv = call.fields;
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.known) continue;
    let item: Field | undefined;
    if (call.name !== 'dpkg' && (f.value === '-c' || f.value === '--config-file' || f.value.startsWith('--config-file='))) {
      // A configuration file may hold any of those hooks: what it runs cannot be known from the line.
      items.push({ kind: 'script', via: `${call.name} ${f.value.replace(/=.*$/s, '')}`, text: { value: '', known: false } });
      if (!f.value.includes('=')) i++;
      continue;
    }
    if (f.value === '-o' || f.value === '--option') item = argv[++i];
    else if (/^(-o|--option=)./.test(f.value)) item = { value: f.value.replace(/^(-o|--option=)/, ''), known: true };
    else if (/^--(pre|post)-invoke=/.test(f.value)) items.push({ kind: 'script', via: `${call.name} ${f.value.slice(0, f.value.indexOf('='))}`, text: { value: f.value.slice(f.value.indexOf('=') + 1), known: true } });
    else if (f.value === '--pre-invoke' || f.value === '--post-invoke') items.push({ kind: 'script', via: `${call.name} ${f.value}`, text: argv[++i] ?? { value: '', known: false } });
    if (!item) continue;
    const eq = item.value.indexOf('=');
    if (!item.known) items.push({ kind: 'script', via: `${call.name} -o`, text: { value: '', known: false } });
    else if (eq > 0 && APT_HOOK.test(item.value.slice(0, eq))) items.push({ kind: 'script', via: `${call.name} -o ${item.value.slice(0, eq)}`, text: { value: item.value.slice(eq + 1), known: true } });
  }
  return items.length ? { kind: 'many', items } : { kind: 'none' };
}

export const installers: ProgramModule = {
  family: 'package installers',
  names: ['apt', 'apt-get', 'apt-cache', 'aptitude', 'dpkg'],
  unwrap: installerHooks,
  examples: {
    match: [
      { line: "apt-get -o 'APT::Update::Pre-Invoke::=make build-safe' update", runs: 'make build-safe' },
      { line: "dpkg --pre-invoke='make build-safe' -i x.deb", runs: 'make build-safe' },
    ],
    not_match: [
      { line: 'apt install qemu-system-x86 qemu-utils', runs: 'qemu-system-x86 qemu-utils' },
      { line: 'sudo apt-get -o Dpkg::Options::=--force-confnew install qemu-system-x86', runs: 'qemu-system-x86' },
      { line: 'dpkg -c chromium.deb', runs: 'chromium.deb' },
    ],
  },
};
