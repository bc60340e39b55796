import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeRecord } from './fixture.js';
import { BUILTIN_RULES, createRedactor, defaultRedactor, REDACTED, type RedactionRule } from './redact.js';
import { SECRET_KEY_EXACT, SECRET_KEY_PARTS, SECRET_KEY_SUFFIXES } from './redact-rules.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

// Every secret below is assembled at run time, so this file does not itself trip secret scanners.
const j = (...parts: string[]): string => parts.join('');

/** A valid mainland China resident ID for a 17-digit body (GB 11643 check character). */
function cnId(body: string): string {
  const weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += Number(body[i]) * weights[i]!;
  return body + '10X98765432'[sum % 11]!;
}

/** The same text with its digits and `X` in full width, as a Chinese input method types them. */
const fullWidth = (s: string): string => s.replace(/[0-9X]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

interface Secret {
  /** Which built-in rule should catch it. */
  rule: string;
  /** The text as it would appear. */
  text: string;
  /** Substrings that must not survive redaction. */
  secretParts: string[];
}

const openaiBody = j('R4nd0mT0k3n', 'AbCdEfGhIjKlMnOpQrStUvWxYz012345');
const anthropicBody = j('aB3dEfGhIjKlMnOpQrStUvWxYz0123456789', '-_aB3dEfGhIjKlMnOpQrStUvWxYz0123456789', 'aB3dEfGhIjKlMnOpQrSt', 'AA');
const awsSecret = j('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYzQ2m4PLEKEY');
const jwt = j(
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
  '.',
  'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0',
  '.',
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
);
const pemBody = j('MIIEowIBAAKCAQEA7bq3xQ9rTz', 'W1k4V8pHcN2sLmYf0aJdEgUiOo', '\n', 'Xy5Zb6Cc7Dd8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6Mm7');
const basicPassword = j('wonder', 'land42');
const id1 = cnId('11010519491231002');
const PHONE_NUMBER = Number(j('138', '1234', '5678'));
const CARD_NUMBER = Number(j('42424242', '42424242'));
const id2 = cnId('44030619900307123');
const twilioSid = j('7b2f0c9d1e4a', '53867f0a1b2c3d4e5f60');
const twilioToken = j('9f8e7d6c5b4a', '39281706f5e4d3c2b1a0');
// Bodies of the token formats added after a gitleaks audit (random-looking, assembled at run time).
const body40 = j('Qm7xK2pL9vR4', 'tY8nB3cW6zH1', 'sD5fJ0gA2eU7', 'iO4k');
const hex40 = j('3f9a0c7e21b4', 'd85f6a0e9c13', '7b2d4e6f8a01', 'c3e5');
const pypiBody = j('CJDU5YzQ1YjZhLTk4YzEtNGQ3', 'Mi1hNmE1LWI0YTAxMjM0NTY3OAACKlsz', 'LCJhODc1ZTk4Zi0xMjM0Il0AAAY');
const vaultBody = j(body40, 'CAESIJ', body40, 'Gh4KHGh2cy5', body40.slice(0, 20));
const sentryOrgBody = j('eyJpYXQiOjE3MzAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8iLCJyZWdpb25fdXJsIjoi', 'aHR0cHM6Ly91cy5zZW50cnkuaW8iLCJvcmciOiJhY21lIn0_', body40.slice(0, 43 - 40), body40);
const opsBody = j('eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSIsInVzZXJBdXRoIjp7Im1ldGhvZCI6IlNSUGctNDA5NiIs', body40, body40, body40, body40, 'Ino');
const ageBody = j('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 'QPZRY9X8GF2TVDW0S3JN54KHCE6M');
const herokuUuid = j('5f8c2a1e-9b3d-4e7f', '-a6c0-2d4b8e1f3a9c');

const SECRETS: Secret[] = [
  { rule: 'openai-api-key', text: j('sk-proj-', openaiBody), secretParts: [openaiBody] },
  {
    rule: 'openai-api-key',
    text: j('sk-', 'Xy9AbCdEfGhIjKlMnOpQr', 'T3BlbkFJ', 'StUvWxYz0123456789aB'),
    secretParts: ['Xy9AbCdEfGhIjKlMnOpQr'],
  },
  { rule: 'anthropic-api-key', text: j('sk-ant-api03-', anthropicBody), secretParts: [anthropicBody.slice(0, 30)] },
  { rule: 'aws-access-key-id', text: j('AKIA', 'Z3XAMPLE7QWERTY2'), secretParts: ['Z3XAMPLE7QWERTY2'] },
  { rule: 'aws-access-key-id', text: j('ASIA', 'QWERTY234567ABCD'), secretParts: ['QWERTY234567ABCD'] },
  { rule: 'aws-secret-access-key', text: j('aws_secret_access_key = ', awsSecret), secretParts: [awsSecret] },
  { rule: 'github-token', text: j('ghp_', 'aB3dEfGhIjKlMnOpQrStUvWxYz0123456789'), secretParts: ['aB3dEfGhIjKlMnOpQrStUvWxYz0123456789'] },
  { rule: 'github-token', text: j('gho_', 'Zz9dEfGhIjKlMnOpQrStUvWxYz0123456789'), secretParts: ['Zz9dEfGhIjKlMnOpQrStUvWxYz0123456789'] },
  { rule: 'github-token', text: j('ghs_', 'Yy8dEfGhIjKlMnOpQrStUvWxYz0123456789'), secretParts: ['Yy8dEfGhIjKlMnOpQrStUvWxYz0123456789'] },
  {
    rule: 'github-token',
    text: j('github_pat_', '11ABCDEFG0', 'abcdefghijkl_MNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEF'),
    secretParts: ['abcdefghijkl_MNOPQRSTUVWXYZ0123456789'],
  },
  {
    rule: 'slack-token',
    text: j('xoxb-', '1234567890123-1234567890123-', 'AbCdEfGhIjKlMnOpQrStUvWx'),
    secretParts: ['1234567890123-1234567890123', 'AbCdEfGhIjKlMnOpQrStUvWx'],
  },
  {
    rule: 'slack-token',
    text: j('xoxp-', '2234567890123-2234567890123-2234567890123-', 'a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4'),
    secretParts: ['a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4'],
  },
  {
    rule: 'slack-webhook',
    text: j('https://hooks.slack.com/services/', 'T0A1B2C3D/B4E5F6G7H/', 'Xk9Lm8Nn7Oo6Pp5Qq4Rr3Ss2'),
    secretParts: ['T0A1B2C3D/B4E5F6G7H', 'Xk9Lm8Nn7Oo6Pp5Qq4Rr3Ss2'],
  },
  { rule: 'stripe-key', text: j('sk_live_', '51H8xYzAbCdEfGhIjKlMnOpQr'), secretParts: ['51H8xYzAbCdEfGhIjKlMnOpQr'] },
  { rule: 'stripe-key', text: j('rk_live_', '51Q9wErTyUiOpAsDfGhJkLzXc'), secretParts: ['51Q9wErTyUiOpAsDfGhJkLzXc'] },
  { rule: 'stripe-key', text: j('sk_test_', '4eC39HqLyjWDarjtT1zdp7dc'), secretParts: ['4eC39HqLyjWDarjtT1zdp7dc'] },
  { rule: 'google-api-key', text: j('AIza', 'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'), secretParts: ['SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'] },
  { rule: 'bearer-token', text: j('Authorization: Bearer ', 'f81d4fae7dec11d0a76500a0c91e6bf6'), secretParts: ['f81d4fae7dec11d0a76500a0c91e6bf6'] },
  { rule: 'bearer-token', text: j('sent bearer ', 'Q29tcGxleFRva2VuMTIz.x-y_z~'), secretParts: ['Q29tcGxleFRva2VuMTIz'] },
  {
    rule: 'basic-auth',
    text: j('Basic ', Buffer.from(j('alice:', basicPassword)).toString('base64')),
    secretParts: [Buffer.from(j('alice:', basicPassword)).toString('base64')],
  },
  { rule: 'jwt', text: jwt, secretParts: [jwt.split('.')[1]!, jwt.split('.')[2]!] },
  // Formats with no rule of their own, caught by the shape most providers now give their tokens.
  { rule: 'prefixed-token', text: j('gsk_', body40, 'Xq2'), secretParts: [body40] },
  { rule: 'prefixed-token', text: j('lin_api_', body40.slice(0, 27), 'Zz9w8v7'), secretParts: [body40.slice(0, 27)] },
  { rule: 'docker-token', text: j('dckr_pat_', body40.slice(0, 27)), secretParts: [body40.slice(0, 27)] },
  { rule: 'tailscale-key', text: j('tskey-auth-', 'kXGGbs6CNTRL-', body40.slice(0, 24)), secretParts: ['kXGGbs6CNTRL', body40.slice(0, 24)] },
  { rule: 'prefixed-token', text: j('vcp_', body40.slice(0, 34)), secretParts: [body40.slice(0, 34)] },
  // The same JWT base64-encoded again, as a Kubernetes secret or a config blob holds it.
  { rule: 'jwt-base64', text: Buffer.from(jwt).toString('base64'), secretParts: [Buffer.from(jwt).toString('base64').slice(8, 60)] },
  {
    rule: 'private-key',
    text: j('-----BEGIN ', 'RSA PRIVATE KEY-----\n', pemBody, '\n-----END RSA ', 'PRIVATE KEY-----'),
    secretParts: ['MIIEowIBAAKCAQEA7bq3xQ9rTz', 'Xy5Zb6Cc7Dd8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6Mm7'],
  },
  {
    rule: 'private-key',
    text: j('-----BEGIN ', 'OPENSSH PRIVATE KEY-----\n', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ', '\n-----END OPENSSH ', 'PRIVATE KEY-----'),
    secretParts: ['b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ'],
  },
  {
    rule: 'url-credentials',
    text: j('postgres://app_user:', 'Sup3rS3cretPw', '@db.internal:5432/app'),
    secretParts: ['Sup3rS3cretPw'],
  },
  { rule: 'url-credentials', text: j('redis://:', 'r3d1sP@ss', '@cache:6379/0'), secretParts: ['r3d1sP', 'ss@cache'] },
  { rule: 'email', text: j('alice.smith', '@example.com'), secretParts: ['alice.smith'] },
  { rule: 'email', text: j('ops+alerts', '@corp.example.co.uk'), secretParts: ['ops+alerts'] },
  { rule: 'cn-mobile', text: j('138', '1234', '5678'), secretParts: [j('138', '1234', '5678'), '1234'] },
  { rule: 'cn-mobile', text: j('+86 ', '139-8765-', '4321'), secretParts: ['139-8765-4321', '8765'] },
  // 00 is the international prefix dialled from mainland China: 0086 is as common as +86.
  { rule: 'cn-mobile', text: j('0086 ', '137', '2468', '1357'), secretParts: [j('137', '2468', '1357'), '2468'] },
  { rule: 'cn-mobile', text: j('0086-', '136-1122-', '3344'), secretParts: ['136-1122-3344', '1122'] },
  { rule: 'cn-mobile', text: j('0086', '135', '9988', '7766'), secretParts: [j('135', '9988', '7766'), '9988'] },
  { rule: 'cn-resident-id', text: id1, secretParts: [id1, '19491231'] },
  { rule: 'cn-resident-id', text: id2, secretParts: [id2, '19900307'] },
  { rule: 'cn-resident-id', text: `${id2.slice(0, 6)} ${id2.slice(6, 14)} ${id2.slice(14)}`, secretParts: ['19900307', id2.slice(14)] },
  { rule: 'cn-resident-id', text: `${id1.slice(0, 6)}-${id1.slice(6, 14)}-${id1.slice(14)}`, secretParts: ['19491231', `-${id1.slice(14, 17)}`] },
  { rule: 'payment-card', text: j('4242 4242 ', '4242 4242'), secretParts: [j('4242 4242 ', '4242 4242'), j('42424242', '42424242')] },
  { rule: 'payment-card', text: j('5555', '5555', '5555', '4444'), secretParts: [j('5555', '5555', '5555', '4444')] },
  { rule: 'payment-card', text: j('3782-822463-', '10005'), secretParts: ['3782-822463-10005', '822463'] },
  { rule: 'google-oauth-token', text: j('ya29.', 'a0AfH6SMBx9Kq2Lm3Nn4Oo5Pp6Qq7Rr8'), secretParts: ['a0AfH6SMBx9Kq2Lm3Nn4Oo5Pp6Qq7Rr8'] },
  { rule: 'google-oauth-client-secret', text: j('GOCSPX-', '1a2B3c4D5e6F7g8H9i0J1k2L3m4N'), secretParts: ['1a2B3c4D5e6F7g8H9i0J1k2L3m4N'] },
  { rule: 'stripe-webhook-secret', text: j('whsec_', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), secretParts: ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] },
  { rule: 'npm-token', text: j('npm_', 'Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz'), secretParts: ['Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz'] },
  { rule: 'gitlab-token', text: j('glpat-', 'Zx9Yw8Vu7Ts6Rq5Po4Nm'), secretParts: ['Zx9Yw8Vu7Ts6Rq5Po4Nm'] },
  { rule: 'huggingface-token', text: j('hf_', 'AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh'), secretParts: ['AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh'] },
  {
    rule: 'sendgrid-api-key',
    text: j('SG.', 'ngeVfQFYQlKU0ufo8x5d1A', '.', 'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr'),
    secretParts: ['ngeVfQFYQlKU0ufo8x5d1A', 'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr'],
  },
  { rule: 'cli-secret-flag', text: j('mysqldump --password ', 'hunter2x', ' --user root'), secretParts: ['hunter2x'] },
  { rule: 'cli-secret-flag', text: j('deploy --api-key "', 'k3yV4lue99', '" --region eu'), secretParts: ['k3yV4lue99'] },
  { rule: 'cli-secret-flag', text: j('psql --db-password ', 'Pgs3cr3t!'), secretParts: ['Pgs3cr3t!'] },
  { rule: 'curl-user-password', text: j('curl -s -u alice:', 's3cr3tpw', ' https://api.example.com/v1'), secretParts: ['s3cr3tpw'] },
  { rule: 'curl-user-password', text: j("curl -X POST --user 'bob:", 'pa55:w0rd', "' https://x.example"), secretParts: ['pa55', 'w0rd'] },
  { rule: 'shopify-token', text: j('shpat_', '0a1b2c3d4e5f60718293a4b5c6d7e8f9'), secretParts: ['0a1b2c3d4e5f60718293a4b5c6d7e8f9'] },
  { rule: 'shopify-token', text: j('shpss_', 'f9e8d7c6b5a493827160f5e4d3c2b1a0'), secretParts: ['f9e8d7c6b5a493827160f5e4d3c2b1a0'] },
  { rule: 'digitalocean-token', text: j('dop_v1_', 'a1b2c3d4e5f60718'.repeat(4)), secretParts: ['a1b2c3d4e5f60718'] },
  { rule: 'digitalocean-token', text: j('dor_v1_', '0f1e2d3c4b5a6978'.repeat(4)), secretParts: ['0f1e2d3c4b5a6978'] },
  { rule: 'mailgun-api-key', text: j('key-', '3ab6f0c94d2e7a18b5c0d9e4f1a2b3c4'), secretParts: ['3ab6f0c94d2e7a18b5c0d9e4f1a2b3c4'] },
  { rule: 'mysql-password-flag', text: j('mysql -p', 'S3cretPass'), secretParts: ['S3cretPass'] },
  { rule: 'square-token', text: j('sq0atp-', 'Ab1Cd2Ef3Gh4Ij5Kl6Mn7O'), secretParts: ['Ab1Cd2Ef3Gh4Ij5Kl6Mn7O'] },
  { rule: 'square-token', text: j('sq0csp-', 'Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw'), secretParts: ['Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw'] },
  { rule: 'square-token', text: j('EAAA', 'EOuLQObrVwJvCvoio2XBy0BxHGKBqyyqW3wAFv6e_ZwKqnR2vSQ5bnMXy2NT'), secretParts: ['EOuLQObrVwJvCvoio2XBy0BxHGKBqyyqW3wAFv6e'] },
  { rule: 'twilio-api-key', text: j('SK', '2b7e151628aed2a6abf7158809cf4f3c'), secretParts: ['2b7e151628aed2a6abf7158809cf4f3c'] },
  {
    rule: 'discord-webhook',
    text: j('https://discord.com/api/webhooks/', '112233445566778899/', 'Xk9Lm8Nn7Oo6Pp5Qq4Rr3Ss2Tt1Uu0Vv-Ww_Xx9Yy8Zz7'),
    secretParts: ['Xk9Lm8Nn7Oo6Pp5Qq4Rr3Ss2Tt1Uu0Vv'],
  },
  { rule: 'mysql-password-flag', text: j('mysql -u root -p', 'S3cretPass', ' -h db shop'), secretParts: ['S3cretPass'] },
  { rule: 'mysql-password-flag', text: j('mysqldump -u root -p', 'S3cret', ' db > dump.sql'), secretParts: ['S3cret'] },
  {
    rule: 'oauth-code',
    text: j('https://app.example.com/callback?code=', '4/0AX4XfWhQz8Lm2Nn7Oo', '&state=xyz'),
    secretParts: ['0AX4XfWhQz8Lm2Nn7Oo'],
  },
  { rule: 'oauth-code', text: j('GET /cb?state=af0ifjsldkj&code=', 'SplxlOBeZQQYbYS6WxSbIA'), secretParts: ['SplxlOBeZQQYbYS6WxSbIA'] },
  { rule: 'oauth-code', text: j('<a href="/cb?state=xyz&amp;code=', 'SplxlOBeZQQYbYS6WxSbIA', '&amp;scope=email">'), secretParts: ['SplxlOBeZQQYbYS6WxSbIA'] },
  { rule: 'oauth-code', text: j('redirect to /cb?state=xyz\\u0026code=', 'SplxlOBeZQQYbYS6WxSbIA'), secretParts: ['SplxlOBeZQQYbYS6WxSbIA'] },
  {
    rule: 'oauth-code',
    text: j('/auth?redirect_uri=https%3A%2F%2Fapp%2Fcb%3Fcode%3D', '4%2F0AX4XfWhQz8Lm2Nn7Oo', '%26state%3Dxyz&client_id=1'),
    secretParts: ['0AX4XfWhQz8Lm2Nn7Oo'],
  },
  // Encoded twice: a redirect URL inside a parameter of a URL that is itself a parameter.
  { rule: 'oauth-code', text: j('https://app.example/cb%253Fcode%253D', 'SplxlOBeZQQYbYS6WxSbIA'), secretParts: ['SplxlOBeZQQYbYS6WxSbIA'] },
  {
    rule: 'oauth-code',
    text: j('/login?next=https%253A%252F%252Fapp%252Fcb%253Fstate%253Dxyz%2526code%253D', '4%252F0AX4XfWhQz8Lm2Nn7Oo', '%2526scope%253Demail&x=1'),
    secretParts: ['0AX4XfWhQz8Lm2Nn7Oo'],
  },
  {
    rule: 'fullwidth-digits',
    text: j('手机', fullWidth(j('138', '1234', '5678'))),
    secretParts: [fullWidth('1234'), '1234', fullWidth(j('138', '1234', '5678'))],
  },
  { rule: 'fullwidth-digits', text: j('电话：＋８６ ', fullWidth('139-8765-4321')), secretParts: [fullWidth('8765'), '8765'] },
  { rule: 'fullwidth-digits', text: j('身份证', fullWidth(id2)), secretParts: [fullWidth('19900307'), '19900307', fullWidth(id2.slice(14, 17))] },
  { rule: 'fullwidth-digits', text: fullWidth(j('4242 4242 ', '4242 4242')), secretParts: [fullWidth('4242 4242'), '42424242'] },
  { rule: 'twilio-auth-token', text: j('Client("AC', twilioSid, '", "', twilioToken, '")'), secretParts: [twilioToken] },
  { rule: 'twilio-auth-token', text: j('AC', twilioSid, ':', twilioToken), secretParts: [twilioToken] },
  { rule: 'gitlab-token', text: j('gldt-', 'Ab3dEf6hIj9lMn2pQr5t'), secretParts: ['Ab3dEf6hIj9lMn2pQr5t'] },
  { rule: 'gitlab-token', text: j('glrt-t1_', body40.slice(0, 27), '.01', 'k9x2m7q'), secretParts: [body40.slice(0, 27), 'k9x2m7q'] },
  { rule: 'gitlab-token', text: j('GR1348941', 'Zx9Yw8Vu7Ts6Rq5Po4Nm'), secretParts: ['Zx9Yw8Vu7Ts6Rq5Po4Nm'] },
  { rule: 'gitlab-token', text: j('glptt-', hex40), secretParts: [hex40] },
  { rule: 'gitlab-token', text: j('glcbt-', '64_', 'Ab3dEf6hIj9lMn2pQr5t'), secretParts: ['Ab3dEf6hIj9lMn2pQr5t'] },
  { rule: 'gitlab-token', text: j('gloas-', body40, hex40.slice(0, 24)), secretParts: [body40] },
  { rule: 'pypi-token', text: j('pypi-', 'AgEIcHlwaS5vcmc', pypiBody), secretParts: [pypiBody.slice(0, 30), pypiBody.slice(30)] },
  { rule: 'huggingface-token', text: j('api_org_', 'AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh'), secretParts: ['AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh'] },
  { rule: 'age-secret-key', text: j('AGE-SECRET-', 'KEY-1', ageBody), secretParts: [ageBody] },
  { rule: 'vault-token', text: j('hvs.', vaultBody), secretParts: [vaultBody.slice(0, 40), vaultBody.slice(40)] },
  { rule: 'vault-token', text: j('hvb.', vaultBody, vaultBody.slice(0, 50)), secretParts: [vaultBody.slice(0, 40)] },
  { rule: 'doppler-token', text: j('dp.pt.', body40, 'a1B'), secretParts: [body40] },
  { rule: 'doppler-token', text: j('dp.st.', 'prd.', body40), secretParts: [body40] },
  { rule: 'heroku-api-key', text: j('HRKU-', 'AA', body40, body40.slice(0, 18)), secretParts: [body40] },
  { rule: 'heroku-api-key', text: j('heroku_key: ', herokuUuid), secretParts: [herokuUuid, herokuUuid.slice(-12)] },
  { rule: 'planetscale-token', text: j('pscale_pw_', body40), secretParts: [body40] },
  { rule: 'databricks-token', text: j('dapi', hex40.slice(0, 32)), secretParts: [hex40.slice(0, 32)] },
  { rule: 'azure-ad-client-secret', text: j('Xy7', '8Q~', body40.slice(0, 34)), secretParts: [body40.slice(0, 34)] },
  { rule: 'linear-api-key', text: j('lin_api_', body40), secretParts: [body40] },
  { rule: 'notion-token', text: j('ntn_', '31415926535', body40.slice(0, 35)), secretParts: [j('31415926535', body40.slice(0, 35))] },
  { rule: 'postman-api-key', text: j('PMAK-', hex40.slice(0, 24), '-', hex40.slice(6, 40)), secretParts: [hex40.slice(0, 24), hex40.slice(6, 40)] },
  { rule: 'atlassian-api-token', text: j('ATATT3', 'xFfGF0', body40, body40, body40, body40, '_', body40.slice(0, 25), '=8A1B2C3D'), secretParts: [body40] },
  { rule: 'perplexity-api-key', text: j('pplx-', body40, 'a1B2c3D4'), secretParts: [body40] },
  { rule: 'sentry-token', text: j('sntryu_', hex40, hex40.slice(0, 24)), secretParts: [hex40] },
  { rule: 'sentry-token', text: j('sntrys_', sentryOrgBody), secretParts: [sentryOrgBody.slice(0, 40), body40] },
  { rule: 'grafana-token', text: j('glsa_', body40.slice(0, 32), '_', hex40.slice(0, 8)), secretParts: [body40.slice(0, 32)] },
  { rule: 'grafana-token', text: j('glc_', body40, 'eyJvIjoiMTIzNDU2'), secretParts: [body40] },
  { rule: 'grafana-token', text: j('eyJrIjoi', body40, body40), secretParts: [body40] },
  { rule: 'onepassword-service-account-token', text: j('ops_', opsBody), secretParts: [opsBody.slice(0, 40), body40] },
  { rule: 'datadog-api-key', text: j('DATADOG_APP_KEY = ', hex40), secretParts: [hex40] },
  { rule: 'datadog-api-key', text: j('DD_APP_KEY=', hex40), secretParts: [hex40] },
  { rule: 'datadog-api-key', text: j("datadog.app_key: '", hex40, "'"), secretParts: [hex40] },
  {
    rule: 'telegram-bot-token',
    text: j('https://api.telegram.org/bot', '7123456789:', 'AAH', body40.slice(0, 32), '/sendMessage'),
    secretParts: [body40.slice(0, 32)],
  },
];

/** Puts `secret` into every text field of a record, in the shapes tools produce. */
function recordWith(secret: string): ToolExecutionRecord {
  return makeRecord({
    status: 'failure',
    input_params: {
      query: `look up ${secret} please`,
      nested: { deeper: { note: secret, list: ['x', `item ${secret}`] } },
      list: [secret, { inner: `(${secret})` }],
      json: JSON.stringify({ body: { text: `value=${secret}` } }),
    },
    raw_output: JSON.stringify({ ok: false, body: `upstream echoed ${secret}`, nested: JSON.stringify({ s: secret }) }),
    error_message: `request failed for ${secret}: 401`,
    error_stack: `Error: bad credential ${secret}\n    at call (/app/tool.js:10:5)\n    at run (/app/runtime.js:3:1)`,
    context_snapshot: { intent: `find ${secret}`, session_id: 'sess-42', extra: [secret] },
    feedback: { action: 'escalate_to_user', hint: `the call sent ${secret}`, retryable: false, retry_after_ms: null },
    fault: { kind: 'http_error', params: { status: 401, echoed: secret, list: [`x ${secret}`] } },
    fallback: { role: 'primary', to: 'backup_tool', reason: `primary leaked ${secret}` },
  });
}

const KEY_SECRETS: Record<string, unknown> = {
  password: 'kv-secret-password',
  passwd: 'kv-secret-passwd',
  pwd: 'kv-secret-pwd',
  secret: 'kv-secret-secret',
  client_secret: 'kv-secret-client',
  api_key: 'kv-secret-api-key',
  apikey: 'kv-secret-apikey',
  'x-api-key': 'kv-secret-x-api-key',
  access_token: 'kv-secret-access',
  refresh_token: 'kv-secret-refresh',
  id_token: 'kv-secret-id',
  token: 'kv-secret-token',
  auth: 'kv-secret-auth',
  Authorization: 'kv-secret-authorization',
  'Proxy-Authorization': 'kv-secret-proxy',
  cookie: 'kv-secret-cookie',
  'Set-Cookie': 'kv-secret-set-cookie',
  session: 'kv-secret-session',
  session_token: 'kv-secret-session-token',
  sessionid: 'kv-secret-sessionid',
  private_key: 'kv-secret-private-key',
  credentials: { user: 'kv-secret-cred-user', nested: ['kv-secret-cred-list'] },
  PASSWORD_HASH: 'kv-secret-hash',
  dbPassword: 'kv-secret-camel',
  pin: 'kv-secret-pin',
  card_pin: 'kv-secret-card-pin',
  cvv: 'kv-secret-cvv',
  CVC2: 'kv-secret-cvc2',
  security_code: 'kv-secret-security-code',
};

const BENIGN = {
  max_tokens: 512,
  token_count: 17,
  prompt_tokens: 12,
  completion_tokens: 30,
  total_tokens: 42,
  tokens: 3,
  usage: { input_tokens: 7, output_tokens: 9, max_token: 100 },
  text: 'The weather in Paris is cloudy with light winds from the west.',
  created_at: '2024-05-01T10:00:00.000Z',
  date: '2024-05-01',
  compact_date: '20240501123045',
  epoch_ms: 1714557600000,
  epoch_text: '1714557600000',
  uuid: '0190a6e2-7b5c-7d3e-9f10-123456789abc',
  order_id: 'ORD-12345678',
  not_luhn: '4242424242424241',
  not_luhn_spaced: '4111 1111 1111 1112',
  eleven_digits: '23456789012',
  eleven_other: '12345678901',
  id_bad_checksum: '110105194912310021',
  id_bad_checksum_spaced: '110105 19491231 0021',
  url: 'https://api.example.com/v1/weather?city=Paris&days=3',
  session_id: 'sess-8f2c1d',
  sessionId: 'sess-9a0b',
  city: 'Paris',
  unit: 'celsius',
  zh: '今天北京天气晴朗，最高气温二十五度，适合出行。',
  zh_mixed: '订单号 ORD-20240501 已发货，预计3天送达。',
  page_token: 'CiAKGjBpNDd2Nmp2Zml2cXRiX',
  token_type: 'bearer',
  authenticated: true,
  author: 'Ann Lee',
  idempotency_key: 'b9f3c2a1-0d4e-4f5a-8b6c-7d8e9f0a1b2c',
  version: '1.2.3',
  price: 19.99,
  phone_like_float: Number(j('0.138', '12345678')),
  words: 'basic plan, bearer of news, passing grade, automatic token bucket',
  path: '/usr/local/lib/node_modules/app/index.js',
  sk_like: 'task-runner-worker-pool',
  spin: 3,
  shipping: 'express',
  mapping: 'pinned to the spinner',
  cli_flags: 'node --max-old-space-size 4096 --token-count 5 --auth-mode basic --verbose',
  curl_user_only: 'curl -u alice https://api.example.com/v1/status',
  python: 'def __init__(self, __name__): pass',
  mysql_prompt: 'mysql -u root -p -P 3306 -h db.internal shop',
  key_words: 'primary_key_constraint on key-value store; the SKU basket was asked for twice',
  shop_words: 'workshop pushpin; schema_v1_final; Square EAAA plan',
  discord_channel: 'https://discord.com/channels/112233445566778899/998877665544332211',
  password_changed_at: '2026-01-01T10:00:00.000Z',
  secret_count: 3,
  password_set: true,
  has_api_key: false,
  api_key_expires_at: '2026-03-01T00:00:00.000Z',
  password_policy: 'at least 12 characters',
  code_prose: 'error code=404 at line 3; status code = 500; zip code=10001; postcode=SW1A1AA',
  code_query: 'https://api.example.com/v1/fx?code=EUR&lang=zh-Hans#code=404 and https://httpstat.us/?code=503',
  html_entities: '&copy; 2026 Example &amp; Co, see #contact or ?color=blue&count=3',
  code_escaped: '<a href="/fx?lang=fr&amp;code=EUR&amp;copy=1">&amp;copy;</a> /geo?ip=1\\u0026country=US\\u0026code=404',
  code_encoded: 'next=https%3A%2F%2Fhttpstat.us%2F%3Fcode%3D503%26lang%3Dzh-Hans%26code%3D404&v=2',
  zh_wide_digits: '２０２６年１２月３日下单，订单２３４５６７８９０１２，邮编１０００１０，共１２３４５６７８９０１２３件',
  id_bad_checksum_wide: fullWidth('110105194912310021'),
  hex_ids: 'traceparent 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01, md5 9e107d9d372bb6826bd81d3542a419d6',
  hex_pair: 'replace in place: 0123456789abcdef0123456789abcdef:fedcba9876543210fedcba9876543210',
  twilio_sid_alone: 'account ACe0123456789abcdef0123456789abcd, /2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages.json',
  // Near misses of the token formats added after a gitleaks audit: the prefix without a token.
  gitlab_words: 'global settings; glad the glass; glpat-short and gldt-config; runner GR1348941 only; glptt-dead',
  registry_words: 'pip download from the pypi-simple mirror (pypi-AgEIcHlwaS5vcmc is the prefix); typing.Optional; npm_config_cache',
  cloud_words: 'at settle (node_modules/axios/lib/adapters/http.js:500:12); hvs.example and dp.pt.config; HRKU-AA prefix; pscale_pw_short; dapi0123',
  azure_near: 'build 1.2Q~x, ~/.config/azure, version 4Q~ of the spec',
  saas_words: 'in_array(lin_api_v2); ntn_12345; PMAK-notes; the sntryu_ prefix; pplx-ai; ATATT3 in the docs; glsa_x and glc_y',
  provider_words: 'the datadog agent 7.52.0 started; datadog trace_id=4bf92f3577b34da6a3ce929d0e0e4736; the dog walked; heroku app: 5f8c2a1e',
  telegram_words: 'the telegram bot 12345 answered: ok; integration test 3:AAb done',
  age_words: 'AGE-SECRET-KEY-1 is the prefix; page-key-1 of 3',
};

describe('value rules', () => {
  it('has a corpus entry for every built-in rule', () => {
    const covered = new Set(SECRETS.map((s) => s.rule));
    for (const rule of BUILTIN_RULES) expect(covered, rule.id).toContain(rule.id);
  });

  it.each(SECRETS.map((s) => [s.rule, s] as const))('%s: gone from every text field of a record', (_rule, secret) => {
    const out = JSON.stringify(defaultRedactor.record(recordWith(secret.text)));
    for (const part of secret.secretParts) expect(out).not.toContain(part);
    // The surrounding text is still there.
    expect(out).toContain('upstream echoed');
    expect(out).toContain('sess-42');
  });

  it.each(SECRETS.map((s) => [s.rule, s] as const))('%s: caught on its own and inside a sentence', (_rule, secret) => {
    for (const text of [secret.text, `x ${secret.text} y`, `"${secret.text}"`, `(${secret.text}),`]) {
      const out = defaultRedactor.text(text);
      for (const part of secret.secretParts) expect(out).not.toContain(part);
    }
  });

  it('finds from each @ exactly what the rule regex finds', () => {
    // Random texts over the characters the email regex and its lookarounds care about.
    const alphabet = 'ab.-_%+@@//: \n9Z';
    let seed = 0x2545f491;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const texts = ['ann@example.com', 'git@github.com:org/repo.git', 'ssh://git@host.io/x', 'a@b.co_x@c.io', `${'x'.repeat(64)}@long.io ${'y'.repeat(65)}@long.io`, 'a.b@c.d.museum.'];
    for (let i = 0; i < 5000; i++) texts.push(Array.from({ length: 4 + rand(40) }, () => alphabet[rand(alphabet.length)]).join('') + ['', 'x@y.com', '@q.org'][rand(3)]!);
    const rule = BUILTIN_RULES.find((r) => r.id === 'email')!;
    for (const text of texts) expect(rule.replaceIn!(text, rule.mask), text).toBe(text.replace(rule.pattern, rule.mask));
  });

  it('is idempotent', () => {
    for (const secret of SECRETS) {
      const once = defaultRedactor.text(`a ${secret.text} b`);
      expect(defaultRedactor.text(once)).toBe(once);
    }
  });

  it('keeps JSON text valid when a mask replaces a JSON number', () => {
    const out = defaultRedactor.text(JSON.stringify({ phone: PHONE_NUMBER, pan: CARD_NUMBER, name: 'x' }));
    expect(JSON.parse(out)).toEqual({ phone: '138****5678', pan: '[CARD …4242]', name: 'x' });
  });

  it('masks personal data used as an object key', () => {
    const email = j('ann', '@example.com');
    expect(defaultRedactor.value({ [email]: { visits: 3 } })).toEqual({ '[EMAIL]@example.com': { visits: 3 } });
    expect(defaultRedactor.text(JSON.stringify({ [email]: 1 }))).toBe('{"[EMAIL]@example.com":1}');
  });

  it('redacts long digit values held as numbers', () => {
    expect(defaultRedactor.value({ phone: PHONE_NUMBER })).toEqual({ phone: '138****5678' });
    expect(defaultRedactor.value({ pan: CARD_NUMBER })).toEqual({ pan: '[CARD …4242]' });
    expect(defaultRedactor.value({ at: 1714557600000, n: 13 })).toEqual({ at: 1714557600000, n: 13 });
  });

  it('finds secrets in strings longer than the scan buffer', () => {
    const filler = 'lorem ipsum dolor sit amet '.repeat(400);
    const key = j('ghp_', 'aB3dEfGhIjKlMnOpQrStUvWxYz0123456789');
    const out = defaultRedactor.text(`${filler}${key} ${filler}你好${j('13912', '345678')} ${j('lin_api_', body40)} ${j('dapi', hex40.slice(0, 32))}`);
    expect(out).not.toContain('aB3dEfGhIjKlMnOpQrStUvWxYz0123456789');
    expect(out).not.toContain(j('13912', '345678'));
    // The less common prefixes are told apart by a second look, which reads such a string by characters.
    expect(out).not.toContain(body40);
    expect(out).not.toContain(hex40.slice(0, 32));
    expect(out.length).toBeGreaterThan(20000);
  });
});

describe('masks keep enough shape to debug', () => {
  const r = defaultRedactor;
  it.each([
    [j('sk-proj-', openaiBody), 'sk-proj-…[REDACTED]'],
    [j('sk-ant-api03-', anthropicBody), 'sk-ant-api03-…[REDACTED]'],
    [j('ghp_', 'aB3dEfGhIjKlMnOpQrStUvWxYz0123456789'), 'ghp_…[REDACTED]'],
    [j('github_pat_', '11ABCDEFG0abcdefghijkl_MNOPQRSTUVWXYZ0123456789'), 'github_pat_…[REDACTED]'],
    [j('xoxb-', '1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'), 'xoxb-…[REDACTED]'],
    [j('sk_live_', '51H8xYzAbCdEfGhIjKlMnOpQr'), 'sk_live_…[REDACTED]'],
    [j('AKIA', 'Z3XAMPLE7QWERTY2'), 'AKIA…[REDACTED]'],
    [j('AIza', 'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'), 'AIza…[REDACTED]'],
    [jwt, 'eyJ…[REDACTED]'],
    [j('Bearer ', 'f81d4fae7dec11d0a76500a0c91e6bf6'), 'Bearer [REDACTED]'],
    [j('Basic ', Buffer.from('bob:pw12345').toString('base64')), 'Basic [REDACTED]'],
    [j('4242 4242 ', '4242 4242'), '[CARD …4242]'],
    [j('3782-822463-', '10005'), '[CARD …0005]'],
    [j('alice.smith', '@example.com'), '[EMAIL]@example.com'],
    [j('138', '1234', '5678'), '138****5678'],
    [j('+86 ', '139-8765-4321'), '+86 139****4321'],
    [j('0086 ', '139-8765-4321'), '0086 139****4321'],
    [id1, `${id1.slice(0, 6)}***********${id1.slice(17)}`],
    [fullWidth(j('138', '1234', '5678')), '138****5678'],
    [j('身份证：', fullWidth(id2)), `身份证：${id2.slice(0, 6)}***********${id2.slice(17)}`],
    // A check character of 10 is written X, in full width too.
    [j('身份证', fullWidth(cnId('11010119900307109'))), '身份证110101***********X'],
    [j('postgres://app_user:', 'pw', '@db:5432/app'), 'postgres://app_user:[REDACTED]@db:5432/app'],
    [
      j('https://hooks.slack.com/services/', 'T0A1B2C3D/B4E5F6G7H/Xk9Lm8Nn7Oo6Pp5Qq4Rr3Ss2'),
      'https://hooks.slack.com/services/…[REDACTED]',
    ],
    [
      j('-----BEGIN ', 'EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC ', 'PRIVATE KEY-----'),
      '-----BEGIN EC PRIVATE KEY-----…[REDACTED]-----END EC PRIVATE KEY-----',
    ],
    [j('glrt-t1_', body40.slice(0, 27), '.01', 'k9x2m7q'), 'glrt-…[REDACTED]'],
    [j('GR1348941', 'Zx9Yw8Vu7Ts6Rq5Po4Nm'), 'GR1348941…[REDACTED]'],
    [j('pypi-', 'AgEIcHlwaS5vcmc', pypiBody), 'pypi-…[REDACTED]'],
    [j('hvs.', vaultBody), 'hvs.…[REDACTED]'],
    [j('dp.st.', 'prd.', body40), 'dp.st.…[REDACTED]'],
    [j('HRKU-', 'AA', body40, body40.slice(0, 18)), 'HRKU-…[REDACTED]'],
    [j('heroku_key: ', herokuUuid), 'heroku_key: [REDACTED]'],
    [j('Xy7', '8Q~', body40.slice(0, 34)), 'Xy78Q~…[REDACTED]'],
    [j('sntrys_', sentryOrgBody), 'sntrys_…[REDACTED]'],
    [j('eyJrIjoi', body40, body40), 'eyJrIjoi…[REDACTED]'],
    [j('DD_APP_KEY=', hex40), 'DD_APP_KEY=[REDACTED]'],
    [j('https://api.telegram.org/bot', '7123456789:', 'AAH', body40.slice(0, 32), '/getMe'), 'https://api.telegram.org/bot7123456789:[REDACTED]/getMe'],
  ])('%s', (input, expected) => {
    expect(r.text(input)).toBe(expected);
  });

  it('keeps the key and assignment around an AWS secret', () => {
    expect(r.text(j('AWS_SECRET_ACCESS_KEY=', awsSecret))).toBe('AWS_SECRET_ACCESS_KEY=[REDACTED]');
  });

  it('masks a private key cut off by truncation', () => {
    const cut = JSON.stringify({ key: j('-----BEGIN ', 'PRIVATE KEY-----\n', pemBody) }).slice(0, -2);
    const out = r.text(cut);
    expect(out).not.toContain('MIIEowIBAAKCAQEA7bq3xQ9rTz');
    expect(out).toContain('-----BEGIN PRIVATE KEY-----…[REDACTED]');
  });
});

describe('key rules', () => {
  const r = defaultRedactor;
  /** Every `kv-secret-…` marker that survived. */
  const secretValues = (v: unknown): string[] => JSON.stringify(v).match(/kv-secret-[a-z0-9-]+/g) ?? [];

  it('hides a PIN or card code under its key in objects, and in text beside another secret key; text with only `shipping` is left alone', () => {
    expect(r.value({ order: { pin: '4821', card: { cvv: '123', security_code: '999' }, shipping: 'express' } })).toEqual({
      order: { pin: '[REDACTED]', card: { cvv: '[REDACTED]', security_code: '[REDACTED]' }, shipping: 'express' },
    });
    expect(JSON.parse(r.text(JSON.stringify({ pin: '4821', password: 'x9y8z7' })))).toEqual({ pin: '[REDACTED]', password: '[REDACTED]' });
    const order = JSON.stringify({ order_id: 'ORD-10041', shipping: { method: 'express' }, status: 'shipped' });
    expect(r.text(order)).toBe(order);
  });

  it('replaces the whole value under a secret key, in objects and arrays at any depth', () => {
    const input = { a: { b: [{ ...KEY_SECRETS }, KEY_SECRETS] }, top: KEY_SECRETS };
    const out = r.value(input);
    expect(secretValues(out)).toEqual([]);
    expect(out.top['credentials']).toBe('[REDACTED]');
    expect(out.top['Set-Cookie']).toBe('[REDACTED]');
  });

  it('applies to JSON held inside strings and re-serializes it', () => {
    expect(r.value({ body: '{"password":"x"}' })).toEqual({ body: '{"password":"[REDACTED]"}' });
    expect(r.text('{"password":"x","user":"bob"}')).toBe('{"password":"[REDACTED]","user":"bob"}');
    const nested = JSON.stringify({ outer: JSON.stringify({ deep: { ...KEY_SECRETS } }) });
    const out = r.text(nested);
    expect(secretValues(out)).toEqual([]);
    expect(JSON.parse(JSON.parse(out).outer)).toMatchObject({ deep: { password: '[REDACTED]', credentials: '[REDACTED]' } });
  });

  it('applies to key/value pairs in free text, truncated JSON and double-encoded JSON', () => {
    const cases = [
      'login failed password=kv-secret-a&user=bob',
      'api_key: kv-secret-b, retrying',
      "config {'client_secret': 'kv-secret-c'}",
      '{"user":"bob","token":"kv-secret-d","city":"Par',
      '{"credentials":{"user":"kv-secret-e","x":1},"a":',
      JSON.stringify({ body: JSON.stringify({ password: 'kv-secret-f' }) }).slice(0, -3),
      'Cookie: sid=kv-secret-g; theme=kv-secret-h\nAccept: */*',
      'Authorization: Token kv-secret-i',
      '"set-cookie": ["kv-secret-j=1", "b=2"]',
    ];
    for (const text of cases) expect(secretValues(r.text(text)), text).toEqual([]);
    expect(r.text('Authorization: Token abc\nAccept: */*')).toBe('Authorization: Token [REDACTED]\nAccept: */*');
    expect(r.text('Cookie: a=1; b=2\nHost: x')).toBe('Cookie: [REDACTED]\nHost: x');
    expect(r.text('password=hunter2&user=bob')).toBe('password=[REDACTED]&user=bob');
  });

  it('are applied in every field of a record', () => {
    const json = JSON.stringify({ ok: false, headers: { ...KEY_SECRETS } });
    const rec = makeRecord({
      input_params: { request: { ...KEY_SECRETS }, batch: [KEY_SECRETS], raw: json },
      raw_output: json,
      error_message: 'login failed: password=kv-secret-msg, api_key: kv-secret-msg2',
      error_stack: 'Error: token=kv-secret-stack\n    at x (/a.js:1:1)',
      context_snapshot: { session_id: 'sess-7', auth: { ...KEY_SECRETS } },
      feedback: { action: 'escalate_to_user', hint: 'refresh_token=kv-secret-hint expired', retryable: false, retry_after_ms: null },
      fault: { kind: 'http_error', params: { ...KEY_SECRETS } },
    });
    const out = r.record(rec);
    expect(secretValues(out)).toEqual([]);
    expect(out.context_snapshot['session_id']).toBe('sess-7');
    expect(JSON.parse(out.raw_output!)).toMatchObject({ ok: false, headers: { password: '[REDACTED]' } });
  });

  it('applies to name/value pair objects: HAR headers, environment lists, tags', () => {
    const har = { headers: [{ name: 'Cookie', value: 'kv-secret-har' }, { name: 'Accept', value: 'json' }] };
    expect(r.value(har)).toEqual({ headers: [{ name: 'Cookie', value: '[REDACTED]' }, { name: 'Accept', value: 'json' }] });
    expect(r.value([{ name: 'DB_PASSWORD', value: 'kv-secret-env' }, { name: 'REGION', value: 'eu' }])).toEqual([
      { name: 'DB_PASSWORD', value: '[REDACTED]' },
      { name: 'REGION', value: 'eu' },
    ]);
    expect(r.value({ Tags: [{ Key: 'api_key', Value: 'kv-secret-tag' }] })).toEqual({ Tags: [{ Key: 'api_key', Value: '[REDACTED]' }] });
    expect(r.text('[{"key":"X-Api-Key","value":"kv-secret-json"}]')).toBe('[{"key":"X-Api-Key","value":"[REDACTED]"}]');
    // A form field named password holds one too; other fields of the object stay.
    const form = { name: 'password', value: 'kv-secret-field', type: 'password', label: 'Password' };
    expect(r.value(form)).toEqual({ name: 'password', value: '[REDACTED]', type: 'password', label: 'Password' });
    const plain = [{ name: 'Ann', value: 42 }, { key: 'city', value: 'Paris' }];
    expect(r.value(plain)).toBe(plain);
  });

  it('applies to header lists, XML elements and query strings', () => {
    expect(r.value(['Host', 'example.com', 'Cookie', 'kv-secret-raw', 'Accept', '*/*'])).toEqual([
      'Host',
      'example.com',
      'Cookie',
      '[REDACTED]',
      'Accept',
      '*/*',
    ]);
    expect(r.value([['authorization', 'kv-secret-pair'], ['accept', 'json']])).toEqual([
      ['authorization', '[REDACTED]'],
      ['accept', 'json'],
    ]);
    expect(r.text('<user><name>bob</name><password type="plain">kv-secret-xml</password></user>')).toBe(
      '<user><name>bob</name><password type="plain">[REDACTED]</password></user>',
    );
    expect(r.text('GET /v1/weather?city=Paris&api_key=kv-secret-q&days=3')).toBe('GET /v1/weather?city=Paris&api_key=[REDACTED]&days=3');
  });

  it('keeps JSON text valid when a numeric secret is replaced in place', () => {
    const cut = '{"password":123456,"city":"Paris","pad":"';
    expect(r.text(cut)).toBe('{"password":"[REDACTED]","city":"Paris","pad":"');
  });

  it('tells counters and cursors from credentials by the whole name', () => {
    expect(r.value({ max_token: 5, next_page_token: 'c1', total_access_token: 'kv-secret-t', num_api_token: 'kv-secret-n' })).toEqual({
      max_token: 5,
      next_page_token: 'c1',
      total_access_token: '[REDACTED]',
      num_api_token: '[REDACTED]',
    });
  });

  it('redacts numbers under clearly secret keys, but never a boolean (one bit hides nothing)', () => {
    expect(r.value({ password: 123456, pin: 1234, secret: true, pin_pwd: 0, api_key: false })).toEqual({
      password: '[REDACTED]',
      pin: '[REDACTED]',
      secret: true,
      pin_pwd: '[REDACTED]',
      api_key: false,
    });
    expect(r.text('password=123456 pin=1234 secret=true')).toBe('password=[REDACTED] pin=[REDACTED] secret=true');
    expect(JSON.parse(r.text('{"password":123456,"secret":true}'))).toEqual({ password: '[REDACTED]', secret: true });
  });

  it('keeps metadata about a secret: a qualifier after the secret word, or a has/is question', () => {
    const meta = {
      password_changed_at: '2026-01-01T10:00:00Z',
      secret_count: 3,
      password_set: true,
      has_api_key: false,
      hasApiKey: 'yes',
      is_token_valid: 'no',
      api_key_expires_at: '2026-03-01',
      passwordMinLength: 12,
      password_len: 9,
      password_policy: 'min 12 characters, one digit',
      secret_type: 'opaque',
      client_secret_expires_at: 0,
      PASSWORD_REQUIRED: 'always',
    };
    expect(r.value(meta)).toBe(meta);
    expect(r.text(JSON.stringify(meta))).toBe(JSON.stringify(meta));
    expect(r.text('password_changed_at=2026-01-01 secret_count=3 password_set=true')).toBe('password_changed_at=2026-01-01 secret_count=3 password_set=true');
    // The qualifier must be the last word; the same words elsewhere do not make a secret benign.
    expect(r.value({ password_hash: 'h', secret_id: 's', set_password: 'p', at_password: 'q', secret_count_value: 'v' })).toEqual({
      password_hash: '[REDACTED]',
      secret_id: '[REDACTED]',
      set_password: '[REDACTED]',
      at_password: '[REDACTED]',
      secret_count_value: '[REDACTED]',
    });
  });

  it('keeps when a secret changed, how it is made and where it is kept', () => {
    const meta = {
      password_last_changed: '2024-01-01T00:00:00Z',
      api_key_created: 1700000000,
      password_hash_algorithm: 'argon2id',
      token_ttl: '15m',
      key_format: 'pem',
      secretKeyRef: { name: 'db-secret', key: 'password' },
      credential_source: 'Ec2InstanceMetadata',
      secret_arn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:prod-db',
    };
    expect(r.value(meta)).toBe(meta);
    expect(r.value({ created_token: 'Zq8vR2mK7xT4pL9w', secret_source_value: 'Zq8vR2mK7xT4pL9w' })).toEqual({ created_token: '[REDACTED]', secret_source_value: '[REDACTED]' });
  });

  it('keeps dependency versions under package names that say token, secret or jwt', () => {
    const manifest = { dependencies: { jsonwebtoken: '^9.0.2', 'passport-jwt': '4.0.1', 'secret-sauce': '~1.2.3', '@google-cloud/secret-manager': '>=5.6.0-beta.1' } };
    expect(r.value(manifest)).toBe(manifest);
    expect(r.text(JSON.stringify(manifest, null, 2))).toBe(JSON.stringify(manifest, null, 2));
    for (const text of ["implementation 'io.jsonwebtoken:jjwt-api:0.11.5'", 'notes = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"', 'token: 0.11.2', 'auth_token = lodash@4.17.21']) {
      expect(r.text(text)).toBe(text);
    }
    // Fewer than three dotted numbers is no version, and a password may be built from one.
    expect(r.text('token: 2024.1')).toBe('token: [REDACTED]');
    expect(r.text('password: hunter-2024.1.2')).toBe('password: [REDACTED]');
    expect(r.value({ db_password: '1.2.3', pin: '1.2.3' })).toEqual({ db_password: '[REDACTED]', pin: '[REDACTED]' });
  });

  it('keeps null and undefined under secret keys (nothing to hide, and useful to see)', () => {
    expect(r.value({ password: null, token: undefined })).toEqual({ password: null, token: undefined });
  });

  it('treats session_id as a trace key but redacts cookie-style session values', () => {
    const out = r.value({ session_id: 's-1', sessionId: 's-2', 'Session-Id': 's-3', sessionid: 'x', PHPSESSID: 'y', session: 'z' });
    expect(out).toEqual({
      session_id: 's-1',
      sessionId: 's-2',
      'Session-Id': 's-3',
      sessionid: '[REDACTED]',
      PHPSESSID: '[REDACTED]',
      session: '[REDACTED]',
    });
  });
});

describe('benign values', () => {
  const r = defaultRedactor;

  it('come through byte-identical, as the same reference', () => {
    const input = structuredClone(BENIGN);
    expect(r.value(input)).toBe(input);
    expect(JSON.stringify(input)).toBe(JSON.stringify(BENIGN));
  });

  it('come through byte-identical as text', () => {
    const json = JSON.stringify(BENIGN);
    expect(r.text(json)).toBe(json);
    for (const v of Object.values(BENIGN)) {
      const s = typeof v === 'string' ? v : JSON.stringify(v);
      expect(r.text(s)).toBe(s);
      expect(r.text(`note: ${s} (end)`)).toBe(`note: ${s} (end)`);
    }
  });

  it('leave a whole record untouched, as the same reference', () => {
    const json = JSON.stringify(BENIGN);
    const rec = makeRecord({
      input_params: BENIGN,
      raw_output: json,
      error_message: 'upstream returned 503 at 2024-05-01T10:00:00Z for ORD-12345678',
      error_stack: 'Error: upstream\n    at fetch (/app/node_modules/undici/index.js:120:9)',
      context_snapshot: { intent: 'weather lookup', session_id: 'sess-8f2c1d', model: 'gpt-4o-mini' },
      feedback: { action: 'retry', hint: 'retry in 2000 ms', retryable: true, retry_after_ms: 2000 },
      fault: { kind: 'latency', params: { delay_ms: 2000, max_tokens: 512 } },
    });
    expect(r.record(rec)).toBe(rec);
  });

  it('keep dates as ISO strings', () => {
    const at = new Date('2024-05-01T10:00:00.000Z');
    const input = { at, nested: [at] };
    expect(JSON.stringify(r.value(input))).toBe(JSON.stringify(input));
  });
});

describe('options', () => {
  it('custom rules run after the built-ins, always globally, with validate and mask', () => {
    const employee: RedactionRule = { id: 'employee', pattern: /EMP-(\d{6})/, mask: (m) => `EMP-…${m.slice(-2)}` };
    const even: RedactionRule = { id: 'even', pattern: /\bZ\d\b/, validate: (m) => Number(m.slice(1)) % 2 === 0 };
    const r = createRedactor({ rules: [employee, even] });
    expect(r.text('EMP-123456 and EMP-654321, Z2 Z3')).toBe('EMP-…56 and EMP-…21, [REDACTED] Z3');
    expect(r.value({ who: ['EMP-111111'] })).toEqual({ who: ['EMP-…11'] });
    // Short strings still get user rules; built-ins still apply.
    expect(r.text('Z4')).toBe('[REDACTED]');
    expect(r.text(j('mail ', 'bob', '@example.com EMP-000001'))).toBe('mail [EMAIL]@example.com EMP-…01');
    // The caller's RegExp is not modified.
    expect(employee.pattern.global).toBe(false);
  });

  it('a throwing user rule fails closed instead of throwing', () => {
    const r = createRedactor({
      rules: [
        { id: 'bad-validate', pattern: /AAA\d+/, validate: () => { throw new Error('boom'); } },
        { id: 'bad-mask', pattern: /BBB\d+/, mask: () => { throw new Error('boom'); } },
      ],
    });
    expect(r.text('AAA1 BBB2')).toBe('[REDACTED] [REDACTED]');
  });

  it('custom string keys match any spelling, in objects, JSON text and free text', () => {
    const r = createRedactor({ keys: ['tenant_key'] });
    expect(r.value({ 'Tenant-Key': 'a', tenantKey: 'b', TENANT_KEY: 'c', tenant: 'd' })).toEqual({
      'Tenant-Key': '[REDACTED]',
      tenantKey: '[REDACTED]',
      TENANT_KEY: '[REDACTED]',
      tenant: 'd',
    });
    expect(r.text('{"tenant-key":"abc","x":1}')).toBe('{"tenant-key":"[REDACTED]","x":1}');
    expect(r.text('using tenantKey=abc123 now')).toBe('using tenantKey=[REDACTED] now');
  });

  it('custom RegExp keys are tested against the raw key, case-insensitively', () => {
    const r = createRedactor({ keys: [/^x-internal-/] });
    expect(r.value({ 'X-Internal-Route': 'r1', 'x-public': 'p' })).toEqual({ 'X-Internal-Route': '[REDACTED]', 'x-public': 'p' });
    expect(r.text('{"x-internal-hop":"h"}')).toBe('{"x-internal-hop":"[REDACTED]"}');
  });

  it('allowKeys wins over built-in and custom keys, but value rules still apply', () => {
    const r = createRedactor({ allowKeys: ['session', 'Api-Key'], keys: ['session'] });
    const email = j('eve', '@example.com');
    expect(r.value({ session: 'visible', api_key: email, password: 'p' })).toEqual({
      session: 'visible',
      api_key: '[EMAIL]@example.com',
      password: '[REDACTED]',
    });
  });

  it('isSecretKey answers for a key alone, with custom keys and allowKeys', () => {
    const custom = createRedactor({ keys: ['tenant_key'], allowKeys: ['session_token'] });
    expect(['password', 'X-Api-Key', 'tenantKey', 'refresh_token'].map((k) => custom.isSecretKey(k))).toEqual([true, true, true, true]);
    expect(['max_tokens', 'session_token', 'city'].map((k) => custom.isSecretKey(k))).toEqual([false, false, false]);
    expect(createRedactor({ enabled: false }).isSecretKey('password')).toBe(false);
  });

  it('enabled: false passes everything through untouched', () => {
    const r = createRedactor({ enabled: false, keys: ['x'] });
    const input = { password: 'p', text: j('sk-proj-', openaiBody) };
    expect(r.value(input)).toBe(input);
    expect(r.text(input.text)).toBe(input.text);
    const rec = recordWith(input.text);
    expect(r.record(rec)).toBe(rec);
  });

  it('maxDepth replaces deeper objects', () => {
    const r = createRedactor({ maxDepth: 2 });
    expect(r.value({ a: { b: { c: { d: 1 } }, s: 'ok' } })).toEqual({ a: { b: { c: '[TRUNCATED_DEPTH]' }, s: 'ok' } });
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(JSON.stringify(defaultRedactor.value(deep))).toContain('[TRUNCATED_DEPTH]');
  });
});

describe('references and mutation', () => {
  const r = defaultRedactor;

  it('returns the same reference when nothing changed, at every level', () => {
    const params = { city: 'Paris', unit: 'celsius', days: 3 };
    expect(r.value(params)).toBe(params);
    const tree = { a: [1, { b: 'x' }], c: { d: { e: null } } };
    expect(r.value(tree)).toBe(tree);
    const text = 'plain text without anything sensitive in it';
    expect(r.text(text)).toBe(text);
  });

  it('copies only the path to a change; untouched subtrees keep their identity', () => {
    const keep = { deep: ['x', { y: 1 }] };
    const input = { keep, change: { password: 'p', other: 'o' }, list: [keep, 'plain'] };
    const out = r.value(input);
    expect(out).not.toBe(input);
    expect(out.keep).toBe(keep);
    expect(out.list).toBe(input.list);
    expect(out.change).toEqual({ password: '[REDACTED]', other: 'o' });
  });

  it('never mutates its input, even when frozen', () => {
    const input = Object.freeze({
      password: 'p',
      nested: Object.freeze({ email: j('ann', '@example.com'), list: Object.freeze(['x', j('bob', '@example.com')]) }),
    });
    const before = JSON.stringify(input);
    r.value(input);
    const rec = Object.freeze(recordWith(j('sk-proj-', openaiBody)));
    const recBefore = JSON.stringify(rec);
    r.record(rec);
    expect(JSON.stringify(input)).toBe(before);
    expect(JSON.stringify(rec)).toBe(recBefore);
  });

  it('returns a copy of the record with only the changed fields replaced', () => {
    const rec = recordWith(j('sk-proj-', openaiBody));
    const out = r.record(rec);
    expect(out).not.toBe(rec);
    expect(out.attempts).toBe(rec.attempts);
    expect(out.execution_id).toBe(rec.execution_id);
    expect(out.feedback?.action).toBe('escalate_to_user');
    expect(out.fault?.kind).toBe('http_error');
  });
});

describe('odd input', () => {
  const r = defaultRedactor;

  it('replaces cycles with [CIRCULAR] but not shared references', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a['self'] = a;
    const arr: unknown[] = [1];
    arr.push(arr);
    const shared = { s: 1 };
    expect(r.value(a)).toEqual({ name: 'a', self: '[CIRCULAR]' });
    expect(r.value(arr)).toEqual([1, '[CIRCULAR]']);
    const dag = { x: shared, y: shared };
    expect(r.value(dag)).toBe(dag);
    const m = new Map<string, unknown>();
    m.set('me', m);
    expect(r.value(m)).toEqual({ me: '[CIRCULAR]' });
  });

  it('converts values JSON cannot hold', () => {
    const err = new Error(j('failed for ', 'ann', '@example.com'));
    const out = r.value({
      date: new Date('2024-05-01T00:00:00.000Z'),
      bad: new Date(Number.NaN),
      buf: Buffer.from('hello'),
      u8: new Uint8Array(7),
      ab: new ArrayBuffer(3),
      map: new Map<unknown, unknown>([
        ['password', 'p'],
        [1, 'one'],
      ]),
      set: new Set(['a', j('bob', '@example.com')]),
      fn: () => 1,
      sym: Symbol('s'),
      big: 12345678901234567890n,
      err,
      url: new URL('https://user:pw@example.com/x'),
      boxed: new String('boxed'),
    });
    expect(out).toMatchObject({
      date: '2024-05-01T00:00:00.000Z',
      bad: 'Invalid Date',
      buf: '[BINARY 5 bytes]',
      u8: '[BINARY 7 bytes]',
      ab: '[BINARY 3 bytes]',
      map: { password: '[REDACTED]', 1: 'one' },
      set: ['a', '[EMAIL]@example.com'],
      fn: '[FUNCTION]',
      sym: '[SYMBOL]',
      big: '12345678901234567890',
      err: { name: 'Error', message: 'failed for [EMAIL]@example.com' },
      url: 'https://user:[REDACTED]@example.com/x',
      boxed: 'boxed',
    });
    expect(JSON.stringify(out)).not.toContain('ann@');
  });

  it('survives getters and proxies that throw', () => {
    const hostile = {
      ok: 1,
      get boom(): never {
        throw new Error('no');
      },
    };
    expect(r.value({ hostile })).toEqual({ hostile: '[UNREADABLE]' });
    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('no');
        },
      },
    );
    expect(r.value([proxy, 'x'])).toEqual(['[UNREADABLE]', 'x']);
  });

  it('never throws on arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true }), (v) => {
        r.value(v);
        r.text(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)) ?? '');
      }),
      { numRuns: 300 },
    );
  });

  it('text is idempotent on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        const once = r.text(s);
        expect(r.text(once)).toBe(once);
      }),
      { numRuns: 300 },
    );
  });
});

