#!/usr/bin/env node
// Builds corpora/secrets/faultline-cases.jsonl: realistic places secrets sit in that gitleaks'
// rule tests do not cover (assignment forms of many languages and config formats, manifests,
// command lines, nested JSON), and things that look like secrets and are not (placeholders,
// names that only mention a secret, digests and ids). Same line shape as gitleaks.jsonl.
// Secrets are random from a fixed seed, so the file is the same on every run.
//
//   node scripts/generate-secret-cases.mjs [out.jsonl]
import { writeFileSync } from 'node:fs';
import { prng } from '../perf/prng.js';

const out = process.argv[2] ?? 'corpora/secrets/faultline-cases.jsonl';

const random = prng(0xfa171e);
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
const from = (alphabet, n) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
/** A secret of one of the shapes services hand out: base62, hex, base64, a human password. */
function secret(k) {
  switch (k % 5) {
    case 0:
      return from(BASE62, 32);
    case 1:
      return from(HEX, 40);
    case 2:
      return Buffer.from(from(BASE62, 30)).toString('base64');
    case 3:
      return `${from(BASE62, 6)}!${from('0123456789', 3)}-${from(BASE62, 5)}`;
    default:
      return `${from('abcdefghijklmnopqrstuvwxyz', 4)}_${from(BASE62, 28)}`;
  }
}

const lines = [];
const tp = (rule, sample, secrets) => lines.push({ rule, kind: 'tp', sample, secrets, source: 'faultline' });
const fp = (rule, sample) => lines.push({ rule, kind: 'fp', sample, source: 'faultline' });

