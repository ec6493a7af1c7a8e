// The lists of heavy programs the rules name (`program: ["@browsers"]` in a rule is one of them), apart
// from their grammars (heavy.ts): the rule compiler reads these, and a file of plain lists keeps the
// grammars out of what loads them (the hot bundle loads heavy.ts only for a line that names one).
/** Browsers (Chrome, Chromium, Firefox, Edge, Brave, Opera, Vivaldi, WebKit), under their packaged names. */
export const BROWSERS = [
  'chromium', 'chromium-browser', 'chromium-freeworld', 'ungoogled-chromium', 'google-chrome', 'google-chrome-stable', 'google-chrome-beta', 'google-chrome-unstable', 'google-chrome-dev', 'google-chrome-canary', 'chrome', 'Google Chrome', 'Google Chrome Canary', 'Google Chrome Beta', 'Google Chrome Dev', 'Chromium',
  'firefox', 'firefox-esr', 'firefox-bin', 'firefox-developer-edition', 'firefox-nightly', 'firefox-beta', 'Firefox', 'Firefox Nightly', 'Firefox Developer Edition', 'librewolf', 'waterfox',
  'msedge', 'microsoft-edge', 'microsoft-edge-stable', 'microsoft-edge-beta', 'microsoft-edge-dev', 'microsoft-edge-canary', 'Microsoft Edge', 'Microsoft Edge Dev', 'Microsoft Edge Beta',
  'brave', 'brave-browser', 'brave-browser-stable', 'brave-browser-beta', 'brave-browser-nightly', 'Brave Browser', 'opera', 'vivaldi', 'vivaldi-stable', 'epiphany', 'MiniBrowser', 'WebKitWebDriver', 'Safari',
];
/** Headless-only browser builds: they start a browser whatever the flags. */
export const HEADLESS_BROWSERS = ['chrome-headless-shell', 'headless_shell', 'headless-shell'];
/** Virtual framebuffers and nested/dummy X servers used to run graphical tests without a screen. */
const VIRTUAL_DISPLAYS = ['xvfb-run', 'Xvfb', 'Xvnc', 'Xephyr', 'Xnest', 'Xdummy', 'xpra', 'vncserver', 'tigervncserver', 'Xtigervnc', 'x11vnc-virtual'];
/** Wayland compositors that have a headless or virtual backend. */
export const COMPOSITORS = ['weston', 'labwc', 'cage', 'sway', 'mutter', 'kwin_wayland', 'hyprland', 'Hyprland', 'river', 'wayfire', 'niri', 'gamescope', 'gnome-shell', 'wlheadless-run', 'hikari', 'dwl'];
/** Local VM managers and emulators (they start a VM on this machine). */
const QEMU = ['qemu-system-*', 'qemu-kvm', 'kvm'];
/** Test runners that drive a real browser. */
const BROWSER_TEST_RUNNERS = ['wdio', 'testcafe', 'web-test-runner', 'wtr', 'test-storybook', 'lighthouse', 'nightwatch', 'codeceptjs', 'protractor', 'testem', 'puppeteer', 'backstop', 'pa11y', 'pa11y-ci', 'lhci', 'taiko', 'detox'];

export const HEAVY_LISTS: Record<string, readonly string[]> = {
  browsers: BROWSERS,
  'headless-browsers': HEADLESS_BROWSERS,
  'virtual-displays': VIRTUAL_DISPLAYS,
  compositors: COMPOSITORS,
  qemu: QEMU,
  'browser-test-runners': BROWSER_TEST_RUNNERS,
};
