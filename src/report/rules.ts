// Help text for the rule ids that lint, scan and ci report, so that SARIF `tool.driver.rules` and the
// step summary can explain each one. Ids not listed here (custom rules from a config) get generic help.

export interface RuleHelp {
  /** One line. */
  short: string;
  /** A paragraph: what the rule checks and what to do. Markdown allowed. */
  help: string;
  /** POLICY.md section(s). */
  policy?: string;
}

const HEAVY = (what: string, policy = 'R1'): RuleHelp => ({
  short: `${what} on the laptop`,
  help:
    `A command written into the repository would run ${what} on a developer's laptop. Heavy work runs on a ` +
    'remote test VM (POLICY R1/R5): use the suggested rewrite (`offhost run -- …` or the route command), ' +
    'which takes the VM lock and runs the command on the VM. Files meant to run on the VM or in CI are ' +
    'recognised by the `scan.vmGlobs` config and are not flagged.',
  policy,
});

export const RULE_HELP: Record<string, RuleHelp> = {
  // Guard rules (rules/builtin.yaml): scan and ci report the deciding rule's id.
  'koda-make': HEAVY('a Koda engine build (`make build`, `make build-safe`, `make kasm`)'),
  'flutter-test-browser': HEAVY('`flutter test` against a browser device', 'R1, R5'),
  'flutter-integration': HEAVY('Flutter integration tests', 'R5'),
  'android-emulator': HEAVY('the Android emulator', 'R1, R5'),
  'qemu-windows': {
    short: 'a local Windows VM under QEMU',
    help: 'A local Windows VM must not run on the laptop and is not rerouted: migrate it to `s.khost1.dev-win10` (POLICY R1).',
    policy: 'R1',
  },
  'qemu-local-vm': HEAVY('a local QEMU virtual machine'),
  'live-build': HEAVY('a Koder Linux ISO build (`lb build`)'),
  'playwright-test': HEAVY('Playwright browser tests', 'R5'),
  'headless-browser': HEAVY('a headless browser', 'R5'),
  selenium: HEAVY('Selenium browser tests', 'R5'),
  xvfb: HEAVY('a virtual framebuffer (Xvfb)', 'R5'),
  'headless-compositor': HEAVY('a headless Wayland compositor', 'R5'),
  'ios-simulator': HEAVY('the iOS simulator', 'R5'),
  'heavy-command': HEAVY('a heavy command'),
};

export function ruleHelp(id: string, extra?: Record<string, RuleHelp>): RuleHelp {
  const found = (extra && Object.hasOwn(extra, id) ? extra[id] : undefined) ?? (Object.hasOwn(RULE_HELP, id) ? RULE_HELP[id] : undefined);
  if (found) return found;
  if (id.startsWith('lock-') || id.startsWith('lock/') || id.includes('lock')) {
    return {
      short: `lock rule ${id}`,
      help:
        'VM lock hygiene (POLICY R3/R4/R7): lock files under `meta/context/notices/` are acquired, heartbeated and ' +
        'archived with `offhost lock`, never deleted or rewritten by hand. Run `offhost lint --staged` before ' +
        'committing, and `offhost lock status` to see who holds what.',
      policy: 'R3, R4, R7',
    };
  }
  return {
    short: id,
    help: 'A finding of the offhost policy check. `offhost explain` shows which rule decided a command line and why.',
  };
}
