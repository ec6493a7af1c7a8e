// The heavy programs the rules name, as data the rules share (`program: ["@browsers"]` in a rule is this
// list), and their grammars: the options with which each only prints help, a version or a list and runs
// nothing (`lb build --help`, `npx playwright test --list`, `qemu-system-x86_64 -machine help`,
// `labwc --version`). Also the launchers that start an app under another name (`flatpak run
// org.chromium.Chromium`, `snap run chromium`).
import type { Grammar } from './grammar.js';
import type { ProgramModule } from './types.js';
import { BROWSERS, HEADLESS_BROWSERS, COMPOSITORS } from './heavy-lists.js';

const HELP_VERSION: Grammar = { value: [], info: ['--help', '-h', '--version', '-V', '-v'], exactLong: true };

const grammars: [readonly string[], Grammar][] = [
  [['flutter', 'dart'], { value: ['-d', '--device-id', '-p', '--platform'], info: ['--help', '-h', '--version'], infoWords: ['help'], exactLong: true }],
  [['emulator', 'emulator-headless'], { value: ['-avd', '-sysdir', '-qemu'], info: ['-help', '--help', '-version', '--version', '-list-avds', '-accel-check', '-help-all'], singleDash: true }],
  [['lb'], { value: [], info: ['--help', '-h', '--version', '-v', '--usage'], exactLong: true }],
  [['playwright'], { value: ['-c', '--config', '--project', '-g', '--grep', '--reporter', '-j', '--workers', '--shard'], info: ['--help', '-h', '--version', '-V', '--list'], infoWords: ['help'], exactLong: true }],
  [['cypress', 'karma', 'wdio', 'testcafe', 'web-test-runner', 'wtr', 'test-storybook', 'lighthouse', 'nightwatch', 'patrol', 'ng', 'chromedriver', 'geckodriver', 'msedgedriver', 'selenium-server', 'selenium-standalone', 'gradle', 'gradlew', 'virsh', 'quickemu', 'quickget', 'VBoxManage', 'vboxmanage', 'virt-install', 'vagrant'], { ...HELP_VERSION, infoWords: ['help', 'version', '--list-browsers', 'tasks', 'list'], info: [...HELP_VERSION.info!, '--list-browsers', '-b'] }],
  [['xvfb-run'], { value: ['-n', '--server-num', '-e', '--error-file', '-f', '--auth-file', '-s', '--server-args', '-p', '--xauth-protocol'], info: ['--help', '-h'] }],
  [['Xvfb', 'Xvnc', 'Xephyr', 'Xnest', 'Xorg', 'X'], { value: [], info: ['-help', '-version', '--version', '-showconfig'], singleDash: true }],
  [COMPOSITORS, { value: ['-B', '--backend', '-c', '--config', '-S', '--socket'], info: ['--help', '-h', '--version', '-v'], exactLong: true }],
  [['qemu-system-x86_64', 'qemu-system-aarch64', 'qemu-system-i386', 'qemu-system-arm', 'qemu-system-riscv64', 'qemu-kvm', 'kvm'], { value: ['-machine', '-M', '-cpu', '-device', '-accel', '-netdev', '-display', '-audiodev', '-m', '-smp', '-drive', '-hda', '-cdrom'], info: ['-help', '--help', '-h', '-version', '--version'], infoValues: ['help', '?'], singleDash: true }],
  [[...BROWSERS, ...HEADLESS_BROWSERS], { value: [], info: ['--version', '-version', '--help', '-help', '-h'], exactLong: true }],
];

/** One module per heavy program family: its grammar, no unwrapping (the rules judge these). */
export const heavyPrograms: ProgramModule[] = grammars.map(([names, grammar]) => ({
  family: 'heavy programs',
  names,
  ...(names.includes('qemu-system-x86_64') ? { pattern: /^qemu-system-/ } : {}),
  grammar,
  examples: { match: [], not_match: [] },
}));
heavyPrograms[0]!.examples = {
  match: [
    { line: 'flutter test --help', runs: 'flutter test --help', info: true },
    { line: 'lb build --help', runs: 'lb build --help', info: true },
    { line: 'npx playwright test --list', runs: 'playwright test --list', info: true },
    { line: 'qemu-system-x86_64 -machine help', runs: 'qemu-system-x86_64 -machine help', info: true },
    { line: 'labwc --version', runs: 'labwc --version', info: true },
    { line: 'emulator -list-avds', runs: 'emulator -list-avds', info: true },
    { line: 'lb build', runs: 'lb build', info: false },
    { line: 'flutter help test', runs: 'flutter help test', info: true },
  ],
  not_match: [],
};

/** Flatpak and snap application ids of browsers, and what they run. */
const APP_IDS: Record<string, string> = {
  'org.chromium.chromium': 'chromium',
  'com.google.chrome': 'google-chrome',
  'com.google.chromedev': 'google-chrome-unstable',
  'org.mozilla.firefox': 'firefox',
  'com.brave.browser': 'brave-browser',
  'com.microsoft.edge': 'microsoft-edge',
  'com.opera.opera': 'opera',
  'com.vivaldi.vivaldi': 'vivaldi',
  'io.github.ungoogled_software.ungoogled_chromium': 'chromium',
  'org.gnome.epiphany': 'epiphany',
  'io.gitlab.librewolf-community': 'librewolf',
};

/** `flatpak run [options] APP [args]`, `snap run APP [args]`: the app runs under its own name. */
export const appLaunchers: ProgramModule = {
  family: 'application launchers',
  names: ['flatpak', 'snap'],
  unwrap(call) {
    const argv = call.fields;
    if (!argv[1]?.known || argv[1].value !== 'run') return { kind: 'none' };
    let i = 2;
    while (argv[i]?.known && argv[i]!.value.startsWith('-')) i += /^--(command|branch|arch|runtime|cwd|env|filesystem)$/.test(argv[i]!.value) ? 2 : 1;
    const app = argv[i];
    if (!app) return { kind: 'none' };
    const command = argv.slice(2, i).find((a) => a.known && a.value.startsWith('--command='));
    const id = app.value.toLowerCase();
    const name = command ? command.value.slice(10) : (APP_IDS[id] ?? (id.includes('.') ? id.slice(id.lastIndexOf('.') + 1) : id));
    return { kind: 'run', via: `${call.name} run ${app.value}`, argv: [{ value: name, known: app.known }, ...argv.slice(i + 1)] };
  },
  examples: {
    match: [
      { line: 'flatpak run org.chromium.Chromium --headless --dump-dom http://localhost', runs: 'chromium --headless --dump-dom http://localhost' },
      { line: 'snap run chromium --headless', runs: 'chromium --headless' },
    ],
    not_match: [{ line: 'flatpak list', runs: 'chromium' }],
  },
};