describe('key names in other scripts and shapes', () => {
  const r = defaultRedactor;

  it('the text pre-filter lets every built-in key name through, in every spelling', () => {
    // A key the trigram table missed would leave JSON text unparsed and `key=value` unscanned.
    for (const name of [...SECRET_KEY_PARTS, ...SECRET_KEY_SUFFIXES, ...SECRET_KEY_EXACT]) {
      const snake = name.replace(/(key|token|id|secret|auth)$/, '_$1');
      const prefixed = SECRET_KEY_EXACT.includes(name) ? [] : [`my_${name}`];
      for (const key of [name, name.toUpperCase(), snake, snake.replace(/_/g, '-'), ...prefixed]) {
        if (/^session[-_]id$/.test(key)) continue; // the trace key, tested above
        expect(r.text(`{"${key}":"kv-secret-x"}`), key).toBe(`{"${key}":"[REDACTED]"}`);
        expect(r.text(`${key}=kv-secret-x`), key).toBe(`${key}=[REDACTED]`);
      }
    }
  });

  it('knows Chinese field names, as object keys and in text', () => {
    expect(r.value({ 用户密码: 'p', 访问令牌: 't', 城市: '北京' })).toEqual({ 用户密码: '[REDACTED]', 访问令牌: '[REDACTED]', 城市: '北京' });
    expect(r.text('{"密码":"kv-secret-zh","城市":"北京"}')).toBe('{"密码":"[REDACTED]","城市":"北京"}');
    expect(r.text('登录失败，密码：kv-secret-zh2')).toBe('登录失败，密码：[REDACTED]');
  });

  it('treats quoted keys with spaces and CLI flags as keys', () => {
    expect(r.text('{"API Key": "kv-secret-k", "x": 1')).toBe('{"API Key": "[REDACTED]", "x": 1');
    expect(r.text('run --password=kv-secret-cli --verbose')).toBe('run --password=[REDACTED] --verbose');
  });

  it('leaves comparisons, paths and URLs alone', () => {
    for (const text of ['if token == null', 'a <= b', 'std::token::next', 'https://example.com/token', 'x => token']) {
      expect(r.text(text)).toBe(text);
    }
  });
});

