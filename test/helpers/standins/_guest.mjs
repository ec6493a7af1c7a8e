// Guest-side tools of a stand-in instance (test-only): apt-get/apt install, dpkg-query -W, df -Pk,
// findmnt -T. They read and write the instance's state ($OFFHOST_STANDIN_STATE, the instance in
// $OFFHOST_STANDIN_GUEST), so a package install uses disk space and a full disk refuses it as apt does.
import { installBinaries, PACKAGE_MB, readState, writeState } from './_state.mjs';

const [tool, ...args] = process.argv.slice(2);
const T = process.env.OFFHOST_STANDIN_GUEST_TOOL || 'incus';
const name = process.env.OFFHOST_STANDIN_GUEST;
const state = readState(T);
const inst = state.instances[name];
if (!inst) { process.stderr.write(`${tool}: stand-in guest ${name} has no state\n`); process.exit(1); }
const out = (s) => process.stdout.write(s);

function under(path, dir) {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
function mountFor(path) {
  for (const [dev, d] of Object.entries(inst.devices)) if (d.type === 'disk' && d.path && under(path, d.path)) return { dev, d };
  return null;
}

switch (tool) {
  case 'apt-get':
  case 'apt': {
    const verb = args.find((a) => !a.startsWith('-'));
    if (verb === 'update') { out('Reading package lists... Done\n'); process.exit(0); }
    if (verb !== 'install') { process.stderr.write(`E: stand-in ${tool}: unsupported ${verb}\n`); process.exit(100); }
    const pkgs = args.filter((a) => !a.startsWith('-') && a !== 'install');
    const fresh = pkgs.filter((p) => !inst.packages.includes(p));
    const free = inst.disk.size_mb - inst.disk.used_mb;
    if (fresh.length * PACKAGE_MB > free) {
      process.stderr.write('E: You don\'t have enough free space in /var/cache/apt/archives/.\n');
      process.exit(100);
    }
    for (const p of fresh) { installBinaries(T, name, p); inst.packages.push(p); inst.disk.used_mb += PACKAGE_MB; }
    writeState(T, state);
    out(`${fresh.length} newly installed, ${pkgs.length - fresh.length} already the newest version.\n`);
    process.exit(0);
  }
  case 'dpkg-query': {
    // dpkg-query -W -f='${Package} ${Status}\n' pkg...: one line per installed package; 1 when any is absent.
    const pkgs = args.filter((a) => !a.startsWith('-') && !a.includes('$'));
    let st = 0;
    for (const p of pkgs) {
      if (inst.packages.includes(p)) out(`${p} install ok installed\n`);
      else { process.stderr.write(`dpkg-query: no packages found matching ${p}\n`); st = 1; }
    }
    process.exit(st);
  }
  case 'df': {
    // df -Pk PATH...
    out('Filesystem 1024-blocks Used Available Capacity Mounted on\n');
    for (const p of args.filter((a) => !a.startsWith('-'))) {
      const m = mountFor(p);
      if (m) { out(`${m.d.source} 104857600 1048576 103809024 1% ${m.d.path}\n`); continue; }
      const size = inst.disk.size_mb * 1024, used = inst.disk.used_mb * 1024, avail = Math.max(0, size - used);
      out(`/dev/sda1 ${size} ${used} ${avail} ${Math.round((used / size) * 100)}% /\n`);
    }
    process.exit(0);
  }
  case 'findmnt': {
    // findmnt -n -o TARGET,OPTIONS -T PATH
    const t = args[args.indexOf('-T') + 1];
    const m = t ? mountFor(t) : null;
    if (m) out(`${m.d.path} ${m.d.readonly === 'true' ? 'ro' : 'rw'},relatime\n`);
    else out('/ rw,relatime\n');
    process.exit(0);
  }
  default:
    process.stderr.write(`stand-in guest: unknown tool ${tool}\n`);
    process.exit(127);
}
