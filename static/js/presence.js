// VidQA.presence: tells the server this item's page is open, and shows who else has it open.
//
// CONTRACT (templates/annotator/_panels.html#presence, on every editor and the examine page):
//   <p data-presence data-presence-url="/p/<slug>/presence/<kind>/<id>/" data-interval-s="30"
//      role="status" aria-live="polite" hidden>Open by Mara since 14:02</p>
// It POSTs at once, every interval-s seconds while the tab is visible, and again when the tab comes
// back; the answer's `label` ("Open by Mara since 14:02", "" when nobody else) replaces the text.
// Leaving the page (beforeunload) sends closed=1, so the others stop seeing it. data-state is "beat" after the first
// answer (for tests).
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  function csrfToken() {
    if (VidQA.autosave && VidQA.autosave.csrfToken) return VidQA.autosave.csrfToken();
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function start(el) {
    if (el.dataset.presenceStarted) return;
    el.dataset.presenceStarted = "1";
    const url = el.dataset.presenceUrl;
    const period = Math.max(5, parseFloat(el.dataset.intervalS) || 30) * 1000;

    function post(closed) {
      const body = new URLSearchParams(closed ? { closed: "1" } : {});
      return fetch(url, {
        method: "POST",
        credentials: "same-origin",
        keepalive: !!closed,
        headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
        body: body,
      });
    }
    function beat() {
      if (document.visibilityState === "hidden") return;
      post(false).then((r) => (r.ok ? r.json() : null)).then((data) => {
        if (!data) return;
        el.textContent = data.label || "";
        el.hidden = !data.label;
        el.dataset.state = "beat";
      }, () => { /* offline: the next beat tries again */ });
    }
    beat();
    setInterval(beat, period);
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") beat();
    });
    // Closing or leaving the page (not a page merely hidden or frozen): the others stop seeing it.
    window.addEventListener("beforeunload", () => { post(true).catch(() => {}); });
    window.addEventListener("pageshow", (event) => { if (event.persisted) beat(); });
  }

  function init(root) {
    (root || document).querySelectorAll("[data-presence][data-presence-url]").forEach(start);
  }

  VidQA.presence = { init: init };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => init());
  else init();
})();