describe('credential shapes found in an audit', () => {
  const r = defaultRedactor;

  it('masks Azure account keys, SAS and presigned URL signatures', () => {
    const azure = 'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=abcdEFGH1234ijklMNOP5678qrstUVWX==;EndpointSuffix=core.windows.net';
    expect(r.text(azure)).toBe('DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED];EndpointSuffix=core.windows.net');
    expect(r.text('https://acme.blob.core.windows.net/c/f.pdf?sv=2022-11-02&se=2026-12-03&sig=Xk2%2Bq9LmN0pQ%3D'))
      .toBe('https://acme.blob.core.windows.net/c/f.pdf?sv=2022-11-02&se=2026-12-03&sig=[REDACTED]');
    expect(r.text('https://b.s3.amazonaws.com/k?X-Amz-Date=20261202T000000Z&X-Amz-Signature=9f8e7d6c5b4a3928170655aa'))
      .toBe('https://b.s3.amazonaws.com/k?X-Amz-Date=20261202T000000Z&X-Amz-Signature=[REDACTED]');
    expect(r.value({ sig: 'abc123', signature_version: 'v4', method_signature: '(a: string) => void' }))
      .toEqual({ sig: '[REDACTED]', signature_version: 'v4', method_signature: '(a: string) => void' });
  });

  it('masks pairs percent-encoded inside a URL', () => {
    expect(r.text('https://x.com/login?redirect=https%3A%2F%2Fy.com%2F%3Faccess_token%3DSECRETvalue42%26lang%3Den'))
      .toBe('https://x.com/login?redirect=https%3A%2F%2Fy.com%2F%3Faccess_token%3D[REDACTED]%26lang%3Den');
    expect(r.text('next=%2Fcb%3Fpassword%3Dhunter2&x=1')).toBe('next=%2Fcb%3Fpassword%3D[REDACTED]&x=1');
    expect(r.text('next=%2Fcb%3Fcity%3DParis')).toBe('next=%2Fcb%3Fcity%3DParis');
    // A short name right after an escape is read from its first letter (`%3Fsig` is `sig`, not `Fsig`).
    expect(r.text('https://x.example/login?next=%2Fcb%3Fsig%3DXk2q9LmN0pQ%26a%3D1')).toBe('https://x.example/login?next=%2Fcb%3Fsig%3D[REDACTED]%26a%3D1');
    expect(r.text('api_key=k1 next=%2Fcb%3Fpin%3D482913%26a%3D1')).toBe('api_key=[REDACTED] next=%2Fcb%3Fpin%3D[REDACTED]%26a%3D1');
  });

  it('takes a pass phrase after a colon to the end of the line, and knows pw', () => {
    expect(r.text('login: ann\npassword: SUPER SECRET 123\nok')).toBe('login: ann\npassword: [REDACTED]\nok');
    expect(r.text('password=hunter2 user=ann')).toBe('password=[REDACTED] user=ann');
    expect(r.text('pw=kv-secret-pw')).toBe('pw=[REDACTED]');
  });

  it('leaves SSH git remotes and a URL user alone, and still masks e-mail addresses', () => {
    for (const remote of [
      'git@github.com:org/repo.git',
      'git clone git@gitlab.example.com:group/sub/repo.git',
      'ssh://git@github.com/org/repo.git',
      'deploy@build.example.com:~/releases',
    ]) {
      expect(r.text(remote)).toBe(remote);
    }
    expect(r.text(j('mail ann.lee', '@example.com: the build failed'))).toBe('mail [EMAIL]@example.com: the build failed');
    expect(r.text(j('write to ann.lee', '@example.com.'))).toBe('write to [EMAIL]@example.com.');
    expect(r.text(j('mailto:ann.lee', '@example.com'))).toBe('mailto:[EMAIL]@example.com');
    expect(r.value({ from: j('ops', '@corp.example.co.uk') })).toEqual({ from: '[EMAIL]@corp.example.co.uk' });
  });

  it('masks a URL password but keeps scheme, user, host, port and path, even when the user is a secret word', () => {
    const urls: [string, string][] = [
      ['https://user:pass@db.example.com:5432/x', 'https://user:[REDACTED]@db.example.com:5432/x'],
      ['postgres://app:s3cret@10.0.0.5/db', 'postgres://app:[REDACTED]@10.0.0.5/db'],
      [j('https://x-access-token:', 'ghs_', 'Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2', '@github.com/org/repo.git'), 'https://x-access-token:[REDACTED]@github.com/org/repo.git'],
      ['https://token:abc123xyz@git.example.com:8443/org/repo', 'https://token:[REDACTED]@git.example.com:8443/org/repo'],
      ['mysql://pass:Pw0rd42@db.internal:3306/shop', 'mysql://pass:[REDACTED]@db.internal:3306/shop'],
    ];
    for (const [url, masked] of urls) {
      expect(r.text(url)).toBe(masked);
      expect(r.text(`connect to ${url} failed`)).toBe(`connect to ${masked} failed`);
      expect(r.value({ dsn: url })).toEqual({ dsn: masked });
      expect(r.text(JSON.stringify({ dsn: url }))).toBe(JSON.stringify({ dsn: masked }));
    }
  });

  it('masks an OAuth code in a redirect URL, keeping the other parameters', () => {
    expect(r.text('https://app.example.com/cb?code=4/0AX4XfWh-abc123&state=xyz'))
      .toBe('https://app.example.com/cb?code=[REDACTED]&state=xyz');
    expect(r.text('https://app.example.com/cb?state=xyz&Code=e72e16c7e42f292c6912')).toBe('https://app.example.com/cb?state=xyz&Code=[REDACTED]');
    expect(r.text('https://app.example.com/cb#code=483920&state=1')).toBe('https://app.example.com/cb#code=[REDACTED]&state=1');
    expect(r.value({ redirect_uri: 'https://x.example/cb?code=SplxlOBeZQQYbYS6WxSbIA' }))
      .toEqual({ redirect_uri: 'https://x.example/cb?code=[REDACTED]' });
  });

  it('masks an OAuth code in an HTML-, JSON- or percent-escaped URL, keeping the escapes around it', () => {
    expect(r.text('<a href="https://app.example.com/cb?state=xyz&amp;code=4/0AX4XfWh-abc123&amp;scope=email">'))
      .toBe('<a href="https://app.example.com/cb?state=xyz&amp;code=[REDACTED]&amp;scope=email">');
    expect(r.text('/cb?state=xyz&#38;code=e72e16c7e42f292c6912&#x26;code=SplxlOBeZQQYbYS6WxSbIA'))
      .toBe('/cb?state=xyz&#38;code=[REDACTED]&#x26;code=[REDACTED]');
    expect(r.text('level=info msg="redirect to https://app/cb?state=xyz\\u0026code=SplxlOBeZQQYbYS6WxSbIA\\u0026scope=email"'))
      .toBe('level=info msg="redirect to https://app/cb?state=xyz\\u0026code=[REDACTED]\\u0026scope=email"');
    expect(r.text('https://accounts.example.com/o/oauth2/auth?redirect_uri=https%3A%2F%2Fapp%2Fcb%3Fcode%3D4%2F0AX4XfWhQz8Lm2Nn7Oo%26state%3Dxyz&client_id=1'))
      .toBe('https://accounts.example.com/o/oauth2/auth?redirect_uri=https%3A%2F%2Fapp%2Fcb%3Fcode%3D[REDACTED]%26state%3Dxyz&client_id=1');
    expect(r.text('next=%2Fcb%3fstate%3Dxyz%26code%3d483920%23top')).toBe('next=%2Fcb%3fstate%3Dxyz%26code%3d[REDACTED]%23top');
    // Go's encoding/json writes `&` as \u0026; the text parses, so the mask goes in value by value.
    const go = '{"location":"https://app/cb?state=xyz\\u0026code=SplxlOBeZQQYbYS6WxSbIA"}';
    expect(JSON.parse(r.text(go))).toEqual({ location: 'https://app/cb?state=xyz&code=[REDACTED]' });
    // A status, currency or short value stays, escaped as in the plain URL.
    for (const benign of ['&amp;code=404&amp;copy;', '\\u0026code=EUR\\u0026country=US', '%3Fcode%3D404%26code%3Dzh-Hans', '%26code%3D4%2F0']) {
      expect(r.text(`/cb?x=1${benign}`)).toBe(`/cb?x=1${benign}`);
    }
  });

  it('masks an OAuth code and a secret pair in a URL encoded twice, keeping the escapes and the other parameters', () => {
    expect(r.text('https://app.example/cb%253Fcode%253DSplxlOBeZQQYbYS6WxSbIA')).toBe('https://app.example/cb%253Fcode%253D[REDACTED]');
    expect(r.text('/login?next=https%253A%252F%252Fapp%252Fcb%253Fstate%253Dxyz%2526code%253D4%252F0AX4XfWhQz8Lm2Nn7Oo%2526scope%253Demail&x=1'))
      .toBe('/login?next=https%253A%252F%252Fapp%252Fcb%253Fstate%253Dxyz%2526code%253D[REDACTED]%2526scope%253Demail&x=1');
    expect(r.text('/a?next=%252Fcb%2523code%253D483920%2523top')).toBe('/a?next=%252Fcb%2523code%253D[REDACTED]%2523top');
    expect(r.text('next=https%253A%252F%252Fy%252F%253Faccess_token%253DSECRETvalue42%2526lang%253Den'))
      .toBe('next=https%253A%252F%252Fy%252F%253Faccess_token%253D[REDACTED]%2526lang%253Den');
    expect(r.value({ next: '/cb%253Fpassword%253Dhunter2%2526city%253DParis' })).toEqual({ next: '/cb%253Fpassword%253D[REDACTED]%2526city%253DParis' });
    // A status, currency or language stays, and so does a plain pair.
    for (const benign of ['%253Fcode%253D404%2526code%253Dzh-Hans', '%2526code%253DEUR%2526copy%253D1', 'next=%252Fcb%253Fcity%253DParis']) {
      expect(r.text(`/cb?x=1${benign}`)).toBe(`/cb?x=1${benign}`);
    }
  });

  it('masks a Twilio auth token beside its account SID, keeping the SID', () => {
    const sid = j('AC', twilioSid);
    expect(r.text(j('client = Client("', sid, '", "', twilioToken, '")'))).toBe(`client = Client("${sid}", "[REDACTED]")`);
    expect(r.text(j("Client('", sid, "','", twilioToken, "')"))).toBe(`Client('${sid}','[REDACTED]')`);
    expect(r.text(j(sid, ':', twilioToken))).toBe(`${sid}:[REDACTED]`);
    expect(r.text(JSON.stringify({ code: j('Client("', sid, '", "', twilioToken, '")') }))).toBe(JSON.stringify({ code: `Client("${sid}", "[REDACTED]")` }));
  });

  it('masks a short mixed-case bearer token but not a CamelCase word', () => {
    expect(r.text('Authorization: Bearer AbCdEfGhIjKlMnOpQr')).toBe('Authorization: Bearer [REDACTED]');
    expect(r.text('use Bearer AbCdEfGhIjKlMnOpQr here')).toBe('use Bearer [REDACTED] here');
    expect(r.text('scheme Bearer TokenAuthentication is required')).toBe('scheme Bearer TokenAuthentication is required');
  });
});

