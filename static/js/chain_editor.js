// The QA chain editor: the clip plays in a loop beside its turns; everything works from the keyboard.
// Turns are edited in place and saved by VidQA.autosave (debounced, versioned); a stale save opens
// the conflict view, where each turn is merged (keep mine, take theirs, or edit) before saving.
// Keys (also listed by "?"): j/k or ↓/↑ move between turns, Enter edits the question, Tab goes to the
// answer, Esc leaves the text, a adds a turn, d deletes one, Alt+↑/↓ moves it, 1–9 set its skill,
// Ctrl+Z undoes the last saved change, Ctrl+Enter submits (asking first when the chain has warnings;
// the editor then stays on it, read only), n opens the next item.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  function init() {
    const root = document.getElementById("chain-editor");
    if (!root) return;
    const config = JSON.parse(document.getElementById(root.dataset.config).textContent);
    const list = document.getElementById("turns");
    const template = document.getElementById("turn-template");
    const statusEl = document.getElementById("save-status");
    const badge = document.getElementById("chain-status");
    const warningsEl = document.getElementById("chain-warnings");
    const messageEl = document.getElementById("chain-message");
    const skills = config.skills;
    let state = config.state;
    let current = 0; // index of the turn that has the focus (or had it last)

    // --- the turn list ---------------------------------------------------------------------------
    const rows = () => Array.from(list.querySelectorAll(":scope > li.turn"));
    const fieldsOf = (li) => ({
      q: li.querySelector(".turn-q"),
      a: li.querySelector(".turn-a"),
      skill: li.querySelector(".turn-skill-select"),
    });

    function makeRow(pair) {
      const li = template.content.firstElementChild.cloneNode(true);
      fill(li, pair);
      return li;
    }
    function fill(li, pair) {
      const f = fieldsOf(li);
      li.dataset.id = pair.id == null ? "" : String(pair.id);
      f.q.value = pair.question || "";
      f.a.value = pair.answer || "";
      f.skill.value = pair.skill || "";
      decorate(li, pair);
    }
    function decorate(li, pair) {
      const links = li.querySelector(".turn-links");
      const n = pair.links || 0;
      li.dataset.links = String(n);
      links.hidden = n === 0;
      links.textContent = interpolate(ngettext("%s link", "%s links", n), [n]);
      const hint = li.querySelector(".turn-hint");
      const names = pair.hints || [];
      hint.hidden = names.length === 0;
      hint.textContent = names.length
        ? gettext("Name repeated from an earlier turn: ") + names.map((n2) => "“" + n2 + "”").join(", ") +
          ". Use a pronoun (she, he, they, it) so the chain reads as one dialogue."
        : "";
    }
    function renumber() {
      rows().forEach((li, i) => {
        li.querySelector(".turn-number").textContent = String(i + 1);
        li.setAttribute("aria-label", gettext("Turn ") + (i + 1));
      });
      const empty = document.getElementById("turns-empty");
      if (empty) empty.hidden = rows().length > 0;
    }
    function setEditable(on) {
      root.classList.toggle("readonly", !on);
      root.querySelectorAll("textarea, select, .turn-tools button, #add-turn, #undo, #submit").forEach((el) => {
        el.disabled = !on;
      });
    }
    function render(next, keepFocus) {
      state = next;
      list.replaceChildren(...state.pairs.map(makeRow));
      renumber();
      setEditable(state.editable);
      showState();
      if (keepFocus !== false && rows().length) focusTurn(Math.min(current, rows().length - 1));
    }
    function showState() {
      badge.textContent = state.statusLabel;
      badge.className = "badge status-" + state.status;
      warningsEl.replaceChildren(...(state.warnings || []).map((w) => {
        const li = document.createElement("li");
        li.textContent = w;
        return li;
      }));
    }
    function say(text, kind) {
      messageEl.textContent = text || "";
      messageEl.className = "workspace-message" + (kind ? " " + kind : "");
      messageEl.hidden = !text;
    }

    // What the server gets: every turn in order. A new turn is sent once it has both a question and
    // an answer (moving from one to the other must not flash an error); until then it lives in the
    // tab's local copy only. `lastSent` remembers the rows of the save on its way, for its errors.
    let lastSent = [];
    const unfinished = (li) => {
      const f = fieldsOf(li);
      return !li.dataset.id && (!f.q.value.trim() || !f.a.value.trim());
    };
    const started = (li) => {
      const f = fieldsOf(li);
      return !!(f.q.value.trim() || f.a.value.trim());
    };
    function collect(purpose) {
      const sent = [];
      const pairs = [];
      rows().forEach((li) => {
        const f = fieldsOf(li);
        const id = li.dataset.id ? Number(li.dataset.id) : null;
        if (purpose === "store" ? id === null && !started(li) : unfinished(li)) return;
        sent.push(li);
        pairs.push({ id: id, question: f.q.value, answer: f.a.value, skill: f.skill.value });
      });
      if (purpose !== "store") {
        lastSent = sent;
        return { pairs: pairs };
      }
      // The local copy also keeps what the server had, so a conflict found after a reload can
      // still tell which side changed what.
      const base = state.pairs.map((p) => ({ id: p.id, question: p.question, answer: p.answer, skill: p.skill }));
      return { pairs: pairs, base: base };
    }

    // --- saving ------------------------------------------------------------------------------------
    const doc = VidQA.autosave.create({
      url: config.urls.save,
      version: state.version,
      collect: collect,
      storageKey: "vidqa:chain:" + config.chainId,
      unsent: () => rows().some((li) => unfinished(li) && started(li)),
      delay: 800,
      status: statusEl,
      onSaved: (body, info) => {
        if (info.action) return; // actions re-render themselves
        // The server saved exactly the rows sent, in order: new turns get their ids, every sent row
        // its hints and links. Text is left alone (the annotator may have typed on meanwhile).
        const sent = lastSent;
        body.pairs.forEach((pair, i) => {
          const li = sent[i];
          if (!li) return;
          if (!li.dataset.id) li.dataset.id = String(pair.id);
          decorate(li, pair);
          li.classList.remove("invalid");
          li.querySelector(".turn-error").hidden = true;
        });
        state = Object.assign({}, state, body, { pairs: body.pairs });
        showState();
      },
      onInvalid: (body) => {
        rows().forEach((li) => { li.classList.remove("invalid"); li.querySelector(".turn-error").hidden = true; });
        const sent = lastSent;
        (body.errors || []).forEach((e) => {
          const li = e.turn ? sent[e.turn - 1] : null;
          if (!li) { say(e.message, "error"); return; }
          li.classList.add("invalid");
          const el = li.querySelector(".turn-error");
          el.hidden = false;
          el.textContent = e.message;
        });
      },
      onConflict: (body, mine) => openConflict(body, mine),
      onRefused: (body) => say(body.error, "error"),
    });

    function edited() {
      if (!state.editable) return;
      say("");
      doc.changed();
    }

    // --- focus and keys ----------------------------------------------------------------------------
    function focusTurn(i) {
      const all = rows();
      if (!all.length) return;
      current = Math.max(0, Math.min(i, all.length - 1));
      all.forEach((li, j) => li.classList.toggle("current", j === current));
      all[current].focus();
      all[current].scrollIntoView({ block: "nearest" });
    }
    function turnOf(el) { return el && el.closest ? el.closest("#turns > li.turn") : null; }
    function currentRow() { return rows()[current] || null; }

    function addTurn() {
      if (!state.editable) return;
      const li = makeRow({ id: null, question: "", answer: "", skill: "" });
      const at = currentRow();
      if (at && rows().length) at.after(li); else list.append(li);
      renumber();
      current = rows().indexOf(li);
      rows().forEach((r, j) => r.classList.toggle("current", j === current));
      fieldsOf(li).q.focus();
    }
    function deleteTurn() {
      const li = currentRow();
      if (!li || !state.editable) return;
      const links = Number(li.dataset.links || 0);
      if (links && !window.confirm(interpolate(ngettext(
          "Turn %(turn)s has %(links)s link to other chains; deleting it removes it too (Ctrl+Z brings both back). Delete it?",
          "Turn %(turn)s has %(links)s links to other chains; deleting it removes them too (Ctrl+Z brings both back). Delete it?",
          links), { turn: current + 1, links: links }, true))) return;
      // Save what was typed first, so the deletion is one step that Ctrl+Z can take back alone.
      doc.flush().then(() => {
        const number = current + 1;
        li.remove();
        renumber();
        edited();
        doc.flush().then((ok) => {
          if (ok) say(gettext("Turn ") + number + gettext(" deleted. Ctrl+Z brings it back."), "info");
        });
        focusTurn(Math.min(number - 1, rows().length - 1));
      });
    }
    function moveTurn(delta) {
      const li = currentRow();
      if (!li || !state.editable) return;
      const all = rows();
      const target = current + delta;
      if (target < 0 || target >= all.length) return;
      const active = document.activeElement;
      if (delta < 0) all[target].before(li); else all[target].after(li);
      current = target;
      renumber();
      rows().forEach((r, j) => r.classList.toggle("current", j === current));
      (li.contains(active) ? active : li).focus();
      edited();
    }
    function setSkill(n) {
      const li = currentRow();
      if (!li || !state.editable || n > skills.length) return;
      fieldsOf(li).skill.value = skills[n - 1];
      edited();
    }
    function undo() {
      if (!state.editable) return;
      doc.send(config.urls.undo, {}).then((body) => {
        if (!body) return;
        render(body);
        say(gettext("Undone: the turns are back as they were in version ") + body.restoredVersion +
          gettext(" (saved as version ") + body.version + ").", "info");
        doc.showSaved();
      });
    }
    function submit() {
      if (!state.editable) return;
      const open = rows().findIndex((li) => unfinished(li) && started(li));
      if (open >= 0) {
        say(gettext("Turn ") + (open + 1) + gettext(" needs both a question and an answer before the chain can be submitted."), "error");
        focusTurn(open);
        return;
      }
      // Save first, so the warnings asked about are those of the text as it is now.
      if (asking) return;
      asking = true;
      doc.flush()
        .then(() => VidQA.submitFlow.confirm({ warnings: state.warnings || [], noun: gettext("chain") }))
        .then((yes) => {
          asking = false;
          if (!yes) { say(gettext("Not submitted: the chain is as you left it."), "info"); return null; }
          return doc.send(config.urls.submit, {});
        })
        .then((body) => {
          if (!body) return;
          // Stay on the submitted chain, read only; the next item is one key away.
          render(body, false);
          say((body.message || gettext("Submitted.")) + gettext(" Press n for the next item."), "info");
          VidQA.submitFlow.stay({ next: document.getElementById("next-item") });
        });
    }
    let asking = false;
    function nextItem() {
      doc.flush().then((ok) => {
        if (!ok && doc.dirty) {
          say(gettext("This chain has unsaved changes (see above); they stay in this tab. Press n again to leave anyway."), "error");
          leaveAnyway = true;
          return;
        }
        window.location.assign(config.urls.next);
      });
    }
    let leaveAnyway = false;

    const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
    document.addEventListener("keydown", (event) => {
      if (event.defaultPrevented || document.querySelector("dialog[open]")) return;
      const target = event.target;
      const inText = typing(target);
      const turn = turnOf(target);
      if (turn) current = rows().indexOf(turn);
      if (event.altKey && !event.ctrlKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
        event.preventDefault();
        moveTurn(event.key === "ArrowUp" ? -1 : 1);
        return;
      }
      if (event.ctrlKey && event.key === "Enter") {
        event.preventDefault();
        submit();
        return;
      }
      if (inText) {
        if (event.key === "Escape" && turn) {
          event.preventDefault();
          doc.flush();
          focusTurn(current);
        }
        return;
      }
      if (event.ctrlKey || event.altKey || event.metaKey) return;
      const key = event.key;
      if (key === "j" || key === "ArrowDown") { event.preventDefault(); focusTurn(current + (turn ? 1 : 0)); }
      else if (key === "k" || key === "ArrowUp") { event.preventDefault(); focusTurn(current - (turn ? 1 : 0)); }
      else if (key === "Enter" && turn === target) { event.preventDefault(); fieldsOf(turn).q.focus(); }
      else if (key === "d" || key === "Delete") { event.preventDefault(); deleteTurn(); }
      else if (/^[1-9]$/.test(key)) { event.preventDefault(); setSkill(Number(key)); }
    });

    // Typing, blur and clicks: the same functions as the keys.
    list.addEventListener("input", edited);
    list.addEventListener("change", (event) => { if (event.target.matches("select")) edited(); });
    list.addEventListener("focusout", (event) => {
      if (event.target.matches("textarea") && doc.dirty) doc.flush();
    });
    list.addEventListener("focusin", (event) => {
      const turn = turnOf(event.target);
      if (!turn) return;
      current = rows().indexOf(turn);
      rows().forEach((r, j) => r.classList.toggle("current", j === current));
    });
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-turn]");
      if (!button) return;
      current = rows().indexOf(turnOf(button));
      ({ up: () => moveTurn(-1), down: () => moveTurn(1), delete: deleteTurn })[button.dataset.turn]();
    });
    document.getElementById("add-turn").addEventListener("click", addTurn);
    document.getElementById("undo").addEventListener("click", undo);
    document.getElementById("submit").addEventListener("click", submit);
    document.getElementById("next-item").addEventListener("click", (event) => {
      if (leaveAnyway) return;
      event.preventDefault();
      nextItem();
    });

    // --- the conflict view -------------------------------------------------------------------------
    const dialog = document.getElementById("conflict");
    const conflictRows = document.getElementById("conflict-rows");
    const rowTemplate = document.getElementById("conflict-row-template");
    let merge = null; // {theirs, rows: [{mine, theirs, tr}]}

    const FIELDS = ["question", "answer", "skill"];
    const norm = (p, f) => (f === "skill" ? p[f] || "" : (p[f] || "").trim());
    const same = (a, b) => !!a && !!b && FIELDS.every((f) => norm(a, f) === norm(b, f));
    const sameList = (mine, theirs) => mine.length === theirs.length &&
      mine.every((m, i) => same(m, theirs[i]) && (m.id == null || m.id === theirs[i].id));

    // One row per turn of either side: their order, with turns only I have placed after my previous turn.
    function alignRows(mine, theirs) {
      const theirIds = new Set(theirs.map((t) => t.id));
      const mineById = new Map(mine.filter((m) => m.id != null).map((m) => [m.id, m]));
      const out = theirs.map((t) => ({ theirs: t, mine: mineById.get(t.id) || null }));
      mine.forEach((m, i) => {
        if (m.id != null && theirIds.has(m.id)) return;
        let at = 0;
        for (let j = i - 1; j >= 0; j--) {
          const k = out.findIndex((r) => r.mine === mine[j]);
          if (k >= 0) { at = k + 1; break; }
        }
        out.splice(at, 0, { theirs: null, mine: m });
      });
      return out;
    }

    // Three-way merge of one turn against the version both sides started from (`base`): a side that
    // left a field as it was takes the other side's change; a field both changed keeps mine and is
    // marked. Returns {auto: merged turn or null (deleted), note, clash}.
    function mergeRow(row) {
      const m = row.mine, t = row.theirs, b = row.base;
      if (m && t) {
        if (same(m, t)) return { auto: m, note: "", clash: false };
        let clash = false;
        const auto = {};
        FIELDS.forEach((f) => {
          const mv = norm(m, f), tv = norm(t, f), bv = b ? norm(b, f) : null;
          if (mv === tv || (bv !== null && tv === bv)) auto[f] = m[f];
          else if (bv !== null && mv === bv) auto[f] = t[f];
          else { auto[f] = m[f]; clash = true; }
        });
        const mineChanged = !b || !same(m, b), theirsChanged = !b || !same(t, b);
        const note = clash ? gettext("You both changed this turn: yours is kept, check theirs.")
          : mineChanged && theirsChanged ? gettext("You both changed this turn: merged.") : mineChanged ? gettext("Only you changed this turn.") : gettext("Only they changed this turn.");
        return { auto: auto, note: note, clash: clash };
      }
      if (m) {
        if (m.id == null) return { auto: m, note: gettext("You added this turn."), clash: false };
        if (b && same(m, b)) return { auto: null, note: gettext("They deleted this turn."), clash: false };
        return { auto: m, note: gettext("They deleted this turn, you changed it: yours is kept."), clash: true };
      }
      if (b && same(t, b)) return { auto: null, note: gettext("You deleted this turn."), clash: false };
      if (b) return { auto: t, note: gettext("You deleted this turn, they changed it: theirs is kept."), clash: true };
      return { auto: t, note: gettext("They added this turn."), clash: false };
    }
    function skillOptions(select) {
      select.replaceChildren(new Option(gettext("Skill…"), ""), ...skills.map((code, i) => new Option((i + 1) + " · " + code, code)));
    }
    function choose(row, side) {
      const src = side === "theirs" ? row.theirs : side === "mine" ? row.mine : row.merged.auto;
      const tr = row.tr;
      row.removed = !src;
      tr.querySelector(".conflict-q").value = src ? src.question : "";
      tr.querySelector(".conflict-a").value = src ? src.answer : "";
      tr.querySelector(".conflict-skill").value = src ? src.skill || "" : "";
      tr.classList.toggle("removed", row.removed);
      tr.querySelectorAll(".conflict-mine textarea, .conflict-mine select").forEach((el) => { el.hidden = row.removed; });
      tr.querySelector(".conflict-gone").hidden = !row.removed;
      tr.querySelectorAll("[data-choose]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.choose === side)));
    }
    function openConflict(body, mine) {
      const theirs = body.theirs;
      const mineList = (mine && mine.pairs) || collect("store").pairs;
      if (sameList(mineList, theirs.pairs)) {
        // Their version already says what mine says (e.g. my own save whose answer was lost).
        doc.reset(theirs.version);
        render(theirs, false);
        return;
      }
      const baseById = new Map(((body.base || state).pairs || []).map((p) => [p.id, p]));
      merge = { theirs: theirs, rows: alignRows(mineList, theirs.pairs) };
      let clashes = 0;
      document.getElementById("conflict-message").textContent = body.error;
      document.getElementById("conflict-theirs-version").textContent = "v" + theirs.version;
      conflictRows.replaceChildren(...merge.rows.map((row, i) => {
        const tr = rowTemplate.content.firstElementChild.cloneNode(true);
        row.tr = tr;
        row.base = baseById.get((row.mine && row.mine.id) || (row.theirs && row.theirs.id)) || null;
        row.merged = mergeRow(row);
        if (row.merged.clash) clashes += 1;
        tr.querySelector(".conflict-number").textContent = String(i + 1);
        skillOptions(tr.querySelector(".conflict-skill"));
        const t = row.theirs;
        tr.querySelector(".conflict-tq").textContent = t ? t.question : "";
        tr.querySelector(".conflict-ta").textContent = t ? t.answer : "";
        tr.querySelector(".conflict-tskill").textContent = t ? (t.skill ? interpolate(gettext("Skill %s"), [t.skill]) : gettext("No skill")) : gettext("Not in their version.");
        tr.querySelector(".conflict-note").textContent = row.merged.note;
        tr.classList.toggle("differs", !same(row.mine, t));
        tr.classList.toggle("clash", row.merged.clash);
        tr.querySelectorAll("[data-choose]").forEach((b) => b.addEventListener("click", () => choose(row, b.dataset.choose)));
        choose(row, "merged");
        return tr;
      }));
      document.getElementById("conflict-summary").textContent = clashes
        ? interpolate(ngettext("%s turn was changed on both sides (marked): check it before saving.", "%s turns were changed on both sides (marked): check them before saving.", clashes), [clashes])
        : gettext("Every difference merged without a clash: check and save.");
      if (!dialog.open) dialog.showModal();
      const first = conflictRows.querySelector("tr.clash [data-choose]") || dialog.querySelector("[data-conflict=save]");
      first.focus();
    }
    function mergedPairs() {
      return merge.rows.filter((row) => !row.removed).map((row) => ({
        // A turn they deleted comes back as a new turn; every other keeps its id.
        id: row.theirs ? row.theirs.id : null,
        question: row.tr.querySelector(".conflict-q").value,
        answer: row.tr.querySelector(".conflict-a").value,
        skill: row.tr.querySelector(".conflict-skill").value,
        links: row.theirs ? row.theirs.links : 0,
        hints: [],
      }));
    }
    dialog.addEventListener("click", (event) => {
      const button = event.target.closest("[data-conflict]");
      if (!button || !merge) return;
      const what = button.dataset.conflict;
      if (what === "mine-all" || what === "theirs-all") {
        merge.rows.forEach((row) => choose(row, what === "mine-all" ? "mine" : "theirs"));
      } else if (what === "merged-all") {
        merge.rows.forEach((row) => choose(row, "merged"));
      } else if (what === "save") {
        const theirs = merge.theirs;
        render(Object.assign({}, theirs, { pairs: mergedPairs() }));
        merge = null;
        dialog.close();
        doc.resolve(theirs.version).then((ok) => {
          if (ok) say(gettext("Merged and saved as version ") + doc.version + ".", "info");
        });
      } else if (what === "later") {
        dialog.close();
      }
    });
    dialog.addEventListener("cancel", (event) => { event.preventDefault(); dialog.close(); });
    dialog.addEventListener("close", () => {
      if (merge) {
        say(gettext("The conflict is not resolved: your text is kept in this tab and nothing is saved until you merge."), "error");
        showReopen(true);
      } else showReopen(false);
    });
    const reopen = document.getElementById("conflict-reopen");
    function showReopen(on) { reopen.hidden = !on; }
    reopen.addEventListener("click", () => { if (merge) { dialog.showModal(); showReopen(false); } });

    // --- start: the server's turns, or the text this tab still holds unsaved ---------------------------
    render(state, false);
    const local = doc.pending();
    if (local && state.editable) {
      const localPairs = (local.payload && local.payload.pairs) || [];
      if (sameList(localPairs, state.pairs)) {
        doc.discardLocal();
      } else if (local.version === state.version) {
        // Typed here but never saved (a reload or crash came first): put it back and save it.
        render(Object.assign({}, state, { pairs: localPairs.map((p) => Object.assign({ links: 0, hints: [] }, p)) }), false);
        say(gettext("Your unsaved changes from before the reload are back and being saved."), "info");
        doc.changed();
      } else {
        openConflict({
          error: gettext("This tab holds changes you made to version ") + local.version + gettext(" that were never saved; the chain is now at version ") + state.version + ".",
          theirs: state,
          base: { pairs: local.payload.base || [] },
        }, local.payload);
      }
    } else if (local) {
      say(gettext("This tab holds unsaved changes, but the chain can no longer be edited here (") + state.statusLabel.toLowerCase() + ").", "error");
    }
    if (!state.editable) doc.show("readonly", gettext("Read only"));
    if (rows().length) focusTurn(0);

    // --- the player: the clip plays in a loop --------------------------------------------------------
    function loopClip(player) {
      const clip = config.clip;
      const EPS = 0.05;
      const loop = document.getElementById("loop-clip");
      let inside = true;
      player.seek(clip.start);
      player.onTimeUpdate((t) => {
        if (!loop.checked) return;
        if (t >= clip.start - EPS && t < clip.end) { inside = true; return; }
        // Passing the clip's end while it plays (or the video ending there): back to its start.
        // A jump elsewhere (clip keys, the timeline) is left alone.
        const ended = player.video.ended;
        if (inside && t >= clip.end - EPS && t < clip.end + 1.0 && (!player.paused || ended)) {
          player.seek(clip.start);
          if (ended) player.play();
        } else inside = false;
      });
      player.play();
    }
    if (VidQA.player) loopClip(VidQA.player);
    else document.addEventListener("vidqa:player-ready", (event) => loopClip(event.detail), { once: true });

    VidQA.chainEditor = { doc: doc, focusTurn: focusTurn, get state() { return state; } };
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
