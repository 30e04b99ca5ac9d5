// reportdb dashboard: shows times in the browser's time zone. Pages work
// without it (times then stay in UTC). No inline script anywhere (CSP).
"use strict";
(function () {
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  var fmt = function (d, seconds) {
    var s = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes());
    return seconds ? s + ":" + pad(d.getSeconds()) : s;
  };
  var zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (isNaN(d.getTime())) { return; }
    el.title = el.textContent;
    el.textContent = fmt(d, true);
  });
  document.querySelectorAll("svg text[data-ts]").forEach(function (el) {
    var d = new Date(el.getAttribute("data-ts"));
    if (isNaN(d.getTime())) { return; }
    el.textContent = fmt(d, false).slice(5);
  });
  var note = document.getElementById("tz-note");
  if (note && zone) { note.textContent = "Times are shown in your time zone (" + zone + ")."; }
  // "/" focuses the page's first search field, as on many sites
  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) { return; }
    var t = e.target.tagName;
    if (t === "INPUT" || t === "TEXTAREA" || t === "SELECT") { return; }
    var f = document.querySelector("form.filters input:not([type=hidden]):not([type=checkbox])");
    if (f) { e.preventDefault(); f.focus(); }
  });
})();
