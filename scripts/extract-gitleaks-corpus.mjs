#!/usr/bin/env node
// Builds corpora/secrets/gitleaks.jsonl from a checkout of gitleaks (MIT): every rule's true and
// false positives, as its cmd/generate/config/rules/*.go test them.
//
//   node scripts/extract-gitleaks-corpus.mjs <gitleaks checkout> [out.jsonl]
//
// Those samples are built by Go code (string literals, concatenation, fmt.Sprintf, base64, loops,
// `secrets.NewSecret(regex)` for random secrets, `utils.GenerateSampleSecrets(id, secret)` for the
// same secret in two dozen assignment forms), so this script interprets that small subset of Go
// rather than running it (there is no Go toolchain here, and the corpus must not change from run
// to run: random secrets come from a seeded generator). A rule whose code uses something outside
// the subset is reported on stderr and left out.
//
// Each line: { rule, kind: 'tp' | 'fp', sample, secrets, reported_by, source }. `secrets` (true
// positives only) are the substrings that must not survive redaction: the secret given to
// GenerateSampleSecret(s), else what the rule's own regex captures (its secretGroup, or group 1,
// or the whole match). `reported_by` (false positives only) lists the other rules of the set whose
// regex and entropy floor report the sample: a false positive of one rule that is another's find.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prng } from '../perf/prng.js';

const [checkout, out = 'corpora/secrets/gitleaks.jsonl'] = process.argv.slice(2);
if (checkout === undefined) {
  console.error('usage: node scripts/extract-gitleaks-corpus.mjs <gitleaks checkout> [out.jsonl]');
  process.exit(2);
}
const rulesDir = join(checkout, 'cmd/generate/config/rules');

// ---------------------------------------------------------------------------------------------
// Seeded randomness, so the corpus is the same on every run.
const random = prng(0x5eed1e55);
const pick = (n) => Math.floor(random() * n);

// ---------------------------------------------------------------------------------------------
// A string generator for the RE2 patterns NewSecret is given (what reggen does): literals,
// classes, groups, alternation and bounded repeats; unbounded repeats stop at 10.
const CLASS_W = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
const CLASS_D = '0123456789';
const PRINTABLE = CLASS_W + '-+/=.';

