/**
 * The built-in redaction rules: value patterns for secrets and personal data, and the key names
 * whose values are secret. Token formats follow gitleaks' rule set (config/gitleaks.toml), widened
 * where gitleaks pins exact lengths: a redactor would rather mask a slightly odd key than leak it.
 *
 * Why not an existing package: secretlint's rules are async linters that report source locations
 * over a whole file, one package per provider; the hot path here needs synchronous
 * replace-in-place over short strings with a shared pre-filter, so the patterns live here.
 */

/** A value pattern. Matches are replaced by `mask(match)`, or by `[REDACTED]`. */
export interface RedactionRule {
  /** Stable name, used in tests and docs. */
  id: string;
  /** What to look for. A missing global flag is added. */
  pattern: RegExp;
  /** Return false to leave a match alone (checksums, entropy). */
  validate?: (match: string) => boolean;
  /** What to put instead of the match; default `[REDACTED]`. */
  mask?: (match: string) => string;
}

/** The replacement for a whole value. */
export const REDACTED = '[REDACTED]';

/*
 * Pre-filter flags. A rule only runs on a string whose scan raised one of the flags it needs; the
 * scan (in redact.ts) is one pass over the string's bytes, so ordinary text pays for nothing else.
 */
/** The text has an `@` (e-mail, URL password). */
export const F_AT = 1 << 0;
/** The text has a run of 11+ digits, spaces and dashes (phone, ID, card). */
export const F_DIGITS = 1 << 1;
/** `-----` (PEM armour). */
export const F_PEM = 1 << 2;
/** `sk-`, `sk_`, `rk_` (OpenAI, Anthropic, Stripe). */
export const F_SK = 1 << 3;
/**
 * Code hosting and package registries: `ghp`, `gho`, …, `b_p` of `github_pat_`; GitLab's `glp`,
 * `gld`, `glr`, `glc`, `glf`, `gls`, `gla`, `imt` and `oas` (`glpat-`, `gldt-`, …, `glimt-`,
 * `gloas-`; not `gli` or `glo`, which start English and global) and `gr` and a digit of
 * `GR1348941`; `pm_` of `npm_` (not `npm`, in every line of an npm log); `hlw` of PyPI's
 * `pypi-AgEIcHlwaS5vcmc`.
 */
export const F_GH = 1 << 4;
/** `xox`, `xap`, `ks.` of `hooks.slack`, `bho` of Discord's `webhooks/`. */
export const F_SLACK = 1 << 5;
/** AWS access key id prefixes. */
export const F_AWS = 1 << 6;
/**
 * A provider's name, the context a secret with no prefix of its own needs: `aws`; `dog` of
 * `datadog`, `p_k` and `n_k` of `DD_APP_KEY` and `DD_APPLICATION_KEY`; `oku` of `heroku`.
 */
export const F_PROVIDER_WORD = 1 << 7;
/**
 * `aiz` of `AIza`; and the `?co`, `0co` or `fco` before an OAuth `code=` (`?code=`, `&code=`,
 * `#code=`, HTML's `&amp;code=`, JSON's `\u0026code=`, percent-encoded `%26code%3D` or
 * `%3Fcode%3D`, and encoded twice, `%2526code%253D` or `%253Fcode%253D`). All are rare in ordinary text and each runs one cheap rule, so they share a bit:
 * on the `&copy;` and `#content` of a web page, the wider token flag would run a dozen rules.
 */
export const F_GOOGLE = 1 << 8;
/** `eyJ`: JWTs and the tokens that are base64 JSON (Grafana's `eyJrIjoi`, Sentry's `sntrys_eyJ`, 1Password's `ops_eyJ`). */
export const F_JWT = 1 << 9;
/** `bea` of `Bearer`. */
export const F_BEARER = 1 << 10;
/** `asi` of `Basic`. */
export const F_BASIC = 1 << 11;
/** The text may hold a secret key name (`password=…`, `"token": …`). */
export const F_KEY = 1 << 12;
/**
 * A prefix of a less common provider token. The table's 16 bits cannot name each group, so the
 * table only says "some"; a second look at the string, with a table of the flags from
 * {@link F_TOKEN_MORE} on, says which (redact.ts). Rules need those flags, never this one.
 */
export const F_MORE = 1 << 13;
/**
 * A command line: `-u` and a separator (curl's `-u user:password`), `--` and a letter of a long
 * option, `ysq` of `mysql` and `mysqldump` (whose `-pPASSWORD` has no separator).
 */
export const F_CLI = 1 << 14;

/*
 * The flags of the second look (see {@link F_MORE}), from bit 16 on. They are split finely: a
 * trigram common in ordinary text (the `key-` of `key-value`, the `adapter` of every axios stack
 * trace, `in_array`, `integration`) raises a flag with one or two rules.
 */
/**
 * Prefixes of the rarest provider tokens: `ya0` of Google's `ya29.`, `spx` of `GOCSPX-`, `hse` of
 * Stripe's `whsec_`, `hf-` and `i-o` of Hugging Face's `hf_` and `api_org_`, `sg.` of SendGrid's
 * `SG.`, `shp` of Shopify's `shpat_`, `v0-` of DigitalOcean's `dop_v1_`, `sq0` and `eaa` of
 * Square's `sq0atp-` and `EAAA`.
 */
export const F_TOKEN_MORE = 1 << 16;
/** `ey-` of Mailgun's `key-` and age's `AGE-SECRET-KEY-1`. */
export const F_KEY_DASH = 1 << 17;
/**
 * Cloud and infrastructure credentials: `hvs` and `hvb` of HashiCorp Vault's `hvs.` and `hvb.`,
 * `dp.` of Doppler's `dp.pt.`, `rku` of Heroku's `HRKU-`, `psc` of PlanetScale's `pscale_`, and
 * a digit, `q` and `~` of an Azure AD client secret's `8Q~`.
 */
export const F_CLOUD = 1 << 18;
/**
 * Developer SaaS tokens: `tn-` of Notion's `ntn_`, `pma` of Postman's `PMAK-`, `ryu` of Sentry's
 * `sntryu_`, `gls` and `glc` of Grafana's `glsa_` and `glc_`, `tt0` of Atlassian's `ATATT3`,
 * `plx` of Perplexity's `pplx-`.
 */
export const F_SAAS = 1 << 19;
/** `dap` of Databricks' `dapi`. */
export const F_DATABRICKS = 1 << 20;
/** `n-a` of Linear's `lin_api_`. */
export const F_LINEAR = 1 << 21;
/** `egr` of `telegram`, `ot0` of a Bot API URL's `/bot123…:`. */
export const F_TELEGRAM = 1 << 22;
/** All flags of the second look. */
export const SECOND_LOOK_FLAGS = F_TOKEN_MORE | F_KEY_DASH | F_CLOUD | F_SAAS | F_DATABRICKS | F_LINEAR | F_TELEGRAM;

/**
 * A run of 11 or more full-width digits (`１３８…`, as a Chinese input method types them), looked
 * for only in text with non-ASCII characters. Not a trigram: a full-width digit's UTF-8 bytes are
 * shared by thousands of CJK characters.
 */
export const F_WIDE_DIGITS = 1 << 23;
/**
 * A run of 32 or more hex digits (a 128-bit token), looked for only in text of 67 characters or
 * more that has three digits in a row, as all but one in 130 such runs do.
 */
export const F_HEX_RUN = 1 << 24;
/**
 * A run of 32 or more token characters (letters, digits, `_`, `-`) with a `_` or `-` in it: where
 * a prefixed token (`gsk_…`, `dckr_pat_…`, `tskey-auth-…`) may sit, looked for only in strings of
 * 35 characters or more.
 */
export const F_LONG_TOKEN = 1 << 25;

/** A built-in rule plus the pre-filter flags that can make it match. */
export interface BuiltinRule extends RedactionRule {
  /** Runs only when the scan raised one of these flags. */
  needs: number;
  mask: (match: string) => string;
  /** Text every match contains, when the flags alone are a weak hint (`://` for a URL's password). */
  contains?: string;
  /**
   * Does what `s.replace(pattern, replacer)` does, faster, for a rule whose regex would be tried
   * at every word of a text with one hit in it (tested to agree with the pattern).
   */
  replaceIn?: (s: string, replacer: (match: string) => string) => string;
}

/**
 * Trigrams (case-insensitive; `-` stands for `-` or `_`, `0` for any digit, `?` for `?`, `&`, `#`
 * or `;`, a space for any character outside the alphabet) that raise each flag.
 * Chosen to sit inside every spelling of the thing they announce (`api_key`, `x-api-key`, `apiKey`
 * all contain `api`) and to be rare in ordinary JSON and prose, which then skips the rules.
 */
