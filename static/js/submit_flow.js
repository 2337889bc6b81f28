// VidQA.submitFlow: what every editor does around a submit, so they all behave alike.
//
//   VidQA.submitFlow.confirm({warnings: ["…"], noun: "chain"}) → Promise<boolean>
//     With warnings, asks once in a dialog inside the page (never window.confirm): Enter or
//     Ctrl+Enter submits anyway, Escape (or the Cancel button) goes back to the item. Without
//     warnings it resolves true at once.
//   VidQA.submitFlow.stay({say, next}) after a submit: the editor stays on the submitted item
//     (read only) and "next" is one key away (n); the focus goes to the next-item link, so nothing
//     typed afterwards lands in an unread item.
//
// Loading this module also makes a page shown again from the browser's back/forward cache reload:
// such a page would show the item as it was when it was left (editable, with a stale status).
(function () {
  "use strict";
  const VidQA = (window.VidQA = window.VidQA || {});

  function build() {
    let dialog = document.getElementById("submit-confirm");
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.id = "submit-confirm";
    dialog.className = "submit-confirm";
    dialog.setAttribute("aria-labelledby", "submit-confirm-h");
    const h = document.createElement("h2");
    h.id = "submit-confirm-h";
    const list = document.createElement("ul");
    list.className = "warnings";
    const hint = document.createElement("p");
    hint.className = "muted";
    const actions = document.createElement("p");
    actions.className = "actions";
    const yes = document.createElement("button");
    yes.type = "button";
    yes.className = "primary";
    yes.dataset.submitConfirm = "yes";
    const no = document.createElement("button");
    no.type = "button";
    no.dataset.submitConfirm = "no";
    actions.append(yes, " ", no);
    dialog.append(h, list, hint, actions);
    document.body.append(dialog);
    return dialog;
  }

  function confirm(options) {
    const warnings = (options && options.warnings) || [];
    if (!warnings.length) return Promise.resolve(true);
    const dialog = build();
    const noun = (options && options.noun) || gettext("item");
    dialog.querySelector("h2").textContent = interpolate(gettext("Submit this %s with warnings?"), [noun]);
    dialog.querySelector("ul").replaceChildren(...warnings.map((w) => {
      const li = document.createElement("li");
      li.textContent = typeof w === "string" ? w : w.message;
      return li;
    }));
    dialog.querySelector("p.muted").textContent =
      gettext("Enter or Ctrl+Enter submits it as it is; Escape goes back to fix it.");
    const yes = dialog.querySelector("[data-submit-confirm=yes]");
    const no = dialog.querySelector("[data-submit-confirm=no]");
    yes.innerHTML = "";
    yes.append(gettext("Submit anyway") + " ", Object.assign(document.createElement("kbd"), { textContent: "Enter" }));
    no.innerHTML = "";
    no.append(gettext("Cancel") + " ", Object.assign(document.createElement("kbd"), { textContent: "Esc" }));
    const back = document.activeElement;
    return new Promise((resolve) => {
      let answered = false;
      function done(answer) {
        if (answered) return;
        answered = true;
        dialog.removeEventListener("keydown", onKey);
        yes.removeEventListener("click", onYes);
        no.removeEventListener("click", onNo);
        dialog.removeEventListener("cancel", onCancel);
        if (dialog.open) dialog.close();
        if (!answer && back && back.focus) back.focus();
        resolve(answer);
      }
      function onKey(event) {
        if (event.key === "Enter" && event.target !== no) {
          event.preventDefault();
          event.stopPropagation();
          done(true);
        }
      }
      function onYes() { done(true); }
      function onNo() { done(false); }
      function onCancel(event) { event.preventDefault(); done(false); }
      dialog.addEventListener("keydown", onKey);
      yes.addEventListener("click", onYes);
      no.addEventListener("click", onNo);
      dialog.addEventListener("cancel", onCancel);
      dialog.showModal();
      yes.focus();
    });
  }

  function stay(options) {
    const next = options && options.next;
    if (next) {
      next.classList.add("primary");
      next.focus();
    }
  }

  window.addEventListener("pageshow", (event) => {
    if (event.persisted) window.location.reload();
  });

  VidQA.submitFlow = { confirm: confirm, stay: stay };
})();