function parsePattern(src) {
  let i = 0;
  function alternation() {
    const branches = [sequence()];
    while (src[i] === '|') {
      i++;
      branches.push(sequence());
    }
    return { type: 'alt', branches };
  }
  function sequence() {
    const items = [];
    while (i < src.length && src[i] !== '|' && src[i] !== ')') {
      let atom = single();
      if (atom === null) continue;
      for (;;) {
        const q = quantifier();
        if (q === null) break;
        atom = { type: 'repeat', atom, min: q[0], max: q[1] };
      }
      items.push(atom);
    }
    return { type: 'seq', items };
  }
  function quantifier() {
    const c = src[i];
    let q = null;
    if (c === '?') q = [0, 1];
    else if (c === '*') q = [0, 10];
    else if (c === '+') q = [1, 10];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      if (m === null) return null;
      i += m[0].length - 1;
      q = [Number(m[1]), m[2] === undefined ? Number(m[1]) : m[3] === '' ? Number(m[1]) + 10 : Number(m[3])];
    } else return null;
    i++;
    if (src[i] === '?') i++;
    return q;
  }
  function escape() {
    const c = src[i++];
    if (c === 'w') return CLASS_W;
    if (c === 'd') return CLASS_D;
    if (c === 's') return ' ';
    if (c === 'n') return '\n';
    if (c === 't') return '\t';
    if (c === 'r') return '\r';
    if (c === 'x') {
      const hex = src.slice(i, i + 2);
      i += 2;
      return String.fromCharCode(parseInt(hex, 16));
    }
    if (c === 'b' || c === 'B' || c === 'A' || c === 'z') return '';
    return c;
  }
  function charClass() {
    // at '['
    i++;
    let negate = false;
    if (src[i] === '^') {
      negate = true;
      i++;
    }
    let chars = '';
    let first = true;
    while (i < src.length && (src[i] !== ']' || first)) {
      first = false;
      let c;
      if (src.startsWith('[:', i)) {
        const end = src.indexOf(':]', i);
        const name = src.slice(i + 2, end);
        i = end + 2;
        chars += name === 'digit' ? CLASS_D : name === 'alpha' ? CLASS_W.slice(0, 52) : CLASS_W.slice(0, 62);
        continue;
      }
      if (src[i] === '\\') {
        i++;
        c = escape();
        if (c.length !== 1) {
          chars += c;
          continue;
        }
      } else c = src[i++];
      if (src[i] === '-' && src[i + 1] !== ']') {
        i++;
        let end;
        if (src[i] === '\\') {
          i++;
          end = escape();
        } else end = src[i++];
        for (let code = c.charCodeAt(0); code <= end.charCodeAt(0); code++) chars += String.fromCharCode(code);
      } else chars += c;
    }
    i++;
    if (negate) chars = [...PRINTABLE].filter((ch) => !chars.includes(ch)).join('');
    return { type: 'class', chars };
  }
  function single() {
    const c = src[i];
    if (c === '(') {
      i++;
      if (src[i] === '?') {
        const m = /^\?(?:P?<\w+>|[imsU-]*:|[imsU-]+\))/.exec(src.slice(i));
        if (m === null) throw new Error(`unsupported group in ${src}`);
        i += m[0].length;
        if (m[0].endsWith(')')) return null;
      }
      const inner = alternation();
      if (src[i] !== ')') throw new Error(`unclosed group in ${src}`);
      i++;
      return inner;
    }
    if (c === '[') return charClass();
    if (c === '\\') {
      i++;
      const chars = escape();
      return chars.length > 1 ? { type: 'class', chars } : { type: 'lit', text: chars };
    }
    if (c === '^' || c === '$') {
      i++;
      return null;
    }
    if (c === '.') {
      i++;
      return { type: 'class', chars: PRINTABLE };
    }
    i++;
    return { type: 'lit', text: c };
  }
  const node = alternation();
  if (i !== src.length) throw new Error(`unparsed pattern tail in ${src}`);
  return node;
}

function generate(node) {
  switch (node.type) {
    case 'alt':
      return generate(node.branches[pick(node.branches.length)]);
    case 'seq':
      return node.items.map(generate).join('');
    case 'repeat': {
      const n = node.min + pick(node.max - node.min + 1);
      let s = '';
      for (let k = 0; k < n; k++) s += generate(node.atom);
      return s;
    }
    case 'class':
      return node.chars.length === 0 ? '' : node.chars[pick(node.chars.length)];
    default:
      return node.text;
  }
}

const newSecret = (regex) => generate(parsePattern(regex));

