// `npm run build`: compiles into a fresh folder beside dist/ and swaps it in, so a faultline that
// runs from dist/ meanwhile (`npx faultline dashboard`, a proxy, a benchmark's child) keeps
// finding every module it loads later: dist/ is whole before the swap and whole after it, and
// missing only between two renames. A failed compile leaves dist/ as it was.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const next = join(root, `.dist-next-${process.pid}`);
const old = join(root, `.dist-old-${process.pid}`);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(next, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', next], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  rmSync(next, { recursive: true, force: true });
  process.exit(compiled.status ?? 1);
}
cpSync(join(root, 'src', 'failbench', 'scenarios'), join(next, 'failbench', 'scenarios'), { recursive: true });
chmodSync(join(next, 'cli', 'main.js'), 0o755);
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
