#!/usr/bin/env node
// Builds corpora/secrets/secretlint.jsonl from a checkout of secretlint (MIT): the snapshot tests
// of its secret rules, a second, independent source of real secret formats beside gitleaks'.
//
//   node scripts/extract-secretlint-corpus.mjs <secretlint checkout> [out.jsonl]
//
// Each rule package keeps snapshot folders under test/snapshots/: `ng.*` folders hold an input
// that the rule reports, `ok.*` and `placeholder-*` folders one it must not report (those with
// their own .secretlintrc.json are left out: options, not content, make them pass).
// Their output.json holds the input as `sourceContent` and every report with the matched value in
// `data`, so nothing here interprets the rules themselves.
//
// One line per report of an `ng` folder (kind `tp`, the whole input as the sample, `secrets` the
// substrings of the reported value that must not survive) and one per `ok` folder (kind `fp`).
// `reported_by` on a false positive lists the rules of secretlint's recommended preset that
// report the same input (its own snapshot run of every rule), as gitleaks.jsonl does.
//
// Left out, because they report something that is not a secret value: home-directory paths,
// .env file names, account, tenant and client ids, the example and comment-filter rules, the
// user-configured `pattern` rule, and P12 files (binary).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const [checkout, out = 'corpora/secrets/secretlint.jsonl'] = process.argv.slice(2);
if (checkout === undefined) {
  console.error('usage: node scripts/extract-secretlint-corpus.mjs <secretlint checkout> [out.jsonl]');
  process.exit(2);
}

// The checkout may be a bare mirror (no work tree), so files are read through git.
const git = (...args) => execFileSync('git', ['-C', checkout, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
const commit = git('rev-parse', 'HEAD').trim();
const files = git('ls-tree', '-r', '--name-only', 'HEAD', 'packages/@secretlint/').split('\n');
const readJson = (path) => JSON.parse(git('show', `HEAD:${path}`));

const SKIPPED_RULES = new Set(['no-homedir', 'no-dotenv', 'example', 'filter-comments', 'pattern', 'no-k8s-kind-secret']);
const SKIPPED_MESSAGES = new Set(['AWSAccountID', 'AzureTenantId', 'AzureClientId', 'PrivateKeyP12', 'EXAMPLE_MESSAGE']);
const OWN = /^packages\/@secretlint\/secretlint-rule-([^/]+)\/test\/snapshots\/([^/]+)\/output\.json$/;
const PRESET = /^packages\/@secretlint\/secretlint-rule-preset-recommend\/test\/snapshots\/secretlint-rule-([^/]+)\/([^/]+)\/output\.json$/;

/**
 * The parts of a reported value that must not survive: the password of a URL with credentials,
 * each body line of a PEM block, else the value itself.
 */
function secretsOf(value) {
  const url = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]+:(.+)@[^@]*$/i.exec(value);
  if (url) return [url[1]];
  if (value.includes('-----BEGIN')) {
    return value
      .split(/\\n|\n/)
      .map((line) => line.trim())
      .filter((line) => line.length >= 16 && !line.startsWith('-----'));
  }
  return [value];
}

/** The matched value of a report: the `data` field that occurs in the input. */
function reportedValue(message, source) {
  const values = Object.values(message.data ?? {}).filter((v) => typeof v === 'string' && v.length >= 6 && source.includes(v));
  return values.sort((a, b) => b.length - a.length)[0];
}

// Which preset rules report each input, keyed by rule and folder.
const presetReports = new Map();
for (const path of files) {
  const m = PRESET.exec(path);
  if (!m) continue;
  const rules = new Set(readJson(path).messages.map((msg) => msg.ruleId.replace('@secretlint/secretlint-rule-', '')));
  presetReports.set(`${m[1]}/${m[2]}`, [...rules].sort());
}

const lines = [];
const skipped = [];
for (const path of files) {
  const m = OWN.exec(path);
  if (!m || m[1].startsWith('preset-')) continue;
  const [, rule, folder] = m;
  if (SKIPPED_RULES.has(rule)) continue;
  const output = readJson(path);
  const sample = output.sourceContent;
  if (typeof sample !== 'string' || sample.trim() === '' || output.sourceContentType === 'binary') continue;
  const source = `secretlint@${commit.slice(0, 8)}:${rule}/${folder}`;
  if (output.messages.length === 0) {
    if (!/^(ok\.|placeholder)/.test(folder)) {
      skipped.push(`${rule}/${folder}: not reported, but not an ok case`);
      continue;
    }
    // With its own options (an allow list, a scan turned off) an input is not reported because
    // it was configured away, not because it holds no secret.
    if (files.includes(path.replace(/output\.json$/, '.secretlintrc.json'))) {
      skipped.push(`${rule}/${folder}: ok only under its own options`);
      continue;
    }
    const reportedBy = presetReports.get(`${rule}/${folder}`) ?? [];
    lines.push({ rule: `secretlint:${rule}`, kind: 'fp', sample, ...(reportedBy.length > 0 ? { reported_by: reportedBy } : {}), source });
    continue;
  }
  for (const message of output.messages) {
    if (SKIPPED_MESSAGES.has(message.messageId)) continue;
    const value = reportedValue(message, sample);
    if (value === undefined) {
      skipped.push(`${rule}/${folder}: ${message.messageId} reports no value found in the input`);
      continue;
    }
    lines.push({ rule: `secretlint:${rule}`, kind: 'tp', sample, secrets: secretsOf(value), source });
  }
}

writeFileSync(out, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
for (const s of skipped) console.error(`skipped ${s}`);
const count = (kind) => lines.filter((l) => l.kind === kind).length;
console.error(`${out}: ${count('tp')} true positives, ${count('fp')} false positives, from secretlint ${commit.slice(0, 8)}`);
