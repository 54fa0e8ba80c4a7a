// check.js SITE SHOTS: the book's site in headless Chromium (make check-browser).
//
// Every page, at 1280 and at 390 px wide, must load with no console error and
// no failed request, show every image, link only to pages and ids that exist,
// set every Chinese character in a CJK font (Chromium's own account of the
// fonts it used, over the DevTools protocol), and not scroll sideways: only a
// code block, a table or a figure may be wider than the text, inside its own
// scrolling box. Then five searches (two of them Chinese glossary terms) must
// each list the page they should find first.
// Screenshots of a few pages go to SHOTS. Prints one line per check, then
// "N passed, N failed"; exits 1 if any failed.
"use strict";
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const site = path.resolve(process.argv[2]);
const shots = path.resolve(process.argv[3] || "shots");
fs.mkdirSync(shots, { recursive: true });
const WIDTHS = [1280, 390];
const SEARCHES = [
  ["就绪队列", "a1-glossary.html"],
  ["惰性删除", "a1-glossary.html"],
  ["FD_SETSIZE", "01-select-loop.html"],
  ["heapify", "03-timer-heap.html"],
  ["eventfd", "06-self-pipe.html"],
];
const SHOTS = ["index.html", "07-selector.html", "a1-glossary.html"];

let passed = 0, failed = 0;
function result(ok, what, detail) {
  if (ok) { passed++; console.log("PASS: " + what); }
  else { failed++; console.log("FAIL: " + what + (detail ? "\n    | " + String(detail).split("\n").join("\n    | ") : "")); }
}

function pages() {
  const out = [];
  for (const f of fs.readdirSync(site).sort()) if (f.endsWith(".html")) out.push(f);
  const ans = path.join(site, "answers");
  if (fs.existsSync(ans))
    for (const f of fs.readdirSync(ans).sort()) if (f.endsWith(".html")) out.push("answers/" + f);
  return out;
}