export const TRIGGER_TRIGRAMS: readonly (readonly [string, number])[] = [
  ['---', F_PEM],
  ['sk-', F_SK],
  ['rk-', F_SK],
  // Twilio's `SK` and 32 hex digits.
  ['sk0', F_SK],
  ['ska', F_SK],
  ['skb', F_SK],
  ['skc', F_SK],
  ['skd', F_SK],
  ['ske', F_SK],
  ['skf', F_SK],
  ['ghp', F_GH],
  ['gho', F_GH],
  ['ghu', F_GH],
  ['ghs', F_GH],
  ['ghr', F_GH],
  ['b-p', F_GH],
  ['glp', F_GH],
  ['gld', F_GH],
  ['glr', F_GH],
  ['glc', F_GH | F_SAAS],
  ['glf', F_GH],
  ['gls', F_GH | F_SAAS],
  ['gla', F_GH],
  ['imt', F_GH],
  ['oas', F_GH],
  ['gr0', F_GH],
  ['pm-', F_GH],
  ['hlw', F_GH],
  ['xox', F_SLACK],
  ['xap', F_SLACK],
  ['ks.', F_SLACK],
  ['bho', F_SLACK],
  ['kia', F_AWS],
  ['sia', F_AWS],
  ['bia', F_AWS],
  ['cca', F_AWS],
  ['a0t', F_AWS],
  ['aws', F_PROVIDER_WORD | F_KEY],
  ['dog', F_PROVIDER_WORD],
  ['p-k', F_PROVIDER_WORD],
  ['n-k', F_PROVIDER_WORD],
  ['oku', F_PROVIDER_WORD],
  ['aiz', F_GOOGLE],
  ['?co', F_GOOGLE],
  // `\u0026code`, `%26code`, `%23code`; and `%3Fcode`.
  ['0co', F_GOOGLE],
  ['fco', F_GOOGLE],
  ['eyj', F_JWT],
  // `ZXlK`, base64 of `eyJ`.
  ['zxl', F_JWT],
  ['bea', F_BEARER | F_KEY],
  ['asi', F_BASIC],
  ['pas', F_KEY],
  ['pwd', F_KEY],
  ['ecr', F_KEY],
  ['ede', F_KEY],
  ['tok', F_KEY],
  ['aut', F_KEY],
  ['oki', F_KEY],
  ['ssi', F_KEY],
  ['api', F_KEY],
  ['riv', F_KEY],
  ['cce', F_KEY],
  ['gni', F_KEY],
  ['ypt', F_KEY],
  ['jwt', F_KEY],
  ['otp', F_KEY],
  ['cvv', F_KEY],
  ['cvc', F_KEY],
  ['cco', F_KEY],
  ['gna', F_KEY],
  ['sig', F_KEY],
  ['pw ', F_KEY],
  ['ya0', F_TOKEN_MORE],
  ['spx', F_TOKEN_MORE],
  ['hse', F_TOKEN_MORE],
  ['hf-', F_TOKEN_MORE],
  ['i-o', F_TOKEN_MORE],
  ['sg.', F_TOKEN_MORE],
  ['shp', F_TOKEN_MORE],
  ['v0-', F_TOKEN_MORE],
  ['ey-', F_KEY_DASH],
  ['sq0', F_TOKEN_MORE],
  ['eaa', F_TOKEN_MORE],
  ['hvs', F_CLOUD],
  ['hvb', F_CLOUD],
  ['dp.', F_CLOUD],
  ['rku', F_CLOUD],
  ['psc', F_CLOUD],
  ['0q ', F_CLOUD],
  ['tn-', F_SAAS],
  ['pma', F_SAAS],
  ['ryu', F_SAAS],
  ['tt0', F_SAAS],
  ['plx', F_SAAS],
  ['dap', F_DATABRICKS],
  ['n-a', F_LINEAR],
  ['egr', F_TELEGRAM],
  ['ot0', F_TELEGRAM],
  ['ysq', F_CLI],
  ['-u ', F_CLI],
  ...Array.from('abcdefghijklmnopqrstuvwxyz', (letter) => [`--${letter}`, F_CLI] as const),
];

// ---------------------------------------------------------------------------------------------
// Key names

/** Normalized key names (see {@link normalizeKey}) that mark a secret anywhere inside. */
export const SECRET_KEY_PARTS: readonly string[] = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'apikey',
  'privatekey',
  'credential',
  // Chinese field names: password, pass phrase, secret key (two spellings), token.
  '密码',
  '口令',
  '密钥',
  '秘钥',
  '令牌',
];

/**
 * Normalized key-name endings that mark a secret. Endings rather than substrings, so that
 * `token_count`, `authorized`, `session_timeout` or `cookie_consent` describe a secret without
 * being one, while `github_token`, `basic_auth` and `set-cookie` hold one.
 */
export const SECRET_KEY_SUFFIXES: readonly string[] = [
  'pwd',
  'passcode',
  'token',
  'auth',
  'authorization',
  'cookie',
  'cookies',
  'session',
  'sessionid',
  'sessid',
  'sessionkey',
  'accesskey',
  // Azure storage connection strings (`AccountKey=…`) and presigned URLs' signatures
  // (`X-Amz-Signature=`, `X-Goog-Signature=`): `signature` alone names many things that are not secret.
  'accountkey',
  'amzsignature',
  'googsignature',
  'signingkey',
  'encryptionkey',
  'jwt',
  'otp',
  'bearer',
];

/**
 * Exact normalized names that are secret but too short to match by ending (`bypass`, `spin`):
 * a password, a PIN, a card's verification code. `pin` has no trigram of its own (it sits inside
 * `shipping`, and every order API's JSON text would then pay for a key scan, 3-5 us on 500
 * characters): object keys are always checked, text only when another key name flagged it.
 */
export const SECRET_KEY_EXACT: readonly string[] = ['pass', 'pw', 'pin', 'pincode', 'pinnumber', 'cardpin', 'cvv', 'cvv2', 'cvc', 'cvc2', 'csc', 'securitycode', 'sig'];

/**
 * Key names ending in `token` that are not credentials: usage counters (`max_token`, matched as
 * the whole name so `total_access_token` stays secret) and pagination cursors, which are opaque
 * but useless to an attacker and needed to debug paging.
 */
export const BENIGN_TOKEN_COUNTERS: readonly string[] = [
  'max',
  'min',
  'num',
  'total',
  'prompt',
  'completion',
  'input',
  'output',
  'cached',
  'reasoning',
  'remaining',
];
export const BENIGN_TOKEN_SUFFIXES: readonly string[] = [
  'pagetoken',
  'nexttoken',
  'continuationtoken',
  'synctoken',
  'cursortoken',
  'idempotencytoken',
];

/**
 * Key names that describe a secret without holding it. The rule: a key whose last word (split at
 * `-`, `_`, spaces, dots and camelCase humps) is one of these qualifiers names metadata about the
 * secret, such as when it changed, how long it is, or whether it is set, so its value stays:
 * `password_changed_at`, `secret_count`, `api_key_expires_at`, `password_set`, `passwordPolicy`.
 * So does a key that starts with `has` or `is` (`has_api_key`, `isTokenValid`): it asks a
 * question. A name that is only a secret word (`password`, `pin`, `api_key`) gets no such pass,
 * whatever its value's type; `_name` names it (`secret_name`); `_id` and `_hash` are not qualifiers (a Vault `secret_id`
 * and a password hash are credentials). Booleans and null are never redacted under any key
 * (redact.ts): one bit hides nothing, and `password_reset_required: true` is worth seeing.
 */
export const METADATA_KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  'at',
  'on',
  'count',
  'len',
  'length',
  'size',
  'expiry',
  'expiration',
  'expires',
  'set',
  'present',
  'provided',
  'configured',
  'enabled',
  'disabled',
  'required',
  'policy',
  'type',
  'strength',
  'version',
  'status',
  'name',
  // When it changed and how it is made or kept: `password_last_changed`, `api_key_created`,
  // `token_ttl`, `password_hash_algorithm`, `key_format`.
  'created',
  'updated',
  'changed',
  'modified',
  'rotated',
  'issued',
  'ttl',
  'lifetime',
  'algorithm',
  'algo',
  'format',
  'encoding',
  // A pointer to a stored secret: a Kubernetes `secretKeyRef`, an AWS `secret_arn`, AWS's
  // `credential_source`.
  'ref',
  'arn',
  'source',
  // Where a secret is, not what it is: `credentials.url`, `token_endpoint`, `secret_file`.
  'url',
  'uri',
  'endpoint',
  'host',
  'path',
  'file',
  'dir',
]);
/**
 * First words of names for a value that is not a working credential by its own account: a
 * question (`has_api_key`, `isTokenValid`), or a test fixture's wrong or stand-in value
 * (`invalidToken`, `fakeApiKey`, `nonMatchingToken`, `mockSecret`, `examplePassword`).
 */
export const METADATA_KEY_PREFIXES: ReadonlySet<string> = new Set(['has', 'is', 'invalid', 'fake', 'dummy', 'mock', 'example', 'sample', 'non', 'wrong', 'bogus']);

const KEY_WORD_BREAK = /[-_\s.]+|(?<=[a-z0-9])(?=[A-Z])/;
const KEY_PREPOSITIONS: ReadonlySet<string> = new Set(['to', 'for', 'of', 'from', 'in', 'into', 'with', 'by']);
/** Where secrets are kept, as the head of a phrase (`keyVaultToStoreSecrets`). */
const SECRET_PLACES: ReadonlySet<string> = new Set(['vault', 'store', 'storage', 'manager', 'location', 'folder', 'directory', 'bucket']);

