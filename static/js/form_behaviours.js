// Small behaviours pages ask for with data- attributes, so no page needs an inline on*= handler
// (the Content-Security-Policy runs none):
//   data-autosubmit          on a field: its form is sent when the field changes
//   data-confirm="question"  on a form: sent only once the person confirms
//   data-check-all="sel"     on a checkbox: ticks or clears every box matching sel in its table
//   data-no-submit           on a form: Enter in a field never sends it (a script saves instead)
//   data-shortcut-help       on a button: opens or closes the list of keyboard shortcuts
//   data-select-on-focus     on a read-only field: its whole text is selected, ready to copy
(function () {
  "use strict";
  document.addEventListener("change", (event) => {
    const field = event.target.closest && event.target.closest("[data-autosubmit]");
    if (field && field.form) field.form.requestSubmit();
    const all = event.target.closest && event.target.closest("[data-check-all]");
    if (all) {
      const scope = all.closest("table") || document;
      scope.querySelectorAll(all.dataset.checkAll).forEach((box) => { box.checked = all.checked; });
    }
  });
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.matches("[data-no-submit]")) { event.preventDefault(); return; }
    if (form.matches("[data-confirm]") && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });
  document.addEventListener("focusin", (event) => {
    if (event.target.matches && event.target.matches("[data-select-on-focus]")) event.target.select();
  });
  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("[data-shortcut-help]")) VidQA.shortcuts.toggleHelp();
  });
})();
