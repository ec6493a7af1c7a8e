// `offhost scan` as a lint-staged task: real lint-staged in a real repository, staged files only.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Repo } from '../ci/repo.js';
import { ROOT } from './helpers.js';

const bin = join(ROOT, 'dist', 'offhost.mjs');
const lintStaged = join(ROOT, 'node_modules', 'lint-staged', 'bin', 'lint-staged.js');

describe.skipIf(!existsSync(bin))('lint-staged runs offhost scan on staged files', () => {
  it('rejects a staged script with a heavy command and passes a routed one', () => {
    const r = new Repo();
    try {
      r.commit({ 'README.md': '# x\n' }, 'base');
      const config = join(r.dir, '.lintstagedrc.json');
      writeFileSync(config, JSON.stringify({ '*.{sh,bash,md,json,yml,yaml}': `node ${JSON.stringify(bin).slice(1, -1)} scan --format stylish` }));
      mkdirSync(join(r.dir, 'engines/lang/koda'), { recursive: true });
      writeFileSync(join(r.dir, 'engines/lang/koda/build.sh'), '#!/bin/bash\nmake build-safe\n');
      r.git('add', 'engines/lang/koda/build.sh');
      const env = { ...process.env, HOME: '/home/koder', OFFHOST_ROLE: 'ci', CI: 'true', FORCE_COLOR: '0' };
      const bad = spawnSync(process.execPath, [lintStaged, '--config', config, '--quiet'], { cwd: r.dir, env, encoding: 'utf8' });
      expect(bad.status).toBe(1);
      expect(bad.stdout + bad.stderr).toContain('engines/lang/koda/build.sh');
      expect(bad.stdout + bad.stderr).toContain("offhost run -- 'make build-safe'");
      writeFileSync(join(r.dir, 'engines/lang/koda/build.sh'), '#!/bin/bash\noffhost run -- make build-safe\n');
      r.git('add', 'engines/lang/koda/build.sh');
      const good = spawnSync(process.execPath, [lintStaged, '--config', config, '--quiet'], { cwd: r.dir, env, encoding: 'utf8' });
      expect(good.stdout + good.stderr).toBe('');
      expect(good.status).toBe(0);
    } finally {
      r.cleanup();
    }
  });
});
