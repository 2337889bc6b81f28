// VidQA.autosave: the workspace editors' saving client. Debounced autosave with a version check, a
// local copy that survives a reload until the server has the text, conflicts handed to the editor,
// and versioned actions (undo, submit, accept …) that go through the same checks. Used by the chain,
// relation and MCQ editors; nothing in here knows what is being edited.
//
// SERVER CONTRACT (annotator/editor_endpoints.py, the same for every editor; the keys it adds are
// camelCase). A save or action is POST <url> with a JSON body {version: <int>, ...payload} and
// the X-CSRFToken header. The server answers:
//   200 {version: <int>, ...state}            done; `version` is what the next save is based on; an undo
//                                             adds restoredVersion, a submit next, outcome and message
//   409 {error, conflict: true, theirs: {version, savedBy, ...}, yours}
//                                             someone saved after `version`; nothing was written
//   409 {error, conflict: false}              refused in this state (submitted, nothing to undo …)
//   422 {error, errors: [{message, …}]}       content refused as invalid; nothing was written
//                                             (an MCQ not ready to submit: {error, blockers})
//   400 / 403 / 404 {error}                   malformed, not allowed, gone
//
// CLIENT API.
//   const doc = VidQA.autosave.create({
//     url: "/…/save/" | () => url,    where saves go (a function when it depends on the selection)
//     version: 7,                      the version the page was rendered from
//     collect: (purpose) => payload,   the current local content as plain JSON (never includes version);
//                                      purpose is "save" (about to be sent) or "store" (local copy only)
//     storageKey: "vidqa:chain:12",    sessionStorage key of the unsaved local copy (one per item)
//     delay: 800,                      ms after the last change before an autosave
//     status: element,                 optional: gets "Saving…", "Saved · v8", "Not saved: …" and a
//                                      data-state of idle | dirty | saving | saved | invalid | conflict | offline
//     ready: () => true | "reason",    optional: anything but true holds the save back (the local copy
//                                      is kept) and the status shows the reason, e.g. a half-typed pair
//     unsent: () => boolean,           optional: true while the editor holds text it does not send yet
//                                      (an unfinished new item); the local copy is then kept after a save
//     onSaved(body, info),             info = {action: null | url} — after every 200
//     onConflict(body, mine),          mine = the payload that was refused (a save's), or null (an action's)
//     onInvalid(body),                 422: show body.errors beside the fields
//     onRefused(body, status),         other 4xx (a 409 without conflict, 403, 404 …)
//   });
//   doc.changed()          call after every local edit: keeps a local copy, saves `delay` ms later
//   doc.flush()            save now if anything is unsaved → Promise<boolean> (false: not saved)
//   doc.send(url, body)    a versioned action: flushes first, then posts {version, ...body} →
//                          Promise<body | null> (null when it did not go through)
//   doc.version            the version the next save is based on; doc.setVersion(v) after a re-render
//   doc.dirty              true while there are local changes the server does not have
//   doc.inConflict         true from a 409 conflict until resolve(): autosave is paused meanwhile
//   doc.resolve(version)   after merging: base the next save on `version` (theirs) and save now
//   doc.reset(version)     take theirs: drop the local changes and base the next save on `version`
//   doc.pending()          a local copy an earlier page left unsaved: {version, payload, at} or null
//   doc.discardLocal()     forget the local copy (after the editor has used it)
// The local copy is written on every change and removed only when a save of that very content
// succeeds, so a reload, a crash or a conflict never loses typed text.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  function csrfToken() {
    try {
      const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
      if (headers["X-CSRFToken"]) return headers["X-CSRFToken"];
    } catch (err) { /* fall back to the cookie */ }
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  // POST JSON and always resolve to {status, body}; a network failure is status 0.
  function postJSON(url, body, options) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      keepalive: !!(options && options.keepalive),
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body),
    }).then(
      (r) => r.json().catch(() => ({ error: gettext("The server answered ") + r.status + gettext(" without details.") }))
        .then((data) => ({ status: r.status, body: data })),
      () => ({ status: 0, body: { error: gettext("The server cannot be reached.") } }),
    );
  }

  function create(options) {
    const delay = options.delay == null ? 800 : options.delay;
    const key = options.storageKey;
    const statusEl = options.status || null;
    let version = options.version;
    let generation = 0; // bumps on every local change
    let savedGeneration = 0; // the newest generation the server has
    let timer = null;
    let inflight = null; // Promise of the save on its way
    let conflict = false;
    let lastSavedAt = null;

    function urlOf() { return typeof options.url === "function" ? options.url() : options.url; }

    function show(state, text) {
      if (!statusEl) return;
      statusEl.dataset.state = state;
      statusEl.textContent = text;
    }
    function showSaved() { show("saved", gettext("Saved · v") + version); }

    function storeLocal() {
      if (!key) return;
      try {
        sessionStorage.setItem(key, JSON.stringify({ version: version, payload: options.collect("store"), at: Date.now() }));
      } catch (err) { /* storage off or full: the page still holds the text */ }
    }
    function discardLocal() {
      if (!key) return;
      try { sessionStorage.removeItem(key); } catch (err) { /* nothing to do */ }
    }
    function pending() {
      if (!key) return null;
      try {
        const raw = sessionStorage.getItem(key);
        return raw ? JSON.parse(raw) : null;
      } catch (err) { return null; }
    }

    function handle(result, mine, action) {
      const body = result.body || {};
      if (result.status === 200) {
        if (typeof body.version === "number") version = body.version;
        lastSavedAt = new Date();
        if (options.onSaved) options.onSaved(body, { action: action || null });
        return true;
      }
      if (result.status === 409 && body.conflict) {
        conflict = true;
        show("conflict", gettext("Conflict: someone else saved version ") + ((body.theirs && body.theirs.version) || "?") + ". Nothing of yours is lost.");
        if (options.onConflict) options.onConflict(body, mine);
        return false;
      }
      if (result.status === 422) {
        show("invalid", gettext("Not saved: ") + (body.error || gettext("the content was refused.")));
        if (options.onInvalid) options.onInvalid(body);
        return false;
      }
      if (result.status === 0) {
        show("offline", gettext("Not saved: the server cannot be reached. Your text is kept in this tab."));
        return false;
      }
      show("refused", body.error || gettext("Refused (") + result.status + ").");
      if (options.onRefused) options.onRefused(body, result.status);
      return false;
    }

    function save() {
      if (timer) { clearTimeout(timer); timer = null; }
      if (conflict) return Promise.resolve(false);
      if (inflight) {
        // One save at a time; changes made meanwhile go in the next one.
        return inflight.then(() => (generation > savedGeneration ? save() : true));
      }
      if (generation === savedGeneration) return Promise.resolve(true);
      const ready = options.ready ? options.ready() : true;
      if (ready !== true) {
        show("waiting", gettext("Not saved yet: ") + ready);
        return Promise.resolve(false);
      }
      const sending = generation;
      const payload = options.collect("save");
      show("saving", gettext("Saving…"));
      inflight = postJSON(urlOf(), Object.assign({}, payload, { version: version })).then((result) => {
        inflight = null;
        const ok = handle(result, payload, null);
        if (ok) {
          savedGeneration = Math.max(savedGeneration, sending);
          if (generation === savedGeneration) {
            if (options.unsent && options.unsent()) {
              storeLocal();
              show("partial", gettext("Saved · v") + version + gettext(" · unfinished text kept in this tab"));
            } else {
              discardLocal();
              showSaved();
            }
          } else {
            storeLocal(); // newer text waits for the next save, on the new version
            show("dirty", gettext("Unsaved changes…"));
          }
        }
        return ok;
      });
      return inflight;
    }

    const doc = {
      get version() { return version; },
      setVersion(v) { version = v; if (generation === savedGeneration && !conflict) showSaved(); },
      get dirty() { return generation !== savedGeneration; },
      get inConflict() { return conflict; },
      get lastSavedAt() { return lastSavedAt; },
      changed() {
        generation += 1;
        storeLocal();
        if (conflict) return;
        show("dirty", gettext("Unsaved changes…"));
        if (timer) clearTimeout(timer);
        timer = setTimeout(save, delay);
      },
      flush() { return save(); },
      send(url, body) {
        return save().then((ok) => {
          if (!ok && (conflict || generation !== savedGeneration)) return null;
          show("saving", gettext("Working…"));
          return postJSON(url, Object.assign({}, body || {}, { version: version })).then((result) => {
            const ok2 = handle(result, null, url);
            if (ok2 && generation === savedGeneration) showSaved();
            return ok2 ? result.body : null;
          });
        });
      },
      resolve(theirsVersion) {
        conflict = false;
        version = theirsVersion;
        generation += 1; // the merged content is a change to save on their version
        storeLocal();
        return save();
      },
      reset(theirsVersion) {
        conflict = false;
        version = theirsVersion;
        if (timer) { clearTimeout(timer); timer = null; }
        savedGeneration = generation;
        discardLocal();
        showSaved();
      },
      pending: pending,
      discardLocal: discardLocal,
      showSaved: showSaved,
      show: show,
    };

    // Leaving the page: send what is unsaved (keepalive outlives the page); the local copy stays
    // until that save is confirmed, so a reload shows it again if it did not arrive.
    window.addEventListener("pagehide", () => {
      if (generation === savedGeneration || conflict || inflight) return;
      storeLocal();
      postJSON(urlOf(), Object.assign({}, options.collect("save"), { version: version }), { keepalive: true });
    });
    return doc;
  }

  VidQA.autosave = { create: create, postJSON: postJSON, csrfToken: csrfToken };
})();
