// Usage: node validate.mjs PROFILE.speedscope.json PROFILE.folded
// Validates the JSON against speedscope's file-format-schema.json (from the speedscope
// package) and checks that its samples and weights are exactly the folded stacks.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));
const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
                             'dist', 'release', 'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const [jsonPath, foldedPath] = process.argv.slice(2);
const data = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));

let failures = 0;
function check(ok, message) {
  if (!ok) {
    console.error('FAIL: ' + message);
    failures++;
  }
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
check(validate(data), 'schema: ' + JSON.stringify(validate.errors));

check(data.exporter === 'flamefleet', 'exporter');
check(data.profiles.length === 1, 'one profile');
const p = data.profiles[0];
check(p.type === 'sampled' && p.unit === 'none', 'sampled, unit none');
check(p.samples.length === p.weights.length, 'samples and weights have the same length');

const want = new Map();
let total = 0;
for (const line of fs.readFileSync(foldedPath, 'utf8').split('\n')) {
  if (!line) continue;
  const sp = line.lastIndexOf(' ');
  const n = Number(line.slice(sp + 1));
  want.set(line.slice(0, sp), (want.get(line.slice(0, sp)) || 0) + n);
  total += n;
}
const got = new Map();
let sum = 0;
p.samples.forEach((stack, i) => {
  const key = stack.map((f) => data.shared.frames[f].name.replace(/;/g, ':')).join(';');
  got.set(key, (got.get(key) || 0) + p.weights[i]);
  sum += p.weights[i];
});
check(total > 0, 'folded total > 0');
check(sum === total, `weights sum ${sum} == folded total ${total}`);
check(p.endValue === total && p.startValue === 0, 'startValue 0, endValue = total');
check(got.size === want.size, `${got.size} stacks == ${want.size} folded stacks`);
for (const [k, v] of want) check(got.get(k) === v, `stack ${k}: ${got.get(k)} != ${v}`);

if (failures) process.exit(1);
console.log(`speedscope: schema ok, ${p.samples.length} samples, ${sum} cycles`);
