/* Search result snippets from the article's text (added by fedrepro.report.sphinx_site).
 *
 * Sphinx 7.4 builds a result's snippet from the whole [role=main] element, which in this theme
 * starts with the header buttons (".md", ".pdf"), and when the stemmed search word does not
 * occur literally in the page it shows that start behind "..." ("....md"). Here the snippet is
 * taken from the article only, around the first word of the query found in it (stemmed or
 * as typed), and from the article's beginning when none is found.
 */
(function () {
  "use strict";
  function articleText(htmlString, anchor) {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll(".headerlink, script, style, .bd-header-article, .prev-next-area, .bd-sidebar-secondary")
      .forEach((e) => e.remove());
    const main = doc.querySelector('[role="main"]');
    let node = null;
    if (anchor && main) node = main.querySelector(anchor);
    if (!node) node = doc.querySelector("article.bd-article") || main;
    return node ? node.textContent.replace(/\s+/g, " ").trim() : "";
  }
  function typedWords() {
    const q = new URLSearchParams(window.location.search).get("q") || "";
    return q.toLowerCase().split(/\s+/).filter((w) => w.length > 0);
  }
  function patch() {
    // searchtools.js declares `const Search` at top level: a global binding, not a property of window
    if (typeof Search === "undefined" || Search._fedreproSnippets) return;
    Search._fedreproSnippets = true;
    Search.htmlToText = articleText;
    Search.makeSearchSummary = function (htmlText, keywords, anchor) {
      const text = articleText(htmlText, anchor);
      if (text === "") return null;
      const lower = text.toLowerCase();
      const words = [...keywords].map((k) => k.toLowerCase()).concat(typedWords());
      const hits = words.map((w) => lower.indexOf(w)).filter((i) => i > -1);
      const at = hits.length ? Math.min(...hits) : 0;
      const start = Math.max(at - 100, 0);
      const summary = document.createElement("p");
      summary.classList.add("context");
      summary.textContent = (start > 0 ? "… " : "") + text.substr(start, 240).trim() +
        (start + 240 < text.length ? " …" : "");
      return summary;
    };
  }
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();
