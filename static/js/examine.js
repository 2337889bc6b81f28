// The examiner's page and the reviser's list, from the keyboard.
//
// Examiner ([data-examine], config in #examine-config): keys 1–9 tick or untick the checklist, p passes,
// f flags with the unticked checks as reasons, c writes a comment (Esc leaves it); the clip (or, for a
// chain pair, the chosen range) plays in a loop; referred moments are buttons that seek the player.
// Before posting, the form is checked the way the server checks it (a pass leaves no check unticked,
// a flag names at least one, "nothing else" unticked needs a comment), so a mistake costs no round trip;
// the server says the same if this script is missing.
//
// Reviser ([data-revise-list]): j / k move between items, Enter opens the current one.
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  function whenPlayer(fn) {
    if (VidQA.player) fn(VidQA.player);
    else document.addEventListener("vidqa:player-ready", (event) => fn(event.detail), { once: true });
  }

  // --- loops: the clip plays again from its start when it ends (as in the chain editor) ---
  function loopRange(player, range, loopBox) {
    const EPS = 0.05;
    let current = range;
    let inside = true;
    player.onTimeUpdate((t) => {
      if (!current || (loopBox && !loopBox.checked)) return;
      if (t >= current.start - EPS && t < current.end) { inside = true; return; }
      // Passing the range's end while it plays: back to its start. A jump elsewhere is left alone.
      const ended = player.video.ended;
      if (inside && t >= current.end - EPS && t < current.end + 1.0 && (!player.video.paused || ended)) {
        player.seek(current.start);
        if (ended) player.play();
      } else inside = false;
    });
    return {
      set(next) {
        current = next;
        inside = true;
        player.seek(next.start);
      },
    };
  }

  function initExamine(root) {
    const configEl = document.getElementById("examine-config");
    const config = configEl ? JSON.parse(configEl.textContent) : { loops: [] };
    const keys = VidQA.shortcuts;

    // Player: loops and seek buttons.
    whenPlayer((player) => {
      const loopBox = document.getElementById("loop-clip");
      if (config.loops && config.loops.length) {
        const loop = loopRange(player, config.loops[0], loopBox);
        loop.set(config.loops[0]);
        document.querySelectorAll("[data-loop]").forEach((button) => {
          button.addEventListener("click", () => {
            const range = config.loops[Number(button.dataset.loop)];
            if (!range) return;
            if (loopBox) loopBox.checked = true;
            loop.set(range);
            player.play();
          });
        });
      }
      document.querySelectorAll("[data-seek]").forEach((button) => {
        button.addEventListener("click", () => {
          player.pause();
          player.seek(parseFloat(button.dataset.seek));
        });
      });
    });

    bindVerdictForm(root, config);
    // A refused htmx verdict swaps the panel: bind the new form.
    document.body.addEventListener("htmx:afterSwap", (event) => {
      if (event.target && event.target.id === "verdict-panel") bindVerdictForm(root, config);
    });

    if (keys) {
      for (let n = 1; n <= 9; n++) {
        keys.register(String(n), "Tick / untick check " + n, () => toggleCheck(n));
      }
    }
  }

  function checks() {
    return Array.from(document.querySelectorAll("#verdict-form input[name=ok]"));
  }

  function say(text, kind) {
    const status = document.getElementById("verdict-status");
    if (!status) return;
    status.textContent = text;
    status.className = "verdict-status" + (kind ? " " + kind : "");
  }

  function summarise() {
    const failing = checks().filter((box) => !box.checked);
    checks().forEach((box) => box.closest("li").classList.toggle("failing", !box.checked));
    if (!failing.length) say(gettext("Every check holds: p passes."), "");
    else say(interpolate(ngettext("%s check fails: f flags with it as the reason.", "%s checks fail: f flags with them as the reasons.", failing.length), [failing.length]), "warn");
  }

  function toggleCheck(n) {
    const box = checks().find((b) => b.dataset.check === String(n));
    if (!box) return;
    box.checked = !box.checked;
    box.closest("li").scrollIntoView({ block: "nearest" });
    summarise();
  }

  function bindVerdictForm(root, config) {
    const form = document.getElementById("verdict-form");
    if (!form || form.dataset.bound) return;
    form.dataset.bound = "1";
    const comment = form.querySelector("textarea[name=comment]");
    checks().forEach((box) => box.addEventListener("change", summarise));
    // A ticked box keeps the focus, and keys typed into an input are not shortcuts: after a mouse
    // click, give the focus back so p, f and 1–9 keep working (Tab and Space still reach the boxes).
    form.querySelectorAll("input[type=checkbox]").forEach((box) => box.addEventListener("click", (event) => {
      if (event.detail > 0) box.blur();
    }));
    if (comment) {
      comment.addEventListener("keydown", (event) => {
        if (event.key === "Escape") { event.preventDefault(); comment.blur(); }
      });
    }
    form.addEventListener("submit", (event) => {
      const decision = event.submitter ? event.submitter.value : "";
      const failing = checks().filter((box) => !box.checked);
      let problem = "";
      if (decision === "pass" && failing.length) {
        problem = gettext("A pass leaves no check unticked: tick them again (1–9), or flag with f.");
      } else if (decision === "flag" && !failing.length) {
        problem = gettext("A flag needs a reason: untick the check(s) the item fails (1–9), then press f.");
      } else if (decision === "flag" && comment && !comment.value.trim() &&
                 failing.some((box) => box.value === config.other)) {
        problem = gettext("You unticked “nothing else is wrong”: say what in the comment (c).");
        comment.focus();
      }
      if (problem) {
        event.preventDefault();
        say(problem, "error");
        return;
      }
      // One verdict per press: a second key press while the first posts would be refused anyway.
      form.querySelectorAll("button[type=submit]").forEach((b) => { b.disabled = true; });
      // The pressed button's value must still reach the server.
      if (event.submitter) {
        const hidden = document.createElement("input");
        hidden.type = "hidden";
        hidden.name = "decision";
        hidden.value = decision;
        form.appendChild(hidden);
      }
      say(decision === "pass" ? gettext("Passing…") : gettext("Flagging…"), "");
    });
    summarise();
  }

  // --- the reviser's list ---
  function initReviseList(list) {
    const rows = () => Array.from(list.querySelectorAll("[data-row]"));
    let current = -1;
    function focus(i) {
      const all = rows();
      if (!all.length) return;
      current = Math.max(0, Math.min(i, all.length - 1));
      all.forEach((row, k) => row.classList.toggle("current", k === current));
      all[current].focus();
      all[current].scrollIntoView({ block: "nearest" });
    }
    function open() {
      const row = rows()[current];
      const action = row && row.querySelector("[data-open]");
      if (action) action.click();
    }
    rows().forEach((row, i) => row.addEventListener("click", (event) => {
      if (!event.target.closest("a, button, summary")) focus(i);
    }));
    const keys = VidQA.shortcuts;
    if (keys) {
      keys.register("j", gettext("Next item in the list"), () => focus(current + 1));
      keys.register("k", gettext("Previous item in the list"), () => focus(current - 1));
      keys.register("Enter", gettext("Open the current item (a flagged one is taken into revision)"), () => {
        if (current < 0) focus(0);
        open();
      });
    }
    if (rows().length) focus(0);
  }

  function init() {
    const examine = document.querySelector("[data-examine]");
    if (examine) initExamine(examine);
    const list = document.querySelector("[data-revise-list]");
    if (list) initReviseList(list);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
