// Curation by keyboard: j/k move between seeds, y/x/u decide, e edits, a adds to the seed's task.
// Runs after the deferred shortcuts module has defined VidQA.shortcuts.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  const rows = () => Array.from(document.querySelectorAll("li.seed"));
  let focusAfterSwap = null; // {id, move}: where the focus goes once htmx has replaced a row

  function marked() {
    const active = document.activeElement && document.activeElement.closest("li.seed");
    return active || document.querySelector("li.seed[data-current]");
  }
  function current() {
    return marked() || rows()[0] || null;
  }
  function focusRow(row) {
    if (!row) return;
    rows().forEach((r) => r.removeAttribute("data-current"));
    row.setAttribute("data-current", "");
    row.focus();
    row.scrollIntoView({ block: "nearest" });
  }
  function move(step) {
    const all = rows();
    const row = marked();
    // With no seed chosen yet, either key starts at the first one.
    const at = row ? all.indexOf(row) + step : 0;
    focusRow(all[Math.min(all.length - 1, Math.max(0, at))]);
  }
  function act(name) {
    const row = current();
    if (!row) return;
    const button = row.querySelector(`button[data-act="${name}"]`);
    if (!button || button.disabled) { move(1); return; }
    focusAfterSwap = { id: row.id, move: 1 };
    button.click();
  }
  function edit() {
    const row = current();
    if (!row) return;
    const form = row.querySelector("form.seed-edit");
    form.hidden = false;
    const input = form.querySelector("input[name=text]");
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }
  function add() {
    const row = current();
    const section = row ? row.closest(".seed-task") : document.querySelector(".seed-task");
    if (section) section.querySelector("[data-add]").focus();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest('button[data-act="edit"]');
    if (button) { focusRow(button.closest("li.seed")); edit(); }
  });
  document.addEventListener("keydown", (event) => {
    const field = event.target.closest && event.target.closest("form.seed-edit");
    if (field && event.key === "Escape") {
      event.preventDefault();
      const row = field.closest("li.seed");
      field.hidden = true;
      field.querySelector("input[name=text]").value = row.querySelector(".seed-text").textContent;
      focusRow(row);
    } else if (field && event.key === "Enter") {
      focusAfterSwap = { id: field.closest("li.seed").id, move: 0 };
    } else if (event.target.matches && event.target.matches("[data-add]") && event.key === "Escape") {
      event.target.blur();
      focusRow(current());
    }
  });
  // A seed added: its form empties (an error answer, retargeted to the form's error slot, keeps the text).
  document.body.addEventListener("htmx:afterRequest", (event) => {
    const form = event.target.closest && event.target.closest("form.seed-add");
    if (!form || !event.detail.successful || event.detail.xhr.getResponseHeader("HX-Retarget")) return;
    form.reset();
    form.querySelector("[data-error]").textContent = "";
  });
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (!focusAfterSwap) return;
    const row = document.getElementById(focusAfterSwap.id);
    const step = focusAfterSwap.move;
    focusAfterSwap = null;
    if (!row) return;
    focusRow(row);
    if (step && !row.querySelector(".error")) move(step);
  });

  const keys = VidQA.shortcuts;
  keys.register("j", gettext("Next seed"), () => move(1));
  keys.register("k", gettext("Previous seed"), () => move(-1));
  keys.register("y", gettext("Keep this seed"), () => act("keep"));
  keys.register("x", gettext("Reject this seed"), () => act("reject"));
  keys.register("u", gettext("Back to undecided"), () => act("propose"));
  keys.register("e", gettext("Edit this seed"), edit);
  keys.register("a", gettext("Add a seed to this task"), add);
  const target = location.hash && document.getElementById(location.hash.slice(1));
  if (target && target.matches("li.seed")) focusRow(target);
});
