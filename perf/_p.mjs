import { canonicalJson, fnv1a64 } from '../dist/record/params-hash.js';
import { uuidv7 } from '../dist/record/uuid-v7.js';
import { isoTime } from '../dist/record/iso-time.js';
const args = { city: 'Paris', unit: 'celsius', days: 3 };
const s = canonicalJson(args);
function t(name, fn, n = 300000) { for (let i = 0; i < 50000; i++) fn(); const st = process.hrtime.bigint(); for (let i = 0; i < n; i++) fn(); console.log(name.padEnd(24), (Number(process.hrtime.bigint() - st) / n).toFixed(0), 'ns'); }
t('canonicalJson', () => canonicalJson(args));
t('fnv', () => fnv1a64(s));
t('uuidv7', () => uuidv7(Date.now()));
t('isoTime', () => isoTime(Date.now()));
