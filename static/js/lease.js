// VidQA.lease: keeps the page's lease on its item alive while the page is open, and says so.
//
// CONTRACT (the editors and the examiner page render the same element):
//   <p data-lease
//      data-heartbeat-url="/api/projects/<slug>/assignments/<id>/heartbeat/"
//      data-lease-seconds="1800"                 the queue's lease length
//      data-lease-expires="2025-05-01T14:32:00Z" optional: when it lapses now (ISO 8601)
//      data-heartbeat-s="60"                     optional: the queue's heartbeat period
//      data-interval-s="10"                      optional: heartbeat period (tests); else below
//      data-queue-url="/p/<slug>/queues/3/"      optional: linked from the lapsed warning
//      role="status" aria-live="polite">Held for you until 14:32</p>
// Every heartbeat-s seconds (the queue's choice; else 5 minutes), never less often than lease_seconds / 3
// nor more often than every 10 s, and whenever the tab becomes visible
// again, it POSTs the heartbeat URL (session cookie and X-CSRFToken, as autosave.js sends) and shows
// "Held for you until 14:32". A 409/410 saying the lease lapsed or is no longer active (codes
// lease_expired, lease_not_active, not_active) or a 403/404 stops the heartbeats and shows a warning:
// the edits are saved by autosave regardless, only the hold on the item is gone. A network failure
// is shown and retried at the next beat. Beats stop when the page is left.
// The element's data-state is held | lapsed | offline | stopped, for styles and tests.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  const MIN_S = 10;
  const MAX_S = 300;
  const LAPSED = new Set(["lease_expired", "lease_not_active", "not_active"]);
  const LAPSED_TEXT =
    gettext("Your lease lapsed; your edits are still saved, but someone else may take this item — claim it again from the queue.");

  function csrfToken() {
    if (VidQA.autosave && VidQA.autosave.csrfToken) return VidQA.autosave.csrfToken();
    try {
      const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
      if (headers["X-CSRFToken"]) return headers["X-CSRFToken"];
    } catch (err) { /* fall back to the cookie */ }
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function intervalSeconds(el) {
    const forced = parseFloat(el.dataset.intervalS);
    if (forced > 0) return forced;
    const lease = parseFloat(el.dataset.leaseSeconds) || 4 * 60 * 60;
    const chosen = parseFloat(el.dataset.heartbeatS) || MAX_S;
    return Math.max(MIN_S, Math.min(chosen, lease / 3));
  }

  function clock(date) {
    return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  }

  function start(el) {
    if (el.dataset.leaseStarted) return null;
    el.dataset.leaseStarted = "1";
    const url = el.dataset.heartbeatUrl;
    const period = intervalSeconds(el) * 1000;
    let timer = null;
    let stopped = false;
    let inflight = false;

    function show(state, text) {
      el.dataset.state = state;
      el.textContent = text;
      el.classList.toggle("warning", state === "lapsed" || state === "offline");
      if (state === "lapsed") {
        el.setAttribute("role", "alert");
        if (el.dataset.queueUrl) {
          const link = document.createElement("a");
          link.href = el.dataset.queueUrl;
          link.textContent = gettext("Open the queue");
          el.append(" ", link);
        }
      }
    }
    function held(expires) {
      show("held", gettext("Held for you until ") + clock(expires) + ".");
    }
    function stop() {
      stopped = true;
      if (timer) { clearInterval(timer); timer = null; }
    }

    function beat() {
      if (stopped || inflight || !url) return;
      inflight = true;
      fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
      }).then(
        (r) => r.json().catch(() => ({})).then((body) => {
          inflight = false;
          if (stopped) return;
          if (r.ok) {
            const expires = body.lease_expires_at ? new Date(body.lease_expires_at) : null;
            if (expires && !isNaN(expires)) held(expires);
            else show("held", gettext("Held for you."));
            return;
          }
          const code = body && body.error && body.error.code;
          if (((r.status === 409 || r.status === 410) && LAPSED.has(code)) || r.status === 403 || r.status === 404) {
            stop();
            show("lapsed", LAPSED_TEXT);
            return;
          }
          show("offline", gettext("Could not renew your lease (") + r.status + gettext("); trying again shortly. Your edits are saved."));
        }),
        () => {
          inflight = false;
          if (!stopped) show("offline", gettext("Could not reach the server to renew your lease; trying again shortly. Your edits are kept."));
        },
      );
    }

    const expiresAt = el.dataset.leaseExpires ? new Date(el.dataset.leaseExpires) : null;
    if (expiresAt && !isNaN(expiresAt)) {
      held(expiresAt);
      if (expiresAt.getTime() <= Date.now()) beat(); // lapsed already: find out at once
    }
    timer = setInterval(beat, period);
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") beat();
    });
    window.addEventListener("pagehide", stop);
    // Back to a page kept in the browser's cache: beat again (the lease may have lapsed meanwhile).
    window.addEventListener("pageshow", (event) => {
      if (!event.persisted || el.dataset.state === "lapsed") return;
      stopped = false;
      if (!timer) timer = setInterval(beat, period);
      beat();
    });
    return { beat: beat, stop: stop };
  }

  function init(root) {
    (root || document).querySelectorAll("[data-lease][data-heartbeat-url]").forEach(start);
  }

  VidQA.lease = { init: init, intervalSeconds: intervalSeconds };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => init());
  else init();
})();