// ---------------------------------------------------------------------------------------------
// Go's regexp syntax (RE2) as a JavaScript RegExp, to find what a rule's regex captures in a
// literal true positive. Inline flags become whole-pattern flags, which is close enough to find
// the secret in a sample the rule is known to match.
function toJsRegex(source) {
  let flags = 'g';
  let s = source;
  if (/\(\?[a-z]*i[a-z]*[:)]/.test(s)) flags += 'i';
  if (/\(\?[a-z]*s[a-z]*[:)]/.test(s)) flags += 's';
  s = s.replace(/\(\?-?[imsU]+\)/g, '').replace(/\(\?-?[imsU]+(?:-[imsU]+)?:/g, '(?:');
  s = s.replace(/\(\?P</g, '(?<').replace(/\\z/g, '$(?![\\s\\S])').replace(/\\A/g, '^');
  s = s.replace(/\[:alnum:\]/g, 'A-Za-z0-9').replace(/\[:alpha:\]/g, 'A-Za-z').replace(/\[:digit:\]/g, '0-9');
  return new RegExp(s, flags);
}

// ---------------------------------------------------------------------------------------------
// Tokens of Go source.
function tokenize(src) {
  const tokens = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (src.startsWith('//', i)) {
      i = src.indexOf('\n', i);
      if (i === -1) i = src.length;
    } else if (src.startsWith('/*', i)) {
      i = src.indexOf('*/', i) + 2;
    } else if (c === '`') {
      const end = src.indexOf('`', i + 1);
      tokens.push({ t: 'str', v: src.slice(i + 1, end) });
      i = end + 1;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let v = '';
      while (src[j] !== c) {
        if (src[j] === '\\') {
          const e = src[j + 1];
          const simple = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", a: '\x07', b: '\b', f: '\f', v: '\v' };
          if (e in simple) {
            v += simple[e];
            j += 2;
          } else if (e === 'x') {
            v += String.fromCharCode(parseInt(src.slice(j + 2, j + 4), 16));
            j += 4;
          } else if (e === 'u') {
            v += String.fromCharCode(parseInt(src.slice(j + 2, j + 6), 16));
            j += 6;
          } else throw new Error(`unknown escape \\${e}`);
        } else v += src[j++];
      }
      tokens.push({ t: c === '"' ? 'str' : 'rune', v });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      tokens.push({ t: 'id', v: m[0] });
      i += m[0].length;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+/.exec(src.slice(i));
      tokens.push({ t: 'num', v: Number(m[0]) });
      i += m[0].length;
    } else {
      const op = ['...', ':=', '==', '!=', '&&', '||', '+=', '<-'].find((o) => src.startsWith(o, i)) ?? c;
      tokens.push({ t: 'op', v: op });
      i += op.length;
    }
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Values: a string carries the secrets it was built from ({ s, secrets }), a list is an array of
// those, a map is a Map, a rule is a plain object of its fields.
const str = (s, secrets = []) => ({ s, secrets });
const concat = (a, b) => str(a.s + b.s, [...a.secrets, ...b.secrets]);
const SAMPLE_FORMS = {
  'ini - quoted1': '{i}Token="{s}"',
  'ini - quoted2': '{i}Token = "{s}"',
  'ini - unquoted1': '{i}Token={s}',
  'ini - unquoted2': '{i}Token = {s}',
  'json - string': '{\n    "{i}_token": "{s}"\n}',
  'json - escaped newline in string': '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
  'xml - element multiline': '<{i}Token>\n    {s}\n</{i}Token>',
  'yaml - singleline - unquoted': '{i}_token: {s}',
  'yaml - singleline - single quote': "{i}_token: '{s}'",
  'yaml - singleline - double quote': '{i}_token: "{s}"',
  'C#': 'string {i}Token = "{s}";',
  'go - normal': 'var {i}Token string = "{s}"',
  'go - short': '{i}Token := "{s}"',
  'go - backticks': '{i}Token := `{s}`',
  java: 'String {i}Token = "{s}";',
  'kotlin - notype': 'var {i}Token = "{s}"',
  'php - string concat': '${i}Token .= "{s}"',
  'python - single quote': "{i}Token = '{s}'",
  'python - double quote': '{i}Token = "{s}"',
  'misc - comma operator': 'System.setProperty("{I}_TOKEN", "{s}")',
  logstash: '  "{i}Token" => "{s}"',
  'make - recursive assignment': '{i}_TOKEN = "{s}"',
  'make - simple assignment': '{i}_TOKEN := "{s}"',
  'make - shell assignment': '{i}_TOKEN ::= "{s}"',
  'make - evaluated shell assignment': '{i}_TOKEN :::= "{s}"',
  'make - conditional assignment': '{i}_TOKEN ?= "{s}"',
};
const fill = (form, id, secret) => form.replaceAll('{i}', id).replaceAll('{I}', id.toUpperCase()).replaceAll('{s}', secret);
const b64 = (text, url, pad) => {
  let out = Buffer.from(text, 'latin1').toString(url ? 'base64url' : 'base64');
  if (url && pad) while (out.length % 4 !== 0) out += '=';
  if (!pad) out = out.replace(/=+$/, '');
  return out;
};

class Unsupported extends Error {
  constructor(m) {
    super(m);
    if (process.env.DEBUG_EXTRACT) console.error(this.stack);
  }
}

/** An interpreter for the statements and expressions the rule files use. */
class Interpreter {
  constructor(funcs, globals) {
    this.funcs = funcs;
    /** Package-level `var name = …`: their tokens, evaluated when first read. */
    this.globals = globals;
    this.globalValues = new Map();
  }

  global(name) {
    if (!this.globalValues.has(name)) {
      const saved = [this.tokens, this.i, this.scope];
      this.tokens = this.globals.get(name);
      this.i = 0;
      this.scope = new Map();
      try {
        this.globalValues.set(name, this.expr());
      } finally {
        [this.tokens, this.i, this.scope] = saved;
      }
    }
    return this.globalValues.get(name);
  }

  call(name, args) {
    const fn = this.funcs.get(name);
    if (fn === undefined) throw new Unsupported(`function ${name}`);
    const scope = new Map();
    fn.params.forEach((p, k) => scope.set(p, args[k]));
    const saved = [this.tokens, this.i, this.scope];
    this.tokens = fn.body;
    this.i = 0;
    this.scope = scope;
    let result;
    try {
      result = this.block(fn.body.length);
    } finally {
      [this.tokens, this.i, this.scope] = saved;
    }
    return result?.value;
  }

  peek(k = 0) {
    return this.tokens[this.i + k];
  }
  next() {
    return this.tokens[this.i++];
  }
  expect(v) {
    const tok = this.next();
    if (tok?.v !== v) throw new Unsupported(`expected ${v}, got ${tok?.v}`);
  }
  is(v, k = 0) {
    return this.peek(k)?.v === v && this.peek(k).t !== 'str';
  }

  /** Runs statements until `end` (a token index); returns { value } at a return statement. */
  block(end) {
    while (this.i < end) {
      const r = this.statement();
      if (r !== undefined) return r;
    }
    return undefined;
  }

  skipBalanced() {
    // from an opening `{`, to just past its `}`
    let depth = 0;
    do {
      const tok = this.next();
      if (tok.t === 'op' && (tok.v === '{' || tok.v === '(' || tok.v === '[')) depth++;
      if (tok.t === 'op' && (tok.v === '}' || tok.v === ')' || tok.v === ']')) depth--;
    } while (depth > 0);
  }

  matching(at) {
    let depth = 0;
    for (let k = at; k < this.tokens.length; k++) {
      const tok = this.tokens[k];
      if (tok.t !== 'op') continue;
      if (tok.v === '{' || tok.v === '(' || tok.v === '[') depth++;
      if (tok.v === '}' || tok.v === ')' || tok.v === ']') depth--;
      if (depth === 0) return k;
    }
    throw new Unsupported('unbalanced');
  }

  statement() {
    const tok = this.peek();
    if (tok.t === 'op' && tok.v === ';') {
      this.i++;
      return undefined;
    }
    if (tok.t === 'id' && tok.v === 'return') {
      this.i++;
      return { value: this.expr() };
    }
    if (tok.t === 'id' && tok.v === 'var' && this.is('(', 1)) {
      this.i += 2;
      while (!this.is(')')) {
        const name = this.next().v;
        this.expect('=');
        this.scope.set(name, this.expr());
        if (this.is(';')) this.i++;
      }
      this.i++;
      return undefined;
    }
    if (tok.t === 'id' && tok.v === 'var') {
      this.i++;
      const name = this.next().v;
      if (this.is('=')) {
        this.i++;
        this.scope.set(name, this.expr());
      } else {
        this.type();
        if (this.is('=')) {
          this.i++;
          this.scope.set(name, this.expr());
        } else this.scope.set(name, []);
      }
      return undefined;
    }
    if (tok.t === 'id' && tok.v === 'for') {
      this.i++;
      const names = [this.next().v];
      while (this.is(',')) {
        this.i++;
        names.push(this.next().v);
      }
      this.expect(':=');
      this.expect('range');
      const over = this.expr();
      const bodyStart = this.i;
      const bodyEnd = this.matching(bodyStart);
      const entries = over instanceof Map ? [...over.entries()] : over.map((v, k) => [k, v]);
      for (const [key, value] of entries) {
        this.scope.set(names[0], typeof key === 'string' ? str(key) : key);
        if (names[1] !== undefined) this.scope.set(names[1], value);
        this.i = bodyStart + 1;
        const r = this.block(bodyEnd);
        if (r !== undefined) return r;
      }
      this.i = bodyEnd + 1;
      return undefined;
    }
    if (tok.t === 'id' && (tok.v === 'if' || tok.v === 'switch')) throw new Unsupported(tok.v);
    // assignment or expression statement
    if (tok.t === 'id' && (this.is(':=', 1) || this.is('=', 1) || this.is(',', 1))) {
      const names = [this.next().v];
      while (this.is(',')) {
        this.i++;
        names.push(this.next().v);
      }
      this.next(); // := or =
      const value = this.expr();
      if (names.length !== 1) throw new Unsupported('multiple assignment');
      this.scope.set(names[0], value);
      return undefined;
    }
    this.expr();
    return undefined;
  }

  type() {
    // []string, []byte, string, *config.Rule, map[string][]string: one type, nothing after it.
    while (this.is('[') || this.is('*')) {
      this.i++;
      if (this.is(']')) this.i++;
    }
    if (this.is('map')) {
      this.i++;
      this.expect('[');
      this.type();
      this.expect(']');
      this.type();
      return;
    }
    this.i++;
    while (this.is('.')) this.i += 2;
  }

  expr() {
    let left = this.unary();
    while (this.is('+')) {
      this.i++;
      const right = this.unary();
      left = concat(left, right);
    }
    return left;
  }

  unary() {
    const tok = this.peek();
    if (tok.t === 'str') {
      this.i++;
      return str(tok.v);
    }
    if (tok.t === 'num') {
      this.i++;
      return tok.v;
    }
    if (tok.t === 'op' && tok.v === '[') {
      // []string{...}, []byte(x)
      this.type();
      if (this.is('(')) {
        this.i++;
        const v = this.expr();
        this.expect(')');
        return v;
      }
      return this.list();
    }
    if (tok.t === 'op' && tok.v === '{') return this.list();
    if (tok.t === 'op' && tok.v === '&') {
      this.i++;
      return this.unary();
    }
    if (tok.t === 'id' && tok.v === 'map') {
      this.type();
      return this.map();
    }
    if (tok.t === 'id' && (tok.v === 'nil' || tok.v === 'true' || tok.v === 'false')) {
      this.i++;
      return tok.v === 'nil' ? [] : tok.v === 'true';
    }
    if (tok.t === 'id') return this.callOrName();
    throw new Unsupported(`token ${tok.v} after ${this.tokens.slice(Math.max(0, this.i - 6), this.i).map((t) => t.v).join(' ')}`);
  }

  list() {
    this.expect('{');
    const items = [];
    while (!this.is('}')) {
      if (this.is('{')) items.push(this.list());
      else items.push(this.expr());
      if (this.is(',')) this.i++;
    }
    this.i++;
    return items;
  }

  map() {
    this.expect('{');
    const m = new Map();
    while (!this.is('}')) {
      const key = this.expr();
      this.expect(':');
      const value = this.is('{') ? this.list() : this.expr();
      m.set(key.s, value);
      if (this.is(',')) this.i++;
    }
    this.i++;
    return m;
  }

  args() {
    this.expect('(');
    const args = [];
    let spread = false;
    while (!this.is(')')) {
      args.push(this.expr());
      if (this.is('...')) {
        this.i++;
        spread = true;
      }
      if (this.is(',')) this.i++;
    }
    this.i++;
    return { args, spread };
  }

  callOrName() {
    let name = this.next().v;
    while (this.is('.')) {
      this.i++;
      name += `.${this.next().v}`;
    }
    if (name === 'config.Rule' || name === 'config.Allowlist') {
      return this.ruleLiteral();
    }
    if (!this.is('(')) {
      if (this.scope.has(name)) return this.scope.get(name);
      if (this.globals.has(name)) return this.global(name);
      throw new Unsupported(`name ${name}`);
    }
    const { args } = this.args();
    const s = (k) => args[k].s;
    switch (name) {
      case 'secrets.NewSecret': {
        const v = newSecret(s(0));
        return str(v, [v]);
      }
      case 'newPlausibleSecret': {
        for (;;) {
          const v = newSecret(s(0));
          if (/[1-9]/.test(v)) return str(v, [v]);
        }
      }
      case 'utils.Numeric':
        return str(`[0-9]{${s(0)}}`);
      case 'utils.Hex':
        return str(`[a-f0-9]{${s(0)}}`);
      case 'utils.AlphaNumeric':
        return str(`[a-z0-9]{${s(0)}}`);
      case 'utils.AlphaNumericExtendedShort':
        return str(`[a-z0-9_-]{${s(0)}}`);
      case 'utils.AlphaNumericExtended':
        return str(`[a-z0-9=_\\-]{${s(0)}}`);
      case 'utils.AlphaNumericExtendedLong':
        return str(`[a-z0-9\\/=_\\+\\-]{${s(0)}}`);
      case 'utils.Hex8_4_4_4_12':
        return str('[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}');
      case 'utils.GenerateSampleSecret':
        return { ...str(`${s(0)}_api_token = "${s(1)}"`, [s(1)]), explicit: true };
      case 'utils.GenerateSampleSecrets':
        return Object.values(SAMPLE_FORMS).map((form) => ({ ...str(fill(form, s(0), s(1)), [s(1)]), explicit: true }));
      case 'fmt.Sprintf': {
        let k = 1;
        const secrets = [];
        const text = s(0).replace(/%[sdv]/g, () => {
          const a = args[k++];
          if (typeof a === 'number') return String(a);
          secrets.push(...a.secrets);
          return a.s;
        });
        return str(text, secrets);
      }
      case 'append': {
        const [base, ...rest] = args;
        const items = [];
        for (const a of rest) items.push(...(Array.isArray(a) ? a : [a]));
        return [...base, ...items];
      }
      case 'strings.ToUpper':
        return str(s(0).toUpperCase(), args[0].secrets.map((x) => x.toUpperCase()));
      case 'strings.Repeat':
        return str(s(0).repeat(args[1]));
      case 'string':
        return args[0];
      case 'b64.StdEncoding.EncodeToString':
      case 'base64.StdEncoding.EncodeToString':
        return this.encoded(args[0], false, true);
      case 'b64.RawStdEncoding.EncodeToString':
      case 'base64.RawStdEncoding.EncodeToString':
        return this.encoded(args[0], false, false);
      case 'b64.URLEncoding.EncodeToString':
      case 'base64.URLEncoding.EncodeToString':
        return this.encoded(args[0], true, true);
      case 'b64.RawURLEncoding.EncodeToString':
      case 'base64.RawURLEncoding.EncodeToString':
        return this.encoded(args[0], true, false);
      case 'regexp.MustCompile':
        return { regex: s(0) };
      case 'utils.GenerateSemiGenericRegex':
        return { regex: semiGeneric(args[0].map((x) => x.s), s(1), args[2]) };
      case 'utils.GenerateUniqueTokenRegex':
        return { regex: `${args[1] ? '(?i)' : ''}\\b(${s(0)})(?:[\\x60'"\\s;]|\\\\[nr]|$)` };
      case 'utils.MergeRegexps':
        return { regex: args.map((a) => a.regex).join('|') };
      case 'utils.Validate':
        return { rule: args[0], tps: args[1], fps: args[2] };
      case 'utils.ValidateWithPaths':
        return { rule: args[0], tps: [...args[1].values()], fps: [...args[2].values()] };
      default:
        if (this.funcs.has(name)) return this.call(name, args);
        throw new Unsupported(`call ${name}`);
    }
  }

  number() {
    const whole = this.next().v;
    if (this.is('.')) {
      this.i++;
      return Number(`${whole}.${this.next().v}`);
    }
    return whole;
  }

  encoded(value, url, pad) {
    // The secret inside is now the encoded text as a whole.
    const text = b64(value.s, url, pad);
    return str(text, value.secrets.length === 0 ? [] : [text]);
  }

  ruleLiteral() {
    this.expect('{');
    const rule = {};
    while (!this.is('}')) {
      const field = this.next().v;
      this.expect(':');
      if (field === 'RuleID' || field === 'Regex' || field === 'SecretGroup' || field === 'Entropy') {
        const v = field === 'Entropy' ? this.number() : this.expr();
        rule[field] = field === 'RuleID' ? v.s : field === 'Regex' ? v.regex : v;
      } else {
        // Descriptions, keywords, allowlists, entropy: not needed here.
        const start = this.i;
        let depth = 0;
        for (;;) {
          const tok = this.peek();
          if (tok.t === 'op' && (tok.v === '{' || tok.v === '(' || tok.v === '[')) depth++;
          if (tok.t === 'op' && (tok.v === '}' || tok.v === ')' || tok.v === ']')) {
            if (depth === 0) break;
            depth--;
          }
          if (depth === 0 && tok.t === 'op' && tok.v === ',') break;
          this.i++;
        }
        if (this.i === start) throw new Unsupported('empty field');
      }
      if (this.is(',')) this.i++;
    }
    this.i++;
    return rule;
  }
}

function semiGeneric(identifiers, secretRegex, caseInsensitive) {
  const ids = `[\\w.-]{0,50}?(?:${identifiers.join('|')})(?:[ \\t\\w.-]{0,20})[\\s'"]{0,3}`;
  const prefix = caseInsensitive ? `(?i)${ids}` : `[\\w.-]{0,50}?(?i:${ids.slice('[\\w.-]{0,50}?'.length)})`;
  return `${prefix}(?:=|>|:{1,3}=|\\|\\||:|=>|\\?=|,)[\\x60'"\\s=]{0,5}(${secretRegex})(?:[\\x60'"\\s;]|\\\\[nr]|$)`;
}

// ---------------------------------------------------------------------------------------------
// Functions of the package: name, parameters, body tokens.
function functionsOf(tokens) {
  const funcs = new Map();
  for (let k = 0; k < tokens.length; k++) {
    if (tokens[k].t !== 'id' || tokens[k].v !== 'func' || tokens[k + 1]?.t !== 'id') continue;
    const name = tokens[k + 1].v;
    let j = k + 2;
    if (tokens[j].v !== '(') continue;
    const params = [];
    let depth = 0;
    for (; ; j++) {
      if (tokens[j].v === '(') depth++;
      else if (tokens[j].v === ')' && --depth === 0) break;
      else if (depth === 1 && tokens[j].t === 'id' && (tokens[j - 1].v === '(' || tokens[j - 1].v === ',')) params.push(tokens[j].v);
    }
    while (tokens[j].v !== '{') j++;
    let end = j;
    depth = 0;
    for (; ; end++) {
      if (tokens[end].t !== 'op') continue;
      if (tokens[end].v === '{') depth++;
      if (tokens[end].v === '}' && --depth === 0) break;
    }
    funcs.set(name, { name, params, body: tokens.slice(j + 1, end), returnsRule: tokens.slice(k, j).some((t) => t.v === 'Rule') });
  }
  return funcs;
}

/** Package-level `var name = expr` (outside any function): name to the tokens of expr. */
function globalsOf(tokens) {
  const globals = new Map();
  let depth = 0;
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k];
    if (tok.t === 'op' && (tok.v === '{' || tok.v === '(')) depth++;
    if (tok.t === 'op' && (tok.v === '}' || tok.v === ')')) depth--;
    if (depth !== 0 || tok.t !== 'id' || tok.v !== 'var' || tokens[k + 2]?.v !== '=') continue;
    let end = k + 3;
    let d = 0;
    for (; end < tokens.length; end++) {
      const t = tokens[end];
      if (t.t === 'op' && (t.v === '{' || t.v === '(' || t.v === '[')) d++;
      if (t.t === 'op' && (t.v === '}' || t.v === ')' || t.v === ']')) d--;
      if (d === 0 && (tokens[end + 1]?.v === 'var' || tokens[end + 1]?.v === 'func')) break;
    }
    globals.set(tokens[k + 1].v, tokens.slice(k + 3, end + 1));
  }
  return globals;
}

/** Shannon entropy in bits per character, as gitleaks computes it for a rule's `Entropy` floor. */
function entropy(s) {
  const counts = new Map();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / s.length) * Math.log2(n / s.length);
  return bits;
}

