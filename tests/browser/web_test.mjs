// Headless-Chromium click-through of the coordinator's web view (issue #17).
//
//   node tests/browser/web_test.mjs FLAMEFLEET_CLI SUITE_DIR OUT_DIR
//
// Starts the embedded fleet with `flamefleet run SUITE_DIR --open --keep` (OS-chosen ports; the
// URL is read from its "URL ..." line, nothing sleeps), submits the suite a second time to the
// same coordinator (`flamefleet submit --no-cache`, then `watch`), and drives Debian's Chromium
// (/usr/bin/chromium or $CHROMIUM_PATH) through playwright-core:
//   1. opens /, checks both batches are listed, newest first, and clicks the newer one;
//   2. sorts the job table by cycles (the header link) and checks the column is descending;
//   3. opens the costliest job, clicks a frame of its flamegraph (inside the page's iframe) and
//      checks that it zoomed to the full width, then searches with the SVG's own Search button
//      and checks "Matched: N%";
//   4. goes back to the batch and follows "diff against it" to the diff page, whose
//      differential flamegraph and delta tables must be there.
// Screenshots go to OUT_DIR/web-*.png. Exits 0 on success, 1 on a failed check, 2 on usage.
import { chromium } from "playwright-core";
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, existsSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";

const [cli, suite, outDir] = process.argv.slice(2);
if (!cli || !suite || !outDir || !existsSync(cli) || !existsSync(suite)) {
  console.error("usage: node web_test.mjs FLAMEFLEET_CLI SUITE_DIR OUT_DIR");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

let failures = 0;
function check(cond, message) {
  console.log((cond ? "ok   " : "FAIL ") + message);
  if (!cond) failures++;
}

// The fleet: wait for the URL line (stdout), the coordinator address and "serving" (stderr).
const fleet = spawn(cli, ["run", suite, "--open", "--keep", "--workers", "2",
                          "-o", path.join(outDir, "run")],
                    { stdio: ["ignore", "pipe", "pipe"] });
const lines = (stream, echo) => {
  const rl = readline.createInterface({ input: stream });
  const waiters = [];
  const seen = [];
  rl.on("line", (line) => {
    if (echo) process.stderr.write("  fleet: " + line + "\n");
    seen.push(line);
    for (const w of waiters.slice()) {
      const m = line.match(w.re);
      if (m) { waiters.splice(waiters.indexOf(w), 1); w.resolve(m); }
    }
  });
  return (re) => new Promise((resolve, reject) => {
    for (const line of seen) { const m = line.match(re); if (m) return resolve(m); }
    waiters.push({ re, resolve });
    fleet.once("exit", (code) => reject(new Error(`flamefleet run exited (${code}) before ${re}`)));
  });
};
const stdoutLine = lines(fleet.stdout, true);
const stderrLine = lines(fleet.stderr, true);

let browser;
try {
  const [, url] = await stdoutLine(/^URL (\S+)$/);
  const [, address] = await stderrLine(/^local fleet: coordinator (\S+),/);
  await stdoutLine(/^SERVING /);
  const base = new URL(url).origin;
  check(/\/batches\/1$/.test(url), `run --open printed the batch page's URL (${url})`);

  // A second batch of the same suite (same labels: none) on the same coordinator.
  const second = execFileSync(cli, ["submit", suite, "--no-cache", "--coordinator", address],
                              { encoding: "utf8" }).trim().split("\n").pop().trim();
  try {
    execFileSync(cli, ["watch", second, "--coordinator", address], { stdio: "ignore" });
  } catch (e) { /* a failing example job makes watch exit non-zero; the batch has ended */ }
  check(second === "2", `second batch submitted (${second})`);

  browser = await chromium.launch({
    executablePath, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });

  // 1. The batch list.
  await page.goto(base + "/");
  const ids = await page.locator("#batches tr td:first-child a").allTextContents();
  check(ids.length === 2 && ids[0] === "2" && ids[1] === "1", `/ lists batches 2, 1 (${ids})`);
  await page.screenshot({ path: path.join(outDir, "web-1-batches.png"), fullPage: true });
  await page.locator("#batches a", { hasText: /^2$/ }).click();
  await page.waitForURL(/\/batches\/2$/);
  check(await page.locator("#jobs tr").count() > 2, "batch page has a job table");
  check(await page.locator("iframe#aggregate").count() === 1, "aggregate flamegraph embedded");

  // 2. Sort by cycles: descending.
  await page.locator("#sort-cycles").click();
  await page.waitForURL(/sort=cycles&order=desc/);
  const cycles = (await page.locator("#jobs td.cycles").allTextContents())
      .filter((t) => t.trim() !== "").map((t) => Number(t.replace(/,/g, "")));
  check(cycles.length > 2 && cycles.every((c, i) => i === 0 || cycles[i - 1] >= c),
        `sorted by cycles, descending (${cycles.join(" ")})`);
  await page.screenshot({ path: path.join(outDir, "web-2-batch-by-cycles.png"), fullPage: true });

  // 3. The costliest job's flamegraph: zoom and search inside the iframe.
  await page.locator("#jobs a.job").first().click();
  await page.waitForURL(/\/batches\/2\/jobs\//);
  const frameEl = page.locator("iframe#job-flamegraph");
  check(await frameEl.count() === 1, "job page embeds its flamegraph");
  const svg = page.frameLocator("iframe#job-flamegraph");
  await svg.locator("#frames > g").first().waitFor();
  const frame = (await frameEl.elementHandle()).contentFrame();
  const contentFrame = await frame;
  await contentFrame.waitForFunction(() => window.flamefleet !== undefined, null,
                                     { timeout: 10000 });
  const readFrames = () => contentFrame.evaluate(() =>
      Array.from(document.getElementById("frames").children).map((g, i) => ({
        i, x: +g.getAttribute("ff:x"), w: +g.getAttribute("ff:w"),
        root: g.getAttribute("ff:root") === "1",
        pw: +g.children[1].getAttribute("width"),
      })));
  const meta = await contentFrame.evaluate(() => ({ W, XPAD, TOTAL }));
  const span = meta.W - 2 * meta.XPAD;
  const before = await readFrames();
  const target = before.filter((f) => !f.root && f.w < meta.TOTAL * 0.9 && f.pw > 10)
                       .sort((a, b) => b.w - a.w)[0];
  check(target !== undefined, `a frame to zoom into (${before.length} frames)`);
  if (target) {
    await frameEl.scrollIntoViewIfNeeded();
    const rect = svg.locator("#frames > g").nth(target.i).locator("rect");
    await rect.click();
    const after = await readFrames();
    check(Math.abs(after[target.i].pw - span) <= 0.11,
          `clicked frame zoomed to the full width (${after[target.i].pw} ~ ${span})`);
  }
  await page.screenshot({ path: path.join(outDir, "web-3-job-zoomed.png"), fullPage: true });
  page.once("dialog", (d) => d.accept("."));
  await svg.locator("#search").click();
  const matched = await svg.locator("#matched").textContent();
  check(/^Matched: \d+(\.\d)?%$/.test(matched.trim()), `search in the page: "${matched.trim()}"`);

  // 4. Back to the batch, then the diff against its predecessor (batch 1).
  await page.goto(base + "/batches/2");
  await page.locator("#diff-previous").click();
  await page.waitForURL(/\/diff\?before=1&after=2$/);
  check((await page.locator("#diff-counts").textContent()).startsWith("jobs: "),
        "diff page shows the job counts");
  const diffSvg = page.frameLocator("iframe#diff-flamegraph");
  await diffSvg.locator("#frames > g").first().waitFor();
  check(await diffSvg.locator("#frames > g").count() > 1, "differential flamegraph rendered");
  await page.screenshot({ path: path.join(outDir, "web-4-diff.png"), fullPage: true });

  check(errors.length === 0, `no page errors (${errors.join("; ")})`);
} catch (e) {
  check(false, "click-through: " + e.message);
} finally {
  if (browser) await browser.close();
  fleet.kill("SIGINT");  // --keep serves until Ctrl-C
  await new Promise((resolve) => fleet.exitCode !== null ? resolve() : fleet.once("exit", resolve));
  check(fleet.exitCode === 0 || fleet.exitCode === 1,
        `flamefleet run ended on Ctrl-C with the batch's exit code (${fleet.exitCode})`);
}
console.log(failures === 0 ? "PASS" : `${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
