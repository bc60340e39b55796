// `npm run perf`: runs every perf/*.bench.js (or those named on the command line) and prints
// markdown for perf/RESULTS.md.
import { readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();

console.log(`# faultline perf run, ${new Date().toISOString()}`);
console.log(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}\n`);
for (const file of files) {
  const bench = await import(pathToFileURL(join(here, file)).href);
  const started = Date.now();
  const result = await bench.run();
  console.log(`## ${result.title} (${file}, ${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  console.log(result.markdown);
  console.log('');
}