/**
 * The other rules of the set that report `sample` (their regex matches and its secret reaches
 * their entropy floor; allowlists are not applied). A false positive of one rule that another
 * reports is a secret by the set's own judgement.
 */
function reportedBy(rules, self, sample) {
  const by = [];
  for (const rule of rules) {
    if (rule.RuleID === self || rule.re === undefined) continue;
    rule.re.lastIndex = 0;
    for (const m of sample.matchAll(rule.re)) {
      const group = rule.SecretGroup ?? (m.length > 1 ? [...m].slice(1).findIndex((g) => g !== undefined) + 1 : 0);
      const secret = m[group] ?? m[0];
      if (secret !== undefined && secret.length > 0 && entropy(secret) >= (rule.Entropy ?? 0)) {
        by.push(rule.RuleID);
        break;
      }
      if (m[0].length === 0) break;
    }
  }
  return by;
}

/** What must not survive of a literal true positive: what the rule's regex captures in it. */
function secretsByRegex(rule, sample) {
  if (rule.Regex === undefined) return [];
  let re;
  try {
    re = toJsRegex(rule.Regex);
  } catch {
    return [];
  }
  const found = [];
  for (const m of sample.matchAll(re)) {
    const group = rule.SecretGroup ?? (m.length > 1 ? [...m].slice(1).findIndex((g) => g !== undefined) + 1 : 0);
    const secret = m[group] ?? m[0];
    if (secret !== undefined && secret.length > 0) found.push(secret);
    if (m[0].length === 0) break;
  }
  return found;
}

