// Show only the parts of the form the chosen step uses (without JavaScript every part shows).
(function () {
  "use strict";
  const form = document.getElementById("draft-start");
  if (!form) return;
  function sync() {
    const step = form.querySelector("input[name=step]:checked");
    if (!step) return;
    form.querySelector("[data-part=videos]").hidden = step.dataset.videos !== "1";
    form.querySelector("[data-part=tasks]").hidden = step.dataset.tasks !== "1";
    form.querySelector("[data-part=seeds]").hidden = step.value !== "seeds";
    form.querySelector("[data-part=options]").hidden = step.value !== "options";
  }
  form.addEventListener("change", sync);
  sync();
  // Ctrl+Enter from inside the form's fields too (the shortcut layer ignores keys typed into fields).
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.ctrlKey) { event.preventDefault(); form.requestSubmit(); }
  });
})();