// In the page: what a reader would see go wrong.
function inspect() {
  const vw = document.documentElement.clientWidth;
  const CJK = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;
  const scrollBox = (el) => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (["auto", "scroll", "hidden"].includes(s.overflowX) && e !== el) return e;
    }
    return null;
  };
  const out = { images: [], overflow: [], links: [], ids: [], cjk: 0 };
  document.querySelectorAll("img").forEach((img) => {
    if (!img.complete || img.naturalWidth === 0) out.images.push(img.getAttribute("src"));
  });
  if (document.documentElement.scrollWidth > vw + 1)
    out.overflow.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " px wide in " + vw);
  document.querySelectorAll("main *, header *, nav *").forEach((el) => {
    if (el.closest("pre, table, figure, .figure, .search-results") || el.closest("[hidden]")) return;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return;
    if (r.right > vw + 1 && !scrollBox(el)) {
      const t = (el.textContent || "").trim().slice(0, 60);
      out.overflow.push(el.tagName.toLowerCase() + (el.className ? "." + el.className : "") +
                        " reaches " + Math.round(r.right) + " px: " + t);
    }
  });
  document.querySelectorAll("a[href]").forEach((a) => out.links.push(a.href));
  document.querySelectorAll("[id]").forEach((e) => out.ids.push(e.id));
  // Mark each element whose own text holds Chinese, for the font check.
  let n = 0;
  document.querySelectorAll("body *").forEach((el) => {
    if (el.closest("script, style, [hidden]")) return;
    for (const c of el.childNodes) {
      if (c.nodeType === 3 && CJK.test(c.nodeValue)) {
        el.setAttribute("data-cjk-probe", String(n++));
        break;
      }
    }
  });
  out.cjk = n;
  out.overflow = out.overflow.slice(0, 8);
  return out;
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const list = pages();
  result(list.length > 10, "the site has its pages (" + list.length + ")");
  const idsOf = {}, linksOf = {};

  for (const width of WIDTHS) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    for (const p of list) {
      const page = await context.newPage();
      const errors = [];
      page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
      page.on("pageerror", (e) => errors.push("page error: " + e.message));
      page.on("requestfailed", (r) => errors.push("failed request: " + r.url()));
      const url = "file://" + path.join(site, p);
      await page.goto(url, { waitUntil: "load" });
      const seen = await page.evaluate(inspect);
      const what = p + " at " + width + " px";
      result(errors.length === 0, what + ": no console error, no failed request", errors.join("\n"));
      result(seen.images.length === 0, what + ": every image shows", "broken: " + seen.images.join(", "));
      result(seen.overflow.length === 0, what + ": nothing wider than the window outside code, tables and figures",
             seen.overflow.join("\n"));
      if (width === WIDTHS[0]) {
        idsOf[p] = new Set(seen.ids);
        linksOf[p] = seen.links;
        // Chinese glyphs: the fonts Chromium used for each element holding Chinese.
        if (seen.cjk > 0) {
          const cdp = await context.newCDPSession(page);
          await cdp.send("DOM.enable");
          await cdp.send("CSS.enable");
          const { root } = await cdp.send("DOM.getDocument", { depth: -1 });
          const { nodeIds } = await cdp.send("DOM.querySelectorAll", { nodeId: root.nodeId, selector: "[data-cjk-probe]" });
          const bad = [];
          for (const nodeId of nodeIds) {
            const { fonts } = await cdp.send("CSS.getPlatformFontsForNode", { nodeId });
            if (!fonts.some((f) => /CJK|Hei|Ming|Song|Kai|WenQuanYi|Droid Sans Fallback/i.test(f.familyName))) {
              const { outerHTML } = await cdp.send("DOM.getOuterHTML", { nodeId });
              bad.push(fonts.map((f) => f.familyName).join(", ") + ": " + outerHTML.slice(0, 80));
            }
          }
          result(bad.length === 0, p + ": Chinese text (" + nodeIds.length + " elements) is set in a CJK font",
                 bad.slice(0, 5).join("\n"));
          await cdp.detach();
        }
        if (SHOTS.includes(p)) await page.screenshot({ path: path.join(shots, p.replace(/\W/g, "_") + "-" + width + ".png") });
      } else if (SHOTS.includes(p)) {
        await page.screenshot({ path: path.join(shots, p.replace(/\W/g, "_") + "-" + width + ".png") });
      }
      await page.close();
    }
    await context.close();
  }

  // Links: every file:// link names a file that exists, and an id in it.
  for (const p of list) {
    const bad = [];
    for (const href of linksOf[p] || []) {
      if (!href.startsWith("file://")) continue;
      const u = new URL(href);
      const file = decodeURIComponent(u.pathname);
      if (!fs.existsSync(file)) { bad.push(href); continue; }
      const rel = path.relative(site, file).split(path.sep).join("/");
      if (u.hash && rel.endsWith(".html")) {
        const ids = idsOf[rel];
        if (ids && !ids.has(decodeURIComponent(u.hash.slice(1)))) bad.push(href + " (no such id)");
      }
    }
    result(bad.length === 0, p + ": every link leads somewhere", bad.slice(0, 8).join("\n"));
  }

  // Searches, from the front page.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("file://" + path.join(site, "index.html"));
  for (const [q, want] of SEARCHES) {
    let hrefs = [];
    try {
      await page.fill("#book-search", "");
      await page.fill("#book-search", q);
      await page.waitForFunction((q) => {
        const r = document.getElementById("book-search-results");
        return document.getElementById("book-search").value === q && !r.hidden &&
               r.querySelector("li, .none");
      }, q, { timeout: 20000 });
      await page.waitForTimeout(300);
      hrefs = await page.$$eval("#book-search-results li a", (as) => as.map((a) => a.getAttribute("href")));
    } catch (e) { errors.push(String(e)); }
    const top = hrefs.slice(0, 1).map((h) => h.split("#")[0]);
    result(top.includes(want), "search \"" + q + "\" finds " + want + " first",
           "found: " + hrefs.slice(0, 5).join(", ") + (errors.length ? "\n" + errors.join("\n") : ""));
    if (q === SEARCHES[0][0]) await page.screenshot({ path: path.join(shots, "search-" + "cjk" + ".png") });
    if (q === "eventfd") await page.screenshot({ path: path.join(shots, "search-eventfd.png") });
  }
  // The reader's tools on a chapter: copy buttons, anchors, keys, dark mode.
  {
    const dark = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "dark" });
    const page = await dark.newPage();
    await page.goto("file://" + path.join(site, "03-timer-heap.html"));
    const tools = await page.evaluate(() => ({
      pre: document.querySelectorAll("main pre").length,
      copy: document.querySelectorAll("main button.copy").length,
      h2: document.querySelectorAll("main h2[id]").length,
      anchors: document.querySelectorAll("main h2[id] > a.anchor").length,
      secno: document.querySelectorAll("main h2 .secno").length,
      bg: getComputedStyle(document.body).backgroundColor,
    }));
    result(tools.pre > 0 && tools.copy === tools.pre, "03-timer-heap.html: a Copy button on each of its " + tools.pre + " listings",
           JSON.stringify(tools));
    result(tools.h2 > 0 && tools.anchors === tools.h2 && tools.secno === tools.h2,
           "03-timer-heap.html: each section numbered, with an anchor", JSON.stringify(tools));
    const rgb = (tools.bg.match(/\d+/g) || [255]).slice(0, 3).map(Number);
    result(rgb.every((c) => c < 60), "dark mode: the page is dark when the system is", tools.bg);
    await page.screenshot({ path: path.join(shots, "03_timer_heap-dark.png") });
    await page.keyboard.press("ArrowRight");
    await page.waitForURL(/04-snapshot\.html/, { timeout: 10000 }).catch(() => {});
    result(page.url().endsWith("04-snapshot.html"), "the right arrow turns to the next page", page.url());
    await page.keyboard.press("ArrowLeft");
    await page.waitForURL(/03-timer-heap\.html/, { timeout: 10000 }).catch(() => {});
    result(page.url().endsWith("03-timer-heap.html"), "the left arrow turns back", page.url());
    await dark.close();
  }
  await browser.close();
  console.log(passed + " passed, " + failed + " failed");
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log("FAIL: " + e.stack); console.log(passed + " passed, " + (failed + 1) + " failed"); process.exit(1); });