const files = readdirSync(rulesDir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go')).sort();
const allTokens = files.flatMap((f) => tokenize(readFileSync(join(rulesDir, f), 'utf8')));
const funcs = functionsOf(allTokens);
const globals = globalsOf(allTokens);
// Package-level helpers the rules call are interpreted from the same tokens.
const lines = [];
const allRules = [];
let rules = 0;
const skipped = [];
for (const fn of funcs.values()) {
  if (!fn.returnsRule) continue;
  const body = fn.body;
  if (!body.some((t) => t.v === 'Validate' || t.v === 'ValidateWithPaths')) continue;
  let result;
  try {
    result = new Interpreter(funcs, globals).call(fn.name, []);
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    skipped.push(`${fn.name}: ${error.message}`);
    continue;
  }
  if (result?.rule?.RuleID === undefined) {
    skipped.push(`${fn.name}: no rule`);
    continue;
  }
  rules++;
  allRules.push(result.rule);
  const id = result.rule.RuleID;
  const seen = new Set();
  for (const [kind, list] of [['tp', result.tps ?? []], ['fp', result.fps ?? []]]) {
    for (const item of list) {
      if (seen.has(`${kind}\0${item.s}`)) continue;
      seen.add(`${kind}\0${item.s}`);
      const line = { rule: id, kind, sample: item.s };
      if (kind === 'tp') {
        let secrets = item.explicit === true ? item.secrets : secretsByRegex(result.rule, item.s);
        if (secrets.length === 0) secrets = item.secrets.filter((x) => item.s.includes(x));
        // A capture group may take the quotes around the value in; the secret is what is inside.
        secrets = [...new Set(secrets.map((x) => x.replace(/^["'`\s]+|["'`\s]+$/g, '')))].filter((x) => x.length >= 4);
        if (secrets.length === 0) {
          skipped.push(`${id}: a true positive with no secret found: ${JSON.stringify(item.s.slice(0, 60))}`);
          continue;
        }
        line.secrets = secrets;
      }
      line.source = 'gitleaks';
      lines.push(line);
    }
  }
}
for (const rule of allRules) {
  try {
    rule.re = toJsRegex(rule.Regex);
  } catch {
    rule.re = undefined;
  }
}
for (const line of lines) {
  if (line.kind !== 'fp') continue;
  const by = reportedBy(allRules, line.rule, line.sample);
  if (by.length !== 0) line.reported_by = by;
}
writeFileSync(out, `${lines.map((l) => JSON.stringify({ rule: l.rule, kind: l.kind, sample: l.sample, ...(l.secrets ? { secrets: l.secrets } : {}), ...(l.reported_by ? { reported_by: l.reported_by } : {}), source: l.source })).join('\n')}\n`);
console.error(`${rules} rules, ${lines.length} samples -> ${out}`);
for (const s of skipped) console.error(`skipped ${s}`);
