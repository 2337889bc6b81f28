// The MCQ editor beside the player: question with its referring query marked as a span, the
// question without it (derived until edited), 4–5 options with one correct, category and level,
// referred moments stamped from the player, videos with roles for multi-video items, live findings,
// autosave through VidQA.autosave, a conflict view with both versions, submit and next item.
//
// VidQA.mcqChecks ports annotator/mcq_checks.py so warnings follow every keystroke; the server
// answers each save with its own findings (the source of truth), and a browser test holds the two
// to the same answers. Spans travel as code-point offsets, as Python counts; this file converts to
// and from the UTF-16 offsets the DOM uses.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  // --- text helpers shared by the checks and the editor ---------------------------------------

  function cpToUnit(text, cp) {
    let units = 0;
    let count = 0;
    for (const ch of text) {
      if (count >= cp) break;
      units += ch.length;
      count += 1;
    }
    return units;
  }
  function unitToCp(text, unit) { return Array.from(text.slice(0, unit)).length; }
  function cpLength(text) { return Array.from(text).length; }

  function roundHalfEven(x) {
    const floor = Math.floor(x);
    const diff = x - floor;
    if (diff !== 0.5) return Math.round(x);
    return floor % 2 === 0 ? floor : floor + 1;
  }
  function clockLabel(seconds) {
    let ms = roundHalfEven(Math.max(0, seconds) * 1000);
    const h = Math.floor(ms / 3600000); ms -= h * 3600000;
    const m = Math.floor(ms / 60000); ms -= m * 60000;
    const s = Math.floor(ms / 1000); ms -= s * 1000;
    const pad = (n, w) => String(n).padStart(w, "0");
    return (h ? h + ":" + pad(m, 2) : pad(m, 2)) + ":" + pad(s, 2) + "." + pad(ms, 3);
  }

  const CJK_CHAR = /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/u;
  const ALNUM = /[\p{L}\p{N}]/u;
  const JOINERS = ",;:，；：、";

  function normalise(text) {
    let out = "";
    for (const ch of text.toLowerCase()) out += ALNUM.test(ch) ? ch : " ";
    return out.split(/\s+/).filter(Boolean).join(" ");
  }
  const isNumber = (word) => /^[0-9]+$/.test(word);
  const numbers = (text) => text.split(" ").filter((w) => w && isNumber(w));

  function stripChars(text, chars) {
    let start = 0;
    let end = text.length;
    while (start < end && chars.includes(text[start])) start += 1;
    while (end > start && chars.includes(text[end - 1])) end -= 1;
    return text.slice(start, end);
  }

  function needsSpace(left, right) {
    if (!left || !right) return false;
    const l = left.slice(-1);
    const r = right[0];
    if (/\s/u.test(l) || /\s/u.test(r)) return false;
    return !(CJK_CHAR.test(l) || CJK_CHAR.test(r));
  }

  // Mirrors mcq_checks.question_without_span; start/end are code points.
  function questionWithoutSpan(question, start, end) {
    const n = cpLength(question);
    if (start == null || end == null || !(start >= 0 && start < end && end <= n)) return question.trim();
    const a = cpToUnit(question, start);
    const b = cpToUnit(question, end);
    const before = question.slice(0, a);
    const after = question.slice(b);
    const left = before.replace(/\s+$/u, "");
    const right = after.replace(/^\s+/u, "");
    let text = left + (needsSpace(left, right) ? " " : "") + right;
    text = text.replace(/[,;:，；：、](?:\s*[,;:，；：、])+/gu, (m) => m[0]);
    text = text.replace(/\s+(?=[,.;:!?，。；：！？、)\]）】])/gu, "");
    text = text.replace(/[,;:，；：、]+(?=[?.!？。！]|$)/gu, "");
    text = text.replace(/^[\s,;:，；：、]+/u, "");
    text = text.replace(/[ \t]{2,}/gu, " ").trim();
    const opens = !stripChars(before.trim(), JOINERS).trim();
    if (opens && text) {
      const first = String.fromCodePoint(text.codePointAt(0));
      text = first.toUpperCase() + text.slice(first.length);
    }
    return text;
  }

  // difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() over code points.
  function similarity(aText, bText) {
    const a = Array.from(aText);
    const b = Array.from(bText);
    const total = a.length + b.length;
    if (!total) return 1.0;
    const b2j = new Map();
    b.forEach((ch, j) => {
      if (!b2j.has(ch)) b2j.set(ch, []);
      b2j.get(ch).push(j);
    });
    function longest(alo, ahi, blo, bhi) {
      let besti = alo;
      let bestj = blo;
      let bestsize = 0;
      let j2len = new Map();
      for (let i = alo; i < ahi; i++) {
        const next = new Map();
        for (const j of b2j.get(a[i]) || []) {
          if (j < blo) continue;
          if (j >= bhi) break;
          const k = (j2len.get(j - 1) || 0) + 1;
          next.set(j, k);
          if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
        }
        j2len = next;
      }
      while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) { besti--; bestj--; bestsize++; }
      while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
      return [besti, bestj, bestsize];
    }
    let matches = 0;
    const queue = [[0, a.length, 0, b.length]];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = queue.pop();
      const [i, j, k] = longest(alo, ahi, blo, bhi);
      if (k) {
        matches += k;
        if (alo < i && blo < j) queue.push([alo, i, blo, j]);
        if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
      }
    }
    return (2.0 * matches) / total;
  }

  // --- the checks (annotator/mcq_checks.py) ----------------------------------------------------

  function createChecks(cfg) {
    const stopwords = new Set(cfg.stopwords);
    const n = (i) => i + 1;
    const finding = (code, message, options, moments) => ({ code: code, message: message, options: options || [], moments: moments || [] });

    function contentWords(text) {
      const out = [];
      for (const word of normalise(text).split(" ")) {
        if (!word || stopwords.has(word) || out.includes(word)) continue;
        if (cpLength(word) >= cfg.contentWordMinChars || isNumber(word) || CJK_CHAR.test(word)) out.push(word);
      }
      return out;
    }
    function containsWord(normalisedText, word) {
      if (CJK_CHAR.test(word)) return normalisedText.includes(word);
      return normalisedText.split(" ").includes(word);
    }

    function blockers(d, rules) {
      const found = [];
      const options = d.options.map((o) => o.trim());
      if (!d.question.trim()) found.push(finding("question_empty", gettext("Write the question.")));
      if (options.length < rules.min_options) {
        found.push(finding("too_few_options", interpolate(ngettext("Give at least %(min)s options; there is %(n)s.", "Give at least %(min)s options; there are %(n)s.", options.length), { min: rules.min_options, n: options.length }, true)));
      }
      if (options.length > rules.max_options) {
        found.push(finding("too_many_options", gettext("Give at most ") + rules.max_options + gettext(" options; there are ") + options.length + "."));
      }
      const empty = [];
      options.forEach((o, i) => { if (!o) empty.push(i); });
      if (empty.length) {
        const several = empty.length > 1;
        found.push(finding("empty_option", interpolate(ngettext("Option %s is empty: fill in or remove.", "Options %s are empty: fill in or remove.", empty.length), [empty.map(n).join(", ")]), empty));
      }
      if (d.correct_index == null) found.push(finding("no_correct", gettext("Choose the correct option.")));
      else if (!(d.correct_index >= 0 && d.correct_index < options.length)) {
        found.push(finding("correct_out_of_range", gettext("The correct option (") + n(d.correct_index) + gettext(") is not one of the options.")));
      }
      if (rules.category_required && !d.category) found.push(finding("no_category", gettext("Choose a category.")));
      if (rules.label_options) {
        const candidates = d.videos.filter((v) => v.role === "candidate");
        if (!d.videos.some((v) => v.role === "reference")) found.push(finding("no_reference", gettext("Add the reference video.")));
        if (!candidates.length) found.push(finding("no_candidates", gettext("Add at least one candidate video.")));
        else if (options.length !== candidates.length) {
          found.push(finding("options_not_candidates", interpolate(gettext("Give one option label per candidate video: %(candidates)s, %(options)s."), {
            candidates: interpolate(ngettext("%s candidate", "%s candidates", candidates.length), [candidates.length]),
            options: interpolate(ngettext("%s option", "%s options", options.length), [options.length]),
          }, true)));
        }
      }
      return found;
    }

    function optionDuplicates(d) {
      const found = [];
      const norms = d.options.map(normalise);
      for (let i = 0; i < norms.length; i++) {
        for (let j = i + 1; j < norms.length; j++) {
          const a = norms[i];
          const b = norms[j];
          if (!a || !b) continue;
          if (a === b) {
            found.push(finding("duplicate_options", gettext("Options ") + n(i) + gettext(" and ") + n(j) + gettext(" are the same once case and punctuation are ignored."), [i, j]));
            continue;
          }
          if (numbers(a).join(" ") !== numbers(b).join(" ")) continue;
          const ratio = similarity(a, b);
          if (ratio >= cfg.nearDuplicateRatio) {
            found.push(finding("near_duplicate_options", gettext("Options ") + n(i) + gettext(" and ") + n(j) + gettext(" are nearly the same (") +
              Math.floor(ratio * 100) + gettext("% alike)."), [i, j]));
          }
        }
      }
      return found;
    }

    function correctOption(d) {
      const i = d.correct_index;
      if (i == null || !(i >= 0 && i < d.options.length) || !d.options[i].trim()) return null;
      return [i, d.options[i].trim()];
    }

    function correctLongest(d) {
      const correct = correctOption(d);
      if (!correct) return [];
      const distractors = d.options.map((o) => o.trim()).filter((o, k) => k !== correct[0] && o);
      if (!distractors.length) return [];
      const length = cpLength(correct[1]);
      const longest = Math.max(...distractors.map(cpLength));
      if (length >= cfg.longestRatio * longest && length - longest >= cfg.longestMinExtraChars) {
        return [finding("correct_longest", gettext("The correct option is the longest by far (") + length +
          gettext(" characters, the longest distractor ") + longest + gettext("): test takers guess the longest. ") +
          gettext("Lengthen a distractor or shorten the answer."), [correct[0]])];
      }
      return [];
    }

    function answerLeaked(d) {
      const correct = correctOption(d);
      if (!correct || !d.question.trim()) return [];
      const question = normalise(d.question);
      const distractorWords = new Set();
      d.options.forEach((o, k) => { if (k !== correct[0]) contentWords(o).forEach((w) => distractorWords.add(w)); });
      const leaked = contentWords(correct[1]).filter((w) => !distractorWords.has(w) && containsWord(question, w));
      if (!leaked.length) return [];
      return [finding("answer_leaked", interpolate(ngettext("The question gives the answer away: %s appears in the question and the correct option but in no distractor.", "The question gives the answer away: %s appear in the question and the correct option but in no distractor.", leaked.length), [leaked.map((w) => '"' + w + '"').join(", ")]), [correct[0]])];
    }

    function referring(d, rules) {
      const start = d.referring_start;
      const end = d.referring_end;
      if (start == null && end == null) {
        if (rules.referring_query && d.question.trim()) {
          return [finding("referring_missing", gettext("Mark the referring query in the question (select it, then press r)."))];
        }
        return [];
      }
      if (start == null || end == null || !(start >= 0 && start < end && end <= cpLength(d.question))) {
        return [finding("referring_outside", gettext("The referring query is not inside the question: mark it again."))];
      }
      if (!d.question.slice(cpToUnit(d.question, start), cpToUnit(d.question, end)).trim()) {
        return [finding("referring_outside", gettext("The referring query is empty: mark words of the question."))];
      }
      return [];
    }

    function moments(d, rules) {
      const found = [];
      if (rules.moments && !d.moments.length) found.push(finding("no_moment", gettext("Stamp the referred moment(s) from the player (press s).")));
      const videos = new Map(d.videos.map((v) => [v.video_id, v]));
      d.moments.forEach((m, k) => {
        const video = videos.get(m.video_id);
        if (!video) {
          found.push(finding("moment_foreign_video", gettext("Moment ") + n(k) + gettext(" is on a video this question does not use."), [], [k]));
        } else if (m.time_s < 0 || (video.duration_s != null && m.time_s > video.duration_s)) {
          found.push(finding("moment_outside_video", gettext("Moment ") + n(k) + gettext(" at ") + clockLabel(m.time_s) + gettext(" is outside video ") +
            video.name + " (0 – " + clockLabel(video.duration_s || 0) + ").", [], [k]));
        }
      });
      return found;
    }

    function warnings(d, rules) {
      let found = optionDuplicates(d);
      if (!rules.label_options) found = found.concat(correctLongest(d), answerLeaked(d));
      found = found.concat(referring(d, rules), moments(d, rules));
      d.videos.forEach((v) => {
        if (v.unusable) found.push(finding("video_unusable", gettext("Video ") + v.name + gettext(" is flagged unusable (") + v.unusable + ")."));
      });
      return found;
    }

    return {
      blockers: blockers,
      warnings: warnings,
      contentWords: contentWords,
      normalise: normalise,
      similarity: similarity,
      questionWithoutSpan: questionWithoutSpan,
    };
  }

  // --- the editor ------------------------------------------------------------------------------

  function createEditor(form) {
    const config = JSON.parse(document.getElementById(form.dataset.config).textContent);
    const checks = (VidQA.mcqChecks = createChecks(config.checks));
    const $ = (sel) => form.querySelector(sel);
    const el = {
      question: $("#mcq-question"),
      preview: $("#mcq-question-preview"),
      mark: $("#mcq-mark-referring"),
      clearMark: $("#mcq-clear-referring"),
      wo: $("#mcq-wo"),
      woMode: $("#mcq-wo-mode"),
      woDerive: $("#mcq-wo-derive"),
      options: $("#mcq-options"),
      addOption: $("#mcq-add-option"),
      category: $("#mcq-category"),
      level: $("#mcq-level"),
      stamp: $("#mcq-stamp"),
      moments: $("#mcq-moments"),
      momentsEmpty: $("#mcq-moments-empty"),
      videos: $("#mcq-videos"),
      addVideo: $("#mcq-add-video"),
      addRole: $("#mcq-add-role"),
      addVideoButton: $("#mcq-add-video-button"),
      blockers: $("#mcq-blockers"),
      warnings: $("#mcq-warnings"),
      findingsEmpty: $("#mcq-findings-empty"),
      submit: $("#mcq-submit"),
      undo: $("#mcq-undo"),
      next: $("#mcq-next"),
      message: $("#mcq-message"),
      saveState: $("#mcq-save-state"),
      conflict: $("#mcq-conflict"),
      status: document.getElementById("mcq-status"),
    };
    let editable = config.editable;
    const rules = config.rules;
    const state = copyState(config.state);
    // Derived until the annotator writes their own: a stored text equal to the derivation is derived.
    let woEdited = !!state.question_wo_referring_query &&
      state.question_wo_referring_query !== questionWithoutSpan(state.question, state.referring_start, state.referring_end);
    let submitting = false;
    let lastFindings = { warnings: [], blockers: [] };

    function copyState(s) {
      return {
        question: s.question || "",
        referring_start: s.referring_start,
        referring_end: s.referring_end,
        question_wo_referring_query: s.question_wo_referring_query || "",
        options: (s.options || []).slice(),
        correct_index: s.correct_index,
        category: s.category || "",
        level: s.level || "",
        task_group: s.task_group || "",
        videos: (s.videos || []).map((v) => Object.assign({}, v)),
        moments: (s.moments || []).map((m) => Object.assign({}, m)),
      };
    }

    // The save payload of a state: the question without the referring query only when written by hand.
    function payloadOf(s, handWritten) {
      if (handWritten == null) {
        handWritten = s.question_wo_referring_query !== questionWithoutSpan(s.question, s.referring_start, s.referring_end);
      }
      return {
        question: s.question,
        referring_start: s.referring_start,
        referring_end: s.referring_end,
        question_wo_referring_query: handWritten ? s.question_wo_referring_query : null,
        options: s.options.slice(),
        correct_index: s.correct_index,
        category: s.category,
        level: s.level,
        videos: s.videos.map((v, i) => ({ video_id: v.video_id, role: v.role, order: i })),
        moments: s.moments.map((m) => ({ video_id: m.video_id, time_s: m.time_s, frame_index: m.frame_index })),
      };
    }
    function collect() { return payloadOf(state, woEdited); }

    const doc = editable && VidQA.autosave ? VidQA.autosave.create({
      url: config.urls.save,
      version: config.state.version,
      collect: collect,
      storageKey: "vidqa:mcq:" + config.state.id,
      status: el.saveState,
      onSaved: onSaved,
      onConflict: onConflict,
      onInvalid: onInvalid,
      onRefused: onRefused,
    }) : null;

    function changed() {
      if (!editable) return;
      renderFindings();
      if (doc) doc.changed();
    }

    function say(text, kind) {
      el.message.textContent = text;
      el.message.className = "mcq-message" + (kind ? " " + kind : "");
    }

    // --- question and referring span (state in code points; DOM in UTF-16 units)
    function spanUnits() {
      if (state.referring_start == null || state.referring_end == null) return null;
      return [cpToUnit(state.question, state.referring_start), cpToUnit(state.question, state.referring_end)];
    }
    function setSpanUnits(a, b) {
      if (a == null) { state.referring_start = null; state.referring_end = null; return; }
      state.referring_start = unitToCp(state.question, a);
      state.referring_end = unitToCp(state.question, b);
    }
    function renderPreview() {
      const span = spanUnits();
      const q = state.question;
      if (!span || !(span[0] < span[1] && span[1] <= q.length)) {
        el.preview.replaceChildren(document.createTextNode(q));
      } else {
        const mark = document.createElement("mark");
        mark.id = "mcq-referring";
        mark.textContent = q.slice(span[0], span[1]);
        el.preview.replaceChildren(document.createTextNode(q.slice(0, span[0])), mark, document.createTextNode(q.slice(span[1])));
      }
    }
    function renderWo() {
      if (!woEdited) state.question_wo_referring_query = questionWithoutSpan(state.question, state.referring_start, state.referring_end);
      if (el.wo.value !== state.question_wo_referring_query) el.wo.value = state.question_wo_referring_query;
      el.woMode.textContent = woEdited ? gettext("(edited by hand)") : gettext("(derived from the question)");
      el.woDerive.hidden = !woEdited;
    }
    // An edit replaced old[p, oldEnd) by new[p, newEnd): move the span with the text around it.
    function onQuestionInput() {
      const before = state.question;
      const after = el.question.value;
      const span = spanUnits();
      let p = 0;
      while (p < before.length && p < after.length && before[p] === after[p]) p++;
      let s = 0;
      while (s < before.length - p && s < after.length - p && before[before.length - 1 - s] === after[after.length - 1 - s]) s++;
      const oldEnd = before.length - s;
      const delta = after.length - before.length;
      state.question = after;
      if (span) {
        let [a, b] = span;
        if (oldEnd <= a) { a += delta; b += delta; }
        else if (p >= b) { /* after the span: unchanged */ }
        else if (p >= a && oldEnd <= b) { b += delta; }
        else { a = null; say(gettext("The edit crossed the referring query's edge: mark it again."), "error"); }
        if (a != null && b <= a) a = null;
        if (a == null) setSpanUnits(null); else setSpanUnits(a, b);
      }
      renderPreview();
      renderWo();
      changed();
    }

    function selectionInQuestion() {
      // The textarea keeps its selection after it loses focus; the preview uses the page's selection.
      const sel = window.getSelection();
      if (sel && sel.rangeCount && !sel.isCollapsed && el.preview.contains(sel.anchorNode) && el.preview.contains(sel.focusNode)) {
        const range = sel.getRangeAt(0);
        const pre = document.createRange();
        pre.selectNodeContents(el.preview);
        pre.setEnd(range.startContainer, range.startOffset);
        const a = pre.toString().length;
        const b = a + range.toString().length;
        // Done with it: a page selection left in the preview would swallow typing in the box.
        sel.removeAllRanges();
        return [a, b];
      }
      if (el.question.selectionEnd > el.question.selectionStart) return [el.question.selectionStart, el.question.selectionEnd];
      return null;
    }
    function markReferring() {
      if (!editable) return;
      const found = selectionInQuestion();
      if (!found) { say(gettext("Select words of the question first (in the box or in the highlighted text), then press r."), "error"); return; }
      let [a, b] = found;
      const q = state.question;
      while (a < b && /\s/u.test(q[a])) a++;
      while (b > a && /\s/u.test(q[b - 1])) b--;
      if (a === b) { say(gettext("The selection holds no words."), "error"); return; }
      setSpanUnits(a, b);
      say(gettext("Referring query: “") + q.slice(a, b) + "”.", "ok");
      renderPreview();
      renderWo();
      changed();
    }

    // --- options
    function renderOptions() {
      el.options.replaceChildren(...state.options.map((text, i) => {
        const li = document.createElement("li");
        li.dataset.index = i;
        const radio = document.createElement("input");
        radio.type = "radio";
        radio.name = "correct";
        radio.value = i;
        radio.checked = state.correct_index === i;
        radio.disabled = !editable;
        radio.setAttribute("aria-label", gettext("Option ") + (i + 1) + gettext(" is the correct one"));
        radio.addEventListener("change", () => setCorrect(i));
        const key = document.createElement("span");
        key.className = "option-key";
        key.textContent = i + 1;
        const input = document.createElement("input");
        input.type = "text";
        input.className = "option-text";
        input.value = text;
        input.readOnly = !editable;
        input.maxLength = 1000;
        input.setAttribute("aria-label", gettext("Option ") + (i + 1));
        input.placeholder = rules.label_options ? gettext("label, e.g. ") + (i + 1) : (i === 0 ? gettext("the correct answer or a distractor") : "");
        input.addEventListener("input", () => { state.options[i] = input.value; changed(); });
        const remove = document.createElement("button");
        remove.type = "button";
        remove.className = "option-remove";
        remove.textContent = "×";
        remove.title = gettext("Remove option ") + (i + 1);
        remove.disabled = !editable;
        remove.addEventListener("click", () => removeOption(i));
        li.append(radio, key, input, remove);
        li.classList.toggle("correct", state.correct_index === i);
        return li;
      }));
      el.addOption.disabled = !editable || state.options.length >= rules.max_options;
    }
    function setCorrect(i) {
      if (!editable || i >= state.options.length) return;
      state.correct_index = i;
      el.options.querySelectorAll("li").forEach((li, k) => {
        li.classList.toggle("correct", k === i);
        li.querySelector("input[type=radio]").checked = k === i;
      });
      changed();
    }
    function addOption() {
      if (!editable || state.options.length >= rules.max_options) return;
      state.options.push(rules.label_options ? String(state.options.length + 1) : "");
      renderOptions();
      const inputs = el.options.querySelectorAll(".option-text");
      inputs[inputs.length - 1].focus();
      changed();
    }
    function removeOption(i) {
      if (!editable) return;
      state.options.splice(i, 1);
      if (state.correct_index === i) state.correct_index = null;
      else if (state.correct_index != null && state.correct_index > i) state.correct_index -= 1;
      renderOptions();
      changed();
    }

    // --- category and level
    function ensureCategoryOption() {
      if (!state.category || config.categories.some((c) => c.value === state.category)) return;
      // A category the taxonomy has since dropped stays visible (and is kept) until changed.
      const option = document.createElement("option");
      option.value = state.category;
      option.textContent = state.category + gettext(" (no longer in the project's list)");
      el.category.append(option);
    }
    function renderCategory() {
      ensureCategoryOption();
      el.category.value = state.category;
      el.level.textContent = state.level || state.task_group || "—";
    }
    function onCategory() {
      state.category = el.category.value;
      const choice = config.categories.find((c) => c.value === state.category);
      state.level = choice ? choice.level : "";
      state.task_group = choice ? choice.group : "";
      renderCategory();
      changed();
    }

    // --- moments
    const player = () => VidQA.player || null;
    function videoOf(id) { return state.videos.find((v) => v.video_id === id); }
    function addMoment(videoId, time, frame) {
      if (!editable) return;
      if (!videoOf(videoId)) { say(gettext("That video is not part of this question."), "error"); return; }
      const t = Math.round(time * 1000) / 1000;
      const fps = videoOf(videoId).fps;
      const f = frame != null ? frame : (fps ? roundHalfEven(t * fps) : 0);
      if (state.moments.some((m) => m.video_id === videoId && m.frame_index === f)) {
        say(gettext("Frame ") + f + gettext(" is already stamped."), "error");
        return;
      }
      state.moments.push({ video_id: videoId, time_s: t, frame_index: f });
      const order = (id) => state.videos.findIndex((v) => v.video_id === id);
      state.moments.sort((a, b) => order(a.video_id) - order(b.video_id) || a.time_s - b.time_s);
      say(gettext("Moment stamped at ") + clockLabel(t) + gettext(" · frame ") + f + ".", "ok");
      renderMoments();
      changed();
    }
    function renderMoments() {
      const current = config.currentVideoId;
      el.moments.replaceChildren(...state.moments.map((m, k) => {
        const li = document.createElement("li");
        li.dataset.time = m.time_s;
        li.dataset.frame = m.frame_index;
        li.dataset.videoId = m.video_id;
        const video = videoOf(m.video_id);
        const go = document.createElement("button");
        go.type = "button";
        go.className = "link moment-seek";
        go.textContent = clockLabel(m.time_s) + gettext(" · frame ") + m.frame_index;
        go.title = m.video_id === current ? gettext("Seek the player here") : gettext("Open this video");
        go.addEventListener("click", () => {
          if (m.video_id === current && player()) player().seek(m.time_s);
          else leaveTo(config.urls.editor + "?video=" + m.video_id);
        });
        li.append(go);
        if (state.videos.length > 1) {
          const name = document.createElement("span");
          name.className = "muted";
          name.textContent = video ? video.name : "?";
          li.append(" ", name);
        }
        const drop = document.createElement("button");
        drop.type = "button";
        drop.className = "link moment-remove";
        drop.textContent = "×";
        drop.disabled = !editable;
        drop.setAttribute("aria-label", gettext("Remove the moment at ") + clockLabel(m.time_s));
        drop.addEventListener("click", () => { state.moments.splice(k, 1); renderMoments(); changed(); });
        li.append(drop);
        return li;
      }));
      el.momentsEmpty.hidden = state.moments.length > 0;
    }
    function stamp() {
      const p = player();
      if (!editable) return;
      if (!p) { say(gettext("The player is not ready."), "error"); return; }
      p.mark(); // the player lists the mark and sends vidqa:mark, which adds the moment
    }

    // --- videos of a multi-video item
    function renderVideos() {
      renderSwitcher();
      if (!el.videos) return;
      el.videos.replaceChildren(...state.videos.map((v, i) => {
        const li = document.createElement("li");
        li.dataset.videoId = v.video_id;
        const role = document.createElement("span");
        role.className = "video-role";
        role.textContent = v.role === "candidate" ? "candidate " + state.videos.slice(0, i + 1).filter((x) => x.role === "candidate").length : v.role;
        const name = document.createElement("span");
        name.textContent = v.name + (v.unusable ? gettext(" (unusable)") : "");
        li.append(role, name);
        if (editable) {
          const up = button("↑", gettext("Move up"), () => moveVideo(i, -1));
          up.disabled = i === 0;
          const down = button("↓", gettext("Move down"), () => moveVideo(i, 1));
          down.disabled = i === state.videos.length - 1;
          li.append(up, down, button("×", gettext("Remove ") + v.name, () => removeVideo(i)));
        }
        return li;
      }));
    }
    function button(text, title, fn) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "link";
      b.textContent = text;
      b.title = title;
      b.setAttribute("aria-label", title);
      b.addEventListener("click", fn);
      return b;
    }
    function relabel() {
      // MVPBench options are the candidates' labels: keep them in step while they are plain labels.
      if (!rules.label_options) return;
      const count = state.videos.filter((v) => v.role === "candidate").length;
      const plain = state.options.every((o, i) => o === String(i + 1));
      if (!plain) return;
      state.options = Array.from({ length: Math.min(count, rules.max_options) }, (_, i) => String(i + 1));
      if (state.correct_index != null && state.correct_index >= state.options.length) state.correct_index = null;
      renderOptions();
    }
    function moveVideo(i, step) {
      const j = i + step;
      if (j < 0 || j >= state.videos.length) return;
      if (state.videos[i].role === "reference" || state.videos[j].role === "reference") {
        say(gettext("The reference video stays first."), "error");
        return;
      }
      [state.videos[i], state.videos[j]] = [state.videos[j], state.videos[i]];
      renderVideos();
      changed();
    }
    function removeVideo(i) {
      const v = state.videos[i];
      if (state.videos.length === 1) { say(gettext("A question needs at least one video."), "error"); return; }
      if (v.video_id === config.currentVideoId) { say(gettext("Switch the player to another video before removing this one."), "error"); return; }
      if (state.moments.some((m) => m.video_id === v.video_id)) { say(gettext("Remove the moments stamped on ") + v.name + gettext(" first."), "error"); return; }
      state.videos.splice(i, 1);
      relabel();
      renderVideos();
      changed();
    }
    function addVideo() {
      const id = parseInt(el.addVideo.value, 10);
      if (!id) { say(gettext("Choose a video to add."), "error"); return; }
      if (videoOf(id)) { say(gettext("That video is already part of this question."), "error"); return; }
      const role = el.addRole.value;
      const name = el.addVideo.selectedOptions[0].textContent;
      const entry = { video_id: id, name: name, role: role, duration_s: null, fps: null, unusable: "" };
      if (role === "reference") {
        state.videos.forEach((v) => { if (v.role === "reference" || v.role === "main") v.role = "candidate"; });
        state.videos.unshift(entry);
      } else {
        state.videos.forEach((v) => { if (v.role === "main") v.role = "reference"; });
        state.videos.push(entry);
      }
      relabel();
      el.addVideo.value = "";
      renderVideos();
      changed();
      // The new video's duration and frame rate come back with the save.
      if (doc) doc.flush();
    }
    function renderSwitcher() {
      const nav = document.querySelector(".mcq-video-switcher");
      if (!nav || state.videos.length < 2) return;
      nav.replaceChildren(...state.videos.map((v, i) => {
        const a = document.createElement("a");
        a.href = "?video=" + v.video_id;
        a.dataset.videoSwitch = v.video_id;
        if (v.video_id === config.currentVideoId) { a.className = "current"; a.setAttribute("aria-current", "true"); }
        const small = document.createElement("small");
        small.textContent = v.role === "candidate" ? gettext("Candidate ") + i : v.role[0].toUpperCase() + v.role.slice(1);
        a.append(small, " " + v.name);
        return a;
      }));
    }

    // --- findings
    function draft() {
      return {
        question: state.question,
        referring_start: state.referring_start,
        referring_end: state.referring_end,
        options: state.options,
        correct_index: state.correct_index,
        category: state.category,
        videos: state.videos,
        moments: state.moments,
      };
    }
    function renderFindings(found) {
      const d = draft();
      const warnings = found ? found.warnings : checks.warnings(d, rules);
      const blockers = found ? found.blockers : checks.blockers(d, rules);
      const item = (f) => {
        const li = document.createElement("li");
        li.dataset.code = f.code;
        li.textContent = f.message;
        return li;
      };
      el.blockers.replaceChildren(...blockers.map(item));
      el.warnings.replaceChildren(...warnings.map(item));
      el.findingsEmpty.hidden = warnings.length + blockers.length > 0;
      const flaggedOptions = new Set();
      const flaggedMoments = new Set();
      warnings.concat(blockers).forEach((f) => {
        f.options.forEach((i) => flaggedOptions.add(i));
        f.moments.forEach((k) => flaggedMoments.add(k));
      });
      el.options.querySelectorAll("li").forEach((li, i) => li.classList.toggle("flagged", flaggedOptions.has(i)));
      el.moments.querySelectorAll("li").forEach((li, k) => li.classList.toggle("flagged", flaggedMoments.has(k)));
      lastFindings = { warnings: warnings, blockers: blockers };
    }

    // --- saving, conflicts, submit
    function onSaved(body, info) {
      if (info && info.action) return; // submit answers handle themselves
      // Only what the server decides (frame numbers, durations of added videos) comes back into the
      // editor, and only when nothing changed meanwhile: typed text is never overwritten.
      if (doc && doc.dirty) return;
      const byId = new Map(body.videos.map((v) => [v.video_id, v]));
      state.videos.forEach((v) => { const s = byId.get(v.video_id); if (s) Object.assign(v, { duration_s: s.duration_s, fps: s.fps, unusable: s.unusable }); });
      state.moments = body.moments.map((m) => Object.assign({}, m));
      renderMoments();
      renderFindings({ warnings: body.warnings, blockers: body.blockers });
      setStatus(body.status, body.status_label);
    }
    function onInvalid(body) {
      if (submitting) { onSubmitRefused(body); return; }
      const errors = body.errors || [];
      say(errors.map((e) => e.message).join(" ") || body.error, "error");
    }
    function onRefused(body, status) {
      say(body.error || gettext("Refused (") + status + ").", "error");
      if (status === 403 || (status === 409 && body.conflict === false)) setEditable(false);
    }
    function setStatus(status, label) {
      if (!status || !el.status) return;
      el.status.textContent = label || status;
      el.status.className = "item-" + status;
    }
    function setEditable(value) {
      editable = value;
      form.querySelectorAll("textarea, input, select, button").forEach((x) => {
        if (x.closest("#mcq-conflict")) return;
        if (x.tagName === "TEXTAREA" || (x.tagName === "INPUT" && x.type === "text")) x.readOnly = !value;
        else x.disabled = !value;
      });
    }

    function submit() {
      if (!editable || !doc || submitting) return;
      const local = checks.blockers(draft(), rules);
      if (local.length) {
        renderFindings();
        say(gettext("Not ready to submit: ") + local.map((f) => f.message).join(" "), "error");
        return;
      }
      submitting = true;
      // Save first, then ask once about the warnings of the text as it is now.
      doc.flush()
        .then(() => VidQA.submitFlow.confirm({ warnings: checks.warnings(draft(), rules), noun: gettext("MCQ") }))
        .then((yes) => {
          if (!yes) { submitting = false; say(gettext("Not submitted: the MCQ is as you left it.")); return; }
          send();
        });
    }
    function send() {
      say(gettext("Submitting…"));
      doc.send(config.urls.submit, {}).then((body) => {
        submitting = false;
        if (!body) {
          if (doc.inConflict) return;
          doc.showSaved();
          return;
        }
        setStatus(body.status, body.status_label);
        setEditable(false);
        doc.show("saved", gettext("Submitted · v") + body.version);
        say((body.message || gettext("Submitted.")) + gettext(" Press n for the next item."), "ok");
        if (VidQA.submitFlow) VidQA.submitFlow.stay({ next: document.querySelector("[data-key=n]") });
      });
    }

    // Undo asks the server for the previous version's content, saved as a new version.
    function undo() {
      if (!editable || !doc) return;
      doc.send(config.urls.undo, {}).then((body) => {
        if (!body) return;
        replaceState(body);
        renderFindings({ warnings: body.warnings, blockers: body.blockers });
        doc.showSaved();
        say(gettext("Undone: back to the content of version ") + body.restoredVersion + gettext(" (saved as version ") + body.version + ").", "ok");
      });
    }
    function replaceState(s) {
      Object.assign(state, copyState(s));
      woEdited = !!state.question_wo_referring_query &&
        state.question_wo_referring_query !== questionWithoutSpan(state.question, state.referring_start, state.referring_end);
      render();
    }

    // Read the refusal of a submit: the server's blockers are shown, the content stays saved.
    function onSubmitRefused(body) {
      if (body.blockers) {
        renderFindings({ warnings: checks.warnings(draft(), rules), blockers: body.blockers });
        say(body.error, "error");
      }
    }

    const FIELDS = [
      ["question", gettext("Question"), (s) => s.question],
      ["referring", gettext("Referring query"), (s) => spanText(s)],
      ["wo", gettext("Without the referring query"), (s) => s.question_wo_referring_query || gettext("(derived)")],
      ["options", gettext("Options"), (s) => (s.options || []).map((o, i) => (i === s.correct_index ? "✓ " : "") + (i + 1) + ". " + o).join("\n")],
      ["category", gettext("Category"), (s) => s.category || "—"],
      ["moments", gettext("Moments"), (s) => (s.moments || []).map((m) => clockLabel(m.time_s)).join(", ") || "—"],
      ["videos", gettext("Videos"), (s) => (s.videos || []).map((v) => v.role + " " + v.video_id).join(", ")],
    ];
    function spanText(s) {
      if (s.referring_start == null || s.referring_end == null) return "—";
      const q = s.question || "";
      return q.slice(cpToUnit(q, s.referring_start), cpToUnit(q, s.referring_end));
    }
    function takeField(name, theirs) {
      if (name === "question" || name === "referring") {
        state.question = theirs.question;
        state.referring_start = theirs.referring_start;
        state.referring_end = theirs.referring_end;
        el.question.value = state.question;
        renderPreview();
        renderWo();
      } else if (name === "wo") {
        woEdited = theirs.question_wo_referring_query !== questionWithoutSpan(theirs.question, theirs.referring_start, theirs.referring_end);
        state.question_wo_referring_query = theirs.question_wo_referring_query;
        el.wo.value = state.question_wo_referring_query;
        renderWo();
      } else if (name === "options") {
        state.options = theirs.options.slice();
        state.correct_index = theirs.correct_index;
        renderOptions();
      } else if (name === "category") {
        state.category = theirs.category;
        state.level = theirs.level;
        state.task_group = theirs.task_group;
        renderCategory();
      } else if (name === "moments") {
        state.moments = theirs.moments.map((m) => Object.assign({}, m));
        renderMoments();
      } else if (name === "videos") {
        state.videos = theirs.videos.map((v) => Object.assign({}, v));
        renderVideos();
      }
      renderFindings();
      if (doc) doc.changed(); // kept locally; saved with the merge (autosave waits during a conflict)
    }
    function onConflict(body, mine) {
      if (submitting) submitting = false;
      mine = mine || collect();
      if (JSON.stringify(payloadOf(body.theirs)) === JSON.stringify(mine)) {
        // Theirs already says what ours says (often our own save sent as the last page closed).
        doc.resolve(body.theirs.version);
        return;
      }
      showConflict(body.theirs, mine, body.error);
    }
    function showConflict(theirs, mine, message) {
      const box = el.conflict;
      const mineState = Object.assign({}, state, mine, { question_wo_referring_query: mine.question_wo_referring_query || state.question_wo_referring_query });
      const head = document.createElement("p");
      head.textContent = message;
      const table = document.createElement("table");
      const thead = table.createTHead().insertRow();
      ["", gettext("Yours (not saved yet)"), gettext("Theirs (version ") + theirs.version + (theirs.savedBy ? ", " + theirs.savedBy : "") + ")", ""].forEach((t) => {
        const th = document.createElement("th");
        th.textContent = t;
        thead.append(th);
      });
      const tbody = table.createTBody();
      FIELDS.forEach(([name, label, show]) => {
        const a = show(mineState);
        const b = show(theirs);
        const row = tbody.insertRow();
        row.dataset.field = name;
        row.className = a === b ? "same" : "differs";
        const th = document.createElement("th");
        th.textContent = label;
        row.append(th);
        [a, b].forEach((text) => {
          const td = row.insertCell();
          td.className = "conflict-text";
          td.style.whiteSpace = "pre-wrap";
          td.textContent = text;
        });
        const act = row.insertCell();
        if (a !== b) {
          const take = button(gettext("use theirs"), interpolate(gettext("Use their %s"), [label.toLowerCase()]), () => { takeField(name, theirs); row.className = "same"; act.replaceChildren(gettext("taken")); });
          take.className = "conflict-take";
          act.append(take);
        }
      });
      const keep = document.createElement("button");
      keep.type = "button";
      keep.className = "primary";
      keep.id = "mcq-conflict-save";
      keep.textContent = gettext("Save this merge (yours, with what you took) as the next version");
      keep.addEventListener("click", () => {
        box.hidden = true;
        doc.resolve(theirs.version).then((ok) => { if (ok) say(gettext("Merged and saved."), "ok"); });
      });
      const drop = document.createElement("button");
      drop.type = "button";
      drop.id = "mcq-conflict-theirs";
      drop.textContent = gettext("Take all of theirs");
      drop.addEventListener("click", () => {
        FIELDS.forEach(([name]) => takeField(name, theirs));
        box.hidden = true;
        doc.resolve(theirs.version).then((ok) => { if (ok) say(gettext("Their version is loaded."), "ok"); });
      });
      box.replaceChildren(head, table, keep, " ", drop);
      box.hidden = false;
      box.scrollIntoView({ block: "nearest" });
    }

    function leaveTo(url) {
      const go = () => { window.location.href = url; };
      if (doc && doc.dirty && !doc.inConflict) doc.flush().then(go);
      else go();
    }

    // --- wiring
    function render() {
      el.question.value = state.question;
      renderPreview();
      renderWo();
      renderOptions();
      renderCategory();
      renderMoments();
      renderVideos();
      renderFindings();
    }

    el.question.addEventListener("input", onQuestionInput);
    el.wo.addEventListener("input", () => {
      woEdited = true;
      state.question_wo_referring_query = el.wo.value;
      renderWo();
      changed();
    });
    el.woDerive.addEventListener("click", () => { woEdited = false; renderWo(); changed(); });
    // Keep the preview's selection when the button takes the click.
    el.mark.addEventListener("mousedown", (event) => event.preventDefault());
    el.mark.addEventListener("click", markReferring);
    el.clearMark.addEventListener("click", () => { setSpanUnits(null); renderPreview(); renderWo(); changed(); });
    el.addOption.addEventListener("click", addOption);
    el.category.addEventListener("change", onCategory);
    el.stamp.addEventListener("click", stamp);
    if (el.addVideoButton) el.addVideoButton.addEventListener("click", addVideo);
    el.submit.addEventListener("click", submit);
    el.undo.addEventListener("click", undo);
    // Leaving for the next item or another video: save first (the local copy covers a failure).
    document.addEventListener("click", (event) => {
      const a = event.target.closest && event.target.closest("#mcq-next, .mcq-video-switcher a");
      if (a && !event.defaultPrevented && !event.ctrlKey && !event.metaKey && event.button === 0) {
        event.preventDefault();
        leaveTo(a.href);
      }
    });
    document.addEventListener("vidqa:mark", (event) => addMoment(event.detail.videoId, event.detail.time, event.detail.frame));
    document.addEventListener("vidqa:unusable-changed", (event) => {
      const v = videoOf(event.detail.videoId);
      if (v) { v.unusable = event.detail.label || ""; renderVideos(); renderFindings(); }
    });
    // Keys that work while typing: Ctrl+Enter submits, Alt+r marks the selection, Esc leaves the field.
    form.addEventListener("keydown", (event) => {
      const typing = event.target.matches("textarea, input, select");
      if (!typing) return;
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); submit(); }
      else if (event.altKey && (event.key === "r" || event.key === "®") && event.target === el.question) { event.preventDefault(); markReferring(); }
      else if (event.key === "Escape") { event.target.blur(); }
    });
    if (VidQA.shortcuts) {
      const keys = VidQA.shortcuts;
      keys.register("r", gettext("Mark the selected words as the referring query"), markReferring);
      keys.register("s", gettext("Stamp the current moment (time and frame)"), stamp);
      for (let i = 1; i <= 5; i++) keys.register(String(i), gettext("Option ") + i + gettext(" is the correct one"), () => setCorrect(i - 1));
      keys.register("Ctrl+Enter", gettext("Submit the MCQ"), submit);
      keys.register("Ctrl+z", gettext("Undo: back to the previous saved version (in a text box: undo typing)"), undo);
      keys.register("Alt+r", gettext("Mark the referring query while typing in the question"), markReferring);
    }

    render();
    if (!editable) setEditable(false);

    // Text an earlier page could not save (reload, crash, conflict) comes back now.
    if (doc) doc.showSaved();
    const earlier = doc && doc.pending();
    if (earlier && JSON.stringify(earlier.payload) === JSON.stringify(collect())) {
      doc.discardLocal(); // it did arrive (the page sends what is unsaved as it closes)
    } else if (earlier && earlier.version === config.state.version) {
      applyPayload(earlier.payload);
      doc.discardLocal();
      doc.changed();
      say(gettext("Your unsaved changes from before are back and being saved."), "ok");
    } else if (earlier) {
      const mine = earlier.payload;
      showConflict(Object.assign({}, config.state, { savedBy: "" }), mine,
        gettext("You had unsaved changes on version ") + earlier.version + gettext("; the MCQ is now at version ") +
        config.state.version + ". Nothing is lost: compare and merge.");
      applyPayload(mine);
      doc.show("conflict", gettext("Unsaved changes from before: compare and merge."));
    }
    function applyPayload(p) {
      const known = new Map(config.state.videos.map((v) => [v.video_id, v]));
      const videos = (p.videos || state.videos).map((v) => Object.assign(
        { name: "video " + v.video_id, duration_s: null, fps: null, unusable: "" }, known.get(v.video_id) || {}, { role: v.role }));
      Object.assign(state, copyState(Object.assign({}, state, p, { videos: videos })));
      woEdited = p.question_wo_referring_query != null;
      if (woEdited) state.question_wo_referring_query = p.question_wo_referring_query;
      render();
    }

    return {
      state: state,
      collect: collect,
      doc: doc,
      markReferring: markReferring,
      setCorrect: setCorrect,
      submit: submit,
      findings: () => lastFindings,
    };
  }

  VidQA.createMcqChecks = createChecks;
  VidQA.mcqText = { questionWithoutSpan: questionWithoutSpan, normalise: normalise, similarity: similarity, cpToUnit: cpToUnit, unitToCp: unitToCp };

  function init() {
    const form = document.querySelector("[data-mcq-editor]");
    if (!form || VidQA.mcqEditor) return;
    VidQA.mcqEditor = createEditor(form);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
