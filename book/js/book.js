/* book.js: the site's reader tools (DESIGN section 8), on every page.
   - the contents and "On this page" open beside the text on wide screens,
     folded on phones;
   - a "#" anchor after each section heading, to link to it;
   - a Copy button on every listing;
   - keyboard: left and right arrows for the previous and next page, "/" to
     search;
   - search: lunr (Debian's libjs-lunr) over search-index.js, which make book
     writes (book/search-index.py); Chinese is searched as pairs of characters,
     spelled as that script spells them. Both load on the first search. */
(function () {
  "use strict";
  var root = document.body.getAttribute("data-root") || "";
  var wide = window.matchMedia("(min-width: 60em)").matches;

  ["book-contents", "page-toc"].forEach(function (id) {
    var d = document.getElementById(id);
    if (d && wide) d.open = true;
  });

  // Heading anchors.
  document.querySelectorAll("main h2[id], main h3[id], main h4[id]").forEach(function (h) {
    var a = document.createElement("a");
    a.className = "anchor";
    a.href = "#" + h.id;
    a.setAttribute("aria-label", "Link to this section");
    a.textContent = "#";
    h.appendChild(a);
  });

  // Copy buttons.
  function copyText(text, done) {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(text, done); });
    } else {
      fallback(text, done);
    }
  }
  function fallback(text, done) {
    var t = document.createElement("textarea");
    t.value = text;
    t.setAttribute("readonly", "");
    t.style.position = "fixed";
    t.style.opacity = "0";
    document.body.appendChild(t);
    t.select();
    try { document.execCommand("copy"); done(); } catch (e) { /* nothing to copy to */ }
    document.body.removeChild(t);
  }
  document.querySelectorAll("main pre").forEach(function (pre) {
    var box = pre.parentElement.classList.contains("sourceCode") ? pre.parentElement : pre;
    var wrap = document.createElement("div");
    wrap.className = "code-box";
    box.parentElement.insertBefore(wrap, box);
    wrap.appendChild(box);
    var b = document.createElement("button");
    b.type = "button";
    b.className = "copy";
    b.textContent = "Copy";
    b.setAttribute("aria-label", "Copy this listing");
    b.addEventListener("click", function () {
      copyText(pre.innerText.replace(/\n$/, "") + "\n", function () {
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = "Copy"; }, 1500);
      });
    });
    wrap.appendChild(b);
  });

  // Keyboard: previous / next page, "/" to search.
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
    var rel = e.key === "ArrowLeft" ? "prev" : e.key === "ArrowRight" ? "next" : null;
    if (rel) {
      var link = document.querySelector('link[rel="' + rel + '"]');
      if (link) { e.preventDefault(); window.location.href = link.href; }
    } else if (e.key === "/") {
      var s = document.getElementById("book-search");
      if (s) { e.preventDefault(); s.focus(); }
    }
  });

  // Search.
  var input = document.getElementById("book-search");
  var results = document.getElementById("book-search-results");
  if (!input || !results) return;
  var index = null, docs = null, loading = null;

  function load(src) {
    return new Promise(function (ok, ko) {
      var s = document.createElement("script");
      s.src = root + src;
      s.onload = ok;
      s.onerror = function () { ko(new Error("cannot load " + src)); };
      document.head.appendChild(s);
    });
  }
  function ready() {
    if (!loading) {
      loading = load("js/lunr.min.js").then(function () { return load("search-index.js"); })
        .then(function () {
          docs = window.BOOK_SEARCH_DOCS;
          index = window.lunr(function () {
            this.ref("i");
            this.field("h", { boost: 8 });
            this.field("p", { boost: 2 });
            this.field("t");
            this.field("c");
            for (var i = 0; i < docs.length; i++) {
              var d = docs[i];
              this.add({ i: String(i), h: d.h, p: d.p, t: d.t, c: d.c });
            }
          });
        });
    }
    return loading;
  }

  var HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/g;
  function cjkTerms(run) {
    var cps = Array.from(run).map(function (ch) { return ch.codePointAt(0); });
    if (cps.length === 1) return ["cjk" + cps[0]];
    var out = [];
    for (var i = 0; i + 1 < cps.length; i++) out.push("cjk" + cps[i] + "n" + cps[i + 1]);
    return out;
  }

  function search(q) {
    var han = q.match(HAN) || [];
    var latin = q.replace(HAN, " ").toLowerCase().split(/[^a-z0-9_]+/).filter(Boolean);
    if (!han.length && !latin.length) return [];
    function run(wild) {
      return index.query(function (query) {
        han.forEach(function (r) {
          cjkTerms(r).forEach(function (t) {
            query.term(t, { fields: ["c"], usePipeline: false,
                            presence: window.lunr.Query.presence.REQUIRED });
          });
        });
        latin.forEach(function (w) {
          query.term(w, { presence: window.lunr.Query.presence.REQUIRED,
                          fields: ["h", "p", "t"],
                          wildcard: wild ? window.lunr.Query.wildcard.TRAILING : 0,
                          usePipeline: !wild });
        });
      });
    }
    var found = run(false);
    if (!found.length && latin.length) found = run(true);
    return found;
  }

  function snippet(text, q) {
    var words = (q.match(HAN) || []).concat(q.replace(HAN, " ").split(/\s+/).filter(Boolean));
    var lower = text.toLowerCase(), at = -1;
    for (var i = 0; i < words.length && at < 0; i++) at = lower.indexOf(words[i].toLowerCase());
    var from = Math.max(0, at - 60);
    return (from > 0 ? "… " : "") + text.slice(from, from + 160) + (text.length > from + 160 ? " …" : "");
  }

  function show(q) {
    results.innerHTML = "";
    if (!q.trim()) { results.hidden = true; return; }
    var found = search(q).slice(0, 12);
    results.hidden = false;
    if (!found.length) {
      var p = document.createElement("p");
      p.className = "none";
      p.textContent = "Nothing found for “" + q + "”.";
      results.appendChild(p);
      return;
    }
    var ol = document.createElement("ol");
    found.forEach(function (r) {
      var d = docs[Number(r.ref)];
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = root + d.u;
      var where = document.createElement("span");
      where.className = "where";
      where.textContent = d.h === d.p ? d.p : d.p + " › " + d.h;
      a.appendChild(where);
      var s = document.createElement("span");
      s.className = "snippet";
      s.textContent = snippet(d.t, q);
      a.appendChild(s);
      li.appendChild(a);
      ol.appendChild(li);
    });
    results.appendChild(ol);
  }

  var timer = null;
  input.addEventListener("focus", function () { ready(); });
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      ready().then(function () { show(input.value); });
    }, 120);
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { input.value = ""; show(""); input.blur(); }
    if (e.key === "Enter") {
      e.preventDefault();
      var first = results.querySelector("a");
      if (first) window.location.href = first.href;
    }
  });
  document.addEventListener("click", function (e) {
    if (!results.contains(e.target) && e.target !== input) results.hidden = true;
  });
})();