/** Whether a key names metadata about a secret (see {@link METADATA_KEY_QUALIFIERS}). */
export function isSecretMetadataKey(raw: string): boolean {
  const words = keyWords(raw);
  if (words.length < 2) return false;
  const last = words[words.length - 1]!.toLowerCase();
  if (METADATA_KEY_QUALIFIERS.has(last) || METADATA_KEY_PREFIXES.has(words[0]!.toLowerCase())) return true;
  // A phrase whose head, the word before its preposition, names metadata or a place names that:
  // `pathToPrivateKey` is a path, `keyVaultToStoreSecrets` a vault. Any other head may be a verb
  // (`BindToParentToken` holds a token) or the secret itself (`passwordForAdmin`).
  const preposition = words.findIndex((word, i) => i > 0 && i < words.length - 1 && KEY_PREPOSITIONS.has(word.toLowerCase()));
  if (preposition > 0) {
    const head = words[preposition - 1]!.toLowerCase();
    if (METADATA_KEY_QUALIFIERS.has(head) || SECRET_PLACES.has(head)) return true;
  }
  // `user_secrets_id`, `client_secret_id`: the id of a stored secret. A secret word and `id` alone
  // (Vault's `secret_id`) is the credential, and a session's id is its cookie.
  return last === 'id' && words.length >= 3 && !/^sess(?:ion)?$/i.test(words[words.length - 2]!);
}

function keyWords(raw: string): string[] {
  return raw.split(KEY_WORD_BREAK).filter((word) => word !== '');
}


/**
 * `session_id` is how the runtime groups calls in `context_snapshot`, so these spellings are a
 * trace key and stay. `sessionid` written as one lowercase word (Django's cookie), `PHPSESSID`,
 * `JSESSIONID` and `session_token` are the cookie-style secret and are redacted.
 */
const TRACE_SESSION_KEY = /^session[-_]id$/i;
const TRACE_SESSION_CAMEL = /^sessionI[dD]$/;

/** Lowercase and drop `-`, `_` and spaces: `X-Api-Key`, `x_api_key`, `xApiKey` and `API Key` compare equal. */
export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_\s]/g, '');
}

/**
 * Names with a secret word that hold no secret: an id that names a stored credential (Jenkins'
 * `credentialsId`), a token meant to be public (`publicToken`, `public_key` is no key part either),
 * an anti-forgery token, which a page prints for every visitor.
 */
const NOT_SECRET_KEY = /(?:credentials?id|withcredentials|credentialsfile|credentialspath|credentialstype|publictoken|csrftoken|xsrftoken|csrfmiddlewaretoken|anticsrftoken|authenticitytoken|tokenizer|tokenendpoint|tokenurl|tokenuri|passwordfield|passwordinput)$/;

const LAST_WORD_PASS = /(?:[-_\s.]|[a-z0-9])(?:pass|PASS)$|[a-z0-9]Pass$/;

/** Whether a key name, by the built-in list alone, holds a secret. */
export function isBuiltinSecretKey(raw: string, normalized: string): boolean {
  if (isSecretMetadataKey(raw)) return false;
  // `token2`, `api_key_1`, `password01`: a numbered copy of a secret name is one too.
  if (normalized.length > 3 && normalized.charCodeAt(normalized.length - 1) <= 57 && normalized.charCodeAt(normalized.length - 1) >= 48) {
    const stem = normalized.replace(/[0-9]+$/, '');
    if (stem.length >= 2 && stem !== normalized) return isBuiltinSecretKey(raw.replace(/[-_.\s]*[0-9]+$/, ''), stem);
  }
  if (NOT_SECRET_KEY.test(normalized)) return false;
  // `smtp_pass`, `dbPass`, `MYSQL_PASS`: `pass` as the last word of a longer name (not `bypass`).
  if (normalized.endsWith('pass') && normalized.length > 4 && LAST_WORD_PASS.test(raw)) return true;
  for (const part of SECRET_KEY_PARTS) if (normalized.includes(part)) return true;
  if (SECRET_KEY_EXACT.includes(normalized)) return true;
  for (const suffix of SECRET_KEY_SUFFIXES) {
    if (!normalized.endsWith(suffix)) continue;
    if (suffix === 'token') {
      for (const counter of BENIGN_TOKEN_COUNTERS) if (normalized === `${counter}token`) return false;
      for (const cursor of BENIGN_TOKEN_SUFFIXES) if (normalized.endsWith(cursor)) return false;
    }
    if (suffix === 'sessionid') {
      const last = raw.slice(raw.lastIndexOf('.') + 1);
      if (TRACE_SESSION_KEY.test(last) || TRACE_SESSION_CAMEL.test(last)) return false;
    }
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Validators

/** Luhn (mod 10) over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * A payment card: 13-19 digits, Luhn-valid, and an issuer prefix that exists (2221-2720, 3-6).
 * The prefix check is what keeps epoch-millisecond timestamps (starting with 1) and compact dates
 * (20240101…) out, which pass Luhn one time in ten.
 */
export function isCardNumber(match: string): boolean {
  const digits = match.replace(/[ -]/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  const first = digits.charCodeAt(0) - 48;
  if (first === 2) {
    const iin = Number(digits.slice(0, 4));
    if (iin < 2221 || iin > 2720) return false;
  } else if (first < 3 || first > 6) {
    return false;
  }
  return luhnValid(digits);
}

const ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2] as const;
const ID_CHECK = '10X98765432';

/** A mainland China resident ID number with a valid GB 11643 check character. */
export function isCnResidentId(match: string): boolean {
  if (match.length !== 18) return false;
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (match.charCodeAt(i) - 48) * ID_WEIGHTS[i]!;
  return ID_CHECK[sum % 11] === match[17]!.toUpperCase();
}

/**
 * Random-looking enough to be a credential: has a digit and two character classes, or is long and
 * mixed-case. Keeps `Bearer authentication` and `sk-learn-compatible` out.
 */
export function looksRandom(token: string): boolean {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
  }
  if (digit === 1 && lower + upper >= 1) return true;
  return token.length >= 20 && lower + upper === 2;
}

/** The prefix of a {@link F_LONG_TOKEN} match: its lowercase words and the separator after them. */
const TOKEN_PREFIX = /^[a-z][a-z0-9]{1,9}(?:[_-][a-z0-9]{1,9}){0,2}[_-]/;
function tokenPrefixLength(match: string): number {
  return TOKEN_PREFIX.exec(match)![0].length;
}

/** Capitalised or lowercase words and numbers, nothing else: an identifier, not random characters. */
const WORDS = /^(?:[A-Z]?[a-z]{2,16}(?![a-z])|[A-Z]+(?![a-z])|\d+)+$/;
/** Hex digits only, in either case: a digest or an id (`resp_67cc…`), or a format with a rule of its own. */
const HEX_ONLY = /^[0-9A-Fa-f]+$/;
/** A digest named by its algorithm (`sha512-…`, an npm integrity). */
const DIGEST_PREFIX = /^(?:sha\d*|md5|blake\d*[a-z]?|xxh\d*|crc\d*)[_-]/i;

/**
 * Whether the part of a prefixed token after its prefix is random enough to be the secret: 32
 * or more letters and digits with upper case, lower case and a digit (a random base-62 string of
 * that length lacks one in under 1% of cases), not hex alone, and not made of words.
 */
function isRandomTokenBody(body: string): boolean {
  const chars = body.replace(/[_-]/g, '');
  if (chars.length < 32 || !/[a-z]/.test(chars) || !/[A-Z]/.test(chars) || !/\d/.test(chars) || HEX_ONLY.test(chars)) return false;
  return !body.split(/[_-]/).every((part) => part === '' || WORDS.test(part));
}

/**
 * After `Bearer`, a shorter token counts too: random-looking, or 12+ characters with at least
 * three capitals among lower case (`AbCdEfGhIjKl`), which a CamelCase word rarely has.
 */
function looksBearerCredential(token: string): boolean {
  if (looksRandom(token)) return true;
  if (token.length < 12) return false;
  let upper = 0;
  let lower = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 65 && c <= 90) upper++;
    else if (c >= 97 && c <= 122) lower++;
  }
  return upper >= 3 && lower >= 3;
}

/**
 * The value of a URL's `code` parameter that is a credential (an OAuth authorization code, a
 * one-time code), not a status, currency, language or a plain word (`404`, `EUR`, `zh-Hans`).
 */
function isQueryCode(value: string): boolean {
  return value.length >= 6 && (/\d/.test(value) || looksBearerCredential(value));
}

/** `code=`, `code%3D` or `code%253D`, the end of which is where an `oauth-code` match's value starts. */
const QUERY_CODE_NAME = /code(?:=|%(?:25)?3D)/i;
const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g;

function queryCodeValueStart(match: string): number {
  const name = QUERY_CODE_NAME.exec(match)!;
  return name.index + name[0].length;
}

/**
 * The value judged as the browser would send it: `4%2F0AX4Xf…` is the code `4/0AX4Xf…`, and so,
 * decoded twice, is `4%252F0AX4Xf…`.
 */
function queryCodeValue(match: string): string {
  let value = match.slice(queryCodeValueStart(match));
  for (let pass = 0; pass < 2 && value.includes('%'); pass++) {
    value = value.replace(PERCENT_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return value;
}

/** A JWT's first characters: a header long enough to be one (it may run past the 72 decoded). */
const JWT_START = /^eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]{4}|[A-Za-z0-9_-]{30})/;

