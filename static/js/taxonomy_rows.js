// Taxonomy rows on the settings page: "Add a row" appends a copy of the formset's empty form and
// counts it in the management form, so Django validates it with the others.
(function () {
  "use strict";
  document.querySelectorAll("[data-formset]").forEach((box) => {
    const prefix = box.dataset.formset;
    const total = box.querySelector(`input[name="${prefix}-TOTAL_FORMS"]`);
    const template = box.querySelector("template");
    const body = box.querySelector("tbody");
    box.querySelector(".add-row").addEventListener("click", () => {
      const index = Number(total.value);
      const html = template.innerHTML.replaceAll("__prefix__", String(index));
      body.insertAdjacentHTML("beforeend", html);
      total.value = String(index + 1);
      const first = body.lastElementChild.querySelector("input[type=text]");
      if (first) first.focus();
    });
  });
})();