describe('a secret found anywhere in a record is scrubbed everywhere in it', () => {
  // The credential kinds the issue measured: each is masked where its key marks it, and must not
  // survive where the same record holds it as free text, in an error that echoes it, in the intent
  // or as a bare list item.
  const cases: { name: string; keyed: Record<string, unknown>; secret: string }[] = [
    { name: 'password', keyed: { user: 'ann', password: 'Tr0ub4dor&3' }, secret: 'Tr0ub4dor&3' },
    { name: 'client_secret', keyed: { client_id: 'app-1', client_secret: 'cs_4f9Q2mZx7Lp0' }, secret: 'cs_4f9Q2mZx7Lp0' },
    { name: 'refresh_token', keyed: { grant_type: 'refresh_token', refresh_token: 'r1.Zq8Xw2Vb6Nm4' }, secret: 'r1.Zq8Xw2Vb6Nm4' },
    { name: 'x-api-key header', keyed: { headers: { 'x-api-key': 'k_88aa31f0c2d9' } }, secret: 'k_88aa31f0c2d9' },
    { name: 'AWS secret', keyed: { aws_secret_access_key: 'q8HfL2mR9xVt4KpZ0bNc7WsYe3JdUa6GiOlQ1rTy' }, secret: 'q8HfL2mR9xVt4KpZ0bNc7WsYe3JdUa6GiOlQ1rTy' },
  ];

  for (const { name, keyed, secret } of cases) {
    it(`${name}: masked under its key, and gone from the message, stack, intent, output, hint and a bare list`, () => {
      const record = makeRecord({
        status: 'failure',
        input_params: { ...keyed, tried: ['first', secret] },
        raw_output: JSON.stringify({ error: { message: `credential ${secret} rejected`, echo: secret } }),
        error_message: `HTTP 401: invalid credential value=${secret}`,
        error_stack: `Error: rejected ${secret}\n    at call (/app/tool.js:10:5)`,
        context_snapshot: { intent: `sign in with ${secret} and list orders` },
        feedback: { action: 'escalate_to_user', hint: `the service refused ${secret}`, retryable: false, retry_after_ms: null },
        fault: { kind: 'http_error', rule_id: 'r1', transport: 'in_process', params: { body: { message: `bad key ${secret}` } } },
      });
      const redacted = defaultRedactor.record(record);
      const text = JSON.stringify(redacted);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
      expect(redacted.error_message).toBe('HTTP 401: invalid credential value=[REDACTED]');
      expect((redacted.input_params as { tried: string[] }).tried).toEqual(['first', '[REDACTED]']);
      expect((redacted.context_snapshot as { intent: string }).intent).toBe('sign in with [REDACTED] and list orders');
    });
  }

  it('scrubs a found secret only where it stands alone, and never values too short to be one', () => {
    const found: string[] = [];
    expect(defaultRedactor.value({ password: 'hunter22', pin: '1234', enabled: true }, found)).toEqual({ password: '[REDACTED]', pin: '[REDACTED]', enabled: true });
    expect(found).toEqual(['hunter22']);
    expect(defaultRedactor.scrub('hunter22 vs xhunter22 vs hunter221 vs "hunter22"; pin 1234 on', found)).toBe('[REDACTED] vs xhunter22 vs hunter221 vs "[REDACTED]"; pin 1234 on');
    // Nothing found: the very same value.
    const clean = { a: 'x' };
    expect(defaultRedactor.scrub(clean, [])).toBe(clean);
  });

  it('a token hidden by a value rule is scrubbed where only its body is echoed', () => {
    const record = makeRecord({
      status: 'failure',
      input_params: { auth: 'Bearer 9f8e7d6c5b4a39281706' },
      error_message: 'token 9f8e7d6c5b4a39281706 is expired',
    });
    expect(defaultRedactor.record(record).error_message).toBe('token [REDACTED] is expired');
  });

  it('a record with nothing secret comes back as the same object', () => {
    const record = makeRecord();
    expect(defaultRedactor.record(record)).toBe(record);
    expect(defaultRedactor.scrubRecord(record, [])).toBe(record);
  });
});