// True positives: each form with five secret shapes.
const TP_FORMS = {
  'assign-go': [(s) => `dbPassword := "${s}"`, (s) => `apiToken := \`${s}\``, (s) => `var apiToken string = "${s}"`, (s) => `const ClientSecret = "${s}"`],
  'assign-typed': [(s) => `val apiToken: String = "${s}"`, (s) => `let api_token: &str = "${s}";`, (s) => `const authToken: string = '${s}';`, (s) => `private String clientSecret = "${s}";`],
  'assign-make': [(s) => `API_TOKEN ?= ${s}`, (s) => `API_TOKEN := ${s}`, (s) => `DB_PASSWORD ::= "${s}"`, (s) => `DB_PASSWORD :::= "${s}"`, (s) => `REGISTRY_TOKEN += ${s}`],
  'assign-php': [(s) => `$apiToken .= "${s}";`, (s) => `$config['db_password'] = '${s}';`, (s) => `define('AUTH_SECRET', '${s}');`, (s) => `'password' => '${s}',`],
  'assign-call': [(s) => `System.setProperty("API_TOKEN", "${s}")`, (s) => `props.put("client_secret", "${s}");`, (s) => `os.environ.setdefault("DJANGO_SECRET", "${s}")`, (s) => `headers.set('Authorization', 'Bearer ${s}')`],
  'xml-attributes': [(s) => `<add key="Password" value="${s}" />`, (s) => `<property name="db.password" value="${s}"/>`, (s) => `<entry key="api.token" value="${s}"/>`, (s) => `<password>${s}</password>`],
  'k8s-secret': [
    (s) => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  DATABASE_URL: ${Buffer.from(`postgres://app:${s}@db:5432/app`).toString('base64')}\n`,
    (s) => `kind: Secret\napiVersion: v1\nmetadata:\n  name: tls\nstringData:\n  tls.key: ${s}\n`,
  ],
  dotenv: [(s) => `STRIPE_SECRET=${s}\nDEBUG=true`, (s) => `SESSION_SECRET="${s}"`, (s) => `# app\nDB_PASSWORD='${s}'\nDB_HOST=localhost`],
  yaml: [(s) => `database:\n  host: db\n  password: "${s}"`, (s) => `auth:\n  client_secret: ${s}\n  client_id: web`, (s) => `- name: API_TOKEN\n  value: "${s}"`],
  toml: [(s) => `[auth]\ntoken = "${s}"`, (s) => `[database]\npassword = '${s}'`],
  ini: [(s) => `[db]\npassword=${s}`, (s) => `[smtp]\nsmtp_pass = ${s}`],
  'shell-export': [(s) => `export GITHUB_TOKEN=${s}`, (s) => `export AWS_SECRET_ACCESS_KEY="${s}"`, (s) => `set -x; export NPM_TOKEN='${s}'`],
  'docker-env': [(s) => `docker run -e POSTGRES_PASSWORD=${s} -e POSTGRES_DB=app postgres:16`, (s) => `docker run --env API_TOKEN="${s}" app:latest`],
  'curl-header': [(s) => `curl -H "Authorization: Bearer ${s}" https://api.example.com/v1/me`, (s) => `curl -sS -H 'X-Api-Key: ${s}' https://api.example.com`, (s) => `curl --header "Authorization: token ${s}" https://api.github.com/user`],
  'json-nested': [(s) => JSON.stringify({ config: JSON.stringify({ password: s }) }), (s) => JSON.stringify({ env: `API_TOKEN=${s}` }), (s) => JSON.stringify({ args: ['--password', s] })],
  'numbered-keys': [(s) => `1password_token = "${s}"`, (s) => `token2: ${s}`, (s) => `api_key_2 = "${s}"`, (s) => `PASSWORD1=${s}`],
};
for (const [rule, forms] of Object.entries(TP_FORMS)) {
  for (const form of forms) for (let k = 0; k < 5; k++) {
    const s = secret(k);
    tp(rule, form(s), [s]);
  }
}
// A JWT base64-encoded again, bare and under a neutral name.
for (let k = 0; k < 5; k++) {
  const jwt = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(`{"sub":"${from(BASE62, 12)}","iat":${1700000000 + k}}`).toString('base64url')}.${from(BASE62, 43)}`;
  const wrapped = Buffer.from(jwt).toString('base64');
  tp('jwt-base64-blob', wrapped, [wrapped.slice(0, 60)]);
  tp('jwt-base64-blob', `config: ${wrapped}`, [wrapped.slice(0, 60)]);
}

// False positives.
const PLACEHOLDERS = [
  'password: ${DB_PASSWORD}', 'password: $PASSWORD', 'password: "${{ secrets.DB_PASSWORD }}"', 'password: "{{ .Values.db.password }}"',
  'api_key = "<your-api-key>"', "api_key = 'YOUR_API_KEY_HERE'", 'token: xxxxxxxxxxxxxxxx', 'TOKEN=XXXXXXXXXXXXXXXXXXXXXXXX',
  'password = "changeme"', 'client_secret: ********', 'secret_key = "%SECRET_KEY%"', 'password: <PASSWORD>',
  'curl -u "$USERNAME:$PASSWORD" https://api.example.com', 'auth_token: [REDACTED]', 'DB_PASSWORD=', 'password: null',
  'export GITHUB_TOKEN=$(gh auth token)', 'Authorization: Bearer $API_KEY', 'api_key = os.environ["API_KEY"]',
  'password = var.db_password', 'token: ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
];
for (const sample of PLACEHOLDERS) fp('placeholders', sample);
const NAMES = [
  "credentialsId: 'ff083f76-7804-4ef1-80e4-fe975bb9141b'", 'publicToken = "pk_9f8e7d6c5b4a39281706"', 'csrf-token: 8f7d6c5b4a39281706f5e4d3',
  'token_type: bearer', 'password_policy: strong', 'password_changed_at: 2026-01-03T10:00:00Z', 'max_tokens: 4096',
  '"next_page_token": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3"', 'token_count = 1532', 'has_password: true', 'secret_name: app-db-credentials',
  '<input type="hidden" name="authenticity_token" value="7SWaFo1hsC6oovfBsJFLGPUl2EhkSWPbJhWANwgaJWB">', 'key_id: 2c9f8a7b-1d2e-4f3a-9b8c-7d6e5f4a3b2c',
  'primaryKey = "order_id"', 'tokenizer: cl100k_base',
];
for (const sample of NAMES) fp('not-secret-names', sample);
const DIGESTS = [];
for (let k = 0; k < 5; k++) {
  DIGESTS.push(`commit ${from(HEX, 40)}`);
  DIGESTS.push(`sha256:${from(HEX, 64)}  app-1.2.${k}.tar.gz`);
  DIGESTS.push(`"integrity": "sha512-${Buffer.from(from(BASE62, 48)).toString('base64')}"`);
  DIGESTS.push(`image: registry.example.com/app@sha256:${from(HEX, 64)}`);
  DIGESTS.push(`request_id=${from(HEX, 8)}-${from(HEX, 4)}-4${from(HEX, 3)}-a${from(HEX, 3)}-${from(HEX, 12)}`);
  DIGESTS.push(`resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.${k}.tgz#${from(HEX, 40)}"`);
  DIGESTS.push(`etag: "${from(HEX, 32)}"`);
  DIGESTS.push(`trace 4bf92f3577b34da6a3ce929d0e0e${from('0123456789', 4)} span 00f067aa0ba902b7`);
}
for (const sample of DIGESTS) fp('digests-and-ids', sample);

writeFileSync(out, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
console.error(`${lines.length} samples -> ${out}`);
