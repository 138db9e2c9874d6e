#include "renderer/internal/svg_script.h"

namespace flamefleet::renderer::internal {

// What the script does:
// - every frame is a <g> child of #frames holding <title>, <rect>, <text>; its
// integer
//   ff:x / ff:w attributes are the frame's offset and width in counts, so
//   zooming rescales exactly, without float drift;
// - click a frame: zoom to it (rows nearer the root that overlap it are its
// ancestors: they get
//   class "parent" and full width; frames outside its range get "hide"; the
//   rest rescale); click the root frame or "Reset Zoom" to unzoom;
// - hover: the bottom line shows NAME_TYPE and the tooltip text;
// - "Search" / Ctrl-F / F3: prompt for a regular expression, recolour matching
// frames with
//   SEARCH_COLOR and show "Matched: N%" = union of matching ranges within the
//   current zoom, so nested matches are not counted twice; "ic" / Ctrl-I
//   toggles case; Escape clears;
// - labels are re-fitted arithmetically (FONT_SIZE * FONT_WIDTH per character),
// which keeps
//   zooming fast on large graphs;
// - zoom (x, y) and search (s) live in the URL query and are restored on load;
// - window.flamefleet exposes zoomTo / unzoom / search / resetSearch for
// scripting and tests.
absl::string_view SvgScript() {
  static constexpr char kScript[] = R"JS(
"use strict";
var frames, details, unzoomBtn, searchBtn, icBtn, matchedText;
var zoomed = null, currentTerm = null, ignoreCase = false;
function init(evt) {
  frames = document.getElementById("frames");
  details = document.getElementById("details").firstChild;
  unzoomBtn = document.getElementById("unzoom");
  searchBtn = document.getElementById("search");
  icBtn = document.getElementById("ignorecase");
  matchedText = document.getElementById("matched");
  var params = new URLSearchParams(window.location.search);
  if (params.has("x") && params.has("y")) {
    var want_x = params.get("x"), want_y = params.get("y");
    var gs = frames.children;
    for (var i = 0; i < gs.length; i++) {
      if (gs[i].getAttribute("ff:x") === want_x && rectOf(gs[i]).getAttribute("y") === want_y) {
        zoomTo(gs[i]);
        break;
      }
    }
  }
  if (params.has("s")) search(params.get("s"));
  window.flamefleet = {zoomTo: zoomTo, unzoom: unzoom, search: search, resetSearch: resetSearch,
                       matched: function() { return matchedText.textContent; }};
}
function rectOf(g) { return g.children[1]; }
function nameOf(g) {
  var t = g.children[0].textContent, i = t.lastIndexOf(" (");
  return i < 0 ? t : t.substring(0, i);
}
function frameOf(node) {
  while (node && node !== document) {
    if (node.parentNode === frames) return node;
    node = node.parentNode;
  }
  return null;
}
function setParam(key, value) {
  try {
    var params = new URLSearchParams(window.location.search);
    if (value === null) params.delete(key); else params.set(key, value);
    var q = params.toString();
    history.replaceState(null, "", q ? "?" + q : window.location.pathname);
  } catch (e) {}
}
function fitLabel(g, width) {
  var chars = Math.floor((width - 3) / (FONT_SIZE * FONT_WIDTH));
  var name = nameOf(g), label = "";
  if (chars >= 3) label = name.length <= chars ? name : name.substring(0, chars - 2) + "..";
  g.children[2].textContent = label;
}
function place(g, x, width) {
  var r = rectOf(g);
  r.setAttribute("x", x.toFixed(1));
  r.setAttribute("width", width.toFixed(1));
  g.children[2].setAttribute("x", (x + 3).toFixed(1));
  fitLabel(g, width);
}
function layout(zx, zw, zy) {
  var span = W - 2 * XPAD, scale = span / zw, gs = frames.children;
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i], x = +g.getAttribute("ff:x"), w = +g.getAttribute("ff:w");
    var y = +rectOf(g).getAttribute("y");
    g.classList.remove("hide");
    g.classList.remove("parent");
    if (zy === null) { place(g, XPAD + x * scale, w * scale); continue; }
    if (x + w <= zx || x >= zx + zw) { g.classList.add("hide"); continue; }
    var nearer_root = INVERTED ? y < zy : y > zy;
    if (nearer_root) { g.classList.add("parent"); place(g, XPAD, span); }
    else place(g, XPAD + (x - zx) * scale, w * scale);
  }
}
function zoomTo(g) {
  if (g.getAttribute("ff:root") === "1") { unzoom(); return; }
  zoomed = g;
  var y = rectOf(g).getAttribute("y");
  layout(+g.getAttribute("ff:x"), +g.getAttribute("ff:w"), +y);
  unzoomBtn.classList.add("show");
  setParam("x", g.getAttribute("ff:x"));
  setParam("y", y);
  if (currentTerm !== null) search(currentTerm);
}
function unzoom() {
  zoomed = null;
  layout(0, TOTAL, null);
  unzoomBtn.classList.remove("show");
  setParam("x", null);
  setParam("y", null);
  if (currentTerm !== null) search(currentTerm);
}
function restoreColours() {
  var gs = frames.children;
  for (var i = 0; i < gs.length; i++) {
    var r = rectOf(gs[i]);
    if (r.hasAttribute("ff:fill")) {
      r.setAttribute("fill", r.getAttribute("ff:fill"));
      r.removeAttribute("ff:fill");
    }
  }
}
function search(term) {
  var re;
  try { re = new RegExp(term, ignoreCase ? "i" : ""); } catch (e) { return false; }
  restoreColours();
  currentTerm = term;
  var zx = zoomed ? +zoomed.getAttribute("ff:x") : 0;
  var zw = zoomed ? +zoomed.getAttribute("ff:w") : TOTAL;
  var spans = [], gs = frames.children;
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i];
    if (g.classList.contains("hide") || !re.test(nameOf(g))) continue;
    var r = rectOf(g);
    r.setAttribute("ff:fill", r.getAttribute("fill"));
    r.setAttribute("fill", SEARCH_COLOR);
    var x = +g.getAttribute("ff:x"), w = +g.getAttribute("ff:w");
    var a = Math.max(x, zx), b = Math.min(x + w, zx + zw);
    if (b > a) spans.push([a, b]);
  }
  spans.sort(function(p, q) { return p[0] - q[0] || q[1] - p[1]; });
  var covered = 0, end = -Infinity;
  for (var j = 0; j < spans.length; j++) {
    var s = spans[j];
    if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }
    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }
  }
  matchedText.textContent = "Matched: " + (100 * covered / zw).toFixed(1) + "%";
  matchedText.classList.add("show");
  searchBtn.classList.add("show");
  searchBtn.textContent = "Reset Search";
  setParam("s", term);
  return true;
}
function resetSearch() {
  restoreColours();
  currentTerm = null;
  matchedText.textContent = " ";
  matchedText.classList.remove("show");
  searchBtn.classList.remove("show");
  searchBtn.textContent = "Search";
  setParam("s", null);
}
function askSearch() {
  var term = prompt("Search for (regular expression, e.g. ^std::)" +
                    (ignoreCase ? ", ignoring case" : "") +
                    "\nCtrl-I toggles case sensitivity", currentTerm === null ? "" : currentTerm);
  if (term !== null && term !== "") search(term);
}
function toggleIgnoreCase() {
  ignoreCase = !ignoreCase;
  if (ignoreCase) icBtn.classList.add("show"); else icBtn.classList.remove("show");
  if (currentTerm !== null) search(currentTerm);
}
window.addEventListener("click", function(e) {
  var g = frameOf(e.target);
  if (g) { zoomTo(g); return; }
  var id = e.target && e.target.id;
  if (id === "unzoom") unzoom();
  else if (id === "search") { if (currentTerm === null) askSearch(); else resetSearch(); }
  else if (id === "ignorecase") toggleIgnoreCase();
});
window.addEventListener("mouseover", function(e) {
  var g = frameOf(e.target);
  if (g) details.nodeValue = NAME_TYPE + " " + g.children[0].textContent;
});
window.addEventListener("mouseout", function(e) {
  if (frameOf(e.target)) details.nodeValue = " ";
});
window.addEventListener("keydown", function(e) {
  var mod = e.ctrlKey || e.metaKey;
  if (e.key === "F3" || (mod && (e.key === "f" || e.key === "F"))) {
    e.preventDefault();
    askSearch();
  } else if (mod && (e.key === "i" || e.key === "I")) {
    e.preventDefault();
    toggleIgnoreCase();
  } else if (e.key === "Escape") {
    resetSearch();
  }
});
)JS";
  return absl::string_view(kScript, sizeof(kScript) - 1);
}

}  // namespace flamefleet::renderer::internal