/** `Basic` credentials are base64 of `user:password`. */
function isBasicCredential(match: string): boolean {
  const token = match.slice(match.search(/\s/) + 1).trim();
  if (token.length % 4 !== 0) return false;
  const decoded = Buffer.from(token, 'base64').toString('latin1');
  if (!decoded.includes(':')) return false;
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i);
    if (c < 32 || c > 126) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Masks

const ELLIPSIS = '…';

function keepPrefix(prefix: RegExp): (match: string) => string {
  return (match) => {
    const m = prefix.exec(match);
    return `${m === null ? '' : m[0]}${ELLIPSIS}${REDACTED}`;
  };
}

const CURL_USER_FLAG = /[ \t](?:-u|--user)(?:=|[ \t]+)(?=[^ \t])/g;

/** See the `curl-user-password` rule: the credential after the last `-u` of the match, half masked. */
function maskCurlUser(match: string): string {
  let at = -1;
  for (const m of match.matchAll(CURL_USER_FLAG)) at = m.index + m[0].length;
  if (at < 0) return match;
  const credential = match.slice(at);
  let user: string;
  let password: string;
  let render: (user: string, password: string) => string;
  const whole = /^(["'])([^"'\n]*)\1$/.exec(credential);
  if (whole !== null && whole[2]!.includes(':')) {
    const q = whole[1]!;
    const colon = whole[2]!.indexOf(':');
    user = whole[2]!.slice(0, colon);
    password = whole[2]!.slice(colon + 1);
    render = (u, p) => `${q}${u}:${p}${q}`;
  } else {
    const m = /^("[^"\n]*"|'[^'\n]*'|[^\s"':]*):("[^"\n]*"|'[^'\n]*'|\S*)$/.exec(credential);
    if (m === null) return match;
    const quoteOf = (part: string) => (part.startsWith('"') || part.startsWith("'") ? part[0]! : '');
    const [qu, qp] = [quoteOf(m[1]!), quoteOf(m[2]!)];
    user = qu === '' ? m[1]! : m[1]!.slice(1, -1);
    password = qp === '' ? m[2]! : m[2]!.slice(1, -1);
    render = (u, p) => `${qu}${u}${qu}:${qp}${p}${qp}`;
  }
  const braced = (part: string) => part.replace(/^\{([\s\S]*)\}$/, '$1');
  if (password !== '') {
    if (isPlaceholder(braced(password)) || isPlaceholder(`${user}:${password}`)) return match;
    return match.slice(0, at) + render(user, REDACTED);
  }
  // `-u sk_live_…:`: an API key sent as the user, with no password.
  if (user === '' || isPlaceholder(braced(user)) || !looksRandom(user)) return match;
  return match.slice(0, at) + render(REDACTED, '');
}

/** Full-width ASCII variants (`０`-`９`, `Ｘ`, `－`, `＋`) and the ideographic space, as ASCII. */
function toHalfWidth(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += c >= 0xff01 && c <= 0xff5e ? String.fromCharCode(c - 0xfee0) : c === 0x3000 ? ' ' : s[i]!;
  }
  return out;
}

/** The ID, card and mobile rules (those that need {@link F_DIGITS}) applied to `s`. */
function maskDigitRuns(s: string): string {
  let out = s;
  for (const rule of BUILTIN_RULES) {
    if (rule.needs !== F_DIGITS) continue;
    const { validate, mask } = rule;
    out = out.replace(rule.pattern, (match) => (validate === undefined || validate(match) ? mask(match) : match));
  }
  return out;
}

function maskPhone(match: string): string {
  const digits = match.replace(/[^\d+]/g, '');
  const local = digits.slice(-11);
  const country = digits.length > 11 ? `${digits.slice(0, digits.length - 11)} ` : '';
  return `${country}${local.slice(0, 3)}****${local.slice(7)}`;
}

// ---------------------------------------------------------------------------------------------
// Value rules, in the order they run. Earlier rules consume text later ones would mis-read:
// `Bearer eyJ…` is an auth header before it is a JWT; a card number is masked before the phone
// rule could see eleven of its digits.

/** The email rule's pattern from its local part on, without the lookbehinds (see replaceEmails). */
const EMAIL_FROM_START = /[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-]|\.[A-Za-z0-9-]|:[\w~/.-])/y;

function isLocalPartChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
}

/**
 * The email rule, found from each `@`: V8 tries the rule's regex at the start of every word, which
 * made it a fifth of the cost of a 1.5 KB manifest with one `@` (an image digest). Each `@` is
 * walked back to the start of its run of local-part characters, where the regex's lookbehinds
 * would let it start, and the rest of the regex runs sticky from there; so the matches are the
 * regex's own.
 */
/**
 * Whether a run of local-part characters starting at `start` is a URL's user info rather than an
 * address: right after `//` (`ssh://git@github.com`), or after the user and `:` there
 * (`https://YOUR_USERNAME:YOUR_PASSWORD@api…`, a password the URL rule kept as a stand-in, or
 * GitHub's `https://<token>:x-oauth-basic@github.com` once the token is masked).
 */
function afterUrlScheme(s: string, start: number): boolean {
  let i = start;
  if (i >= 1 && s.charCodeAt(i - 1) === 58) {
    i--;
    while (i > 0 && i > start - 130 && isUserInfoChar(s.charCodeAt(i - 1))) i--;
  }
  return i >= 2 && s.charCodeAt(i - 1) === 47 && s.charCodeAt(i - 2) === 47;
}

/** A character of a URL's user info as the email rule's lookbehind reads it (a mask's brackets too). */
function isUserInfoChar(c: number): boolean {
  return !(c <= 32 || c === 47 || c === 34 || c === 39 || c === 60 || c === 62 || c === 64);
}

function replaceEmails(s: string, replacer: (match: string) => string): string {
  let out = '';
  let last = 0;
  let at = s.indexOf('@');
  while (at !== -1) {
    let start = at;
    while (start > last && at - start <= 64 && isLocalPartChar(s.charCodeAt(start - 1))) start--;
    const runStarts = start === 0 || !isLocalPartChar(s.charCodeAt(start - 1));
    if (start < at && at - start <= 64 && runStarts && !afterUrlScheme(s, start)) {
      EMAIL_FROM_START.lastIndex = start;
      const m = EMAIL_FROM_START.exec(s);
      if (m !== null) {
        out += s.slice(last, start) + replacer(m[0]);
        last = start + m[0].length;
        at = s.indexOf('@', last);
        continue;
      }
    }
    at = s.indexOf('@', at + 1);
  }
  return last === 0 ? s : out + s.slice(last);
}

/**
 * A private key block with no key in it: nothing or one word between BEGIN and END, or, with an
 * END line, a stand-in (`***`, `...`). Without an END line the block may be a real key cut short.
 */
export function isPrivateKeyStandIn(block: string): boolean {
  const body = block
    .replace(/-----(?:BEGIN|END)[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g, '')
    .replace(/\\[nr]/g, '')
    .replace(/\s+/g, '');
  if (body.length === 0 || LOWERCASE_WORD.test(body)) return true;
  const ended = /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:\\n|\s)*$/.test(block);
  return ended && isStandInShape(body);
}

