// Headless-Chromium test of a flamefleet SVG's interactivity.
//
//   node tests/browser/svg_test.mjs path/to/graph.svg [--search REGEX]
//
// Opens the SVG in Debian's Chromium (/usr/bin/chromium, or $CHROMIUM_PATH) through
// playwright-core (no Playwright-downloaded browsers), then:
//   1. clicks a mid-sized frame and checks that it now spans the full width, that its
//      descendants widened by the zoom factor, that its ancestors are marked "parent" and that
//      unrelated frames are hidden;
//   2. clicks "Reset Zoom" and checks the original widths come back;
//   3. presses Ctrl-F, answers the prompt with a regex, and checks the highlighted frames and
//      the "Matched: N%" text against a percentage computed here from the SVG's own data
//      (the union of matching frame ranges, so nested matches count once).
// Exits 0 on success, 1 on a failed check, 2 on usage errors.
import { chromium } from "playwright-core";
import path from "node:path";
import { existsSync } from "node:fs";

const args = process.argv.slice(2);
const svgArg = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--search");
const searchIdx = args.indexOf("--search");
let searchTerm = searchIdx >= 0 ? args[searchIdx + 1] : null;
if (!svgArg || !existsSync(svgArg)) {
  console.error("usage: node svg_test.mjs GRAPH.svg [--search REGEX]");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

let failures = 0;
function check(cond, message) {
  if (cond) {
    console.log("ok   " + message);
  } else {
    console.log("FAIL " + message);
    failures++;
  }
}
const near = (a, b, eps = 0.15) => Math.abs(a - b) <= eps;
const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto("file://" + path.resolve(svgArg));
  await page.waitForFunction(() => window.flamefleet !== undefined, null, { timeout: 10000 });

  // Everything about the frames, read from the DOM.
  const readFrames = () =>
    page.evaluate(() => {
      const W = window.W, XPAD = window.XPAD;
      return Array.from(document.getElementById("frames").children).map((g, i) => {
        const title = g.children[0].textContent;
        const cut = title.lastIndexOf(" (");
        const r = g.children[1];
        return {
          i,
          name: cut < 0 ? title : title.substring(0, cut),
          x: +g.getAttribute("ff:x"),
          w: +g.getAttribute("ff:w"),
          root: g.getAttribute("ff:root") === "1",
          y: +r.getAttribute("y"),
          px: +r.getAttribute("x"),
          pw: +r.getAttribute("width"),
          fill: r.getAttribute("fill"),
          cls: g.getAttribute("class") || "",
          W,
          XPAD,
        };
      });
    });
  const meta = await page.evaluate(() => ({
    W: W, XPAD: XPAD, TOTAL: TOTAL, INVERTED: INVERTED, SEARCH_COLOR: SEARCH_COLOR,
  }));
  const span = meta.W - 2 * meta.XPAD;
  const before = await readFrames();
  check(before.length > 1, `SVG has frames (${before.length})`);

  // 1. Zoom: the widest frame that is neither the root nor full width, and has children.
  const nearerRoot = (a, b) => (meta.INVERTED ? a.y < b.y : a.y > b.y);
  const inside = (f, z) => f.x >= z.x && f.x + f.w <= z.x + z.w;
  const candidates = before.filter(
      (f) => !f.root && f.w < meta.TOTAL * 0.6 && f.pw > 20 &&
          before.some((c) => nearerRoot(f, c) && inside(c, f) && c !== f));
  candidates.sort((a, b) => b.w - a.w);
  const target = candidates[0];
  check(target !== undefined, "found a frame to zoom into");
  if (target) {
    // A real mouse click in the middle of the frame's rectangle.
    const box = await page.locator("#frames > g").nth(target.i).locator("rect").boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const after = await readFrames();
    const z = after[target.i];
    check(near(z.pw, span, 0.11), `zoomed frame spans full width (${z.pw} ~ ${span})`);
    const factor = meta.TOTAL / target.w;
    const desc = after.filter((f) => f !== z && nearerRoot(target, f) && inside(f, target));
    check(desc.length > 0, `zoomed frame has ${desc.length} descendant frame(s)`);
    check(
        desc.every((f) => !f.cls.includes("hide") &&
                   near(f.pw, before[f.i].pw * factor, 0.1 * factor + 0.11)),
        `descendants widened by ${factor.toFixed(2)}x`);
    const anc = after.filter((f) => nearerRoot(f, target) && inside(target, f));
    check(anc.every((f) => f.root || f.cls.includes("parent")), "ancestors marked parent");
    const unrelated = after.filter((f) => f.x + f.w <= target.x || f.x >= target.x + target.w);
    check(unrelated.every((f) => f.cls.includes("hide")),
          `${unrelated.length} unrelated frames hidden`);
    const changed = after.filter((f) => !near(f.pw, before[f.i].pw, 0.11)).length;
    check(changed > 0, `zoom changed ${changed} frame widths`);

    // 2. Reset zoom.
    await page.locator("#unzoom").click();
    const reset = await readFrames();
    check(reset.every((f) => near(f.pw, before[f.i].pw, 0.11) && !f.cls.includes("hide")),
          "Reset Zoom restores original widths");
  }

  // 3. Search through Ctrl-F and the prompt.
  if (searchTerm === null) {
    const counts = new Map();
    for (const f of before) if (!f.root) counts.set(f.name, (counts.get(f.name) || 0) + 1);
    const best = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    searchTerm = "^" + escapeRegex(best[0]) + "$";
  }
  const re = new RegExp(searchTerm);
  const matching = before.filter((f) => re.test(f.name));
  const spans = matching.map((f) => [f.x, f.x + f.w]).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let covered = 0, end = -Infinity;
  for (const [a, b] of spans) {
    if (a >= end) { covered += b - a; end = b; } else if (b > end) { covered += b - end; end = b; }
  }
  const expected = "Matched: " + ((100 * covered) / meta.TOTAL).toFixed(1) + "%";
  page.once("dialog", (d) => d.accept(searchTerm));
  await page.locator("svg").focus().catch(() => {});
  await page.mouse.move(5, 5);
  await page.keyboard.press("Control+f");
  await page.waitForFunction(() => document.getElementById("matched").textContent.trim() !== "",
                             null, { timeout: 5000 }).catch(() => {});
  const matchedText = (await page.locator("#matched").textContent()).trim();
  check(matchedText === expected,
        `search ${searchTerm}: "${matchedText}" == "${expected}" (${matching.length} frames)`);
  const highlighted = (await readFrames()).filter((f) => f.fill === meta.SEARCH_COLOR).length;
  check(highlighted === matching.length, `${highlighted} frames highlighted`);
  const searchLabel = (await page.locator("#search").textContent()).trim();
  check(searchLabel === "Reset Search", "search button offers Reset Search");
  await page.locator("#search").click();
  check((await page.locator("#matched").textContent()).trim() === "", "search reset");
  check(errors.length === 0, "no page errors" + (errors.length ? ": " + errors.join("; ") : ""));
} finally {
  await browser.close();
}
console.log(failures === 0 ? "PASS" : `${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
