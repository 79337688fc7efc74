// The page of `anydev report html` (anydev/_dashboard/render.py), made
// better where JavaScript runs: a click on a file of the map lists its
// findings beside the map (and #file=PATH links to that list), and a click
// on the head of a sortable table sorts it. Everything it shows is in the
// page already: with JavaScript off, each tile links to the file's list
// further down and the tables are there as written.
(function () {
  "use strict";
  var doc = document, root = doc.documentElement;
  root.className = root.className.replace(/\bnojs\b/, "js");
  var panel = doc.getElementById("panel");
  var selected = [];

  // The <details> of a file's findings (its table is #file-N, the tiles' target).
  function fileList(index) {
    return doc.getElementById("list-" + index);
  }

  function show(index, link) {
    var list = fileList(index);
    if (!list || !panel) return false;
    selected.forEach(function (el) { el.classList.remove("sel"); });
    selected = Array.prototype.slice.call(
      doc.querySelectorAll('a[data-file="' + index + '"]'));
    selected.forEach(function (el) { el.classList.add("sel"); });
    panel.textContent = "";
    var head = doc.createElement("h3");
    head.className = "mono";
    head.textContent = list.getAttribute("data-path");
    var sub = doc.createElement("p");
    sub.className = "muted";
    sub.textContent = list.getAttribute("data-summary");
    panel.appendChild(head);
    panel.appendChild(sub);
    var table = list.querySelector("table");
    if (table) panel.appendChild(table.cloneNode(true));
    panel.setAttribute("data-shown", list.getAttribute("data-path"));
    if (link) {
      try {
        var path = list.getAttribute("data-path");
        history.replaceState(null, "", "#file=" + encodeURIComponent(path));
      } catch (e) { /* a file: URL some browsers refuse to change */ }
    }
    return true;
  }

  doc.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a[data-file]") : null;
    if (a && show(a.getAttribute("data-file"), true)) {
      e.preventDefault();
      panel.scrollTop = 0;
    }
  });

  function fromHash() {
    var open = /^#file-(\d+)$/.exec(location.hash);  // a link to a file's list: open it
    if (open && fileList(open[1])) fileList(open[1]).open = true;
    var m = /^#file=(.*)$/.exec(location.hash);
    if (!m) return;
    var path;
    try { path = decodeURIComponent(m[1]); } catch (e) { return; }
    var lists = doc.querySelectorAll("details.file");
    for (var i = 0; i < lists.length; i++) {
      if (lists[i].getAttribute("data-path") === path) {
        show(lists[i].id.slice(5), false);
        return;
      }
    }
  }
  fromHash();
  window.addEventListener("hashchange", fromHash);

  // Sortable tables: numbers (the cell's data-v, else its text) high to low
  // first, text A to Z first; a second click reverses.
  function key(cell) {
    var v = cell.getAttribute("data-v");
    if (v === null) v = cell.textContent.trim();
    var n = Number(v.replace(/,/g, ""));
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }
  Array.prototype.forEach.call(doc.querySelectorAll("table.sortable"), function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var down = th.getAttribute("data-dir") !== "down";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", down ? "down" : "up");
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var numbers = typeof x === "number" && typeof y === "number";
          var c = x < y ? -1 : x > y ? 1 : 0;
          return (numbers === down ? -c : c);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // How long the page took to be laid out, for tests/python/dashboard: the
  // time since navigation started, after a forced layout.
  void doc.body.getBoundingClientRect();
  root.setAttribute("data-render-ms", String(Math.round(performance.now())));
})();
