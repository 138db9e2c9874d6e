// Usage: node open_test.mjs PROFILE.folded FILE...
// Opens each FILE (pprof .pb.gz or speedscope JSON written by flamefleet) in the speedscope web
// app shipped by the speedscope npm package, in Debian's Chromium (/usr/bin/chromium or
// $CHROMIUM_PATH) through playwright-core, switches to the Sandwich view and checks that its
// function table lists every frame of the folded profile and that the self cycles add up to
// the folded total. Exits 1 on a failed check.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));
const app = path.join(path.dirname(require.resolve('speedscope/package.json')),
                      'dist', 'release', 'index.html');
const [foldedPath, ...files] = process.argv.slice(2);

let total = 0;
const names = new Set();
for (const line of fs.readFileSync(foldedPath, 'utf8').split('\n')) {
  if (!line) continue;
  const sp = line.lastIndexOf(' ');
  total += Number(line.slice(sp + 1));
  for (const f of line.slice(0, sp).split(';')) names.add(f);
}

let failures = 0;
function check(ok, message) {
  console.log((ok ? 'ok   ' : 'FAIL ') + message);
  if (!ok) failures++;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
try {
  for (const file of files) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(app).href);
    await page.setInputFiles('input[type=file]', file);
    // The Sandwich view (key 3) is a table: Total, Self, Symbol Name per function.
    let rows = [];
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      await page.waitForTimeout(200);
      await page.keyboard.press('3');
      const text = await page.evaluate(() => document.body.innerText);
      const lines = text.split('\n').map((l) => l.trim()).filter((l) => l);
      const start = lines.findIndex((l) => /^Total\s+Self\s+Symbol Name$/.test(l));
      if (start < 0) continue;
      for (let k = start + 1; k + 2 < lines.length; k += 3) {
        rows.push({ total: lines[k], self: lines[k + 1], name: lines[k + 2] });
      }
    }
    const base = path.basename(file);
    check(rows.length === names.size, `${base}: ${rows.length} functions == ${names.size} frames`);
    let selfSum = 0;
    for (const r of rows) selfSum += Number(r.self.split(' ')[0].replace(/,/g, ''));
    check(selfSum === total, `${base}: self cycles ${selfSum} == folded total ${total}`);
    for (const n of names) check(rows.some((r) => r.name === n), `${base}: lists ${n}`);
    check(errors.length === 0, `${base}: no page errors ${errors.join('; ')}`);
    await page.close();
  }
} finally {
  await browser.close();
}
process.exit(failures ? 1 : 0);