/** The built-in value rules, applied before any user rules. */
export const BUILTIN_RULES: readonly BuiltinRule[] = [
  {
    id: 'private-key',
    needs: F_PEM,
    // A record may be truncated mid-key, so a block without its END line runs to the end of the
    // string it sits in (a JSON string ends at the first unescaped quote), unless it is already a mask.
    pattern:
      /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|(?!…)[^"]*)/g,
    mask: (match) => {
      const begin = /^-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/.exec(match)![0];
      const end = /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----$/.exec(match);
      return `${begin}${ELLIPSIS}${REDACTED}${end === null ? '' : end[0]}`;
    },
    // A block with no key material in it (`anything`, nothing between BEGIN and END): an example.
    validate: (match) => !isPrivateKeyStandIn(match),
  },
  {
    id: 'url-credentials',
    needs: F_AT,
    // The password runs to the last `@` before the path, so an unescaped `@` inside it is covered.
    pattern: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,19}:\/\/[^\s:@/?#"'<>\\]*:[^\s/?#"'<>\\]+@/g,
    contains: '://',
    // A template or stand-in (`${password}`, `{{pass}}`, `$(PGPASSWORD)`, `YOUR_PASSWORD`, `xxxx`)
    // shows where the password goes; a plain word (`user:password@`) may be the real one.
    // GitHub's token-as-user form (`https://<token>:x-oauth-basic@github.com`) has the secret first.
    validate: (match) => !isStandInShape(urlPassword(match)),
    mask: (match) => {
      const user = match.indexOf('://') + 3;
      const colon = match.indexOf(':', user);
      if (match.slice(colon + 1, -1) === 'x-oauth-basic') return `${match.slice(0, user)}${REDACTED}${match.slice(colon)}`;
      return `${match.slice(0, colon + 1)}${REDACTED}@`;
    },
  },
  {
    id: 'bearer-token',
    needs: F_BEARER,
    pattern: /\bBearer[ \t]+[A-Za-z0-9._~+/-]{8,}=*/gi,
    validate: (match) => looksBearerCredential(match.slice(6).trim()),
    mask: (match) => `${match.slice(0, 6)} ${REDACTED}`,
  },
  {
    id: 'basic-auth',
    needs: F_BASIC,
    pattern: /\bBasic[ \t]+[A-Za-z0-9+/]{6,}={0,2}(?![A-Za-z0-9+/=])/gi,
    validate: isBasicCredential,
    mask: (match) => `${match.slice(0, 5)} ${REDACTED}`,
  },
  {
    id: 'jwt',
    needs: F_JWT,
    // After any non-alphanumeric character, `_` included: GitHub's app installation tokens put one
    // after `ghs_<id>_`, where `\b` sees no word boundary.
    pattern: /(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
    mask: () => `eyJ${ELLIPSIS}${REDACTED}`,
  },
  {
    id: 'jwt-base64',
    needs: F_JWT,
    // A JWT base64-encoded once more (a Kubernetes secret, a config blob): `eyJ` encodes to `ZXlK`.
    // Only when the decoded text is a JWT's first two parts.
    pattern: /\bZXlK[A-Za-z0-9+/_-]{40,}={0,2}/g,
    validate: (match) => JWT_START.test(Buffer.from(match.slice(0, 96), 'base64').toString('latin1')) && match.length >= 60,
    mask: () => `ZXlK${ELLIPSIS}${REDACTED}`,
  },
  {
    id: 'anthropic-api-key',
    needs: F_SK,
    // `sk-ant-api03-`, 93 characters, `AA`: a much shorter run, or one that ends otherwise, is not one.
    pattern: /\bsk-ant-(?:[a-z]+\d\d-)?[A-Za-z0-9_-]{80,}AA(?![A-Za-z0-9_-])/g,
    mask: keepPrefix(/^sk-ant-(?:[a-z]+\d\d-)?/),
  },
  {
    id: 'openai-api-key',
    needs: F_SK,
    pattern: /\bsk-(?!ant-)[A-Za-z0-9_-]{20,}/g,
    validate: (match) => match.includes('T3BlbkFJ') || looksRandom(match.slice(3)),
    mask: keepPrefix(/^sk-(?:(?:proj|svcacct|admin|None)-)?/),
  },
  {
    id: 'stripe-key',
    needs: F_SK,
    pattern: /\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}/g,
    mask: keepPrefix(/^[sr]k_[a-z]+_/),
  },
  {
    id: 'github-token',
    needs: F_GH,
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
    mask: keepPrefix(/^(?:gh[pousr]_|github_pat_)/),
  },
  {
    id: 'gitlab-token',
    needs: F_GH,
    // Personal, deploy, runner, pipeline trigger, CI job, feed, incoming mail, feature flag, OAuth
    // application, SCIM and agent tokens, and the runner registration token. A routable token
    // (GitLab 17.x) ends in `.` and nine characters of version and checksum, masked with it.
    pattern: /\b(?:gl(?:pat|dt|rt|ptt|cbt|ft|imt|ffct|oas|soat|agent)-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{9}\b)?|GR1348941[A-Za-z0-9_-]{20,})/g,
    mask: keepPrefix(/^(?:gl[a-z]+-|GR1348941)/),
  },
  {
    id: 'npm-token',
    needs: F_GH,
    pattern: /\bnpm_[A-Za-z0-9]{36,}/g,
    mask: keepPrefix(/^npm_/),
  },
  {
    id: 'pypi-token',
    needs: F_GH,
    // A macaroon whose first bytes always encode `pypi.org`.
    pattern: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/g,
    mask: keepPrefix(/^pypi-/),
  },
  {
    id: 'slack-token',
    needs: F_SLACK,
    // Every Slack token type numbers its first part (a team or user id, or a version) and runs
    // past twenty characters after it: `xoxb-12345-abcd`, `xoxo-indieweb` in a file name, and
    // `xoxp-1234567890` with nothing after the id are not tokens.
    // The older tokens are two long numbers alone (`xoxa-23984754863-2348975623111`).
    pattern: /\b(?:xox[abeoprs]-\d+-[A-Za-z0-9-]{20,}|xox[abeoprs]-\d{8,}-\d{8,}(?![A-Za-z0-9])|xapp-\d-[A-Za-z0-9-]{10,})/g,
    mask: keepPrefix(/^x[a-z]{3}-/),
  },
  {
    id: 'slack-webhook',
    needs: F_SLACK,
    pattern: /(?:https?:\/\/)?hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/_-]{10,}/g,
    mask: keepPrefix(/^.*?hooks\.slack\.com\/[a-z]+\//),
  },
  {
    id: 'aws-access-key-id',
    needs: F_AWS,
    pattern: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/g,
    mask: keepPrefix(/^[A-Z0-9]{4}/),
  },
  {
    id: 'aws-secret-access-key',
    needs: F_PROVIDER_WORD,
    // gitleaks' approach for secrets with no prefix of their own: a keyword, an assignment, then
    // the 40-character value. The keyword and assignment are kept so the mask still says what it was.
    pattern:
      /(?<![A-Za-z0-9])aws[\w .-]{0,40}?["']?[ \t]*(?:=>|[:=,])[ \t]*["']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi,
    validate: (match) => {
      const secret = match.slice(-40);
      return /[a-z]/.test(secret) && /[A-Z]/.test(secret) && /\d/.test(secret);
    },
    mask: (match) => `${match.slice(0, -40)}${REDACTED}`,
  },
  {
    id: 'google-api-key',
    needs: F_GOOGLE,
    pattern: /\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g,
    mask: keepPrefix(/^AIza/),
  },
  {
    id: 'google-oauth-token',
    needs: F_TOKEN_MORE,
    pattern: /\bya29\.[A-Za-z0-9_-]{20,}/g,
    mask: keepPrefix(/^ya29\./),
  },
  {
    id: 'google-oauth-client-secret',
    needs: F_TOKEN_MORE,
    pattern: /\bGOCSPX-[A-Za-z0-9_-]{20,}/g,
    mask: keepPrefix(/^GOCSPX-/),
  },
  {
    id: 'stripe-webhook-secret',
    needs: F_TOKEN_MORE,
    pattern: /\bwhsec_[A-Za-z0-9+/]{24,}={0,2}/g,
    mask: keepPrefix(/^whsec_/),
  },
  {
    id: 'huggingface-token',
    needs: F_TOKEN_MORE,
    // User access tokens and organization API tokens.
    pattern: /\b(?:hf|api_org)_[A-Za-z]{34}(?![A-Za-z0-9])/g,
    mask: keepPrefix(/^(?:hf|api_org)_/),
  },
  {
    id: 'age-secret-key',
    needs: F_KEY_DASH,
    pattern: /\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58,}/g,
    mask: keepPrefix(/^AGE-SECRET-KEY-1/),
  },
  {
    id: 'sendgrid-api-key',
    needs: F_TOKEN_MORE,
    // Found glued to other text too (`somSG.…`): no other word ends in `SG.` and 22 characters.
    pattern: /SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}/g,
    mask: keepPrefix(/^SG\./),
  },
  {
    id: 'shopify-token',
    needs: F_TOKEN_MORE,
    pattern: /\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])/g,
    mask: keepPrefix(/^shp[a-z]{2}_/),
  },
  {
    id: 'digitalocean-token',
    needs: F_TOKEN_MORE,
    pattern: /\bdo[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])/g,
    mask: keepPrefix(/^do[opr]_v1_/),
  },
  {
    id: 'mailgun-api-key',
    needs: F_KEY_DASH,
    // gitleaks wants the word `mailgun` nearby; 32 hex digits after `key-` are specific enough alone.
    pattern: /\bkey-[a-f0-9]{32}(?![A-Za-z0-9])/g,
    validate: (match) => looksRandom(match.slice(4)),
    mask: keepPrefix(/^key-/),
  },
  {
    id: 'square-token',
    needs: F_TOKEN_MORE,
    pattern: /\b(?:sq0atp-[A-Za-z0-9_-]{22,}|sq0csp-[A-Za-z0-9_-]{40,}|EAAA[A-Za-z0-9_-]{40,})/g,
    validate: (match) => looksRandom(match.slice(7)),
    mask: keepPrefix(/^(?:sq0[a-z]{3}-|EAAA)/),
  },
  {
    id: 'vault-token',
    needs: F_CLOUD,
    // HashiCorp Vault service and batch tokens (the legacy `s.` form is too plain to tell from text).
    pattern: /\bhv[sb]\.[A-Za-z0-9_-]{90,}/g,
    mask: keepPrefix(/^hv[sb]\./),
  },
  {
    id: 'doppler-token',
    needs: F_CLOUD,
    // Personal, service (`dp.st.prd.…`, with its environment), CLI, service account, SCIM and audit tokens.
    pattern: /\bdp\.(?:pt|st|ct|sa|scim|audit)\.(?:[A-Za-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}/g,
    mask: keepPrefix(/^dp\.[a-z]+\./),
  },
  {
    id: 'heroku-api-key',
    needs: F_CLOUD | F_PROVIDER_WORD,
    // The prefixed key; and gitleaks' older form, a UUID assigned under a name with `heroku` in it.
    pattern:
      /\bHRKU-AA[A-Za-z0-9_-]{58,}|(?<![A-Za-z0-9])heroku[\w .-]{0,40}?["']?[ \t]*(?:=>|[:=,])[ \t]*["']?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![A-Za-z0-9-])/gi,
    validate: (match) => match.startsWith('HRKU-AA') || !/^HRKU-/i.test(match),
    mask: (match) => (match.startsWith('HRKU-') ? `HRKU-${ELLIPSIS}${REDACTED}` : `${match.slice(0, -36)}${REDACTED}`),
  },
  {
    id: 'planetscale-token',
    needs: F_CLOUD,
    pattern: /\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,}/g,
    mask: keepPrefix(/^pscale_[a-z]+_/),
  },
  {
    id: 'databricks-token',
    needs: F_DATABRICKS,
    pattern: /\bdapi[a-fA-F0-9]{32}(?:-\d)?(?![A-Za-z0-9])/g,
    validate: (match) => looksRandom(match.slice(4, 36)),
    mask: keepPrefix(/^dapi/),
  },
  {
    id: 'azure-ad-client-secret',
    needs: F_CLOUD,
    // Three characters and a digit, `Q~`, then 31-34 more. The search starts at `Q~` and looks
    // back, which is many times faster than trying a start at every character. What comes before
    // `Q~` stays: its first three characters are the hint the Azure portal itself shows.
    pattern: /Q~(?<=(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~)[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
    mask: () => `Q~${ELLIPSIS}${REDACTED}`,
  },
  {
    id: 'linear-api-key',
    needs: F_LINEAR,
    pattern: /\blin_api_[A-Za-z0-9]{40,}/g,
    mask: keepPrefix(/^lin_api_/),
  },
  {
    id: 'notion-token',
    needs: F_SAAS,
    pattern: /\bntn_\d{11}[A-Za-z0-9]{30,}/g,
    mask: keepPrefix(/^ntn_/),
  },
  {
    id: 'postman-api-key',
    needs: F_SAAS,
    pattern: /\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{30,}(?![A-Za-z0-9])/g,
    mask: keepPrefix(/^PMAK-/),
  },
  {
    id: 'atlassian-api-token',
    needs: F_SAAS,
    pattern: /\bATATT3[A-Za-z0-9_=-]{150,}/g,
    mask: keepPrefix(/^ATATT3/),
  },
  {
    id: 'perplexity-api-key',
    needs: F_SAAS,
    pattern: /\bpplx-[A-Za-z0-9]{48,}/g,
    mask: keepPrefix(/^pplx-/),
  },
  {
    id: 'sentry-token',
    needs: F_SAAS | F_JWT,
    // User auth tokens (`sntryu_` and 64 hex digits) and organization tokens (`sntrys_`, base64
    // JSON, `_` and the 43-character secret).
    pattern: /\bsntry(?:u_[a-f0-9]{64}(?![A-Za-z0-9])|s_eyJ[A-Za-z0-9+/=]{56,}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/]))/g,
    mask: keepPrefix(/^sntry[su]_/),
  },
  {
    id: 'grafana-token',
    needs: F_SAAS | F_JWT,
    // Service account tokens, Cloud access policy tokens and the older API keys (base64 of `{"k":"`).
    pattern: /\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9])|glc_[A-Za-z0-9+/]{32,}={0,2}|eyJrIjoi[A-Za-z0-9]{60,}={0,2})/g,
    mask: keepPrefix(/^(?:glsa_|glc_|eyJrIjoi)/),
  },
  {
    id: 'onepassword-service-account-token',
    needs: F_JWT,
    pattern: /\bops_eyJ[A-Za-z0-9+/]{200,}={0,3}/g,
    mask: keepPrefix(/^ops_/),
  },
  {
    id: 'datadog-api-key',
    needs: F_PROVIDER_WORD,
    // Datadog keys have no prefix: an application key is 40 characters assigned under a name with
    // `datadog`, `DD_APP_KEY` or `DD_APPLICATION_KEY` in it. An API key is a key rule (`DD_API_KEY`,
    // `datadog_api_key`); 32 hex digits beside the word alone may be a trace id. The name and
    // assignment are kept.
    pattern: /(?<![A-Za-z0-9])(?:datadog|dd[_-]app(?:lication)?[_-]key)[\w .-]{0,40}?["']?[ \t]*(?:=>|[:=,])[ \t]*["']?[A-Za-z0-9]{40}(?![A-Za-z0-9])/gi,
    validate: (match) => looksRandom(match.slice(-40)),
    mask: (match) => `${match.slice(0, -40)}${REDACTED}`,
  },
  {
    id: 'telegram-bot-token',
    needs: F_TELEGRAM,
    // `123456789:AA…`, looked for only in text that says telegram or has a Bot API URL's `/bot123…`
    // (`https://api.telegram.org/bot…/sendMessage`), as gitleaks asks for the word; `TELEGRAM_BOT_TOKEN=`
    // and `"bot_token":` are key rules. The bot's numeric id is its public user id and stays.
    // An id glued to letters (`clm08764:AgencyIdentificationCode…`, an XML type name) is no bot id,
    // except after the Bot API's `/bot`.
    // The part after the colon is 35 characters, `A` first; a longer run is some other word.
    pattern: /(?:(?<=\/bot)|(?<![A-Za-z0-9_]))[0-9]{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])/g,
    validate: (match) => looksRandom(match.slice(match.indexOf(':') + 1)),
    mask: (match) => `${match.slice(0, match.indexOf(':') + 1)}${REDACTED}`,
  },
  {
    id: 'docker-token',
    needs: F_LONG_TOKEN,
    // Docker Hub personal and organization access tokens: 27 characters, shorter than the
    // prefixed-token rule's 32.
    pattern: /\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27}(?![A-Za-z0-9_-])/g,
    validate: (match) => looksRandom(match.slice(9)),
    mask: keepPrefix(/^dckr_[a-z]+_/),
  },
  {
    id: 'tailscale-key',
    needs: F_LONG_TOKEN,
    // `tskey-auth-`, `-api-`, `-client-`, `-scim-`, `-webhook-` and kinds still to come: an id,
    // `-`, and the secret.
    pattern: /\btskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}(?![A-Za-z0-9_-])/g,
    mask: keepPrefix(/^tskey-[a-z]+-/),
  },
  {
    id: 'prefixed-token',
    needs: F_LONG_TOKEN,
    // The convention most providers now follow for their credentials, so it also covers formats
    // with no rule of their own: a short lowercase prefix naming the issuer and kind (`gsk_`,
    // `vcp_`, `cfat_`, `lin_api_`), then 32 or more random characters. Ids that share
    // the shape are shorter (Stripe's `cus_…` and `evt_…`, OpenAI's `call_…`, Anthropic's
    // `toolu_…`: 24) or hex (`resp_67cc…`), and a body of words is code (`get_UserProfile…`).
    pattern: /(?<![A-Za-z0-9_.+-])[a-z][a-z0-9]{1,9}(?:[_-][a-z0-9]{1,9}){0,2}[_-][A-Za-z0-9][A-Za-z0-9_-]{31,}(?![A-Za-z0-9_+/=-]|\.[A-Za-z0-9])/g,
    validate: (match) => !DIGEST_PREFIX.test(match) && isRandomTokenBody(match.slice(tokenPrefixLength(match))),
    mask: (match) => `${match.slice(0, tokenPrefixLength(match))}${ELLIPSIS}${REDACTED}`,
  },
  {
    id: 'oauth-code',
    needs: F_GOOGLE,
    // The authorization code in a redirect URL (`/callback?code=…&state=…`, `#code=` in fragment
    // mode): only right after `?`, `&` or `#`, so `error code=404` in prose stays. The same URL
    // escaped: in an HTML attribute (`&amp;`, `&#38;`, `&#x26;`), in JSON from Go (`\u0026`), or
    // percent-encoded inside another URL's parameter (`redirect_uri=…%3Fcode%3D4%2F0AX…`), or twice
    // when that URL is itself a parameter (`next=…%253Fcode%253D4%252F0AX…`), where the value
    // runs to the encoded form of a delimiter the plain value stops at. The match starts
    // at the delimiter's last character and the whole delimiter is looked behind at only after
    // `code=`: a leading alternation, or a lookbehind tried at every position, searches a page
    // of `&copy;` and `#content` two to ten times slower. Six characters at least, as
    // isQueryCode asks, so `code=404` and `code=EUR` fail in the search rather than in a call.
    pattern:
      /[?&#;36f]code(?:=|%(?:25)?3D)(?<=(?:[?&#]|&(?:amp|#0*38|#x0*26);|\\u0026|%(?:25)?(?:3F|26|23))code(?:=|%(?:25)?3D))(?:[^\s&#"'<>\\%]|%(?!(?:25)?(?:2[02367]|3[CE]|5C))){6,}/gi,
    validate: (match) => isQueryCode(queryCodeValue(match)),
    mask: (match) => `${match.slice(0, queryCodeValueStart(match))}${REDACTED}`,
  },
  {
    id: 'twilio-api-key',
    needs: F_SK,
    pattern: /\bSK[0-9a-fA-F]{32}(?![A-Za-z0-9])/g,
    validate: (match) => looksRandom(match.slice(2)),
    mask: keepPrefix(/^SK/),
  },
  {
    id: 'twilio-auth-token',
    needs: F_HEX_RUN,
    // An auth token is 32 hex digits with no prefix of its own; next to its account SID (`AC` and
    // 32 hex digits) it is one: `Client("AC…", "…")`, `AC…:…`. The SID is kept: it names the
    // account in every API path and is no secret alone. `TWILIO_AUTH_TOKEN=`, `auth_token`,
    // `curl -u AC…:…` and `https://AC…:…@` are key, command-line and URL rules.
    pattern: /\bAC[0-9a-fA-F]{32}(?:\\?["'])?[ \t]*[:,][ \t]*(?:\\?["'])?[0-9a-fA-F]{32}(?![A-Za-z0-9])/g,
    mask: (match) => `${match.slice(0, -32)}${REDACTED}`,
  },
  {
    id: 'discord-webhook',
    needs: F_SLACK,
    pattern: /(?:https?:\/\/)?(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d{5,30}\/[A-Za-z0-9_-]{20,}/g,
    mask: keepPrefix(/^.*?\/api\/webhooks\//),
  },
  {
    id: 'mysql-password-flag',
    needs: F_CLI,
    // `mysql -pS3cret`: the password is glued to `-p` (a space after it would prompt instead, and
    // `-P` is the port). Everything up to `-p` is kept.
    pattern: /\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlpump|mysqlsh)\b[^\n]{0,400}?[ \t]-p(?:(\\?["'])[^"'\n\\]+\1|[^\s"'\\]+)/g,
    mask: (match) => {
      const at = match.lastIndexOf(' -p') === -1 ? match.lastIndexOf('\t-p') : match.lastIndexOf(' -p');
      return `${match.slice(0, at + 3)}${REDACTED}`;
    },
  },
  {
    id: 'cli-secret-flag',
    needs: F_CLI,
    // A command line's `--password hunter2` (`--password=…` is a key=value pair, handled there):
    // a long option whose name is a secret key, then its value. The option name is kept.
    // The value may be quoted, with escaped quotes inside JSON text.
    pattern: /(?<![\w-])--[A-Za-z][A-Za-z0-9_-]{1,40}[ \t]+(\\?["']|)(?!-)[^\s"'\\]{2,}\1/g,
    validate: (match) => {
      const name = /^--([A-Za-z0-9_-]+)/.exec(match)![1]!;
      return isBuiltinSecretKey(name, normalizeKey(name));
    },
    mask: (match) => {
      const [, kept, quote] = /^(--[A-Za-z0-9_-]+[ \t]+)(\\?["']|)/.exec(match)!;
      return `${kept}${quote}${REDACTED}${quote}`;
    },
  },
  {
    id: 'curl-user-password',
    needs: F_CLI,
    // gitleaks' curl-auth-user: `curl … -u user:password` (or `--user`), also after line
    // continuations, each half quoted or not. The password is masked; when it is empty
    // (`-u sk_live_…:`, an API key as the user) the user is. Placeholders (`$USER:$PASS`) stay.
    pattern: /\bcurl\b(?:[^\n]|\\\r?\n){0,600}?[ \t](?:-u|--user)(?:=|[ \t]+)(?:"[^"\n]*"|'[^'\n]*'|[^\s"']+)(?::(?:"[^"\n]*"|'[^'\n]*'|[^\s"']*))?/g,
    mask: maskCurlUser,
  },
  {
    id: 'email',
    needs: F_AT,
    // The lookbehind pins each attempt to the start of a run, which keeps long `@`-less runs linear.
    // Not an address: a URL's user or password (`ssh://git@github.com/…`,
    // `https://user:YOUR_PASSWORD@host`) or an SSH remote's host followed by
    // `:path` (`git@github.com:org/repo.git`); the domain must end where the match does, so a
    // shorter domain (`git@gitlab.example`) is no way around that.
    pattern:
      /(?<![A-Za-z0-9._%+-])(?<!\/\/)(?<!\/\/[^\x00-\x20\/"'<>@]{0,128}:)[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-]|\.[A-Za-z0-9-]|:[\w~/.-])/g,
    mask: (match) => `[EMAIL]@${match.slice(match.indexOf('@') + 1)}`,
    replaceIn: replaceEmails,
  },
  {
    id: 'cn-resident-id',
    needs: F_DIGITS,
    // Also written in groups of 6, 8 and 4 (region, birth date, sequence and check), the same
    // separator between each.
    pattern: /(?<!\d)(?<!\d[ -])[1-9]\d{5}([ -]?)(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\1\d{3}[\dXx](?!\d)/g,
    validate: (match) => isCnResidentId(match.replace(/[ -]/g, '')),
    mask: (match) => {
      const id = match.replace(/[ -]/g, '');
      return `${id.slice(0, 6)}${'*'.repeat(11)}${id.slice(17)}`;
    },
  },
  {
    id: 'payment-card',
    needs: F_DIGITS,
    // Not inside a longer digit run, nor the fractional part of a number.
    // Not inside a word either: a run of digits in a hex digest or base64 blob is no card.
    pattern: /(?<![\w.])(?<!\d[ -])\d(?:[ -]?\d){12,18}(?![\w])(?![ -]\d)/g,
    validate: isCardNumber,
    mask: (match) => `[CARD ${ELLIPSIS}${match.replace(/[ -]/g, '').slice(-4)}]`,
  },
  {
    id: 'cn-mobile',
    needs: F_DIGITS,
    // The country code as +86, 86 or 0086 (00 is the international prefix dialled from China).
    pattern: /(?<![\d.])(?<!\d[ -])(?:(?:\+|00)?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)(?![ -]\d)/g,
    mask: maskPhone,
  },
  {
    id: 'fullwidth-digits',
    needs: F_WIDE_DIGITS,
    // A run of full-width digits (with the separators and the ID's check `Ｘ` the rules above
    // accept, in either width) is read as ASCII and put through the ID, card and mobile rules; a
    // run they mask becomes their ASCII mask, so no hidden digit is left in either width.
    pattern: /[＋+]?[０-９](?:[\u3000 －-]?[０-９]){10,}[ＸｘXx]?/g,
    mask: (match) => {
      const ascii = toHalfWidth(match);
      const masked = maskDigitRuns(ascii);
      return masked === ascii ? match : masked;
    },
  },
];

/** A body that is one lowercase word holds no key: base64 key material mixes cases (`MHcCAQEE…`). */
const LOWERCASE_WORD = /^[a-z]{1,40}$/;

// ---------------------------------------------------------------------------------------------
// Placeholders: values that stand for a secret without being one. Config files, docs and logs
// are full of them (`password: ${DB_PASSWORD}`, `api_key = "<your-api-key>"`, `ghp_xxxx…`); they
// are kept so the record still shows where a secret goes, and so a digest or template is not
// mistaken for a credential.

/** Whole values that name a secret rather than hold it (compared lowercased). */
const PLACEHOLDER_WORDS = new Set([
  'password', 'passwd', 'pass', 'pwd', 'secret', 'token', 'apikey', 'api_key', 'key', 'test', 'testing',
  'changeme', 'changeit', 'default', 'example', 'sample', 'dummy', 'fake', 'none', 'null', 'nil', 'empty',
  'undefined', 'string', 'str', 'value', 'redacted', 'hidden', 'masked', 'todo', 'tbd', 'foo', 'bar', 'baz',
  'user', 'username', 'required', 'optional', 'env', 'secretkey', 'accesstoken', 'yourtoken', 'mytoken',
  // `credentials: new AWS.SharedIniFileCredentials(…)`: code that builds the value, cut at its space.
  'new',
]);

/** Longer than any placeholder word with separators (`access_token`, `your-token`). */
const MAX_PLACEHOLDER_WORD = 16;

/**
 * References and templates: `$VAR`, `${VAR}`, `$(cmd)`, `$1`, `{{ .Values.x }}`, `${{ secrets.X }}`,
 * `{name}`, `%VAR%`, `#{x}`, `<your key>`, `[PASSWORD]`, `@VAR@`, `%(name)s`, code reading a
 * setting (`os.environ[…]`, `process.env.X`, `var.db_password`, `getenv(…)`), and masks made of one
 * filler character (`xxxx`, `****`, `....`).
 */
const PLACEHOLDER_SHAPE =
  /^(?:\$(?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*|\d|\{[^{}]*\}?|\{\{[\s\S]*\}\}|\([^()]*\)?)|\{\{[\s\S]*\}\}|\{%[\s\S]*%\}|\{[A-Za-z_][\w.-]*\}|%[A-Za-z_]\w*%|%\([\w.-]+\)s|#\{[^{}]*\}|<[^<>\n]{1,80}>|\[[A-Za-z_ .-]{1,40}\]|@[A-Za-z_]\w*@|(?:var|local|data|module|each|self|process\.env|os\.environ|settings|secrets|vars|env|ENV)[.[][\w.[\]'"-]*|[\w.]*(?:getenv|get_env|environ\.get|getProperty|getSecret|get_secret|env)\([^)]*\)?|[xX*.#•…_-]{3,}|ENC\[[\s\S]*|new [\w.]+\([\s\S]*|`[^`]*`?|\{[A-Za-z_][\w.]*\([^{}\"\n]{0,80}\)?\}?)$/;

/**
 * Words inside a value that mark it as a stand-in: `<your-api-key>`, `PUT_YOUR_TOKEN_HERE`,
 * `AKIA…EXAMPLE`, `ops_DUMMY…`, `not_a_real_token`. Not `fake`: random tokens hold it
 * (`…lFaKe`) and so do typed ones that gitleaks counts as secrets (`…abc12fake…`).
 */
const PLACEHOLDER_PHRASE = /\[redacted\]|your[-_ ]?(?:own[-_ ]?)?(?:api[-_ ]?|access[-_ ]?|secret[-_ ]?|auth[-_ ]?)?(?:key|token|secret|password|pass|pwd)|_here(?![a-z])|replace[-_ ]?(?:me|this|with)|change[-_ ]?me|placeholder|example|insert[-_ ](?:your|key|token)|x{5,}|X{5,}|\*{4,}|#{4,}|(?:token|key|secret|string|password)[-_ ]?here(?![a-z])|random[-_ ]?string|(?<![a-z])my[-_](?:[a-z]+[-_])?(?:token|key|secret)(?![a-z])|dummy|not[-_ ]?(?:a[-_ ]?)?real/i;

const MARKUP_OR_LABEL = /^<[A-Za-z][\w:.-]*(?:\s|\/?>|$)|^[A-Za-z_][\w.-]*:$/;

/** An upper-case environment variable name (`ACCESS_TOKEN`, `DB_PASSWORD`) standing where its value would be. */
const ENV_NAME = /^[A-Z]+(?:_[A-Z]+)+$/;

/** How many distinct characters `s` has, counting no further than `limit + 1`. */
function distinctChars(s: string, limit: number): number {
  const seen: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (seen.includes(c)) continue;
    seen.push(c);
    if (seen.length > limit) break;
  }
  return seen.length;
}

/** The first characters a {@link PLACEHOLDER_SHAPE} can start with, to skip the regex for most values. */
const SHAPE_START = /^(?:[$%{#<[@xX*.•…_`-]|(?:var|local|data|module|each|self|process|os|settings|secrets|vars|env|ENV)[.[]|ENC\[|new )|\(/;

/**
 * Whether a value under a secret key (`key`) stands for a secret rather than holds one. Cheap
 * enough for every secret-keyed value: those are few.
 */
export function isPlaceholder(value: string, key?: string): boolean {
  const v = value.trim();
  if (v.length === 0) return true;
  if (v.length > 200) return false;
  if (v.length <= MAX_PLACEHOLDER_WORD) {
    const lower = v.toLowerCase();
    if (PLACEHOLDER_WORDS.has(lower) || PLACEHOLDER_WORDS.has(lower.replace(/[-_ ]/g, ''))) return true;
  }
  if (key !== undefined && Math.abs(v.length - key.length) <= 4 && alphanumeric(v) === alphanumeric(key)) return true;
  if (isStandInShape(v)) return true;
  if (v.includes('://') && CONNECTION_URL.test(v) && !QUERY_SECRET.test(v)) return true;
  if (v.startsWith('-----BEGIN') && isPrivateKeyStandIn(v)) return true;
  // A version, a dependency with its version, or a resource name: what a manifest holds under a
  // package named for tokens or secrets (`"jsonwebtoken": "^9.0.2"`, `jjwt-api:0.11.5`).
  // Not under a password's key: people build passwords from a word and a date (`hunter2-2024.1.2`).
  if ((v.includes('.') || v.startsWith('arn:')) && VERSION_OR_RESOURCE.test(v) && (key === undefined || !PASSWORD_KEY.test(key))) return true;
  // Markup or a label where a value was expected (`"<xsd:element name="`, `"token:"`): a quoted
  // value cut at a quote inside it.
  if (MARKUP_OR_LABEL.test(v)) return true;
  // Shown cut short (`ops_eyJzaWdu…`, `AKIA...`, `..[redacted]`): a prefix put there to be seen.
  if (ELIDED.test(v)) return true;
  // `yyy`, `aaaaaaaa`, `11111111`, `abababab`: too few characters to be random (`999` may be a
  // card code).
  if (REPEATED_LETTER.test(v) || (v.length >= 4 && distinctChars(v, 2) <= 2)) return true;
  return hasFillerTail(v);
}

const REPEATED_LETTER = /^([A-Za-z])\1{2,}$/;

/** A template, reference, mask or placeholder phrase: a value that cannot be a secret whatever its key. */
export function isStandInShape(value: string): boolean {
  const v = value.trim();
  return v === '' || (SHAPE_START.test(v) && PLACEHOLDER_SHAPE.test(v)) || PLACEHOLDER_PHRASE.test(v) || ENV_NAME.test(v);
}

/** The password of a `scheme://user:password@` match of the URL rule. */
function urlPassword(match: string): string {
  return match.slice(match.indexOf(':', match.indexOf('://') + 3) + 1, -1);
}

/**
 * A database or service connection string (`mongodb://localhost:27017/app`,
 * `postgres://app:…@db/app`) with no parameter that names a secret: its one secret is the password
 * in its user info, which the URL rule masks, so under a secret key (`MONGO_NO_AUTH`,
 * `DB_CREDENTIALS`) the rest says where, not what, and stays. Web URLs are not included: a
 * webhook's URL is its secret.
 */
const CONNECTION_URL =
  /^(?:jdbc:)?(?:mongodb(?:\+srv)?|postgres(?:ql)?|mysql|mariadb|redis|rediss|amqps?|mssql|sqlserver|clickhouse|cockroachdb|couchdb|neo4j|nats|memcached|ldaps?|s?ftp|smtps?):\/\/\S*$/i;
const QUERY_SECRET = /[?&;][^=&;\s]*(?:pass|pwd|secret|token|key)[^=&;\s]*=/i;
/**
 * A semantic version, perhaps a range (`^9.0.2`, `>=1.4.0`, `v5.2.0-rc.1`), perhaps after a
 * lowercase package name (`jjwt-jackson-0.11.2`, `jjwt-api:0.11.5`, `lodash@4.17.21`); or an
 * AWS resource name (`arn:aws:secretsmanager:…`), which points at a secret. Three dotted numbers
 * at least, so a password such as `summer-2024.1` is no version.
 */
const PASSWORD_KEY = /(?:pass(?:word|wd|phrase)?|pwd|pin)[\W_\d]*$/i;
const VERSION_OR_RESOURCE =
  /^(?:(?:[\^~=]|[<>]=?|==|~=)\s*)?(?:[a-z][a-z0-9]*(?:[-_.][a-z][a-z0-9]*)*[-:@])?v?\d{1,6}(?:\.\d{1,6}){2,3}(?:[-.][A-Za-z]{1,12}\.?\d{0,4})?$|^arn:aws[a-z-]*:[a-z0-9-]+:/;
/** A value that ends in an ellipsis, perhaps with a label after it (`..[Redacted]`). */
const ELIDED = /(?:\.{2,}|…)(?:\[[A-Za-z ]{0,20}\]?)?$/;
const FILLER_TAIL = 16;
const MIN_FILLER_VALUE = 12;

/**
 * Whether a value ends in filler where a real credential is random: a tail of one or two
 * characters (`AIzaaaaa…`, `glc_1111…=`, `XXXX-XXXX`). Sequences and repeated patterns
 * (`abcdefgh`, `Zx9Zx9…`) are not filler: the project's tests and docs write real-shaped secrets
 * that way.
 */
function hasFillerTail(v: string): boolean {
  return v.length >= MIN_FILLER_VALUE && distinctChars(v.slice(-FILLER_TAIL), 2) <= 2;
}

function alphanumeric(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * Whether a match of a token format is a stand-in (`ghp_xxxx…`, `sk-…EXAMPLE`, `xoxp-…-####`): a
 * placeholder phrase, or a tail of one filler character or two, one of them `x`, `*` or `#`
 * (`xxxx`, `XXXX-XXXX`), where a real token is random. Sequences such as `abcdefgh` or `Zx9Zx9…`
 * are not taken for examples: test suites and docs write real-shaped fixtures that way, and a
 * record must not keep one.
 */
export function isPlaceholderToken(match: string, after = ''): boolean {
  if (PLACEHOLDER_PHRASE.test(match)) return true;
  // The token runs on into filler or an ellipsis (`xoxp-5723…-####`, `ops_eyJz…...`): a template
  // or a value shown cut short.
  if (after !== '' && FILLER_AFTER.test(after)) return true;
  const tail = match.slice(-16);
  return tail.length >= 8 && distinctChars(tail, 2) <= 2 && STAND_IN_FILLER.test(tail);
}

/**
 * The characters people type to blank a token out. A tail of some other letter (`sk_live_AAAA…`,
 * `AGE-SECRET-KEY-1QQQ…`) is taken for a secret: test suites write real-shaped secrets that way,
 * secretlint's tests count such tails as secrets, and so does gitleaks for `AGE-SECRET-KEY-1QQQ…`.
 */
const STAND_IN_FILLER = /[xX*#•]/;

/** Text right after a token that makes it a stand-in: a run of filler, or an ellipsis. */
const FILLER_AFTER = /^(?:[#*xX]{4,}|\.{2,}|…)/;