describe('assignment forms', () => {
  const secret = 'Zq7Xw2Vb6Nm4Lp9Kj3Hg5Fd8';
  const forms: [string, string][] = [
    ['Go short declaration', `apiToken := "${secret}"`],
    ['Go raw string', `apiToken := \`${secret}\``],
    ['Go typed declaration', `var apiToken string = "${secret}"`],
    ['Kotlin typed declaration', `val apiToken: String = "${secret}"`],
    ['Rust typed let', `let api_token: &str = "${secret}";`],
    ['Makefile ?=', `API_TOKEN ?= ${secret}`],
    ['Makefile :=', `API_TOKEN := ${secret}`],
    ['Makefile ::=', `API_TOKEN ::= "${secret}"`],
    ['Makefile :::=', `API_TOKEN :::= "${secret}"`],
    ['Makefile +=', `API_TOKEN += ${secret}`],
    ['PHP .=', `$apiToken .= "${secret}";`],
    ['PHP array index', `$config['db_password'] = '${secret}';`],
    ['Python dict index', `settings["API_TOKEN"] = "${secret}"`],
    ['setProperty', `System.setProperty("API_TOKEN", "${secret}")`],
    ['getenv default', `os.environ.get("API_TOKEN", "${secret}")`],
    ['XML key/value attributes', `<add key="Password" value="${secret}" />`],
    ['XML name/value attributes', `<property name="db.password" value="${secret}"/>`],
    ['.env', `STRIPE_SECRET=${secret}\nDEBUG=true`],
    ['YAML', `database:\n  password: "${secret}"\n  host: db`],
    ['TOML', `[auth]\ntoken = "${secret}"`],
    ['INI', `[db]\npassword=${secret}`],
    ['shell export', `export GITHUB_TOKEN=${secret}`],
    ['docker -e', `docker run -e POSTGRES_PASSWORD=${secret} -e POSTGRES_DB=app postgres:16`],
    ['curl -H Authorization', `curl -H "Authorization: Bearer ${secret}" https://api.example.com/v1/me`],
    ['curl -H api key', `curl -H 'X-Api-Key: ${secret}' https://api.example.com/v1/me`],
    ['key name starting with a digit', `1password_token = "${secret}"`],
    ['key name ending in digits', `token2: ${secret}`],
    ['JSON nested as a string', JSON.stringify({ config: JSON.stringify({ password: secret }) })],
  ];
  for (const [name, text] of forms) {
    it(`${name}: the value is masked, the key and operator kept`, () => {
      const redacted = defaultRedactor.text(text);
      expect(redacted).not.toContain(secret);
      expect(redacted).toContain(REDACTED);
    });
  }

  it('keeps the operator and the key of a Go declaration', () => {
    expect(defaultRedactor.text(`apiToken := "${secret}"`)).toBe('apiToken := "[REDACTED]"');
    expect(defaultRedactor.text(`var apiToken string = "${secret}"`)).toBe('var apiToken string = "[REDACTED]"');
    expect(defaultRedactor.text(`API_TOKEN ::= "${secret}"`)).toBe('API_TOKEN ::= "[REDACTED]"');
  });

  it('masks every value of a Kubernetes Secret, whatever its names, and only in that document', () => {
    const value = Buffer.from('s3cr3t-db-passw0rd').toString('base64');
    const manifest = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  DATABASE_URL: ${value}\n  username: YWRtaW4tdXNlcg==\n---\nkind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n`;
    const redacted = defaultRedactor.text(manifest);
    expect(redacted).not.toContain(value);
    expect(redacted).not.toContain('YWRtaW4tdXNlcg==');
    expect(redacted).toContain('name: db');
    expect(redacted).toContain('LOG_LEVEL: debug');
    const json = defaultRedactor.value({ kind: 'Secret', metadata: { name: 'db' }, data: { 'tls.key': value } });
    expect(json).toEqual({ kind: 'Secret', metadata: { name: 'db' }, data: { 'tls.key': REDACTED } });
  });
});

describe('placeholders, names and digests are not secrets', () => {
  const kept = [
    'password: ${DB_PASSWORD}',
    'password: $PASSWORD',
    'password: "{{ .Values.db.password }}"',
    'api_key = "<your-api-key>"',
    'token: xxxxxxxxxxxxxxxx',
    'password = "changeme"',
    'client_secret: ********',
    'curl -u "$USERNAME:$PASSWORD" https://api.example.com',
    'credentialsId: "29f63271-dc2f-4734-8221-5b31b5169bac"',
    'publicToken = "pk_9f8e7d6c5b4a39281706"',
    'csrf-token: 8f7d6c5b4a39281706f5e4d3',
    'token_type: bearer',
    'password_policy: strong',
    'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    'commit 3f2a9c81d0b4e6f7a8c9d0e1f2a3b4c5d6e7f8a9',
    'sha256: 4a5b6c7d8e9f00112233445566778899aabbccddeeff00112233445566778899',
    '"integrity": "sha512-Z9x8C7v6B5n4M3a2S1d0F9g8H7j6K5l4Q3w2E1r0T9y8U7i6O5p4A3s2D1f0G9h8J7k6L5z4X3c2V1b0N9m8Q=="',
    'image: app@sha256:59932001997786b176dec02bd16128ee9ea83628f0eb1acf0da84c06a50c5b2c',
  ];
  for (const text of kept) {
    it(`keeps ${text.slice(0, 50)}`, () => {
      expect(defaultRedactor.text(text)).toBe(text);
    });
  }
});

describe('what stands for a secret without being one', () => {
  it('masks the value line under a bare pair name (a Kubernetes env entry), in text and in JSON string text', () => {
    const yaml = '- name: API_TOKEN\n  value: "s7lMMZVO93YCicmFrrl5vhMcKTQJjuPE"\n- name: DB_PASSWORD\n  value: hunter2hunter\n- name: CITY\n  value: Paris';
    expect(defaultRedactor.text(yaml)).toBe('- name: API_TOKEN\n  value: "[REDACTED]"\n- name: DB_PASSWORD\n  value: [REDACTED]\n- name: CITY\n  value: Paris');
    const json = JSON.stringify({ note: '- name: API_TOKEN\n  value: "s7lMMZVO93YCicmFrrl5vhMcKTQJjuPE"' });
    expect(defaultRedactor.text(json)).toBe(JSON.stringify({ note: '- name: API_TOKEN\n  value: "[REDACTED]"' }));
  });

  it.each([
    'sops: { password: ENC[AES256_GCM,data:W3PiZ6lD6bpfAdI=,iv:2qF98Zk=,type:str] }',
    '-e SUMO_ACCESS_KEY=`etcdctl get /sumologic_secret`',
    "credentials: new AWS.SharedIniFileCredentials({ profile: 'default' })",
    'curl -H "Authorization: basic {base64(email:password)}"',
    'secretKey: api-key',
    'password: TokenHere',
    'slack_token: xoxe.xoxp-1-RANDOMSTRINGHERE',
    'api_key: "my-bot-token"',
    'dev.credentials.url=dev-lb1.api.example.net:5215',
    'nonMatchingToken := "snfvxtkgtlmxbj39"',
    'invalidPassword = "w4e7iwwbk07eww25"',
    '-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----',
    'telegram type="clm08764:AgencyIdentificationCodeContentTypeXYZ"',
  ])('keeps %s', (text) => {
    expect(defaultRedactor.text(text)).toBe(text);
  });

  it('still masks what those rules sit next to', () => {
    expect(defaultRedactor.text('password: s7lMMZVO93YCicmFrrl5vhMcKTQJjuPE')).toBe('password: [REDACTED]');
    expect(defaultRedactor.text('validPassword = "w4e7iwwbk07eww25"')).toBe('validPassword = "[REDACTED]"');
    expect(defaultRedactor.text('-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----')).toBe('-----BEGIN EC PRIVATE KEY-----…[REDACTED]-----END EC PRIVATE KEY-----');
    expect(defaultRedactor.text('telegram bot 7123456789:AAHQm7xK2pL9vR4tY8nB3cW6zH1sD5fJ0gA')).toBe('telegram bot 7123456789:[REDACTED]');
    expect(defaultRedactor.text('https://api.telegram.org/bot7123456789:AAHQm7xK2pL9vR4tY8nB3cW6zH1sD5fJ0gA/getMe')).not.toContain('AAHQm7xK2pL9');
  });
});

describe('tokens with a provider prefix and no rule of their own', () => {
  it.each([
    ['groq', j('gsk_', body40, 'aB3d9QwErT')],
    ['docker', j('dckr_pat_', 'Qm7xK2pL9vR4tY8nB3cW6zH1sD5')],
    ['groq-style, with no rule of its own', j('zq_live_', body40)],
    ['vercel', j('vcp_', body40)],
    ['cloudflare', j('cfat_', body40, '03fa099b')],
    ['tailscale', j('tskey-client-', 'kXGGbs6CNTRL', '-', body40.slice(0, 32))],
  ])('masks a %s token, keeping its prefix, in text, JSON and after a key', (_name, token) => {
    const prefix = /^[a-z]+(?:[_-][a-z]+)*[_-]/.exec(token)![0];
    const secret = token.slice(prefix.length);
    expect(defaultRedactor.text(`deploy failed with ${token}.`)).toBe(`deploy failed with ${prefix}…${REDACTED}.`);
    expect(defaultRedactor.text(JSON.stringify({ note: `token ${token}` }))).not.toContain(secret.slice(0, 12));
    expect(defaultRedactor.text(`GET /v1/me?auth=${token}`)).not.toContain(secret.slice(0, 12));
  });

  it.each([
    ['an OpenAI tool call id', 'call_Qm7xK2pL9vR4tY8nB3cW6zH1'],
    ['an Anthropic message id', 'msg_01XFDUDYJgAACzvnptvVoYEL'],
    ['a Responses API id (hex)', j('resp_', '67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b')],
    ['an npm integrity', j('sha512-', 'WUxqd1hXdnRDaVU0OTc3NEczN0VXZHVCQTZvRXdwMlRSRmhxZTIzNEVVUHltcWh2')],
    ['an identifier made of words', 'desktop-rhf_SponsoredProductsRemoteRHFSearchEXPSubsK2ClickPagination'],
    ['a stand-in of x', j('gsk_', 'x'.repeat(52))],
    ['a file name', 'release-notes_2026-12-07_final-draft-for-review-v2.md'],
  ])('keeps %s', (_name, text) => {
    expect(defaultRedactor.text(`see ${text} here`)).toBe(`see ${text} here`);
  });

  it('masks a token whose tail is a run of one letter, or a sequence, as test suites write real-shaped secrets', () => {
    expect(defaultRedactor.text(j('key sk_live_', 'A'.repeat(24)))).toBe(`key sk_live_…${REDACTED}`);
    expect(defaultRedactor.text(j('tskey-api-', 'A'.repeat(12), '-', 'B'.repeat(24)))).toBe(`tskey-api-…${REDACTED}`);
    expect(defaultRedactor.text(j('gsk_', '0123456789', 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOP'))).toBe(`gsk_…${REDACTED}`);
    expect(defaultRedactor.text(j('ghp_', 'x'.repeat(36)))).toBe(j('ghp_', 'x'.repeat(36)));
  });

  it('finds such a token at any offset, in text past the scan buffer and in non-ASCII text', () => {
    const token = j('gsk_', body40, 'aB3d9QwErT');
    for (const filler of ['word '.repeat(1_300), 'ü'.repeat(2_500) + ' ', 'x'.repeat(31) + '\n', '']) {
      for (const at of [0, 7, 31, 32, 33]) {
        const text = `${filler}${' '.repeat(at)}${token} end`;
        expect(defaultRedactor.text(text)).toBe(`${filler}${' '.repeat(at)}gsk_…${REDACTED} end`);
      }
    }
  });

  it('masks a JWT glued after an underscore (a GitHub app installation token)', () => {
    expect(defaultRedactor.text(j('ghs_12345_', jwt))).toBe(`ghs_12345_eyJ…${REDACTED}`);
  });

  it('masks Slack legacy tokens of two long numbers and upper-case Databricks tokens', () => {
    expect(defaultRedactor.text(j('xoxa-', '23984754863-2348975623111'))).toBe(`xoxa-…${REDACTED}`);
    expect(defaultRedactor.text(j('xoxp-', '1234567890'))).toBe(j('xoxp-', '1234567890'));
    expect(defaultRedactor.text(j('dapi', 'FEDCBA9876543210FEDCBA9876543210'))).toBe(`dapi…${REDACTED}`);
  });
});

describe('URLs with credentials', () => {
  it.each([
    'https://${username}:${password}@api.example.com/v1',
    'https://{{user}}:{{pass}}@config.example.com',
    'postgres://$(PGUSER):$(PGPASSWORD)@$(PGHOST)/$(PGDATABASE)',
    'https://YOUR_USERNAME:YOUR_PASSWORD@api.service.com',
    'mysql://user:${PASSWORD}@example.com:3306/db',
  ])('keeps a password that is a template or stand-in, and reads no e-mail in it: %s', (url) => {
    expect(defaultRedactor.text(`const URL = "${url}";`)).toBe(`const URL = "${url}";`);
  });

  it('masks a plain password, and the token of GitHub\'s token-as-user form', () => {
    expect(defaultRedactor.text('postgres://user:password@localhost/mydb')).toBe(`postgres://user:${REDACTED}@localhost/mydb`);
    const token = j('111da111qqqq309bqq', '562159952c2c2a11111a1');
    expect(defaultRedactor.text(`"resolved": "https://${token}:x-oauth-basic@github.com/o/r.git"`)).toBe(`"resolved": "https://${REDACTED}:x-oauth-basic@github.com/o/r.git"`);
  });

  it('keeps a connection string under a secret key but its password', () => {
    expect(defaultRedactor.text('MONGO_NO_AUTH = "mongodb://localhost:27017/database"')).toBe('MONGO_NO_AUTH = "mongodb://localhost:27017/database"');
    expect(defaultRedactor.text(j('DB_CREDENTIALS=postgres://app:', 'S3cr3tPassw0rd', '@db.internal:5432/app'))).toBe(`DB_CREDENTIALS=postgres://app:${REDACTED}@db.internal:5432/app`);
    expect(defaultRedactor.text(j('DB_CREDENTIALS=postgres://db.internal/app?password=', 'S3cr3tPassw0rd'))).toBe(`DB_CREDENTIALS=${REDACTED}`);
    expect(defaultRedactor.text(j('WEBHOOK_SECRET=https://hooks.acme-corp.io/h/', body40))).toBe(`WEBHOOK_SECRET=${REDACTED}`);
  });
});

describe('stand-ins and names that only point at a secret', () => {
  it.each([
    '-----BEGIN PRIVATE KEY-----\n***\n-----END PRIVATE KEY-----',
    '{"private_key":"-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"}',
    'DOCKER_TOKEN=not_a_real_token',
    j('OP_TOKEN=ops_DUMMY', 'WFpbCI6ImVqd2U2NHFtbHhocmlAMXBhc3N3b3Jk'),
    'pathToPrivateKey: /etc/ssl/private/server.key',
    'keyVaultToStoreSecrets: cmp2-qat-1208358310',
  ])('keeps %s', (text) => {
    expect(defaultRedactor.text(text)).toBe(text);
  });

  it('masks a phrase whose head is not a place or metadata', () => {
    expect(defaultRedactor.text(j('"BindToParentToken": "', body40, '"'))).toBe(`"BindToParentToken": "${REDACTED}"`);
    expect(defaultRedactor.text(j('passwordForAdmin = ', 'hunter2hunter'))).toBe(`passwordForAdmin = ${REDACTED}`);
  });
});
