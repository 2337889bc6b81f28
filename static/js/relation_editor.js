// The relation editor: links between the turns of chains i and i+1. Decisions, types and new links
// are versioned actions (VidQA.autosave send); the rewrite of the later QA autosaves as it is typed.
// Every answer carries the chain pair's whole state, which is rendered again (except the rewrite
// being typed). Keys (also listed by "?"): j/k or ↓/↑ move between links, y accept, x reject,
// c back to candidate, 1–6 type, Enter or e rewrite, Esc back to the link, a add a link,
// Ctrl+Enter submit, n next item.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  function init() {
    const root = document.getElementById("pair-editor");
    if (!root) return;
    const config = JSON.parse(document.getElementById(root.dataset.config).textContent);
    const $ = (id) => document.getElementById(id);
    const types = config.types;
    const typeByCode = new Map(types.map((t) => [t.code, t]));
    let state = config.state;
    let current = 0;
    let editing = null; // id of the link whose rewrite the panel shows

    const linkUrl = (id, action) => config.urls.link.replace("/links/0/", "/links/" + id + "/") + action;
    const links = () => Array.from($("links").querySelectorAll(":scope > li.link-row"));
    const relation = (id) => state.relations.find((r) => r.id === id) || null;
    const currentRelation = () => state.relations[current] || null;

    function say(text, kind) {
      const el = $("pair-message");
      el.textContent = text || "";
      el.className = "workspace-message" + (kind ? " " + kind : "");
      el.hidden = !text;
    }
    function short(text, n) { return text.length > n ? text.slice(0, n - 1) + "…" : text; }

    // --- rendering ---------------------------------------------------------------------------------
    function renderTurns(listId, side) {
      $(listId).replaceChildren(...side.pairs.map((p, i) => {
        const li = document.createElement("li");
        li.dataset.id = p.id;
        const n = document.createElement("span");
        n.className = "n";
        n.textContent = String(i + 1);
        const q = document.createElement("span");
        q.className = "q";
        q.textContent = p.question;
        li.append(n, q, document.createElement("br"), p.answer);
        return li;
      }));
    }
    function button(label, title, fn, cls) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.title = title;
      if (cls) b.className = cls;
      b.disabled = !state.editable;
      b.addEventListener("click", fn);
      return b;
    }
    function renderLinks() {
      $("links").replaceChildren(...state.relations.map((r, i) => {
        const li = document.createElement("li");
        li.className = "link-row " + r.decision;
        li.tabIndex = -1;
        li.dataset.id = r.id;
        const ends = document.createElement("span");
        ends.className = "link-ends";
        ends.textContent = r.fromNumber + " → " + r.toNumber;
        const type = document.createElement("select");
        type.className = "link-type";
        type.setAttribute("aria-label", gettext("Type of link ") + r.fromNumber + " → " + r.toNumber);
        types.forEach((t, k) => type.add(new Option((k + 1) + " · " + t.label, t.code)));
        type.value = r.type;
        type.disabled = !state.editable;
        type.addEventListener("change", () => retype(r.id, type.value));
        const decision = document.createElement("span");
        decision.className = "link-decision";
        decision.textContent = r.decision + (r.origin === "human" ? gettext(" · added by hand") : "");
        const tools = document.createElement("span");
        tools.className = "link-tools";
        tools.append(
          button(gettext("Accept"), gettext("Accept (y)"), () => { current = i; decide("accepted"); }),
          button(gettext("Reject"), gettext("Reject (x)"), () => { current = i; decide("rejected"); }, "danger"),
        );
        if (r.origin === "human") tools.append(button(gettext("Remove"), gettext("Remove this link"), () => remove(r.id)));
        const why = document.createElement("span");
        why.className = "link-rationale";
        why.textContent = (r.rationale || "") + (r.rewrittenQuestion ? (r.rationale ? " · " : "") + gettext("rewritten") + (r.applied ? gettext(" (in the chain)") : "") : "");
        li.append(ends, type, decision, tools, why);
        li.addEventListener("focus", () => select(i, false));
        li.addEventListener("click", (event) => { if (!event.target.closest("button, select")) select(i, true); });
        return li;
      }));
      $("links-empty").hidden = state.relations.length > 0;
      $("links-count").textContent = state.relations.length + " · " + state.openCandidates + gettext(" to decide");
    }
    function renderAddForm() {
      const fill = (select, side) => {
        const keep = select.value;
        select.replaceChildren(...side.pairs.map((p, i) => new Option((i + 1) + " · " + short(p.question, 60), p.id)));
        if (keep) select.value = keep;
      };
      fill($("add-from"), state.before);
      fill($("add-to"), state.after);
      root.querySelectorAll("#add-link select, #add-link input, #add-link button, #submit").forEach((el) => { el.disabled = !state.editable; });
    }
    function highlight() {
      const r = currentRelation();
      root.querySelectorAll(".pair-turns li").forEach((li) => {
        li.classList.toggle("from", !!r && Number(li.dataset.id) === r.from);
        li.classList.toggle("to", !!r && Number(li.dataset.id) === r.to);
      });
      links().forEach((li, i) => li.classList.toggle("current", i === current));
    }
    function renderRewrite(forceText) {
      const r = currentRelation();
      const panel = $("rewrite");
      panel.hidden = !r;
      if (!r) { editing = null; return; }
      const later = state.after.pairs.find((p) => p.id === r.to);
      const t = typeByCode.get(r.type);
      $("rewrite-ends").textContent = interpolate(gettext("turn %(from)s → turn %(to)s"), { from: r.fromNumber, to: r.toNumber }, true);
      $("guideline-type").textContent = interpolate(gettext("Guideline for %s links"), [t ? t.label : r.type]);
      $("guideline-text").textContent = t ? t.guideline : "";
      // The original: as it was before the first rewrite, else the later turn as it reads now.
      $("original-q").textContent = r.originalQuestion || (later ? later.question : "");
      $("original-a").textContent = r.originalAnswer || (later ? later.answer : "");
      $("rewrite-applied").textContent = r.applied ? gettext("· the later turn reads like this now") :
        r.decision === "accepted" ? "" : gettext("· applied when the link is accepted");
      if (forceText || editing !== r.id) {
        editing = r.id;
        $("rewrite-q").value = r.rewrittenQuestion || "";
        $("rewrite-a").value = r.rewrittenAnswer || "";
      }
    }
    function render(next, forceText) {
      state = next;
      $("pair-status").textContent = state.statusLabel;
      $("pair-status").className = "badge status-" + state.status;
      renderTurns("turns-before", state.before);
      renderTurns("turns-after", state.after);
      renderLinks();
      renderAddForm();
      current = Math.max(0, Math.min(current, state.relations.length - 1));
      highlight();
      renderRewrite(forceText);
      $("rewrite-q").disabled = $("rewrite-a").disabled = $("rewrite-copy").disabled = !state.editable;
      root.classList.toggle("readonly", !state.editable);
    }

    // --- saving ------------------------------------------------------------------------------------
    const doc = VidQA.autosave.create({
      url: () => linkUrl(editing, "rewrite/"),
      version: state.version,
      collect: () => ({ link: editing, question: $("rewrite-q").value, answer: $("rewrite-a").value }),
      storageKey: "vidqa:pair:" + config.pairId,
      // A rewrite is both texts (or neither, to drop it): half of one waits in the tab.
      ready: () => (!$("rewrite-q").value.trim() === !$("rewrite-a").value.trim()) ||
        gettext("a rewrite needs both the question and the answer"),
      delay: 800,
      status: $("save-status"),
      onSaved: (body, info) => { if (!info.action) render(body, false); },
      onInvalid: (body) => say(body.error, "error"),
      onRefused: (body) => say(body.error, "error"),
      onConflict: (body, mine) => conflict(body, mine),
    });
    function act(url, body, done) {
      if (!state.editable) return Promise.resolve(null);
      say("");
      return doc.send(url, body).then((answer) => {
        if (answer) { render(answer, false); if (done) done(answer); }
        return answer;
      });
    }
    function decide(decision) {
      const r = currentRelation();
      if (!r) return;
      act(linkUrl(r.id, "decide/"), { decision: decision }, () => {
        say(gettext("Link ") + r.fromNumber + " → " + r.toNumber + ": " + decision + ".", "info");
        focusLink(current);
      });
    }
    function retype(id, code) {
      act(linkUrl(id, "type/"), { type: code });
    }
    function setType(n) {
      const r = currentRelation();
      if (r && n <= types.length) act(linkUrl(r.id, "type/"), { type: types[n - 1].code }, () => focusLink(current));
    }
    function remove(id) {
      act(linkUrl(id, "remove/"), {});
    }
    function addLink(event) {
      event.preventDefault();
      act(config.urls.add, {
        from: Number($("add-from").value),
        to: Number($("add-to").value),
        type: $("add-type").value,
        rationale: $("add-rationale").value,
      }, (answer) => {
        $("add-rationale").value = "";
        const i = state.relations.findIndex((r) => r.id === answer.created);
        if (i >= 0) { select(i, false); focusLink(i); }
        say(gettext("Link added and accepted. Rewrite the later QA below (e)."), "info");
      });
    }
    // What a submit asks about: links accepted while their later QA does not read as the rewrite,
    // or no accepted link at all.
    function warnings() {
      const accepted = state.relations.filter((r) => r.decision === "accepted");
      const out = accepted.filter((r) => !r.applied).map((r) =>
        interpolate(gettext("Link %(from)s → %(to)s is accepted, but the later QA does not read as its rewrite."),
          { from: r.fromNumber, to: r.toNumber }, true));
      if (!accepted.length) out.push(gettext("No link is accepted: the chains are submitted as unrelated."));
      return out;
    }
    let asking = false;
    function submit() {
      if (!state.editable || asking) return;
      asking = true;
      doc.flush()
        .then(() => VidQA.submitFlow.confirm({ warnings: warnings(), noun: gettext("pair of chains") }))
        .then((yes) => {
          asking = false;
          if (!yes) { say(gettext("Not submitted: the links are as you left them."), "info"); return; }
          // Stay on the submitted links, read only; the next item is one key away.
          act(config.urls.submit, {}, (answer) => {
            say((answer.message || gettext("Submitted.")) + gettext(" Press n for the next item."), "info");
            VidQA.submitFlow.stay({ next: $("next-item") });
          });
        });
    }

    // A stale save or action: their state is shown; my rewrite text, if any, is kept to re-apply.
    function conflict(body, mine) {
      const theirs = body.theirs;
      const typed = mine && (mine.question || mine.answer) ? mine : null;
      render(theirs, true);
      if (!typed) {
        doc.reset(theirs.version);
        say(body.error, "error");
        return;
      }
      const r = relation(typed.link);
      const panel = $("link-conflict");
      $("link-conflict-message").textContent = body.error;
      $("link-conflict-version").textContent = "v" + theirs.version;
      panel.querySelector(".conflict-mine-q").textContent = typed.question;
      panel.querySelector(".conflict-mine-a").textContent = typed.answer;
      panel.querySelector(".conflict-theirs-q").textContent = r ? r.rewrittenQuestion || gettext("(no rewrite)") : gettext("(the link is gone)");
      panel.querySelector(".conflict-theirs-a").textContent = r ? r.rewrittenAnswer : "";
      panel.querySelector("[data-link-conflict=mine]").disabled = !r;
      panel.hidden = false;
      panel.querySelector("[data-link-conflict]" + (r ? "" : "[data-link-conflict=theirs]")).focus();
      panel.onclick = (event) => {
        const choice = event.target.closest("[data-link-conflict]");
        if (!choice) return;
        panel.hidden = true;
        if (choice.dataset.linkConflict === "mine" && r) {
          current = state.relations.indexOf(r);
          highlight();
          editing = null;
          renderRewrite(true);
          $("rewrite-q").value = typed.question;
          $("rewrite-a").value = typed.answer;
          doc.resolve(theirs.version);
        } else {
          doc.reset(theirs.version);
        }
        focusLink(current);
      };
    }

    // --- focus and keys ----------------------------------------------------------------------------
    function select(i, focus) {
      if (i === current && editing === (currentRelation() || {}).id) { if (focus) focusLink(i); return; }
      const go = () => {
        current = i;
        highlight();
        renderRewrite(false);
        if (focus) focusLink(i);
      };
      if (doc.dirty) doc.flush().then(go); else go();
    }
    function focusLink(i) {
      const all = links();
      if (!all.length) return;
      current = Math.max(0, Math.min(i, all.length - 1));
      highlight();
      renderRewrite(false);
      all[current].focus();
      all[current].scrollIntoView({ block: "nearest" });
    }
    function move(delta) {
      const target = current + delta;
      if (target < 0 || target >= state.relations.length) return;
      select(target, true);
    }

    const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
    document.addEventListener("keydown", (event) => {
      if (event.defaultPrevented || document.querySelector("dialog[open]")) return;
      if (event.ctrlKey && event.key === "Enter") { event.preventDefault(); submit(); return; }
      if (typing(event.target)) {
        if (event.key === "Escape") { event.preventDefault(); doc.flush(); focusLink(current); }
        return;
      }
      if (event.ctrlKey || event.altKey || event.metaKey) return;
      const key = event.key;
      const onLink = !!(event.target.closest && event.target.closest("#links > li"));
      if (key === "j" || key === "ArrowDown") { event.preventDefault(); if (onLink) move(1); else focusLink(current); }
      else if (key === "k" || key === "ArrowUp") { event.preventDefault(); if (onLink) move(-1); else focusLink(current); }
      else if (key === "y") { event.preventDefault(); decide("accepted"); }
      else if (key === "x") { event.preventDefault(); decide("rejected"); }
      else if (key === "c") { event.preventDefault(); decide("candidate"); }
      else if (key === "a") { event.preventDefault(); $("add-from").focus(); }
      else if ((key === "e" || (key === "Enter" && onLink)) && currentRelation()) { event.preventDefault(); $("rewrite-q").focus(); }
      else if (/^[1-9]$/.test(key)) { event.preventDefault(); setType(Number(key)); }
    });
    ["rewrite-q", "rewrite-a"].forEach((id) => {
      $(id).addEventListener("input", () => { if (editing != null && state.editable) doc.changed(); });
      $(id).addEventListener("blur", () => { if (doc.dirty) doc.flush(); });
    });
    $("rewrite-copy").addEventListener("click", () => {
      $("rewrite-q").value = $("original-q").textContent;
      $("rewrite-a").value = $("original-a").textContent;
      doc.changed();
      $("rewrite-q").focus();
    });
    $("add-link").addEventListener("submit", addLink);
    $("submit").addEventListener("click", submit);
    let leaveAnyway = false;
    $("next-item").addEventListener("click", (event) => {
      if (leaveAnyway) return;
      event.preventDefault();
      doc.flush().then((ok) => {
        if (!ok && doc.dirty) {
          leaveAnyway = true;
          say(gettext("The rewrite has unsaved changes (see above); they stay in this tab. Press n again to leave anyway."), "error");
          return;
        }
        window.location.assign(config.urls.next);
      });
    });

    // --- start ---------------------------------------------------------------------------------------
    render(state, true);
    const local = doc.pending();
    if (local && local.payload && state.editable) {
      const i = state.relations.findIndex((r) => r.id === local.payload.link);
      const r = state.relations[i];
      const same = r && r.rewrittenQuestion === local.payload.question && r.rewrittenAnswer === local.payload.answer;
      if (!r || same) doc.discardLocal();
      else if (local.version === state.version) {
        current = i;
        highlight();
        renderRewrite(true);
        $("rewrite-q").value = local.payload.question;
        $("rewrite-a").value = local.payload.answer;
        say(gettext("Your unsaved rewrite from before the reload is back and being saved."), "info");
        doc.changed();
      } else {
        conflict({ error: gettext("This tab holds a rewrite you typed on version ") + local.version +
          gettext(" that was never saved; the links are now at version ") + state.version + ".", theirs: state }, local.payload);
      }
    }
    if (!state.editable) doc.show("readonly", gettext("Read only"));
    if (state.relations.length) focusLink(0);

    function startPlayer(player) { player.seek(config.span.start); }
    if (VidQA.player) startPlayer(VidQA.player);
    else document.addEventListener("vidqa:player-ready", (event) => startPlayer(event.detail), { once: true });

    VidQA.relationEditor = { doc: doc, get state() { return state; } };
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
